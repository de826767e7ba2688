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
from lowering.ir.core import (PURE, Operation, VerifyError, attr, operand, register_op, result,
                              var_operand)
from lowering.ir.interpreter import interpreter_rule
from lowering.ir.sizes import check_allocation
from lowering.ir.types import I64, INDEX, ScalarType

from .checks import DYNAMIC, buffer_type, check_count, check_indices, check_result_type, split_mixed
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
    sizes = var_operand()
    result = result()

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
        t = self.result.type
        if not isinstance(t, BufferType):
            raise VerifyError(f"{self.name}: result must be a buffer, got {t}", self)
        if not t.is_contiguous or t.offset != 0:
            raise VerifyError(f"{self.name}: a fresh buffer is contiguous with offset 0, got {t}",
                              self)
        check_count(self, len(self.sizes), len(t.dynamic_dims), "size operand(s), one per '?'")
        check_indices(self, self.sizes, "size")


@interpreter_rule("loops.alloc")
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
    assembly_format = "$buffer attr-dict : type($buffer)"
    buffer = operand()

    @classmethod
    def build(cls, buffer, location=None) -> "DeallocOp":
        return cls.create(operands=[buffer], location=location)

    def verify_(self):
        buffer_type(self, self.buffer, "operand")


@interpreter_rule("loops.dealloc")
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
    buffer = operand()
    axis = attr(IntAttr)
    result = result()

    @classmethod
    def infer_result_types(cls, operand_types, attributes):
        return [INDEX]

    @classmethod
    def build(cls, buffer, axis: int, location=None) -> "_BufferAxisQuery":
        return cls.create(operands=[buffer], result_types=[INDEX],
                          attributes={"axis": IntAttr(axis)}, location=location)

    def verify_(self):
        t = buffer_type(self, self.buffer, "operand")
        if not 0 <= self.axis < t.rank:
            raise VerifyError(f"{self.name}: axis {self.axis} is out of range for rank {t.rank}",
                              self)
        check_result_type(self, self.result.type, INDEX)


@register_op
class DimOp(_BufferAxisQuery):
    """The size of dimension ``axis`` of a buffer, as an ``index``."""

    name = "loops.dim"


@interpreter_rule("loops.dim")
def _dim(interp, op, args):
    array = as_buffer(args[0], op.buffer.type, "operand")
    return [np.int64(array.shape[op.axis])]


@register_op
class StrideOp(_BufferAxisQuery):
    """The stride of dimension ``axis`` (an attribute) of a buffer, in elements, as an
    ``index``: what a call needs to address a buffer whose layout its type leaves open (BLAS's
    leading dimensions and increments). May be 0 (a broadcast dimension) or negative."""

    name = "loops.stride"


@interpreter_rule("loops.stride")
def _stride(interp, op, args):
    array = as_buffer(args[0], op.buffer.type, "operand")
    return [np.int64(array.strides[op.axis] // array.itemsize)]


def _check_access(op, t: BufferType, indices) -> None:
    check_count(op, len(indices), t.rank, f"index operand(s) for a rank-{t.rank} buffer")
    check_indices(op, indices, "index")


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
    assembly_format = "$buffer `[` $indices `]` attr-dict : type($buffer)"
    buffer = operand()
    indices = var_operand()
    result = result()

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
        t = buffer_type(self, self.buffer, "operand #0")
        _check_access(self, t, self.indices)
        check_result_type(self, self.result.type, t.element)


@interpreter_rule("loops.load")
def _load(interp, op, args):
    array = as_buffer(args[0], op.buffer.type, "buffer")
    return [array[_position(op, array, args[1:])]]


@register_op
class StoreOp(Operation):
    """Writes one element: ``"loops.store"(%x, %b, %i) : (f32, buffer, index) -> ()``."""

    name = "loops.store"
    assembly_format = "$value, $buffer `[` $indices `]` attr-dict : type($buffer)"
    value = operand()
    buffer = operand()
    indices = var_operand()

    @classmethod
    def infer_operand_types(cls, known, counts):
        return {"value": element_of(known["buffer"]), **index_types(counts, "indices")}

    @classmethod
    def build(cls, value, buffer, indices=(), location=None) -> "StoreOp":
        return cls.create(operands=[value, buffer, *indices], location=location)

    def verify_(self):
        t = buffer_type(self, self.buffer, "operand #1")
        if self.value.type != t.element:
            raise VerifyError(f"{self.name}: stored value has type {self.value.type}, the buffer "
                              f"holds {t.element}", self)
        _check_access(self, t, self.indices)


@interpreter_rule("loops.store")
def _store(interp, op, args):
    array = as_buffer(args[1], op.buffer.type, "buffer")
    array[_position(op, array, args[2:])] = args[0]
    return []


@register_op
class CopyOp(Operation):
    """Copies every element of ``source`` into ``target`` (same shape, element type and memory
    space; any strides). The two must not overlap unless they are the same view."""

    name = "loops.copy"
    assembly_format = "$source, $target attr-dict : type($source), type($target)"
    source = operand()
    target = operand()

    @classmethod
    def build(cls, source, target, location=None) -> "CopyOp":
        return cls.create(operands=[source, target], location=location)

    def verify_(self):
        src = buffer_type(self, self.source, "source")
        dst = buffer_type(self, self.target, "target")
        if src.element != dst.element:
            raise VerifyError(f"{self.name}: element types differ: {src.element} and {dst.element}",
                              self)
        if src.memory_space != dst.memory_space:
            raise VerifyError(f"{self.name}: memory spaces differ: {src.memory_space} and "
                              f"{dst.memory_space} (transfers are gpu-dialect ops)", self)
        if src.rank != dst.rank:
            raise VerifyError(f"{self.name}: ranks differ: {src.rank} and {dst.rank}", self)
        for axis, (a, b) in enumerate(zip(src.shape, dst.shape)):
            if a is not None and b is not None and a != b:
                raise VerifyError(f"{self.name}: sizes differ in dimension {axis}: {a} and {b}",
                                  self)


@interpreter_rule("loops.copy")
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
    assembly_format = "$value, $buffer attr-dict : type($buffer)"
    value = operand()
    buffer = operand()

    @classmethod
    def infer_operand_types(cls, known, counts):
        return {"value": element_of(known["buffer"])}

    @classmethod
    def build(cls, value, buffer, location=None) -> "FillOp":
        return cls.create(operands=[value, buffer], location=location)

    def verify_(self):
        t = buffer_type(self, self.buffer, "operand #1")
        if self.value.type != t.element:
            raise VerifyError(f"{self.name}: fill value has type {self.value.type}, the buffer "
                              f"holds {t.element}", self)


@interpreter_rule("loops.fill")
def _fill(interp, op, args):
    as_buffer(args[1], op.buffer.type, "buffer")[...] = args[0]
    return []
