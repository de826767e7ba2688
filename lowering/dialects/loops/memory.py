"""Memory ops: allocate and free buffers, read sizes and strides, load, store, copy and fill.

>>> from lowering.ir.types import F32, INDEX
>>> from lowering.ir.core import Block
>>> block = Block([INDEX])
>>> buf = AllocOp.build([block.args[0], 4], F32)
>>> str(buf.result.type)
'!loops.buffer<?x4xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import IntAttr
from lowering.ir.constraints import ConstraintVar, Index
from lowering.ir.core import (PURE, Operation, VerifyError, attr, operand, register_op, result,
                              var_operand)
from lowering.ir.traits import MemoryEffects
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.sizes import check_allocation
from lowering.ir.types import I64, INDEX, ScalarType

from .checks import DYNAMIC, check_count, split_mixed
from .constraints import ELEMENT, AnyBuffer, BufferOf
from .runtime import as_buffer, as_index, index_error, live_allocations, poison
from .syntax import element_of, index_types
from .types import BufferType


@register_op
class AllocOp(Operation):
    """A fresh contiguous buffer; one ``index`` operand per ``?`` dimension, in order.

    ``%b = "loops.alloc"(%n) : (index) -> !loops.buffer<?x4xf32>``
    """

    name = "loops.alloc"
    assembly_format = "`(` $sizes `)` attr-dict : type($result)"
    sizes = var_operand(Index)
    result = result(BufferOf(fresh=True))

    @classmethod
    def infer_operand_types(cls, known, counts):
        return index_types(counts, "sizes")

    @classmethod
    def build(cls, shape, element: ScalarType, memory_space: str = "host",
              location=None) -> "AllocOp":
        """``shape`` entries are ints (static sizes) or index Values (run-time sizes)."""
        static, dynamic = split_mixed(shape)
        t = BufferType(tuple(None if d == DYNAMIC else d for d in static), element,
                       memory_space=memory_space)
        return cls.create(operands=dynamic, result_types=[t], location=location)

    def verify_(self):
        check_count(self, len(self.sizes), len(self.result.type.dynamic_dims),
                    "size operand(s), one per '?'")


@INTERPRETER.register(AllocOp)
def _alloc(interp, op, args):
    sizes = iter(as_index(a) for a in args)
    shape = tuple(next(sizes) if d is None else d for d in op.result.type.shape)
    check_allocation(op.name, shape, op.result.type.dtype.itemsize)
    array = np.empty(shape, dtype=op.result.type.dtype)
    poison(array)
    live_allocations(interp)[id(array)] = array
    return [array]


@register_op
class DeallocOp(Operation):
    """Frees a buffer made by ``loops.alloc`` (not a view of it, not a function argument)."""

    name = "loops.dealloc"
    traits = frozenset({MemoryEffects(writes=("buffer",))})
    assembly_format = "$buffer attr-dict : type($buffer)"
    buffer = operand(AnyBuffer)

    @classmethod
    def build(cls, buffer, location=None) -> "DeallocOp":
        return cls.create(operands=[buffer], location=location)


@INTERPRETER.register(DeallocOp)
def _dealloc(interp, op, args):
    array = args[0]
    live = live_allocations(interp)
    if live.pop(id(array), None) is not array:
        raise ValueError("the buffer is not a live allocation of loops.alloc "
                         "(freed twice, a view, or memory the caller owns)")
    poison(array)
    return []


class _BufferAxisQuery(Operation):
    """An ``index`` read off one dimension ``axis`` of a buffer's run-time layout."""

    assembly_format = "$buffer, $axis attr-dict : type($buffer)"
    traits = frozenset({PURE})
    buffer = operand(AnyBuffer)
    axis = attr(IntAttr)
    result = result(Index)

    @classmethod
    def infer_result_types(cls, operand_types, attributes):
        return [INDEX]

    @classmethod
    def build(cls, buffer, axis: int, location=None) -> "_BufferAxisQuery":
        return cls.create(operands=[buffer], result_types=[INDEX],
                          attributes={"axis": IntAttr(axis)}, location=location)

    def verify_(self):
        rank = self.buffer.type.rank
        if not 0 <= self.axis < rank:
            raise VerifyError(f"{self.name}: axis {self.axis} is out of range for rank {rank}",
                              self)


@register_op
class DimOp(_BufferAxisQuery):
    """The size of dimension ``axis`` of a buffer, as an ``index``."""

    name = "loops.dim"


@INTERPRETER.register(DimOp)
def _dim(interp, op, args):
    array = as_buffer(args[0], op.buffer.type, "operand")
    return [np.int64(array.shape[op.axis])]


@register_op
class StrideOp(_BufferAxisQuery):
    """The stride of dimension ``axis`` (an attribute) of a buffer, in elements, as an
    ``index``: what a call needs to address a buffer whose layout its type leaves open (BLAS's
    leading dimensions and increments). May be 0 (a broadcast dimension) or negative."""

    name = "loops.stride"


@INTERPRETER.register(StrideOp)
def _stride(interp, op, args):
    array = as_buffer(args[0], op.buffer.type, "operand")
    return [np.int64(array.strides[op.axis] // array.itemsize)]


def _check_access(op, t: BufferType, indices) -> None:
    check_count(op, len(indices), t.rank, f"index operand(s) for a rank-{t.rank} buffer")


def _position(op, array: np.ndarray, args) -> tuple[int, ...]:
    # NumPy would wrap a negative index around; the loops dialect has no such thing.
    position = tuple(as_index(a) for a in args)
    if any(not 0 <= i < d for i, d in zip(position, array.shape)):
        raise index_error(op, f"index {position} is out of bounds for a buffer of shape "
                              f"{array.shape}")
    return position


@register_op
class LoadOp(Operation):
    """Reads one element: ``%x = "loops.load"(%b, %i, %j) : (buffer, index, index) -> f32``."""

    name = "loops.load"
    traits = frozenset({MemoryEffects(reads=("buffer",))})
    assembly_format = "$buffer `[` $indices `]` attr-dict : type($buffer)"
    buffer = operand(BufferOf(ELEMENT))
    indices = var_operand(Index)
    result = result(ELEMENT)

    @classmethod
    def infer_operand_types(cls, known, counts):
        return index_types(counts, "indices")

    @classmethod
    def infer_result_types(cls, operand_types, attributes):
        return element_of(operand_types[:1])

    @classmethod
    def build(cls, buffer, indices=(), location=None) -> "LoadOp":
        if not isinstance(buffer.type, BufferType):
            raise TypeError(f"loops.load: expected a buffer, got {buffer.type}")
        return cls.create(operands=[buffer, *indices], result_types=[buffer.type.element],
                          location=location)

    def verify_(self):
        _check_access(self, self.buffer.type, self.indices)


@INTERPRETER.register(LoadOp)
def _load(interp, op, args):
    array = as_buffer(args[0], op.buffer.type, "buffer")
    return [array[_position(op, array, args[1:])]]


@register_op
class StoreOp(Operation):
    """Writes one element: ``"loops.store"(%x, %b, %i) : (f32, buffer, index) -> ()``."""

    name = "loops.store"
    traits = frozenset({MemoryEffects(writes=("buffer",))})
    assembly_format = "$value, $buffer `[` $indices `]` attr-dict : type($buffer)"
    value = operand(ELEMENT)
    buffer = operand(BufferOf(ELEMENT))
    indices = var_operand(Index)

    @classmethod
    def infer_operand_types(cls, known, counts):
        return {"value": element_of(known["buffer"]), **index_types(counts, "indices")}

    @classmethod
    def build(cls, value, buffer, indices=(), location=None) -> "StoreOp":
        return cls.create(operands=[value, buffer, *indices], location=location)

    def verify_(self):
        _check_access(self, self.buffer.type, self.indices)


@INTERPRETER.register(StoreOp)
def _store(interp, op, args):
    array = as_buffer(args[1], op.buffer.type, "buffer")
    array[_position(op, array, args[2:])] = args[0]
    return []


# A copy keeps the rank and memory space (transfers are gpu-dialect ops), and the element type.
_COPY_RANK = ConstraintVar("rank")
_COPY_SPACE = ConstraintVar("space")


@register_op
class CopyOp(Operation):
    """Copies every element of ``source`` into ``target`` (same shape, element type and memory
    space; any strides). The two must not overlap unless they are the same view."""

    name = "loops.copy"
    traits = frozenset({MemoryEffects(reads=("source",), writes=("target",))})
    assembly_format = "$source, $target attr-dict : type($source), type($target)"
    source = operand(BufferOf(ELEMENT, rank=_COPY_RANK, space=_COPY_SPACE))
    target = operand(BufferOf(ELEMENT, rank=_COPY_RANK, space=_COPY_SPACE))

    @classmethod
    def build(cls, source, target, location=None) -> "CopyOp":
        return cls.create(operands=[source, target], location=location)

    def verify_(self):
        # Sizes known on both sides must agree; a '?' is checked at run time.
        src, dst = self.source.type, self.target.type
        for axis, (a, b) in enumerate(zip(src.shape, dst.shape)):
            if a is not None and b is not None and a != b:
                raise VerifyError(f"{self.name}: sizes differ in dimension {axis}: {a} and {b}",
                                  self)


@INTERPRETER.register(CopyOp)
def _copy(interp, op, args):
    src = as_buffer(args[0], op.source.type, "source")
    dst = as_buffer(args[1], op.target.type, "target")
    if src.shape != dst.shape:
        raise ValueError(f"source shape {src.shape} differs from target shape {dst.shape}")
    np.copyto(dst, src)
    return []


@register_op
class FillOp(Operation):
    """Sets every element of a buffer to one scalar value."""

    name = "loops.fill"
    traits = frozenset({MemoryEffects(writes=("buffer",))})
    assembly_format = "$value, $buffer attr-dict : type($buffer)"
    value = operand(ELEMENT)
    buffer = operand(BufferOf(ELEMENT))

    @classmethod
    def infer_operand_types(cls, known, counts):
        return {"value": element_of(known["buffer"])}

    @classmethod
    def build(cls, value, buffer, location=None) -> "FillOp":
        return cls.create(operands=[value, buffer], location=location)


@INTERPRETER.register(FillOp)
def _fill(interp, op, args):
    as_buffer(args[1], op.buffer.type, "buffer")[...] = args[0]
    return []
