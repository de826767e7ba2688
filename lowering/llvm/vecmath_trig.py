"""sin, cos, tan: exact reduction by π/2 for every finite argument, then minimax polynomials.

Branch-free code pays for every path on every element, so each format has one reduction that is
good for all arguments (Payne-Hanek: only the bits of 2/π that matter at the argument's exponent
are used, products are exact by fma and summed without error, mod 4):

- f32 is reduced and evaluated in f64: ``|x|·2/π mod 4`` is the sum of the exact products
  ``|x|·C_i`` with 2/π split in four 53-bit chunks, each reduced mod 4 exactly.  No table, so no
  vector gathers (which are slow on many x86 cores); the result is rounded once to f32.
- f64 writes ``|x| = M·2**E`` and takes ``T(E) = 2**E·2/π mod 4`` in three 53-bit chunks from a
  table indexed by ``E`` (a gather in vector code): ``M·T(E) mod 4`` in double-word arithmetic.

The integer part of the reduced product is the quadrant and the fraction times π/2 is
``r ∈ [-π/4, π/4]``, where ``sin r = r + r³·S(r²)`` and ``cos r = 1 - r²/2 + r⁴·C(r²)``.

>>> table = pio2_table()
>>> len(table) == 3 * (F64_TABLE_MAX_E - F64_TABLE_MIN_E + 1)
True
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext

import llvmlite.ir as ir

from lowering.llvm.vecmath_coefficients import COEFFICIENTS
from lowering.llvm.vecmath_emit import FORMATS, PI, MathBuilder, Pair
from lowering.llvm.vecmath_remez import pi

# Rows of the f64 table: exponents E of |x| = M·2**E (M < 2**53) with |x| ≥ π/4 (smaller x is
# its own reduced argument).
F64_TABLE_MIN_E, F64_TABLE_MAX_E = -53, 971
_CHUNKS = 3


@functools.cache
def pio2_table() -> tuple[float, ...]:
    """Row-major chunks of ``T(E) = 2**E·2/π mod 4``, each chunk the next 53 bits of the rest."""
    values: list[float] = []
    with localcontext() as ctx:
        ctx.prec = 480                                  # 2**971 · 2/π to 2**-220: ~360 digits
        two_over_pi = 2 / pi()
        for e in range(F64_TABLE_MIN_E, F64_TABLE_MAX_E + 1):
            rest = (Decimal(2) ** e * two_over_pi) % 4
            for _ in range(_CHUNKS):
                chunk = _truncate53(rest)
                values.append(chunk)
                rest -= Decimal(chunk)
    return tuple(values)


def _truncate53(value: Decimal) -> float:
    """``value`` truncated to 53 significant bits (exactly a double)."""
    if value == 0:
        return 0.0
    exponent = math.frexp(float(value))[1]
    unit = Decimal(2) ** (exponent - 53)
    chunk = (value / unit).to_integral_value(rounding="ROUND_FLOOR") * unit
    if chunk >= Decimal(2) ** exponent:                 # float() rounded the exponent up
        unit *= 2
        chunk = (value / unit).to_integral_value(rounding="ROUND_FLOOR") * unit
    return float(chunk)


def _table_global(module: ir.Module) -> ir.GlobalVariable:
    name = "lowering.pio2_table.f64"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    values = pio2_table()
    ty = ir.ArrayType(ir.DoubleType(), len(values))
    table = ir.GlobalVariable(module, ty, name)
    table.initializer = ir.Constant(ty, list(values))
    table.global_constant = True
    table.linkage = "private"
    table.unnamed_addr = True
    return table


def _load_row(wide: MathBuilder, index: ir.Value) -> list[ir.Value]:
    """The chunks of row ``index`` (an i32) of the table."""
    b = wide.builder
    table = _table_global(b.module)
    base = b.mul(index, ir.Constant(ir.IntType(32), _CHUNKS))
    zero = ir.Constant(ir.IntType(32), 0)
    return [b.load(b.gep(table, [zero, b.add(base, ir.Constant(ir.IntType(32), i))],
                         inbounds=True)) for i in range(_CHUNKS)]


def _integer_and_exponent(mb: MathBuilder, x: ir.Value, min_e: int, max_e: int
                          ) -> tuple[ir.Value, ir.Value]:
    """(M as an integer of the format's width, table row index as i32) with |x| = M·2**E."""
    fmt = mb.fmt
    b = mb.builder
    bits = mb.to_bits(mb.abs(x))
    field = mb.narrow(b.lshr(bits, mb.iconst(fmt.fraction_bits)))
    is_normal = b.icmp_signed("!=", field, mb.iconst(0, mb.i32))
    implicit = b.select(is_normal, mb.iconst(1 << fmt.fraction_bits), mb.iconst(0))
    m = b.or_(b.and_(bits, mb.iconst((1 << fmt.fraction_bits) - 1)), implicit)
    # E = max(field, 1) - bias - fraction_bits; row = E - min_e, clamped into the table.
    field = b.select(is_normal, field, mb.iconst(1, mb.i32))
    row = b.add(field, mb.iconst(-fmt.exponent_bias - fmt.fraction_bits - min_e, mb.i32))
    row = b.select(b.icmp_signed("<", row, mb.iconst(0, mb.i32)), mb.iconst(0, mb.i32), row)
    last = max_e - min_e
    row = b.select(b.icmp_signed(">", row, mb.iconst(last, mb.i32)), mb.iconst(last, mb.i32), row)
    return m, row


def _mod4(wide: MathBuilder, p: ir.Value) -> ir.Value:
    """p minus the nearest multiple of 4 (exact for |p| < 2**55)."""
    return wide.fma(wide.rint(wide.mul(p, 0.25)), -4.0, p)


CODY_WAITE_LIMIT = 2.0 ** 19        # so the quadrant count q stays below 2**20


@functools.cache
def _pio2_parts() -> tuple[float, ...]:
    """π/2 as C1 + C2 + C3 + C4: C1 and C2 of 33 bits (q·C_i exact for q < 2**20), then 53."""
    fmt = FORMATS["f64"]
    with localcontext() as ctx:
        ctx.prec = 100
        rest, parts = PI / 2, []
        for bits in (33, 33, 53, 53):
            parts.append(fmt.split(rest, bits)[0])
            rest -= Decimal(parts[-1])
    return tuple(parts)


def _cody_waite_pio2(wide: MathBuilder, ax: ir.Value) -> tuple[ir.Value, Pair]:
    """(quadrant, r as a double-word) for 0 ≤ ax < 2**19: ax - q·(C1 + C2 + C3 + C4) with every
    product and difference exact (Sterbenz, two_sum, two_prod) until the last, tiny terms, so
    even arguments next to a multiple of π/2 keep all their bits."""
    c1, c2, c3, c4 = _pio2_parts()
    q = wide.rint(wide.mul(ax, float(2 / PI)))
    s1 = wide.sub(ax, wide.mul(q, c1))
    s2, e2 = wide.two_sum(s1, wide.mul(q, -c2))
    p3, p3_err = wide.two_prod(q, c3)
    s3, e3 = wide.two_sum(s2, wide.neg(p3))
    tail = wide.sub(wide.add(e2, e3), wide.fma(q, c4, p3_err))
    return wide.to_i32(q), wide.two_sum(s3, tail)


def reduce_pio2_f64(wide: MathBuilder, x: ir.Value) -> tuple[ir.Value, Pair]:
    """(quadrant as i32, r as a double-word) with x = quadrant·π/2 + r (mod 2π), f64 x."""
    b = wide.builder
    m_int, row = _integer_and_exponent(wide, x, F64_TABLE_MIN_E, F64_TABLE_MAX_E)
    m = b.sitofp(m_int, wide.ty)
    t0, t1, t2 = _load_row(wide, row)
    p0, e0 = wide.two_prod(m, t0)
    p1, e1 = wide.two_prod(m, t1)
    p0 = _mod4(wide, p0)
    acc = wide.two_sum(p0, p1)
    acc = wide.dd_add(acc, (e0, e1))
    n = wide.rint(acc[0])
    acc = wide.fast_two_sum(wide.sub(acc[0], n), wide.add(acc[1], wide.mul(m, t2)))
    n2 = wide.rint(acc[0])
    acc = wide.fast_two_sum(wide.sub(acc[0], n2), acc[1])
    r = wide.dd_mul(acc, wide.fmt.split(PI / 2))
    quadrant = wide.to_i32(wide.add(n, n2))
    # Below 2**19 (nearly every argument in practice) Cody-Waite is exact to the last bit.
    ax = wide.abs(x)
    moderate = wide.lt(ax, CODY_WAITE_LIMIT)
    cw_quadrant, cw_r = _cody_waite_pio2(wide, wide.select(moderate, ax, 0.0))
    r = (wide.select(moderate, cw_r[0], r[0]), wide.select(moderate, cw_r[1], r[1]))
    quadrant = b.select(moderate, cw_quadrant, quadrant)
    # Keep x negative: x·2/π mod 4 was computed for |x|.
    negative = wide.lt(x, 0.0)
    r = (wide.select(negative, wide.neg(r[0]), r[0]), wide.select(negative, wide.neg(r[1]), r[1]))
    quadrant = b.select(negative, b.neg(quadrant), quadrant)
    return quadrant, r


@functools.cache
def two_over_pi_chunks() -> tuple[float, ...]:
    """2/π as four doubles of 53 consecutive bits each (212 bits in all)."""
    with localcontext() as ctx:
        ctx.prec = 100
        rest = 2 / pi()
        chunks = []
        for _ in range(4):
            chunks.append(_truncate53(rest))
            rest -= Decimal(chunks[-1])
    return tuple(chunks)


def reduce_pio2_f32(mb: MathBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value, MathBuilder]:
    """(quadrant as i32, r as an f64, the f64 builder) with x = quadrant·π/2 + r, f32 x.

    Without a table: |x|·2/π mod 4 is the sum of the exact products |x|·C_i (two_prod, an f32
    times a 53-bit chunk) each reduced mod 4 exactly; 212 bits of 2/π cover |x| < 2**128 with
    some 80 bits to spare below the point.  Vector gathers are slow on many x86 cores, so the
    f32 path, which has few enough bits to need, does without them."""
    wide = MathBuilder(mb.builder, FORMATS["f64"])
    b = mb.builder
    xd = b.fpext(x, wide.ty)
    ax = wide.abs(xd)
    c0, c1, c2, c3 = two_over_pi_chunks()
    h0, l0 = wide.two_prod(ax, c0)
    h1, l1 = wide.two_prod(ax, c1)
    h2, l2 = wide.two_prod(ax, c2)
    # Parts below 2**-30 need no reduction mod 4 and can be summed with ordinary rounding.
    small = wide.fma(ax, c3, l2)
    s, lo = wide.two_sum(_mod4(wide, h0), _mod4(wide, l0))
    for part in (h1, l1, h2):
        s, e = wide.two_sum(s, _mod4(wide, part))
        lo = wide.add(lo, e)
    lo = wide.add(lo, small)
    n = wide.rint(s)
    f_hi, f_lo = wide.fast_two_sum(wide.sub(s, n), lo)
    n2 = wide.rint(f_hi)
    f_hi = wide.sub(f_hi, n2)
    pio2_hi, pio2_lo = wide.fmt.split(PI / 2)
    r = wide.fma(f_hi, pio2_hi, wide.fma(f_hi, pio2_lo, wide.mul(f_lo, pio2_hi)))
    quadrant = wide.to_i32(wide.add(n, n2))
    # |x| < π/4 is its own reduced argument (and keeps subnormals exact).
    small_x = wide.lt(ax, 0.78)
    r = wide.select(small_x, ax, r)
    quadrant = b.select(small_x, ir.Constant(ir.IntType(32), 0), quadrant)
    negative = wide.lt(xd, 0.0)
    r = wide.select(negative, wide.neg(r), r)
    quadrant = b.select(negative, b.neg(quadrant), quadrant)
    return quadrant, r, wide


def _sin_cos_poly(wide: MathBuilder, r: Pair, fmt: str) -> tuple[Pair, Pair]:
    """(sin r, cos r) for |r| ≤ π/4, each as an unevaluated sum ``(lead, rest)``, in the
    builder's arithmetic with ``fmt``'s coefficients."""
    hi, lo = r
    z = wide.mul(hi, hi)
    s_tail = wide.mul(wide.mul(z, hi), wide.horner(z, COEFFICIENTS["sin", fmt]))
    sin = (hi, wide.add(wide.fma(lo, wide.mul(z, -0.5), lo), s_tail))
    hz = wide.mul(z, 0.5)
    w = wide.sub(1.0, hz)
    c_tail = wide.mul(wide.mul(z, z), wide.horner(z, COEFFICIENTS["cos", fmt]))
    cos = (w, wide.add(wide.sub(wide.sub(1.0, w), hz), wide.fma(hi, wide.neg(lo), c_tail)))
    return sin, cos


def _sin_cos(mb: MathBuilder, x: ir.Value) -> tuple[ir.Value, Pair, Pair, MathBuilder]:
    """(quadrant, sin r, cos r as (lead, rest) sums, builder of the evaluation format)."""
    if mb.fmt.bits == 32:
        quadrant, r, wide = reduce_pio2_f32(mb, x)
        s, c = _sin_cos_poly(wide, (r, ir.Constant(wide.ty, 0.0)), "f32")
        return quadrant, s, c, wide
    quadrant, r = reduce_pio2_f64(mb, x)
    s, c = _sin_cos_poly(mb, r, "f64")
    return quadrant, s, c, mb


def _finish(mb: MathBuilder, wide: MathBuilder, x: ir.Value, value: ir.Value) -> ir.Value:
    """Round to the result format; ±0 stays ±0, inf and NaN give NaN."""
    if wide is not mb:
        value = mb.builder.fptrunc(value, mb.ty)
    value = mb.select(mb.eq(x, 0.0), x, value)
    return mb.select(mb.or_(mb.isinf(x), mb.isnan(x)), math.nan, value)


def _quadrant_select(wide: MathBuilder, quadrant: ir.Value, first: ir.Value, second: ir.Value
                     ) -> ir.Value:
    """``first`` in quadrants 0 and 2, ``second`` in 1 and 3, negated in quadrants 2 and 3."""
    b = wide.builder
    i32 = ir.IntType(32)
    odd = b.icmp_signed("!=", b.and_(quadrant, ir.Constant(i32, 1)), ir.Constant(i32, 0))
    value = wide.select(odd, second, first)
    flip = b.icmp_signed("!=", b.and_(quadrant, ir.Constant(i32, 2)), ir.Constant(i32, 0))
    return wide.select(flip, wide.neg(value), value)


def emit_sin(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """sin x."""
    quadrant, s, c, wide = _sin_cos(mb, x)
    return _finish(mb, wide, x, _quadrant_select(wide, quadrant, wide.add(*s), wide.add(*c)))


def emit_cos(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """cos x: sin shifted by a quadrant."""
    quadrant, s, c, wide = _sin_cos(mb, x)
    shifted = wide.builder.add(quadrant, ir.Constant(ir.IntType(32), 1))
    value = _quadrant_select(wide, shifted, wide.add(*s), wide.add(*c))
    # cos(±0) = 1, not ±0: only inf and NaN are special.
    if wide is not mb:
        value = mb.builder.fptrunc(value, mb.ty)
    return mb.select(mb.or_(mb.isinf(x), mb.isnan(x)), math.nan, value)


def emit_tan(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """tan x = sin r / cos r, or -cos r / sin r in odd quadrants; the quotient of the two
    (lead, rest) sums is corrected by its fma residual, so it rounds about once."""
    quadrant, s, c, wide = _sin_cos(mb, x)
    b = wide.builder
    i32 = ir.IntType(32)
    odd = b.icmp_signed("!=", b.and_(quadrant, ir.Constant(i32, 1)), ir.Constant(i32, 0))
    num = (wide.select(odd, wide.neg(c[0]), s[0]), wide.select(odd, wide.neg(c[1]), s[1]))
    den = (wide.select(odd, s[0], c[0]), wide.select(odd, s[1], c[1]))
    den_value = wide.add(*den)
    q = wide.div(wide.add(*num), den_value)
    # num - q·den, from the parts: the leading product exactly by fma.
    residual = wide.fma(wide.neg(q), den[0], num[0])
    residual = wide.add(residual, wide.fma(wide.neg(q), den[1], num[1]))
    value = wide.add(q, wide.div(residual, den_value))
    return _finish(mb, wide, x, value)
