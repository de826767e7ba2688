"""Complex numbers in LLVM IR: the scalar functions of ``complex<f32>``/``complex<f64>`` values
computed on their real parts, as NumPy's loops compute them.

A complex value is a ``{float, float}`` (or ``{double, double}``) struct, real part first: in
memory that is NumPy's layout and alignment. The functions are NumPy's formulas:

- ``mul`` is ``(ar br - ai bi, ar bi + ai br)``, without fused multiply-adds; ``div`` is
  Smith's algorithm as NumPy's loop writes it (scaling by the larger part of the divisor, and
  a zero divisor dividing each part by 0); ``abs`` is the C library's ``hypot``; ``angle`` is
  ``arctan2(imag, real)``;
- ``exp`` is ``exp(re) (cos im + i sin im)`` with the vector math library's ``exp``, ``cos`` and
  ``sin``; an imaginary part of zero is kept as it is (``exp(x + 0i)`` is real even where
  ``exp(x)`` overflows), as C99's ``cexp``. Other infinite or NaN operands follow the formula,
  not C99's table of special cases.

>>> import llvmlite.ir as ir
>>> from lowering.ir.types import C64
>>> from lowering.dialects.scalar import MulOp
>>> module = ir.Module()
>>> ty = value_type(C64)
>>> fn = ir.Function(module, ir.FunctionType(ty, [ty, ty]), "f")
>>> builder = ir.IRBuilder(fn.append_basic_block())
>>> _ = builder.ret(emit_complex(builder, MulOp, list(fn.args), [C64, C64], C64))
>>> str(ty), "fmul float" in str(module)
('{float, float}', True)
"""
from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from lowering.dialects.scalar import ScalarOp
from lowering.ir.types import ScalarType

from .casts import convert
from .math_calls import math_call
from .values import value_type

MathCall = Callable[[ir.IRBuilder, str, list], ir.Value]


def make(builder: ir.IRBuilder, t: ScalarType, real: ir.Value, imag: ir.Value) -> ir.Value:
    """The complex value of type ``t`` with these parts."""
    value = ir.Constant(value_type(t), ir.Undefined)
    return builder.insert_value(builder.insert_value(value, real, 0), imag, 1)


def parts(builder: ir.IRBuilder, z: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The real and imaginary parts of complex ``z``."""
    return builder.extract_value(z, 0), builder.extract_value(z, 1)


def convert_complex(builder: ir.IRBuilder, value: ir.Value, src: ScalarType,
                    dst: ScalarType) -> ir.Value:
    """``value`` of type ``src`` as complex type ``dst`` (NumPy's ``astype``): a real value
    becomes the real part, a complex one has both parts converted."""
    part = dst.real_part
    if src.is_complex:
        re, im = parts(builder, value)
        return make(builder, dst, convert(builder, re, src.real_part, part),
                    convert(builder, im, src.real_part, part))
    real = convert(builder, value, src, part)
    return make(builder, dst, real, ir.Constant(real.type, 0.0))


class ComplexEmitter:
    """Emits the scalar functions that take or make complex values."""

    def __init__(self, builder: ir.IRBuilder, math: MathCall = math_call):
        self.b = builder
        self.math = math

    def emit(self, op_class: type[ScalarOp], args: list, arg_types: list[ScalarType],
             result: ScalarType) -> ir.Value:
        short = op_class.short
        if short == "cast":
            return convert_complex(self.b, args[0], arg_types[0], result)
        if short in ("complex", "complex_from_polar"):
            r, s = args
            if short == "complex_from_polar":
                r, s = self.b.fmul(r, self.math(self.b, "cos", [s])), \
                    self.b.fmul(r, self.math(self.b, "sin", [s]))
            return make(self.b, result, r, s)
        z = [parts(self.b, v) for v in args]
        method = getattr(self, "_" + short, None)
        if method is None:
            raise ValueError(f"no lowering of '{short}' for complex numbers")
        found = method(*z)
        return make(self.b, result, *found) if isinstance(found, tuple) else found

    # -- functions on (real, imag) pairs ------------------------------------------------------

    def _real(self, z):
        return z[0]

    def _imag(self, z):
        return z[1]

    def _angle(self, z):
        return self.math(self.b, "arctan2", [z[1], z[0]])

    def _abs(self, z):
        return self.math(self.b, "hypot", [z[0], z[1]])

    def _conj(self, z):
        return z[0], self.b.fneg(z[1])

    def _neg(self, z):
        return self.b.fneg(z[0]), self.b.fneg(z[1])

    def _add(self, x, y):
        return self.b.fadd(x[0], y[0]), self.b.fadd(x[1], y[1])

    def _sub(self, x, y):
        return self.b.fsub(x[0], y[0]), self.b.fsub(x[1], y[1])

    def _mul(self, x, y):
        b = self.b
        return (b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1])),
                b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0])))

    def _sqr(self, z):
        return self._mul(z, z)

    def _div(self, x, y):
        b = self.b
        (ar, ai), (br, bi) = x, y
        fabs = self._fabs
        abs_br, abs_bi = fabs(br), fabs(bi)
        one, zero = ir.Constant(br.type, 1.0), ir.Constant(br.type, 0.0)
        # |br| >= |bi|: scale by br (a zero divisor divides each part by |br|, giving inf or NaN).
        rat = b.fdiv(bi, br)
        scl = b.fdiv(one, b.fadd(br, b.fmul(bi, rat)))
        real_wide = b.fmul(b.fadd(ar, b.fmul(ai, rat)), scl)
        imag_wide = b.fmul(b.fsub(ai, b.fmul(ar, rat)), scl)
        both_zero = b.and_(b.fcmp_ordered("==", abs_br, zero), b.fcmp_ordered("==", abs_bi, zero))
        real_wide = b.select(both_zero, b.fdiv(ar, abs_br), real_wide)
        imag_wide = b.select(both_zero, b.fdiv(ai, abs_br), imag_wide)
        # |br| < |bi|: scale by bi.
        rat2 = b.fdiv(br, bi)
        scl2 = b.fdiv(one, b.fadd(bi, b.fmul(br, rat2)))
        real_tall = b.fmul(b.fadd(b.fmul(ar, rat2), ai), scl2)
        imag_tall = b.fmul(b.fsub(b.fmul(ai, rat2), ar), scl2)
        wide = b.fcmp_ordered(">=", abs_br, abs_bi)
        return b.select(wide, real_wide, real_tall), b.select(wide, imag_wide, imag_tall)

    def _exp(self, z):
        b = self.b
        re, im = z
        r = self.math(b, "exp", [re])
        real = b.fmul(r, self.math(b, "cos", [im]))
        imag = b.fmul(r, self.math(b, "sin", [im]))
        imag_is_zero = b.fcmp_ordered("==", im, ir.Constant(im.type, 0.0))
        return real, b.select(imag_is_zero, im, imag)

    def _fabs(self, x):
        fn = self.b.module.declare_intrinsic("llvm.fabs", [x.type])
        return self.b.call(fn, [x])


def emit_complex(builder: ir.IRBuilder, op_class: type[ScalarOp], args: list,
                 arg_types: list[ScalarType], result: ScalarType,
                 math: MathCall = math_call) -> ir.Value:
    """The value of ``op_class`` on ``args`` where an operand or the result is complex."""
    return ComplexEmitter(builder, math).emit(op_class, args, arg_types, result)


def involves_complex(arg_types: list[ScalarType], result: ScalarType) -> bool:
    """Whether a scalar function of these types computes on complex values (``select`` moves
    them as they are)."""
    return result.is_complex or any(t.is_complex for t in arg_types)


__all__ = ["make", "parts", "convert_complex", "ComplexEmitter", "emit_complex",
           "involves_complex"]
