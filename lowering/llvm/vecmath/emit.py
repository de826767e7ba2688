"""The building blocks of the vector math library: float formats and a branch-free IR builder.

:class:`MathBuilder` wraps an ``llvmlite.ir.IRBuilder`` positioned in a function of one float
type and emits straight-line code only: arithmetic, ``llvm.fma``/``llvm.fabs``/... intrinsics
(every one has a vector form, so the loop vectorizer can widen the code after inlining), bit
manipulation through bitcasts, and ``select`` instead of branches.  Python numbers passed where a
value is expected become constants of the builder's type.

>>> import llvmlite.ir as ir
>>> module = ir.Module()
>>> fn = ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "twice_plus_one")
>>> mb = MathBuilder(ir.IRBuilder(fn.append_basic_block()), FORMATS["f32"])
>>> _ = mb.builder.ret(mb.fma(fn.args[0], 2.0, 1.0))
>>> "llvm.fma.f32" in str(module)
True
"""
from __future__ import annotations

import dataclasses
import functools
import math
import struct
from decimal import Decimal, localcontext
from typing import Sequence, Union

import llvmlite.ir as ir

from lowering.llvm.vecmath.remez import pi, round_to_format


@dataclasses.dataclass(frozen=True)
class FloatFormat:
    """An IEEE binary format: its IR types and the constants bit manipulation needs."""

    name: str              # "f32" / "f64": the suffix of function names
    bits: int              # storage width
    precision: int         # significand bits, the implicit one included
    exponent_bias: int

    @property
    def ir_type(self) -> ir.Type:
        return ir.FloatType() if self.bits == 32 else ir.DoubleType()

    @property
    def int_type(self) -> ir.IntType:
        return ir.IntType(self.bits)

    @property
    def fraction_bits(self) -> int:
        return self.precision - 1

    @property
    def max_exponent(self) -> int:
        return self.exponent_bias

    @property
    def min_exponent(self) -> int:
        return 1 - self.exponent_bias

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** self.min_exponent

    @property
    def largest(self) -> float:
        return (2.0 - 2.0 ** (1 - self.precision)) * 2.0 ** self.max_exponent

    @property
    def epsilon(self) -> float:
        """The spacing of numbers in [1, 2)."""
        return 2.0 ** (1 - self.precision)

    def round(self, value: float) -> float:
        """``value`` rounded to this format (to nearest, as a Python float).

        >>> FORMATS["f32"].round(0.1)
        0.10000000149011612
        """
        if self.bits == 64:
            return float(value)
        if math.isinf(value) or math.isnan(value) or abs(value) < 3.5e38:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        return math.copysign(math.inf, value)

    def bits_of(self, value: float) -> int:
        """The encoding of ``value`` rounded to this format, as an unsigned integer.

        >>> hex(FORMATS["f32"].bits_of(1.0))
        '0x3f800000'
        """
        packed = struct.pack("<f" if self.bits == 32 else "<d", self.round(value))
        return int.from_bytes(packed, "little")

    def split(self, value: Decimal, keep_bits: int | None = None) -> tuple[float, float]:
        """A constant as ``hi + lo`` in this format: ``hi`` has ``keep_bits`` significant bits
        (all by default; fewer make small integer multiples of ``hi`` exact), ``lo`` is the rest.

        >>> FORMATS["f64"].split(LN2, 32)
        (0.6931471806019545, -4.2009150726810846e-11)
        """
        bits = self.precision if keep_bits is None else keep_bits
        with localcontext() as ctx:
            ctx.prec = 60
            unit = Decimal(2) ** (math.frexp(float(value))[1] - bits)
            hi = self.round(float((value / unit).to_integral_value() * unit))
            return hi, round_to_format(value - Decimal(hi), self.name)


with localcontext() as _ctx:
    _ctx.prec = 60
    LN2 = Decimal(2).ln()
    LN10 = Decimal(10).ln()
    PI = pi()
    LOG2E = 1 / LN2
    LOG10E = 1 / LN10
    LOG10_2 = LN2 / LN10

FORMATS = {"f32": FloatFormat("f32", 32, 24, 127), "f64": FloatFormat("f64", 64, 53, 1023)}


def format_of(ty: ir.Type) -> FloatFormat:
    """The format of an llvmlite float type (``FloatType`` or ``DoubleType``).

    >>> format_of(ir.DoubleType()).name
    'f64'
    """
    if isinstance(ty, ir.FloatType):
        return FORMATS["f32"]
    if isinstance(ty, ir.DoubleType):
        return FORMATS["f64"]
    raise TypeError(f"vector math functions exist for float and double, not for '{ty}'")


Operand = Union[ir.Value, float, int]
Pair = tuple[ir.Value, ir.Value]


# The first LLVM whose loop vectorizer widens ``llvm.ldexp`` (LLVM 20 leaves a loop that calls
# it scalar as a whole; 22 widens it to ``vscalef``).
LDEXP_VECTORIZES_FROM = (22,)


def host_scales_exactly() -> bool:
    """Whether ``llvm.ldexp`` is the better way to compute ``x·2**k`` here: the CPU has an
    instruction for it, rounded once (AVX-512's ``vscalef``; elsewhere ``llvm.ldexp`` becomes a
    libm call per element), and the LLVM in use vectorizes loops that call it. Otherwise the
    builder scales in two steps instead, with the same results.

    >>> host_scales_exactly() in (True, False)
    True
    """
    from lowering.llvm.jit import host_features
    return _scales_exactly(host_features())


@functools.cache
def _scales_exactly(features: str) -> bool:
    import llvmlite.binding as llvm
    return ("+avx512f" in features.split(",")
            and tuple(llvm.llvm_version_info) >= LDEXP_VECTORIZES_FROM)


class MathBuilder:
    """Straight-line float code for one format (see the module docstring).

    ``ldexp_instruction``: scale by powers of two with ``llvm.ldexp`` (one instruction where
    ``host_scales_exactly``; the default is what the host has) instead of two multiplications;
    both give the same, once-rounded results.
    """

    def __init__(self, builder: ir.IRBuilder, fmt: FloatFormat,
                 ldexp_instruction: bool | None = None):
        self.builder = builder
        self.fmt = fmt
        self.ty = fmt.ir_type
        self.ity = fmt.int_type
        self.i32 = ir.IntType(32)
        self.ldexp_instruction = (host_scales_exactly() if ldexp_instruction is None
                                  else ldexp_instruction)

    # ------------------------------------------------------------ constants and intrinsics

    def const(self, value: float) -> ir.Constant:
        """A constant of the format (rounded to it)."""
        return ir.Constant(self.ty, self.fmt.round(float(value)))

    def iconst(self, value: int, ty: ir.IntType | None = None) -> ir.Constant:
        return ir.Constant(ty or self.ity, value)

    def _v(self, x: Operand) -> ir.Value:
        return x if isinstance(x, ir.Value) else self.const(x)

    def intrinsic(self, name: str, *args: Operand) -> ir.Value:
        """Call ``llvm.<name>.<f32|f64>`` on float operands (declared on first use)."""
        full = f"llvm.{name}.{self.fmt.name}"
        module = self.builder.module
        fn = module.globals.get(full)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(self.ty, [self.ty] * len(args)), full)
        return self.builder.call(fn, [self._v(a) for a in args])

    # ------------------------------------------------------------ arithmetic

    def add(self, a: Operand, b: Operand) -> ir.Value:
        return self.builder.fadd(self._v(a), self._v(b))

    def sub(self, a: Operand, b: Operand) -> ir.Value:
        return self.builder.fsub(self._v(a), self._v(b))

    def mul(self, a: Operand, b: Operand) -> ir.Value:
        return self.builder.fmul(self._v(a), self._v(b))

    def div(self, a: Operand, b: Operand) -> ir.Value:
        return self.builder.fdiv(self._v(a), self._v(b))

    def neg(self, a: Operand) -> ir.Value:
        return self.builder.fneg(self._v(a))

    def fma(self, a: Operand, b: Operand, c: Operand) -> ir.Value:
        """``a*b + c`` rounded once."""
        return self.intrinsic("fma", a, b, c)

    def abs(self, a: Operand) -> ir.Value:
        return self.intrinsic("fabs", a)

    def copysign(self, magnitude: Operand, sign: Operand) -> ir.Value:
        return self.intrinsic("copysign", magnitude, sign)

    def rint(self, a: Operand) -> ir.Value:
        """Round to the nearest integer, ties to even."""
        return self.intrinsic("rint", a)

    def floor(self, a: Operand) -> ir.Value:
        return self.intrinsic("floor", a)

    def trunc(self, a: Operand) -> ir.Value:
        return self.intrinsic("trunc", a)

    def sqrt(self, a: Operand) -> ir.Value:
        return self.intrinsic("sqrt", a)

    def clamp(self, x: Operand, lo: float, hi: float) -> ir.Value:
        """``x`` limited to [lo, hi]; NaN becomes ``lo`` (callers select NaN results afterwards)."""
        return self.intrinsic("minnum", self.intrinsic("maxnum", x, lo), hi)

    def horner(self, x: Operand, coefficients: Sequence[float]) -> ir.Value:
        """``c0 + c1 x + c2 x² + ...`` by Horner's rule with fused multiply-adds."""
        acc = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    # ------------------------------------------------------------ comparisons and selection

    def _cmp(self, op: str, a: Operand, b: Operand) -> ir.Value:
        return self.builder.fcmp_ordered(op, self._v(a), self._v(b))

    def lt(self, a: Operand, b: Operand) -> ir.Value:
        return self._cmp("<", a, b)

    def le(self, a: Operand, b: Operand) -> ir.Value:
        return self._cmp("<=", a, b)

    def gt(self, a: Operand, b: Operand) -> ir.Value:
        return self._cmp(">", a, b)

    def ge(self, a: Operand, b: Operand) -> ir.Value:
        return self._cmp(">=", a, b)

    def eq(self, a: Operand, b: Operand) -> ir.Value:
        return self._cmp("==", a, b)

    def isnan(self, a: Operand) -> ir.Value:
        return self.builder.fcmp_unordered("uno", self._v(a), self._v(a))

    def isinf(self, a: Operand) -> ir.Value:
        return self.eq(self.abs(a), math.inf)

    def lt_or_nan(self, a: Operand, b: Operand) -> ir.Value:
        """``a < b`` or either is NaN: the usual "result is NaN" test of a domain bound."""
        return self.builder.fcmp_unordered("<", self._v(a), self._v(b))

    def select(self, cond: ir.Value, a: Operand, b: Operand) -> ir.Value:
        return self.builder.select(cond, self._v(a), self._v(b))

    def or_(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.or_(a, b)

    def and_(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.and_(a, b)

    def not_(self, a: ir.Value) -> ir.Value:
        return self.builder.not_(a)

    # ------------------------------------------------------------ bits and integers

    def to_bits(self, x: Operand) -> ir.Value:
        return self.builder.bitcast(self._v(x), self.ity)

    def from_bits(self, i: ir.Value) -> ir.Value:
        return self.builder.bitcast(i, self.ty)

    def to_i32(self, x: Operand) -> ir.Value:
        """Float to i32, truncating; only for values known to be in range (else LLVM's poison)."""
        return self.builder.fptosi(self._v(x), self.i32)

    def i32_to_float(self, k: ir.Value) -> ir.Value:
        return self.builder.sitofp(k, self.ty)

    def widen(self, k: ir.Value) -> ir.Value:
        """An i32 sign-extended to the format's integer width."""
        return k if self.ity.width == 32 else self.builder.sext(k, self.ity)

    def narrow(self, i: ir.Value) -> ir.Value:
        """The format's integer truncated to i32."""
        return i if self.ity.width == 32 else self.builder.trunc(i, self.i32)

    def pow2i(self, k: ir.Value) -> ir.Value:
        """2**k for an i32 ``k`` in the normal exponent range, built from its bits."""
        biased = self.builder.add(k, self.iconst(self.fmt.exponent_bias, self.i32))
        return self.from_bits(self.builder.shl(self.widen(biased),
                                               self.iconst(self.fmt.fraction_bits)))

    def ldexp(self, x: Operand, k: ir.Value) -> ir.Value:
        """x · 2**k for an i32 ``k`` up to about twice the exponent range, rounded once (results
        that overflow give inf, subnormal results round once): ``llvm.ldexp`` with
        ``ldexp_instruction``, else two exact-or-once rounded multiplications."""
        if self.ldexp_instruction:
            name = f"llvm.ldexp.{self.fmt.name}.i32"
            module = self.builder.module
            fn = module.globals.get(name)
            if fn is None:
                fn = ir.Function(module, ir.FunctionType(self.ty, [self.ty, self.i32]), name)
            return self.builder.call(fn, [self._v(x), k])
        half = self.builder.ashr(k, self.iconst(1, self.i32))
        rest = self.builder.sub(k, half)
        return self.mul(self.mul(x, self.pow2i(half)), self.pow2i(rest))

    def exponent_bits(self, x: Operand) -> ir.Value:
        """The biased exponent field of ``x`` as an i32 (0 for zeros and subnormals)."""
        shifted = self.builder.lshr(self.to_bits(self.abs(x)), self.iconst(self.fmt.fraction_bits))
        return self.narrow(shifted)

    # ------------------------------------------------------------ error-free transformations

    def two_sum(self, a: Operand, b: Operand) -> Pair:
        """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth, any magnitudes)."""
        a, b = self._v(a), self._v(b)
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    def fast_two_sum(self, a: Operand, b: Operand) -> Pair:
        """(s, e) with s + e = a + b exactly, given |a| ≥ |b| (Dekker)."""
        a, b = self._v(a), self._v(b)
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def two_prod(self, a: Operand, b: Operand) -> Pair:
        """(p, e) with p = fl(a·b) and p + e = a·b exactly (by fma)."""
        a, b = self._v(a), self._v(b)
        p = self.mul(a, b)
        return p, self.fma(a, b, self.neg(p))

    def dd_add(self, x: Pair, y: Pair) -> Pair:
        """Double-word sum of (hi, lo) pairs, normalized."""
        s, e = self.two_sum(x[0], y[0])
        return self.fast_two_sum(s, self.add(e, self.add(x[1], y[1])))

    def dd_mul(self, x: Pair, y: Pair) -> Pair:
        """Double-word product of (hi, lo) pairs, normalized."""
        p, e = self.two_prod(x[0], y[0])
        e = self.fma(x[0], y[1], self.fma(x[1], y[0], e))
        return self.fast_two_sum(p, e)

    def dd_scale(self, x: Pair, c: Operand) -> Pair:
        """Double-word product of a pair and a single value, normalized."""
        p, e = self.two_prod(x[0], c)
        return self.fast_two_sum(p, self.fma(x[1], c, e))
