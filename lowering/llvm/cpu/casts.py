"""Conversions between scalar types with NumPy's ``astype`` results on x86-64.

- integers to integers wrap (truncate, or extend by the source's signedness);
- anything to ``i1`` tests ``!= 0`` (NaN is true); ``i1`` to numbers gives 0 or 1;
- integers to floats round to nearest; to ``f16`` through ``f32``, as NumPy does;
- ``f64`` to ``f16`` rounds once, correctly: through ``f32`` rounded to odd, so the second
  rounding cannot double-round (NumPy converts directly), and without a C library call;
- floats to integers truncate toward zero. Out of range (and NaN) NumPy gives what the x86
  instructions its C casts compile to give, which LLVM leaves undefined (``fptosi`` is poison),
  so it is spelled out here: ``cvtt(x, N)`` is ``fptosi`` in range and ``INT_MIN`` of N bits
  otherwise;

  ======================  ==================================================================
  target                  result
  ======================  ==================================================================
  i64, index              ``cvtt(x, 64)``
  i32                     ``cvtt(x, 32)``
  i8, i16, ui8, ui16      ``cvtt(x, 32)`` truncated
  ui32 from f32, f64      ``x >= 2**31 ? cvtt(x - 2**31, 32) ^ 2**31 : cvtt(x, 32)``
  ui32 from f16           ``cvtt(x, 64)`` truncated
  ui64                    ``x >= 2**63 ? cvtt(x - 2**63, 64) ^ 2**63 : cvtt(x, 64)``
  ======================  ==================================================================

  These are NumPy's results for contiguous arrays. (For ``f32``/``f64`` to ``ui32`` out of range,
  NumPy's scalar loop, used for the last few elements of an array, truncates ``cvtt(x, 64)``
  instead: NumPy itself is not consistent there.)

Half-precision arithmetic is done in ``f32`` and rounded back (``widen``/``narrow``), as NumPy's
half loops do; for ``+ - * /`` and ``sqrt`` this is the correctly rounded half result.

>>> import llvmlite.ir as ir
>>> from lowering.ir.types import F64, I8
>>> module = ir.Module()
>>> fn = ir.Function(module, ir.FunctionType(ir.IntType(8), [ir.DoubleType()]), "f")
>>> builder = ir.IRBuilder(fn.append_basic_block())
>>> _ = builder.ret(convert(builder, fn.args[0], F64, I8))
>>> "fptosi double" in str(module)
True
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.ir.types import F32, ScalarType

from .values import DOUBLE, FLOAT, HALF, I32, value_type


def work_type(t: ScalarType) -> ScalarType:
    """The type arithmetic on ``t`` is done in: ``f32`` for ``f16``, else ``t`` itself."""
    return F32 if t.is_float and t.bits == 16 else t


def widen(builder: ir.IRBuilder, value: ir.Value, t: ScalarType) -> ir.Value:
    """``value`` of type ``t`` in ``work_type(t)`` (exact)."""
    return builder.fpext(value, FLOAT) if t.is_float and t.bits == 16 else value


def narrow(builder: ir.IRBuilder, value: ir.Value, t: ScalarType) -> ir.Value:
    """A ``work_type(t)`` value rounded back to ``t``."""
    return builder.fptrunc(value, HALF) if t.is_float and t.bits == 16 else value


def nonzero(builder: ir.IRBuilder, value: ir.Value, t: ScalarType) -> ir.Value:
    """``value != 0`` as ``i1`` (NaN counts as non-zero, as in NumPy)."""
    if t.is_bool:
        return value
    if t.is_float:
        return builder.fcmp_unordered("!=", value, ir.Constant(value.type, 0.0))
    return builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0))


def convert(builder: ir.IRBuilder, value: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
    """``value`` of type ``src`` converted to ``dst`` as NumPy's ``astype`` does."""
    if src == dst:
        return value
    if dst.is_bool:
        return nonzero(builder, value, src)
    if src.is_float and dst.is_float:
        return _float_to_float(builder, value, src.bits, dst.bits)
    if src.is_float:
        return _float_to_int(builder, widen(builder, value, src), src, dst)
    # src is an integer or a bool (unsigned 0/1)
    signed = src.is_signed
    if dst.is_float:
        target = FLOAT if dst.bits == 16 else value_type(dst)
        converted = builder.sitofp(value, target) if signed else builder.uitofp(value, target)
        return narrow(builder, converted, dst)
    have, want = value.type.width, dst.bits
    if have == want:
        return value
    if have > want:
        return builder.trunc(value, value_type(dst))
    return builder.sext(value, value_type(dst)) if signed else builder.zext(value, value_type(dst))


def _float_to_float(builder: ir.IRBuilder, value: ir.Value, src: int, dst: int) -> ir.Value:
    if src == 16:
        value = builder.fpext(value, FLOAT)
        return value if dst == 32 else builder.fpext(value, DOUBLE)
    if src == 32:
        return builder.fptrunc(value, HALF) if dst == 16 else builder.fpext(value, DOUBLE)
    if dst == 32:
        return builder.fptrunc(value, FLOAT)
    return builder.fptrunc(_round_to_odd_f32(builder, value), HALF)


def _round_to_odd_f32(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x`` (double) rounded to float toward zero, with the last bit set when inexact. Rounding
    that to half again is the correctly rounded half of ``x`` (float has 13 spare bits)."""
    nearest = builder.fptrunc(x, FLOAT)
    back = builder.fpext(nearest, DOUBLE)
    exact = builder.fcmp_ordered("==", back, x)
    fabs = builder.module.declare_intrinsic("llvm.fabs", [DOUBLE])
    away = builder.fcmp_ordered(">", builder.call(fabs, [back]), builder.call(fabs, [x]))
    bits = builder.bitcast(nearest, I32)
    toward_zero = builder.select(away, builder.sub(bits, ir.Constant(I32, 1)), bits)
    odd = builder.or_(toward_zero, ir.Constant(I32, 1))
    return builder.bitcast(builder.select(exact, bits, odd), FLOAT)


def _cvtt(builder: ir.IRBuilder, x: ir.Value, bits: int) -> ir.Value:
    """x86's truncating conversion to a signed ``bits``-bit integer: ``INT_MIN`` for NaN and
    out-of-range values (LLVM's ``fptosi`` would be poison there)."""
    ty = ir.IntType(bits)
    lo = ir.Constant(x.type, -float(2 ** (bits - 1)))
    hi = ir.Constant(x.type, float(2 ** (bits - 1)))
    in_range = builder.and_(builder.fcmp_ordered(">=", x, lo), builder.fcmp_ordered("<", x, hi))
    safe = builder.select(in_range, x, ir.Constant(x.type, 0.0))
    return builder.select(in_range, builder.fptosi(safe, ty), ir.Constant(ty, -(2 ** (bits - 1))))


def _cvtt_unsigned(builder: ir.IRBuilder, x: ir.Value, bits: int) -> ir.Value:
    """The unsigned conversion compilers emit from ``cvtt``: values from ``2**(bits-1)`` on are
    converted after subtracting it, and the top bit is put back."""
    top = 2 ** (bits - 1)
    big = builder.fcmp_ordered(">=", x, ir.Constant(x.type, float(top)))
    shifted = _cvtt(builder, builder.fsub(x, ir.Constant(x.type, float(top))), bits)
    flipped = builder.xor(shifted, ir.Constant(ir.IntType(bits), -top))
    return builder.select(big, flipped, _cvtt(builder, x, bits))


def _float_to_int(builder: ir.IRBuilder, x: ir.Value, src: ScalarType, dst: ScalarType) -> ir.Value:
    """``x`` is in ``work_type(src)``; ``dst`` is an integer type (not i1)."""
    bits = dst.bits
    target = value_type(dst)
    if bits == 64:
        return _cvtt_unsigned(builder, x, 64) if not dst.is_signed else _cvtt(builder, x, 64)
    if bits == 32:
        if dst.is_signed:
            return _cvtt(builder, x, 32)
        if src.bits == 16:
            return builder.trunc(_cvtt(builder, x, 64), target)
        return _cvtt_unsigned(builder, x, 32)
    return builder.trunc(_cvtt(builder, x, 32), target)

