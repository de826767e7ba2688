"""Synchronization: ``gpu.barrier`` (CUDA's __syncthreads, inside a kernel) and ``gpu.sync``
(the host waits until the device has finished all launched work).

``"gpu.barrier"() : () -> ()`` and ``"gpu.sync"() : () -> ()``

>>> BarrierOp.build().name, SyncOp.build().name
('gpu.barrier', 'gpu.sync')
"""
from __future__ import annotations

from lowering.ir.core import Operation, register_op
from lowering.ir.interpreter import INTERPRETER, InterpreterError

from .checks import IN_KERNEL, ON_HOST
from .threads import current_thread


@register_op
class BarrierOp(Operation):
    """No thread of a block passes until every thread of the block has reached it."""

    name = "gpu.barrier"
    traits = frozenset({IN_KERNEL})
    assembly_format = "attr-dict"

    @classmethod
    def build(cls, location=None) -> "BarrierOp":
        return cls.create(location=location)


@INTERPRETER.register(BarrierOp)
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
    traits = frozenset({ON_HOST})
    assembly_format = "attr-dict"

    @classmethod
    def build(cls, location=None) -> "SyncOp":
        return cls.create(location=location)


@INTERPRETER.register(SyncOp)
def _sync(interp, op, args):
    # The interpreter finishes each launch before going on: there is nothing to wait for.
    return []
