"""Logarithms: log, log2, log10, log1p, and softplus and pow built on them.

The reduction writes ``x = 2**k · m`` with ``m ∈ [√½, √2)`` by integer arithmetic on the bits
(subnormals are scaled up first).  With ``f = m - 1`` (exact) and ``s = f/(2+f)``,
``log(1+f) = f - f²/2 + s·(f²/2 + R(s²))`` (fdlibm's form, whose rounding errors stay far below an
ulp); it is kept as a double-word ``hi + lo`` so log2 and log10 can scale it without losing bits.

>>> import llvmlite.ir as ir
>>> from lowering.llvm.vecmath.emit import FORMATS, MathBuilder
>>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "l")
>>> mb = MathBuilder(ir.IRBuilder(fn.append_basic_block()), FORMATS["f32"])
>>> _ = mb.builder.ret(emit_log(mb, fn.args[0]))
>>> "br " in str(fn)
False
"""
from __future__ import annotations

import math
from decimal import Decimal

import llvmlite.ir as ir

from lowering.llvm.vecmath.coefficients import COEFFICIENTS
from lowering.llvm.vecmath.emit import FORMATS, LN2, LOG2E, LOG10_2, LOG10E, MathBuilder, Pair
from lowering.llvm.vecmath.exp import exp_dd, exp_pair

_SQRT_HALF = math.sqrt(0.5)


def _mantissa_bits(mb: MathBuilder) -> int:
    """The bits of √½ rounded to the format: the bottom of the mantissa interval."""
    return mb.fmt.bits_of(_SQRT_HALF)


def reduce_log(mb: MathBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(k as float, f) with x = 2**k · (1 + f), 1 + f ∈ [√½, √2), for finite x > 0."""
    fmt = mb.fmt
    subnormal = mb.lt(x, fmt.smallest_normal)
    scaled = mb.select(subnormal, mb.mul(x, 2.0 ** fmt.precision), x)
    shift = mb.builder.select(subnormal, mb.iconst(fmt.precision, mb.i32), mb.iconst(0, mb.i32))
    low = _mantissa_bits(mb)
    one = fmt.exponent_bias << fmt.fraction_bits
    bits = mb.builder.add(mb.to_bits(scaled), mb.iconst(one - low))
    k = mb.narrow(mb.builder.ashr(bits, mb.iconst(fmt.fraction_bits)))
    k = mb.builder.sub(mb.builder.sub(k, mb.iconst(fmt.exponent_bias, mb.i32)), shift)
    fraction = mb.builder.and_(bits, mb.iconst((1 << fmt.fraction_bits) - 1))
    m = mb.from_bits(mb.builder.add(fraction, mb.iconst(low)))
    return mb.i32_to_float(k), mb.sub(m, 1.0)


def log1p_small(mb: MathBuilder, f: ir.Value) -> Pair:
    """log(1 + f) for 1 + f ∈ [√½, √2) as a double-word (hi, lo)."""
    s = mb.div(f, mb.add(f, 2.0))
    z = mb.mul(s, s)
    r = mb.mul(z, mb.horner(z, COEFFICIENTS["log", mb.fmt.name]))
    half_f = mb.mul(f, 0.5)
    hfsq = mb.mul(half_f, f)
    hfsq_err = mb.fma(half_f, f, mb.neg(hfsq))          # f²/2 = hfsq + hfsq_err exactly
    hi = mb.sub(f, hfsq)
    lo = mb.sub(mb.sub(mb.sub(f, hi), hfsq), hfsq_err)   # f - f²/2 = hi + lo (Dekker)
    lo = mb.fma(s, mb.add(hfsq, r), lo)
    return hi, lo


def combine_log(mb: MathBuilder, kf: ir.Value, part: Pair, k_scale: Decimal,
                m_scale: Decimal | None = None) -> ir.Value:
    """k·k_scale + (hi + lo)·m_scale, rounded once at the end (k·k_scale_hi is exact): the
    logarithm from :func:`reduce_log` and :func:`log1p_small` in the base the scales give."""
    hi, lo = part
    if m_scale is not None:
        c_hi, c_lo = mb.fmt.split(m_scale)
        p, e = mb.two_prod(hi, c_hi)
        lo = mb.fma(lo, c_hi, mb.fma(hi, c_lo, e))
        hi = p
    k_hi, k_lo = mb.fmt.split(k_scale, mb.fmt.precision - 12)
    s, e = mb.two_sum(mb.mul(kf, k_hi), hi)
    return mb.add(s, mb.add(e, mb.fma(kf, k_lo, lo)))


def _log_specials(mb: MathBuilder, x: ir.Value, result: ir.Value) -> ir.Value:
    """log-like results at the domain edges: +inf, ±0 → -inf, negative or NaN → NaN."""
    result = mb.select(mb.eq(x, math.inf), math.inf, result)
    result = mb.select(mb.eq(x, 0.0), -math.inf, result)
    return mb.select(mb.lt_or_nan(x, 0.0), math.nan, result)


def _emit_log_base(mb: MathBuilder, x: ir.Value, k_scale: Decimal,
                   m_scale: Decimal | None) -> ir.Value:
    kf, f = reduce_log(mb, x)
    return _log_specials(mb, x, combine_log(mb, kf, log1p_small(mb, f), k_scale, m_scale))


def emit_log(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Natural logarithm."""
    return _emit_log_base(mb, x, LN2, None)


def emit_log2(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Base-2 logarithm (exact at powers of two)."""
    return _emit_log_base(mb, x, Decimal(1), LOG2E)


def emit_log10(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Base-10 logarithm."""
    return _emit_log_base(mb, x, LOG10_2, LOG10E)


def log1p_dd(mb: MathBuilder, x: ir.Value, x_lo: ir.Value | None = None
             ) -> tuple[ir.Value, Pair]:
    """(k, (hi, lo)) with log(1 + x + x_lo) ≈ k·ln2 + hi + lo, for x > -1 finite:
    1 + x + x_lo = u + c with c small, and log(u + c) = log(u) + c/u."""
    u, c = mb.two_sum(1.0, x)
    if x_lo is not None:
        c = mb.add(c, x_lo)
    kf, f = reduce_log(mb, u)
    hi, lo = log1p_small(mb, f)
    return kf, (hi, mb.add(lo, mb.div(c, u)))


def emit_log1p(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """log(1 + x), accurate near x = 0."""
    kf, part = log1p_dd(mb, x)
    result = combine_log(mb, kf, part, LN2, None)
    result = mb.select(mb.eq(x, math.inf), math.inf, result)
    result = mb.select(mb.eq(x, -1.0), -math.inf, result)
    result = mb.select(mb.lt_or_nan(x, -1.0), math.nan, result)
    return mb.select(mb.eq(x, 0.0), x, result)        # log1p(±0) = ±0


def emit_softplus(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """log(1 + e**x) = max(x, 0) + log1p(e**-|x|): no overflow, e**x itself for very negative x."""
    t_hi, t_lo = exp_pair(mb, mb.neg(mb.abs(x)))
    kf, (hi, lo) = log1p_dd(mb, t_hi, t_lo)
    # Small t: t - t²/2 + t³/3 directly (the next term, t⁴/4, is below 2**-(precision + 3) of
    # the result), as 1 + t would round away most of t's bits.
    small = mb.lt(t_hi, 2.0 ** -((mb.fmt.precision + 3) // 3))
    correction = mb.fma(mb.mul(t_hi, t_hi), mb.fma(t_hi, 1 / 3, -0.5), t_lo)
    kf = mb.select(small, 0.0, kf)
    hi, lo = mb.select(small, t_hi, hi), mb.select(small, correction, lo)
    # max(x, 0) + k·ln2_hi + hi + (lo + k·ln2_lo), the leading three summed exactly.
    ln2_hi, ln2_lo = mb.fmt.split(LN2, mb.fmt.precision - 12)
    s1, e1 = mb.two_sum(mb.select(mb.gt(x, 0.0), x, 0.0), mb.mul(kf, ln2_hi))
    s2, e2 = mb.two_sum(s1, hi)
    result = mb.add(s2, mb.add(mb.add(e1, e2), mb.fma(kf, ln2_lo, lo)))
    # Above 40, log1p(e**-x) is below half an ulp of x (and x = inf must not meet inf - inf).
    result = mb.select(mb.gt(x, 40.0), x, result)
    return mb.select(mb.isnan(x), x, result)


# ------------------------------------------------------------------------------------ pow

def log_dd(mb: MathBuilder, x: ir.Value) -> Pair:
    """log(x) as a double-word accurate to about 2**-66 relative (f64), for finite x > 0:
    log(1+f) = 2s + (2/3)s³ + s⁵·T(s²) with s = f/(2+f) computed as a double-word."""
    kf, f = reduce_log(mb, x)
    d_hi, d_lo = mb.two_sum(f, 2.0)
    s_hi = mb.div(f, d_hi)
    residual = mb.fma(mb.neg(s_hi), d_lo, mb.fma(mb.neg(s_hi), d_hi, f))
    s_lo = mb.div(residual, d_hi)
    z = mb.mul(s_hi, s_hi)
    s3 = mb.dd_mul(mb.dd_mul((s_hi, s_lo), (s_hi, s_lo)), (s_hi, s_lo))
    two_thirds = mb.fmt.split(Decimal(2) / 3)
    cubic = mb.dd_mul(s3, two_thirds)
    tail = mb.mul(mb.mul(s3[0], z), mb.horner(z, COEFFICIENTS["log_tail", mb.fmt.name]))
    ln2_hi, ln2_lo = mb.fmt.split(LN2, mb.fmt.precision - 12)
    total = (mb.mul(kf, ln2_hi), mb.mul(kf, ln2_lo))
    total = mb.dd_add(total, (mb.mul(s_hi, 2.0), mb.mul(s_lo, 2.0)))
    total = mb.dd_add(total, cubic)
    return mb.fast_two_sum(total[0], mb.add(total[1], tail))


def _is_integer(mb: MathBuilder, y: ir.Value) -> ir.Value:
    return mb.eq(mb.trunc(y), y)


def _is_odd_integer(mb: MathBuilder, y: ir.Value) -> ir.Value:
    """y is an odd integer: y/2 is not an integer but y is (only possible below 2**precision)."""
    half = mb.mul(y, 0.5)
    return mb.and_(_is_integer(mb, y), mb.not_(_is_integer(mb, half)))


def emit_pow_f64(mb: MathBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """x**y = exp(y·log|x|) with log in double-word precision, then C99's special cases."""
    ax = mb.abs(x)
    safe_ax = mb.select(mb.or_(mb.eq(ax, 0.0), mb.or_(mb.isinf(ax), mb.isnan(ax))), 1.0, ax)
    l_hi, l_lo = log_dd(mb, safe_ax)
    p_hi, p_err = mb.two_prod(y, l_hi)
    p_lo = mb.fma(y, l_lo, p_err)
    hi, lo = mb.fast_two_sum(p_hi, p_lo)
    hi = mb.select(mb.isinf(p_hi), p_hi, hi)        # overflowed: inf - inf made the sum NaN
    magnitude = exp_dd(mb, (hi, lo))
    return _pow_specials(mb, x, y, magnitude)


def _pow_specials(mb: MathBuilder, x: ir.Value, y: ir.Value, magnitude: ir.Value) -> ir.Value:
    """Apply the sign and C99 Annex F's special cases to |x|**y computed for finite x ≠ 0."""
    y_odd = _is_odd_integer(mb, y)
    y_int = _is_integer(mb, y)
    negative_x = mb.lt(x, 0.0)
    # Finite negative base: odd integer exponent flips the sign, non-integer gives NaN.
    result = mb.select(mb.and_(negative_x, y_odd), mb.neg(magnitude), magnitude)
    result = mb.select(mb.and_(negative_x, mb.not_(y_int)), math.nan, result)
    # Infinite exponent: |x| < 1 → 0 or inf, |x| > 1 → inf or 0, |x| = 1 → 1.
    ax = mb.abs(x)
    y_pos = mb.gt(y, 0.0)
    above_one = mb.gt(ax, 1.0)
    inf_y = mb.select(mb.builder.icmp_unsigned("==", above_one, y_pos), math.inf, 0.0)
    inf_y = mb.select(mb.eq(ax, 1.0), 1.0, inf_y)
    result = mb.select(mb.isinf(y), inf_y, result)
    # Zero or infinite base: |x|**y is 0 or inf by the sign of y, -0/-inf keep the sign for odd y.
    zero_or_inf = mb.select(mb.builder.icmp_unsigned("==", mb.eq(ax, 0.0), y_pos), 0.0, math.inf)
    signed = mb.select(mb.and_(y_odd, mb.lt(mb.copysign(1.0, x), 0.0)),
                       mb.neg(zero_or_inf), zero_or_inf)
    result = mb.select(mb.or_(mb.eq(ax, 0.0), mb.isinf(x)), signed, result)
    # NaN in, NaN out, except 1**y = 1 and x**0 = 1.
    result = mb.select(mb.or_(mb.isnan(x), mb.isnan(y)), math.nan, result)
    result = mb.select(mb.or_(mb.eq(x, 1.0), mb.eq(y, 0.0)), 1.0, result)
    return result


def emit_pow(mb: MathBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """x**y; f32 is computed in f64 (where the f64 error is far below an f32 ulp)."""
    if mb.fmt.bits == 64:
        return emit_pow_f64(mb, x, y)
    wide = MathBuilder(mb.builder, FORMATS["f64"], mb.ldexp_instruction)
    xd = mb.builder.fpext(x, wide.ty)
    yd = mb.builder.fpext(y, wide.ty)
    return mb.builder.fptrunc(emit_pow_f64(wide, xd, yd), mb.ty)
