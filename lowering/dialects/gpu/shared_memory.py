"""Shared memory: ``gpu.shared_alloc``, a static-size buffer in space "shared" that the threads
of one block share (CUDA's ``__shared__`` arrays).

``%s = "gpu.shared_alloc"() : () -> !loops.buffer<256xf32, space="shared">``

>>> from lowering.ir.types import F32
>>> str(SharedAllocOp.build((2, 128), F32).result.type)
'!loops.buffer<2x128xf32, space="shared">'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Operation, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import ScalarType

from lowering.dialects.loops.constraints import BufferOf
from lowering.dialects.loops.runtime import poison
from lowering.dialects.loops.types import BufferType

from .checks import IN_KERNEL
from .threads import current_thread


@register_op
class SharedAllocOp(Operation):
    """One buffer per block, of a fully static shape, contiguous with offset 0. Its contents are
    undefined until written (the interpreter fills it with poison, like ``loops.alloc``)."""

    name = "gpu.shared_alloc"
    traits = frozenset({IN_KERNEL})
    assembly_format = "attr-dict : type($result)"
    result = result(BufferOf(space="shared", static=True, fresh=True))

    @classmethod
    def build(cls, shape, element: ScalarType, location=None) -> "SharedAllocOp":
        t = BufferType(tuple(shape), element, memory_space="shared")
        return cls.create(result_types=[t], location=location)


@INTERPRETER.register(SharedAllocOp)
def _shared_alloc(interp, op, args):
    t = op.result.type

    def make() -> np.ndarray:
        array = np.empty(t.shape, dtype=t.dtype)
        poison(array)
        return array

    return [current_thread(interp, op).block.shared_array(op, make)]
