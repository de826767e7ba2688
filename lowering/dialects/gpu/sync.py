"""Synchronization: ``gpu.barrier`` (CUDA's __syncthreads, inside a kernel) and ``gpu.sync``
(the host waits until the device has finished all launched work).

``"gpu.barrier"() : () -> ()`` and ``"gpu.sync"() : () -> ()``

>>> BarrierOp.build().name, SyncOp.build().name
('gpu.barrier', 'gpu.sync')
"""
from __future__ import annotations

from lowering.ir.core import Operation, register_op
from lowering.ir.interpreter import InterpreterError, interpreter_rule

from .checks import check_in_kernel, check_on_host
from .threads import current_thread


@register_op
class BarrierOp(Operation):
    """No thread of a block passes until every thread of the block has reached it."""

    name = "gpu.barrier"
    assembly_format = "attr-dict"

    @classmethod
    def build(cls, location=None) -> "BarrierOp":
        return cls.create(location=location)

    def verify_(self):
        check_in_kernel(self)


@interpreter_rule("gpu.barrier")
def _barrier(interp, op, args):
    thread = current_thread(interp, op)
    barrier = thread.block.barrier
    if barrier is None:
        raise InterpreterError(f"{op.name} at {op.location.short()}: the kernel was scheduled "
                               f"without barriers", op)
    barrier.wait(op, thread.thread_id)
    return []


@register_op
class SyncOp(Operation):
    """The host waits for the device (launches are asynchronous)."""

    name = "gpu.sync"
    assembly_format = "attr-dict"

    @classmethod
    def build(cls, location=None) -> "SyncOp":
        return cls.create(location=location)

    def verify_(self):
        check_on_host(self)


@interpreter_rule("gpu.sync")
def _sync(interp, op, args):
    # The interpreter finishes each launch before going on: there is nothing to wait for.
    return []
