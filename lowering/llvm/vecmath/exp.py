"""Exponentials: exp, exp2, expm1, and sinh, cosh, tanh, sigmoid built on them.

All share one reduction: ``x = k·ln2 + r`` with ``k = rint(x/ln2)`` and ``|r| ≤ ln2/2``, where
``r`` is computed by Cody-Waite (``ln2`` split in two, the high part short enough that ``k·hi`` is
exact), ``exp(r)`` by a minimax polynomial, and ``2**k`` by building the exponent bits; ``k`` is
applied in two halves so results that overflow become inf and subnormal results round only once.

>>> import llvmlite.ir as ir
>>> from lowering.llvm.vecmath.emit import FORMATS, MathBuilder
>>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "e")
>>> mb = MathBuilder(ir.IRBuilder(fn.append_basic_block()), FORMATS["f64"])
>>> _ = mb.builder.ret(emit_exp(mb, fn.args[0]))
>>> "select" in str(fn) and "br " not in str(fn)
True
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from lowering.llvm.vecmath.coefficients import COEFFICIENTS
from lowering.llvm.vecmath.emit import LN2, LOG2E, MathBuilder, Pair


def _exp_limits(mb: MathBuilder) -> tuple[float, float]:
    """Arguments beyond which exp is inf / 0 after rounding, with a margin: clamping to them
    keeps k in the range ``ldexp`` handles without changing any result."""
    fmt = mb.fmt
    hi = (fmt.max_exponent + 2) * math.log(2) + 1.0     # beyond sinh's and cosh's overflow too
    lo = (fmt.min_exponent - fmt.precision - 1) * math.log(2) - 0.5
    return lo, hi


def reduce_ln2(mb: MathBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(k as float, k as i32, r) with x = k·ln2 + r, |r| ≲ ln2/2; ``x`` must be clamped."""
    kf = mb.rint(mb.mul(x, float(LOG2E)))
    ln2_hi, ln2_lo = mb.fmt.split(LN2, mb.fmt.precision - 12)
    r = mb.fma(kf, -ln2_hi, x)
    r = mb.fma(kf, -ln2_lo, r)
    return kf, mb.to_i32(kf), r


def reduce_ln2_dd(mb: MathBuilder, x: ir.Value) -> tuple[ir.Value, Pair]:
    """(k as i32, (r_hi, r_lo)) with x = k·ln2 + r_hi + r_lo to twice the precision."""
    kf = mb.rint(mb.mul(x, float(LOG2E)))
    ln2_hi, ln2_lo = mb.fmt.split(LN2, mb.fmt.precision - 12)
    r1 = mb.fma(kf, -ln2_hi, x)                       # exact
    return mb.to_i32(kf), mb.two_sum(r1, mb.mul(kf, -ln2_lo))


def exp_poly(mb: MathBuilder, r: ir.Value) -> ir.Value:
    """exp(r) for |r| ≤ ln2/2 as (1 + r) + r²·Q(r), with 1 + r kept exactly (Fast2Sum), so the
    result rounds about once."""
    q = mb.horner(r, COEFFICIENTS["exp", mb.fmt.name])
    hi, lo = mb.fast_two_sum(1.0, r)
    return mb.add(hi, mb.fma(mb.mul(r, r), q, lo))


def emit_exp(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """e**x."""
    lo, hi = _exp_limits(mb)
    _, k, r = reduce_ln2(mb, mb.clamp(x, lo, hi))
    result = mb.ldexp(exp_poly(mb, r), k)
    return mb.select(mb.isnan(x), x, result)


def exp_pair(mb: MathBuilder, x: ir.Value, shift: int = 0) -> Pair:
    """e**x · 2**shift as a double-word (hi, lo), about 2**-8 ulp more accurate than
    :func:`emit_exp`'s rounded result: what sigmoid, softplus, sinh and cosh build on so their
    own roundings are the only ones that count.  ``hi`` overflows to inf as e**x does; NaN is not
    handled."""
    lo_limit, hi_limit = _exp_limits(mb)
    k, (r, r_lo) = reduce_ln2_dd(mb, mb.clamp(x, lo_limit, hi_limit))
    tail = mb.mul(mb.mul(r, r), mb.horner(r, COEFFICIENTS["exp", mb.fmt.name]))  # e**r - 1 - r
    tail = mb.add(tail, mb.fma(r_lo, r, r_lo))       # + r_lo·e**r
    one_hi, one_lo = mb.fast_two_sum(1.0, r)          # 1 + r exactly
    hi, lo = mb.fast_two_sum(one_hi, mb.add(one_lo, tail))
    k = mb.builder.add(k, mb.iconst(shift, mb.i32))
    return mb.ldexp(hi, k), mb.ldexp(lo, k)


def exp_dd(mb: MathBuilder, x: Pair) -> ir.Value:
    """e**(hi + lo) for a double-word argument (|lo| ≤ ulp(hi)): what pow and erf need."""
    hi, lo_part = x
    lo, hi_limit = _exp_limits(mb)
    hi_c = mb.clamp(hi, lo, hi_limit)
    # Where hi was clamped (or is NaN) lo means nothing and could be huge or NaN.
    lo_part = mb.select(mb.eq(hi_c, hi), lo_part, 0.0)
    k, (r, r_lo) = reduce_ln2_dd(mb, hi_c)
    r, r_lo = mb.two_sum(r, mb.add(r_lo, lo_part))   # r_lo is now below half an ulp of r
    # 1 + r summed exactly, so e**r = 1 + r + r²·Q(r) + r_lo·e**r rounds once.
    tail = mb.mul(mb.mul(r, r), mb.horner(r, COEFFICIENTS["exp", mb.fmt.name]))
    one_hi, one_lo = mb.two_sum(1.0, r)
    p = mb.add(one_hi, mb.add(one_lo, mb.add(tail, mb.fma(r_lo, r, r_lo))))
    return mb.ldexp(p, k)


def emit_exp2(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """2**x: k = rint(x), r = x - k exactly, 2**r = 1 + r·Q(r)."""
    fmt = mb.fmt
    xc = mb.clamp(x, fmt.min_exponent - fmt.precision - 2, fmt.max_exponent + 2)
    kf = mb.rint(xc)
    r = mb.sub(xc, kf)
    p = mb.fma(r, mb.horner(r, COEFFICIENTS["exp2", fmt.name]), 1.0)
    result = mb.ldexp(p, mb.to_i32(kf))
    return mb.select(mb.isnan(x), x, result)


def emit_expm1(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """e**x - 1 without cancellation: 2**k·expm1(r) + (2**k - 1), one fma."""
    fmt = mb.fmt
    _, hi = _exp_limits(mb)
    lo = -(fmt.precision + 3) * math.log(2)        # below, e**x - 1 rounds to -1
    xc = mb.clamp(x, lo, hi)
    k, (r, r_lo) = reduce_ln2_dd(mb, xc)
    tail = mb.mul(mb.mul(r, r), mb.horner(r, COEFFICIENTS["expm1", fmt.name]))  # expm1(r) - r
    tail = mb.add(tail, mb.fma(r_lo, r, r_lo))        # + r_lo·e**r: the reduction's rounding
    # 2**k·(r + tail) + (2**k - 1): the exact terms 2**k, -1 and 2**k·r are summed without error,
    # so neither their cancellation (k = 1, r < 0) nor the -1 next to a large 2**k costs accuracy.
    # 2**k stays finite for k ≤ max_exponent; above that the -1 no longer matters.
    limit = mb.iconst(fmt.max_exponent, mb.i32)
    too_big = mb.builder.icmp_signed(">", k, limit)
    scale = mb.pow2i(mb.builder.select(too_big, limit, k))
    b_hi, b_lo = mb.two_sum(scale, -1.0)              # 2**k - 1 is inexact above 2**precision
    a_hi, a_lo = mb.two_sum(b_hi, mb.mul(scale, r))
    moderate = mb.add(a_hi, mb.add(mb.fma(scale, tail, a_lo), b_lo))
    huge = mb.ldexp(mb.add(mb.add(r, tail), 1.0), k)
    result = mb.select(too_big, huge, moderate)
    # expm1(±0) = ±0 (the reduction loses the sign of zero); NaN stays NaN.
    return mb.select(mb.or_(mb.eq(x, 0.0), mb.isnan(x)), x, result)


def emit_sinh(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """sinh: x + x³·P(x²) for |x| < 1, else E - 1/(4E) with E = e**|x|/2 (never overflowing
    before sinh itself does) as a double-word."""
    a = mb.abs(x)
    z = mb.mul(a, a)
    small = mb.fma(mb.mul(z, a), mb.horner(z, COEFFICIENTS["sinh", mb.fmt.name]), a)
    e_hi, e_lo = exp_pair(mb, a, -1)
    inverse = mb.div(0.25, e_hi)
    hi, lo = mb.two_sum(e_hi, mb.neg(inverse))
    large = mb.select(mb.isinf(e_hi), e_hi, mb.add(hi, mb.add(lo, e_lo)))
    result = mb.copysign(mb.select(mb.lt(a, 1.0), small, large), x)
    return mb.select(mb.isnan(x), x, result)


def emit_cosh(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """cosh = E + 1/(4E) with E = e**|x|/2 as a double-word."""
    e_hi, e_lo = exp_pair(mb, mb.abs(x), -1)
    inverse = mb.div(0.25, e_hi)
    hi, lo = mb.two_sum(e_hi, inverse)
    result = mb.select(mb.isinf(e_hi), e_hi, mb.add(hi, mb.add(lo, e_lo)))
    return mb.select(mb.isnan(x), x, result)


TANH_POLY_BOUND = 0.625     # the fit's interval; above it tanh ≥ 0.55 and 1 - 2/(t+2) is exact-ish


TANH_ONE = 20.0             # tanh rounds to 1 beyond this in both formats


def emit_tanh(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """tanh: x + x³·P(x²) below 0.625, else 1 - 2/(e**2|x| + 1) with the exponential and the
    quotient as double-words, so the result rounds about once."""
    a = mb.abs(x)
    z = mb.mul(a, a)
    small = mb.fma(mb.mul(z, a), mb.horner(z, COEFFICIENTS["tanh", mb.fmt.name]), a)
    e_hi, e_lo = exp_pair(mb, mb.intrinsic("minnum", mb.mul(a, 2.0), 2 * TANH_ONE))
    d_hi, d_lo = mb.fast_two_sum(e_hi, 1.0)
    d_lo = mb.add(d_lo, e_lo)
    q = mb.div(2.0, d_hi)
    # The quotient's residual, divided by d_hi as a product with q/2 (one division, not two).
    q_lo = mb.mul(mb.sub(mb.fma(mb.neg(q), d_hi, 2.0), mb.mul(q, d_lo)), mb.mul(q, 0.5))
    hi, lo = mb.two_sum(1.0, mb.neg(q))
    large = mb.add(hi, mb.sub(lo, q_lo))
    result = mb.select(mb.lt(a, TANH_POLY_BOUND), small, large)
    result = mb.copysign(mb.select(mb.gt(a, TANH_ONE), 1.0, result), x)
    return mb.select(mb.isnan(x), x, result)


def emit_sigmoid(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """1/(1 + e**-x) as n/(1 + e) with e = e**-|x| ≤ 1 and n = 1 or e: no overflow, and the
    quotient of double-words is corrected by its residual, so it rounds about once."""
    e_hi, e_lo = exp_pair(mb, mb.neg(mb.abs(x)))
    d_hi, d_lo = mb.fast_two_sum(1.0, e_hi)
    d_lo = mb.add(d_lo, e_lo)
    positive = mb.ge(x, 0.0)
    n_hi, n_lo = mb.select(positive, 1.0, e_hi), mb.select(positive, 0.0, e_lo)
    inverse = mb.div(1.0, d_hi)                       # one division; the residual corrects q
    q = mb.mul(n_hi, inverse)
    residual = mb.sub(mb.add(mb.fma(mb.neg(q), d_hi, n_hi), n_lo), mb.mul(q, d_lo))
    result = mb.fma(residual, inverse, q)
    return mb.select(mb.isnan(x), x, result)
