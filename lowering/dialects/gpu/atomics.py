"""Atomic read-modify-write: ``gpu.atomic_rmw``, on device or shared buffers.

``%old = "gpu.atomic_rmw"(%v, %buf, %i) {kind = "add"} : (f32, !loops.buffer<?xf32,
space="device">, index) -> f32`` stores ``buf[i] + v`` and gives the value ``buf[i]`` had
before, as one indivisible step. Kinds: ``add``, ``max``, ``min`` (numbers, floats included) and
``exch`` (stores ``v``; any element type).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, INDEX
>>> from lowering.dialects.loops.types import BufferType
>>> block = Block([F32, BufferType((8,), F32, memory_space="shared"), INDEX])
>>> value, buffer, i = block.args
>>> op = AtomicRmwOp.build("max", value, buffer, [i])
>>> op.kind, str(op.result.type)
('max', 'f32')
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import StringAttr
from lowering.ir.constraints import EnumAttr, Index
from lowering.ir.core import (Operation, Value, VerifyError, attr, operand, register_op, result,
                              var_operand)
from lowering.ir.interpreter import INTERPRETER

from lowering.dialects.loops.constraints import ELEMENT, BufferOf
from lowering.dialects.loops.runtime import as_buffer, as_index, index_error
from lowering.dialects.loops.types import BufferType

from .checks import IN_KERNEL
from .threads import current_thread

# What each kind stores, given the old element and the operand (NumPy scalars of one dtype).
COMBINE = {
    "add": np.add,
    "max": np.maximum,
    "min": np.minimum,
    "exch": lambda old, value: value,
}
ATOMIC_KINDS = tuple(COMBINE)

@register_op
class AtomicRmwOp(Operation):
    """Atomically ``buf[indices] = kind(buf[indices], value)``; the result is the old element."""

    name = "gpu.atomic_rmw"
    traits = frozenset({IN_KERNEL})
    assembly_format = ("$kind $value, $buffer `[` $indices `]` attr-dict : "
                       "functional-type(operands, results)")
    value = operand(ELEMENT)
    buffer = operand(BufferOf(ELEMENT, space=("device", "shared")))
    indices = var_operand(Index)
    kind = attr(EnumAttr(ATOMIC_KINDS))
    result = result(ELEMENT)

    @classmethod
    def build(cls, kind: str, value: Value, buffer: Value, indices=(),
              location=None) -> "AtomicRmwOp":
        if not isinstance(buffer.type, BufferType):
            raise TypeError(f"{cls.name}: expected a buffer, got {buffer.type}")
        return cls.create(operands=[value, buffer, *indices], result_types=[buffer.type.element],
                          attributes={"kind": StringAttr(kind)}, location=location)

    def verify_(self):
        t = self.buffer.type
        if self.kind != "exch" and t.element.is_bool:
            raise VerifyError(f"{self.name}: kind \"{self.kind}\" needs a numeric element type, "
                              f"got {t.element}", self)
        if len(self.indices) != t.rank:
            raise VerifyError(f"{self.name}: expected {t.rank} index operand(s) for a "
                              f"rank-{t.rank} buffer, got {len(self.indices)}", self)


@INTERPRETER.register(AtomicRmwOp)
def _atomic_rmw(interp, op, args):
    thread = current_thread(interp, op)
    array = as_buffer(args[1], op.buffer.type, "buffer")
    position = tuple(as_index(a) for a in args[2:])
    if any(not 0 <= i < d for i, d in zip(position, array.shape)):
        raise index_error(op, f"index {position} is out of bounds for a buffer of shape "
                              f"{array.shape}")
    combine = COMBINE[op.kind]
    value = array.dtype.type(args[0])
    with thread.launch.lock, np.errstate(over="ignore"):  # integers wrap, as on the device
        old = array[position]
        array[position] = combine(old, value)
    return [old]
