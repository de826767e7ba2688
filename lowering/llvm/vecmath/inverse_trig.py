"""arcsin, arccos, arctan, arctan2.

arctan reduces ``|x|`` by one of five breakpoints ``c ∈ {0, 1/2, 1, 3/2, ∞}`` (chosen per element
with selects): ``atan x = atan c + atan((x - c)/(1 + x·c))`` leaves ``|t| ≤ 7/16`` for a minimax
polynomial, and ``atan c`` is added as a double-word constant (fdlibm's scheme, branch-free).
arctan2 uses the same reduction on ``|y|/|x|`` written homogeneously, so no quotient overflows.
arcsin/arccos use ``asin x = x + x³·P(x²)`` for ``|x| ≤ 1/2`` and
``asin x = π/2 - 2·asin(√((1-|x|)/2))`` above, with the square root's rounding error carried.

>>> import llvmlite.ir as ir
>>> from lowering.llvm.vecmath.emit import FORMATS, MathBuilder
>>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.FloatType(), [ir.FloatType()] * 2), "a")
>>> mb = MathBuilder(ir.IRBuilder(fn.append_basic_block()), FORMATS["f32"])
>>> _ = mb.builder.ret(emit_arctan2(mb, *fn.args))
>>> "br " in str(fn)
False
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext

import llvmlite.ir as ir

from lowering.llvm.vecmath.coefficients import COEFFICIENTS
from lowering.llvm.vecmath.emit import PI, MathBuilder
from lowering.llvm.vecmath.remez import atan as decimal_atan

# Breakpoints of the reduction: (upper bound of |x|, p, q, r, s) with t = (p·a - q)/(r·a + s).
_ATAN_STEPS = (
    (7 / 16, 1.0, 0.0, 0.0, 1.0),        # t = a
    (11 / 16, 2.0, 1.0, 1.0, 2.0),       # t = (a - 1/2)/(1 + a/2)
    (19 / 16, 1.0, 1.0, 1.0, 1.0),       # t = (a - 1)/(a + 1)
    (39 / 16, 2.0, 3.0, 3.0, 2.0),       # t = (a - 3/2)/(1 + 3a/2)
    (math.inf, 0.0, 1.0, 1.0, 0.0),      # t = -1/a
)


def _atan_bases() -> list[Decimal]:
    with localcontext() as ctx:
        ctx.prec = 60
        half_pi = PI / 2
        return [Decimal(0), decimal_atan(Decimal("0.5")), PI / 4,
                half_pi - decimal_atan(Decimal(2) / 3), half_pi]


def _atan_reduced(mb: MathBuilder, num_a: ir.Value, num_b: ir.Value, ratio: ir.Value
                  ) -> tuple[ir.Value, ir.Value]:
    """atan(num_a/num_b) as ``base + rest`` (``base`` a constant of the step) for
    0 ≤ num_a/num_b ≤ ∞; ``ratio``, its rounded value, only picks the step: the reduced argument
    is formed from the two numbers."""
    bases = _atan_bases()
    p = q = r = s = base_hi = base_lo = None
    for (bound, pi_, qi, ri, si), base in reversed(list(zip(_ATAN_STEPS, bases))):
        hi, lo = mb.fmt.split(base)
        if p is None:
            p, q, r, s, base_hi, base_lo = (mb.const(v) for v in (pi_, qi, ri, si, hi, lo))
            continue
        inside = mb.lt(ratio, bound)
        p, q, r, s = (mb.select(inside, v, old) for v, old in ((pi_, p), (qi, q), (ri, r), (si, s)))
        base_hi = mb.select(inside, hi, base_hi)
        base_lo = mb.select(inside, lo, base_lo)
    # p·a - q·b rounded once: q·b (3·b is not exact) enters as an exact double-word.
    qb, qb_err = mb.two_prod(q, num_b)
    numerator = mb.sub(mb.fma(p, num_a, mb.neg(qb)), qb_err)
    denominator = mb.fma(r, num_a, mb.mul(s, num_b))
    t = mb.div(numerator, denominator)
    # The quotient's rounding error, from its fma residual.
    t_err = mb.div(mb.fma(mb.neg(t), denominator, numerator), denominator)
    z = mb.mul(t, t)
    tail = mb.mul(mb.mul(z, t), mb.horner(z, COEFFICIENTS["atan", mb.fmt.name]))
    tail = mb.add(tail, mb.div(t_err, mb.add(z, 1.0)))
    return base_hi, mb.add(t, mb.add(tail, base_lo))


def emit_arctan(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """atan x."""
    a = mb.abs(x)
    angle = mb.add(*_atan_reduced(mb, a, mb.const(1.0), a))
    angle = mb.select(mb.isinf(a), float(PI / 2), angle)     # the reduction gives 0·∞ there
    result = mb.copysign(angle, x)
    return mb.select(mb.or_(mb.eq(x, 0.0), mb.isnan(x)), x, result)


def emit_arctan2(mb: MathBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    """atan2(y, x): the angle of (x, y), in (-π, π], with C99's signed zeros and infinities."""
    ay, ax = mb.abs(y), mb.abs(x)
    # Scale both down when large, so 3·|y| or 3·|x| in the reduction cannot overflow.
    big = mb.gt(mb.select(mb.gt(ay, ax), ay, ax), mb.fmt.largest / 8)
    ys, xs = mb.select(big, mb.mul(ay, 0.125), ay), mb.select(big, mb.mul(ax, 0.125), ax)
    # Scale both up when small: below 2**(emin + 2p) the reduction's error terms (the low part
    # of an exact product, the quotient's residual) fall into the subnormal range and lose bits.
    precision = mb.fmt.precision
    emin = 2 - 2 ** (mb.fmt.bits - precision - 1)
    small = mb.lt(mb.select(mb.gt(ay, ax), ay, ax), math.ldexp(1.0, emin + 2 * precision))
    up = math.ldexp(1.0, 2 * precision)
    ys, xs = mb.select(small, mb.mul(ay, up), ys), mb.select(small, mb.mul(ax, up), xs)
    base, rest = _atan_reduced(mb, ys, xs, mb.div(ay, ax))
    angle = mb.add(base, rest)
    # Left half plane: π - angle, with π and the angle as double-words.
    pi_hi, pi_lo = mb.fmt.split(PI)
    left_hi, left_lo = mb.two_sum(pi_hi, mb.neg(base))
    left = mb.add(left_hi, mb.add(left_lo, mb.sub(pi_lo, rest)))
    # Zeros and infinities, where the reduction meets 0/0 or 0·∞.
    angle = mb.select(mb.or_(mb.eq(ay, 0.0), mb.isinf(ax)), 0.0, angle)
    angle = mb.select(mb.isinf(ay), float(PI / 2), angle)
    angle = mb.select(mb.and_(mb.isinf(ay), mb.isinf(ax)), float(PI / 4), angle)
    left = mb.select(mb.or_(mb.eq(ay, 0.0), mb.isinf(ax)), pi_hi, left)
    left = mb.select(mb.isinf(ay), float(PI / 2), left)
    left = mb.select(mb.and_(mb.isinf(ay), mb.isinf(ax)), float(3 * PI / 4), left)
    angle = mb.select(mb.lt(mb.copysign(1.0, x), 0.0), left, angle)
    result = mb.copysign(angle, y)
    return mb.select(mb.or_(mb.isnan(x), mb.isnan(y)), math.nan, result)


def _asin_poly(mb: MathBuilder, a: ir.Value, z: ir.Value) -> ir.Value:
    """a³·P(z) with z = a²: asin(a) - a for 0 ≤ a ≤ 1/2."""
    return mb.mul(mb.mul(a, z), mb.horner(z, COEFFICIENTS["asin", mb.fmt.name]))


def _asin_large_parts(mb: MathBuilder, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(s, tail) with asin(s + s_err) = s + tail and s = √((1-a)/2), for 1/2 ≤ a ≤ 1."""
    z = mb.mul(mb.sub(1.0, a), 0.5)                 # exact
    s = mb.sqrt(z)
    # s + s_err = √z to twice the precision (s_err = 0 at z = 0, where the quotient is 0/0).
    s_err = mb.div(mb.fma(mb.neg(s), s, z), mb.add(s, s))
    s_err = mb.select(mb.eq(z, 0.0), 0.0, s_err)
    return s, mb.add(s_err, _asin_poly(mb, s, z))


def _minus_twice(mb: MathBuilder, constant, s: ir.Value, tail: ir.Value) -> ir.Value:
    """constant - 2·(s + tail), with the constant as a double-word and the leading difference
    kept exactly (2s is exact), so the result rounds once."""
    c_hi, c_lo = mb.fmt.split(constant)
    hi, lo = mb.two_sum(c_hi, mb.mul(s, -2.0))
    return mb.add(hi, mb.add(lo, mb.fma(tail, -2.0, c_lo)))


def emit_arcsin(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """asin x; NaN outside [-1, 1]."""
    a = mb.abs(x)
    small = mb.add(a, _asin_poly(mb, a, mb.mul(a, a)))
    s, tail = _asin_large_parts(mb, a)
    pio2_hi, pio2_lo = mb.fmt.split(PI / 2)
    large = _minus_twice(mb, PI / 2, s, tail)
    result = mb.copysign(mb.select(mb.le(a, 0.5), small, large), x)
    result = mb.select(mb.gt(a, 1.0), math.nan, result)
    return mb.select(mb.or_(mb.eq(x, 0.0), mb.isnan(x)), x, result)


def emit_arccos(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """acos x; NaN outside [-1, 1]."""
    a = mb.abs(x)
    # |x| ≤ 1/2: π/2 - asin x = π/2 - 2·(x/2 + x³·P/2).
    half_x = mb.mul(x, 0.5)
    middle = _minus_twice(mb, PI / 2, half_x, mb.mul(_asin_poly(mb, x, mb.mul(x, x)), 0.5))
    # |x| > 1/2: 2·asin(s) for x > 0, π - 2·asin(s) for x < 0.
    s, tail = _asin_large_parts(mb, a)
    twice = mb.fma(s, 2.0, mb.mul(tail, 2.0))
    negative = _minus_twice(mb, PI, s, tail)
    large = mb.select(mb.lt(x, 0.0), negative, twice)
    result = mb.select(mb.le(a, 0.5), middle, large)
    return mb.select(mb.or_(mb.gt(a, 1.0), mb.isnan(x)), math.nan, result)
