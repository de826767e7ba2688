"""Shared pieces of the gpu ops' verifiers: the traits saying where an op sits (``IN_KERNEL``,
``ON_HOST``) and the kinds of values launches and kernels take.

A *kernel body* is the region of a ``gpu.func`` or of a ``gpu.launch``; thread and block ids,
barriers, shared memory and atomics only mean something there, while transfers, launches and
``gpu.sync`` are the host's.

>>> from lowering.ir.types import F32, INDEX, TensorType
>>> from lowering.dialects.loops.types import BufferType
>>> is_kernel_argument_type(BufferType((None,), F32, memory_space="device")), \\
...     is_kernel_argument_type(INDEX), is_kernel_argument_type(TensorType((2,), F32))
(True, True, False)
"""
from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.core import Operation
from lowering.ir.traits import Trait
from lowering.ir.types import ScalarType, Type

from lowering.dialects.loops.types import BufferType

DIMENSIONS = ("x", "y", "z")
KERNEL_OPS = ("gpu.func", "gpu.launch")


def enclosing_kernel(op: Operation) -> Operation | None:
    """The innermost ``gpu.func`` or ``gpu.launch`` around ``op``, or None."""
    for ancestor in op.ancestors():
        if ancestor.name in KERNEL_OPS:
            return ancestor
    return None


@dataclass(frozen=True, eq=False)
class InKernel(Trait):
    """The op runs on the device: it must be nested in a gpu.func or a gpu.launch.

    An op that is not in a block yet (being built) is not checked.
    """

    name = "in_kernel"

    def verify(self, op):
        if op.parent is not None and enclosing_kernel(op) is None:
            where = op.parent_op.name if op.parent_op is not None else "a detached block"
            return f"{op.name} is only valid inside a gpu.func or a gpu.launch, found in {where}"
        return None


@dataclass(frozen=True, eq=False)
class OnHost(Trait):
    """The op runs on the host: it must not be nested in a kernel body."""

    name = "on_host"

    def verify(self, op):
        kernel = enclosing_kernel(op) if op.parent is not None else None
        if kernel is not None:
            return f"{op.name} runs on the host and cannot be used inside {kernel.name}"
        return None


IN_KERNEL = InKernel()
ON_HOST = OnHost()


def is_kernel_argument_type(t: Type) -> bool:
    """Whether a kernel may take a value of type ``t``: a device buffer or a scalar."""
    if isinstance(t, BufferType):
        return t.memory_space == "device"
    return isinstance(t, ScalarType)
