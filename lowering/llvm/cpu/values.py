"""How loops-dialect values look in LLVM IR: scalar types, buffers and their flattened form.

A scalar of type ``f32`` is an LLVM ``float``; ``i1`` is ``i1`` in registers but one byte (``i8``,
0 or 1, as NumPy's ``bool``) in memory; ``index`` is ``i64``; unsigned types are plain ``iN`` (the
ops choose signed or unsigned instructions); ``complex<f32>`` is ``{float, float}`` (real part
first, NumPy's layout and alignment; ``cpu/complex_math.py`` computes with it).

A buffer is a :class:`BufferValue`: a pointer to its element ``[0, ..., 0]`` (the type's offset is
already applied, as in the native ABI's descriptors), one size and one stride (in elements) per
dimension, all ``i64``. Whatever the buffer type states statically is a constant: static sizes,
static strides, and the strides of a contiguous layout (computed from the sizes), so the code
LLVM sees has unit strides where the type says so, and the vectorizer can use them.

Passing a buffer between LLVM functions (arguments, loop-carried values, captures of outlined
parallel loops) only needs its run-time parts: ``flatten`` lists them and ``rebuild`` makes the
buffer again from them.

>>> from lowering.ir.types import F32
>>> from lowering.dialects.loops import BufferType
>>> [str(t) for t in flat_types(BufferType((None, 4), F32))]
['float*', 'i64']
>>> [str(t) for t in flat_types(BufferType((None, None), F32, strides=(None, None)))]
['float*', 'i64', 'i64', 'i64', 'i64']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import llvmlite.ir as ir

from lowering.dialects.loops import BufferType
from lowering.ir.types import ScalarType, Type

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
I8P = I8.as_pointer()
VOID = ir.VoidType()
HALF, FLOAT, DOUBLE = ir.HalfType(), ir.FloatType(), ir.DoubleType()

_FLOATS = {16: HALF, 32: FLOAT, 64: DOUBLE}


def value_type(t: ScalarType) -> ir.Type:
    """The LLVM type of a scalar in registers: ``i1`` for bool, ``iN``, ``half/float/double``.

    >>> from lowering.ir.types import UI8, INDEX, F16
    >>> str(value_type(UI8)), str(value_type(INDEX)), str(value_type(F16))
    ('i8', 'i64', 'half')
    """
    if t.is_float:
        return _FLOATS[t.bits]
    if t.is_complex:
        part = _FLOATS[t.real_part.bits]
        return ir.LiteralStructType([part, part])
    return I1 if t.is_bool else ir.IntType(t.bits)


def memory_type(t: ScalarType) -> ir.Type:
    """The LLVM type of an element in memory: like ``value_type`` but bool is one byte.

    >>> from lowering.ir.types import I1
    >>> str(memory_type(I1))
    'i8'
    """
    return I8 if t.is_bool else value_type(t)


def itemsize(t: ScalarType) -> int:
    """Bytes per element in memory (NumPy's itemsize)."""
    return t.dtype.itemsize


def constant(t: ScalarType, value) -> ir.Constant:
    """An LLVM constant of scalar type ``t`` (integers given in two's complement).

    >>> from lowering.ir.types import UI64
    >>> str(constant(UI64, 2**64 - 1))
    'i64 -1'
    """
    ty = value_type(t)
    if t.is_float:
        return ir.Constant(ty, float(value))
    if t.is_complex:
        z = complex(value)
        return ir.Constant(ty, [ir.Constant(ty.elements[0], z.real),
                                ir.Constant(ty.elements[1], z.imag)])
    v = int(value)
    bits = ty.width
    v &= (1 << bits) - 1
    if bits > 1 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return ir.Constant(ty, v)


def i64(value: int) -> ir.Constant:
    return ir.Constant(I64, int(value))


def descriptor_type(rank: int) -> ir.LiteralStructType:
    """The native ABI's buffer descriptor: ``{i8* data, [r x i64] shape, [r x i64] strides}``
    (rank 0: ``{i8* data}``); strides count elements and data points at element 0.

    >>> str(descriptor_type(2)), str(descriptor_type(0))
    ('{i8*, [2 x i64], [2 x i64]}', '{i8*}')
    """
    if rank == 0:
        return ir.LiteralStructType([I8P])
    return ir.LiteralStructType([I8P, ir.ArrayType(I64, rank), ir.ArrayType(I64, rank)])


@dataclass
class BufferValue:
    """A buffer in LLVM IR: element pointer, sizes and strides (``i64``; constants where static)."""

    type: BufferType
    ptr: ir.Value
    sizes: tuple[ir.Value, ...]
    strides: tuple[ir.Value, ...]

    @property
    def rank(self) -> int:
        return self.type.rank


def element_pointer_type(t: BufferType) -> ir.PointerType:
    return memory_type(t.element).as_pointer()


def contiguous_stride_values(builder: ir.IRBuilder, sizes) -> list[ir.Value]:
    """Row-major strides from sizes, folding constants."""
    strides: list[ir.Value] = []
    running: ir.Value = i64(1)
    for size in reversed(list(sizes)):
        strides.append(running)
        running = _mul(builder, running, size)
    return list(reversed(strides))


def _mul(builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value:
    if isinstance(a, ir.Constant) and isinstance(b, ir.Constant):
        return i64(a.constant * b.constant)
    if isinstance(a, ir.Constant) and a.constant == 1:
        return b
    if isinstance(b, ir.Constant) and b.constant == 1:
        return a
    return builder.mul(a, b)


def make_buffer(builder: ir.IRBuilder, t: BufferType, ptr: ir.Value, sizes,
                strides=None) -> BufferValue:
    """A BufferValue of type ``t``: static sizes and strides of ``t`` replace the given values;
    a contiguous ``t`` computes its strides from the sizes (``strides`` may then be None)."""
    sizes = tuple(v if d is None else i64(d) for d, v in zip(t.shape, sizes))
    if t.is_contiguous:
        stride_values = tuple(contiguous_stride_values(builder, sizes))
    else:
        if strides is None:
            raise ValueError(f"strides are needed for the non-contiguous buffer type {t}")
        stride_values = tuple(v if s is None else i64(s) for s, v in zip(t.strides, strides))
    if ptr.type != element_pointer_type(t):
        ptr = builder.bitcast(ptr, element_pointer_type(t))
    return BufferValue(t, ptr, sizes, stride_values)


def _dynamic_strides(t: BufferType) -> list[int]:
    return [] if t.is_contiguous else [d for d, s in enumerate(t.strides) if s is None]


def flat_types(t: Type) -> list[ir.Type]:
    """The LLVM types of the run-time parts of a value of IR type ``t``."""
    if isinstance(t, BufferType):
        return [element_pointer_type(t)] + [I64] * (len(t.dynamic_dims) + len(_dynamic_strides(t)))
    if isinstance(t, ScalarType):
        return [value_type(t)]
    raise TypeError(f"no LLVM representation for values of type {t}")


def flatten(value) -> list[ir.Value]:
    """The run-time parts of a lowered value (a BufferValue or a scalar ``ir.Value``)."""
    if isinstance(value, BufferValue):
        t = value.type
        return ([value.ptr] + [value.sizes[d] for d in t.dynamic_dims]
                + [value.strides[d] for d in _dynamic_strides(t)])
    return [value]


def rebuild(builder: ir.IRBuilder, t: Type, parts: Iterator[ir.Value]):
    """The lowered value of IR type ``t`` from its run-time parts (``flatten``'s inverse)."""
    if isinstance(t, ScalarType):
        return next(parts)
    ptr = next(parts)
    dynamic = {d: next(parts) for d in t.dynamic_dims}
    sizes = [dynamic.get(d, i64(0)) for d in range(t.rank)]
    stride_parts = {d: next(parts) for d in _dynamic_strides(t)}
    strides = None if t.is_contiguous else [stride_parts.get(d, i64(0)) for d in range(t.rank)]
    return make_buffer(builder, t, ptr, sizes, strides)
