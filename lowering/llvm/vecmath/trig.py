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

from lowering.llvm.vecmath.coefficients import COEFFICIENTS
from lowering.llvm.vecmath.emit import FORMATS, PI, MathBuilder, Pair
from lowering.llvm.vecmath.remez import pi

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
    wide = MathBuilder(mb.builder, FORMATS["f64"], mb.ldexp_instruction)
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


@functools.cache
def one_over_pi_chunks() -> tuple[float, ...]:
    """1/π as four doubles of 53 consecutive bits each (212 bits in all)."""
    with localcontext() as ctx:
        ctx.prec = 100
        rest = 1 / pi()
        chunks = []
        for _ in range(4):
            chunks.append(_truncate53(rest))
            rest -= Decimal(chunks[-1])
    return tuple(chunks)


def _mod2(wide: MathBuilder, p: ir.Value) -> ir.Value:
    """p minus the nearest multiple of 2 (exact for |p| < 2**54)."""
    return wide.fma(wide.rint(wide.mul(p, 0.5)), -2.0, p)


def sin_pi_f32(mb: MathBuilder, x: ir.Value, cosine: bool) -> ir.Value:
    """sin x (or cos x = sin(x + π/2)) of an f32 ``x``, evaluated in f64 and rounded once.

    ``|x|/π mod 2`` as ``s + lo`` (exact to about 2**-80), without a table: the sum of the
    exact products ``|x|·C_i`` with 1/π in four 53-bit chunks, each reduced mod 2 exactly and
    summed without error. With ``n`` the nearest integer to it (to ``s + lo + 1/2`` for the
    cosine) and ``f = s - n + lo`` (``s - n`` exact, by Sterbenz), ``sin x = ±sin(πf)`` with
    ``|f| ≤ 1/2``: one odd polynomial, the sign from ``n``'s parity and, for sin, ``x``'s."""
    b = mb.builder
    i32 = mb.i32
    wide = MathBuilder(b, FORMATS["f64"], mb.ldexp_instruction)
    bits = mb.to_bits(x)
    ax = b.fpext(mb.abs(x), wide.ty)
    c0, c1, c2, c3 = one_over_pi_chunks()
    h0, l0 = wide.two_prod(ax, c0)
    h1, l1 = wide.two_prod(ax, c1)
    h2, l2 = wide.two_prod(ax, c2)
    # Parts below 2**-30 need no reduction mod 2 and can be summed with ordinary rounding.
    lo = wide.fma(ax, c3, l2)
    total, e = wide.two_sum(_mod2(wide, h0), _mod2(wide, l0))
    lo = wide.add(lo, e)
    for part in (h1, l1, h2):
        total, e = wide.two_sum(total, _mod2(wide, part))
        lo = wide.add(lo, e)
    if cosine:
        n = wide.rint(wide.add(wide.add(total, lo), 0.5))
        d = wide.sub(total, wide.sub(n, 0.5))
    else:
        n = wide.rint(wide.add(total, lo))
        d = wide.sub(total, n)
    f = wide.add(d, lo)
    p = wide.mul(f, wide.horner(wide.mul(f, f), COEFFICIENTS["sin_pi", "f64"]))
    y = b.fptrunc(p, mb.ty)
    sign = b.shl(b.fptosi(n, i32), ir.Constant(i32, 31))    # (-1)**n
    if not cosine:
        sign = b.xor(sign, b.and_(bits, ir.Constant(i32, -0x80000000)))
    y = mb.from_bits(b.xor(mb.to_bits(y), sign))
    return mb.select(mb.or_(mb.isinf(x), mb.isnan(x)), math.nan, y)


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
    if mb.fmt.bits == 32:
        return sin_pi_f32(mb, x, cosine=False)
    quadrant, s, c, wide = _sin_cos(mb, x)
    return _finish(mb, wide, x, _quadrant_select(wide, quadrant, wide.add(*s), wide.add(*c)))


def emit_cos(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """cos x: sin shifted by a quadrant."""
    if mb.fmt.bits == 32:
        return sin_pi_f32(mb, x, cosine=True)
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


# ---------------------------------------------------------------------------------------------
# f32 sin and cos with a fast path, and vector versions for the loop vectorizer

# Below this |x|, an f32 argument is reduced by π exactly with three constants (Cody-Waite).
FAST_TRIG_LIMIT = 2.0 ** 19
# The vector widths the loop vectorizer may pick for f32 (SSE, AVX, AVX-512).
VECTOR_WIDTHS = (4, 8, 16)


@functools.cache
def _pi_parts() -> tuple[float, float, float]:
    """π as P1 + P2 + P3 (+ 2**-118): P1 and P2 of 33 bits, so that ``m·P_i`` is exact for the
    multiples ``|m| < 2**20`` below the limit, then 53 bits."""
    fmt = FORMATS["f64"]
    with localcontext() as ctx:
        ctx.prec = 100
        rest, parts = PI, []
        for bits in (33, 33, 53):
            parts.append(fmt.split(rest, bits)[0])
            rest -= Decimal(parts[-1])
    return tuple(parts)


def _lanes(value: ir.Value) -> int:
    return value.type.count if isinstance(value.type, ir.VectorType) else 1


def _like(scalar_type: ir.Type, lanes: int) -> ir.Type:
    return scalar_type if lanes == 1 else ir.VectorType(scalar_type, lanes)


def _splat(scalar_type: ir.Type, value, lanes: int) -> ir.Constant:
    c = ir.Constant(scalar_type, value)
    return c if lanes == 1 else ir.Constant(ir.VectorType(scalar_type, lanes), [c] * lanes)


def _intrinsic(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    ty = args[0].type
    suffix = (f"v{ty.count}" + ("f32" if isinstance(ty.element, ir.FloatType) else "f64")
              if isinstance(ty, ir.VectorType) else
              "f32" if isinstance(ty, ir.FloatType) else "f64")
    full = f"llvm.{name}.{suffix}"
    fn = b.module.globals.get(full)
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ty, [ty] * len(args)), full)
    return b.call(fn, list(args))


def emit_sin_cos_f32_fast(b: ir.IRBuilder, x: ir.Value, cosine: bool) -> ir.Value:
    """sin x (or cos x) of ``float`` or ``<N x float>`` ``x`` with ``|x| < FAST_TRIG_LIMIT``, in
    f64 lanes, rounded once: ``n`` the nearest integer to ``|x|/π`` (to ``|x|/π + 1/2`` for the
    cosine, with ``m = n - 1/2``), ``r = |x| - m·π`` by Cody-Waite (exact but for the last,
    tiny terms), ``sin x = ±sin(πf)`` with ``f = r/π``, ``|f| ≤ 1/2`` (the polynomial of
    :func:`sin_pi_f32`), the sign from ``n``'s parity (and, for sin, ``x``'s)."""
    lanes = _lanes(x)
    f32, f64, i32 = ir.FloatType(), ir.DoubleType(), ir.IntType(32)
    d = lambda v: _splat(f64, v, lanes)  # noqa: E731
    bits = b.bitcast(x, _like(i32, lanes))
    ax = b.fpext(_intrinsic(b, "fabs", x), _like(f64, lanes))
    inv_pi = float(1 / pi())
    if cosine:
        n = _intrinsic(b, "rint", _intrinsic(b, "fma", ax, d(inv_pi), d(0.5)))
        m = b.fsub(n, d(0.5))
    else:
        n = m = _intrinsic(b, "rint", b.fmul(ax, d(inv_pi)))
    minus_m = b.fneg(m)
    r = ax
    for part in _pi_parts():
        r = _intrinsic(b, "fma", minus_m, d(part), r)
    f = b.fmul(r, d(inv_pi))
    z = b.fmul(f, f)
    coefficients = COEFFICIENTS["sin_pi", "f64"]
    q = d(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        q = _intrinsic(b, "fma", q, z, d(c))
    y = b.fptrunc(b.fmul(f, q), _like(f32, lanes))
    sign = b.shl(b.fptosi(n, _like(i32, lanes)), _splat(i32, 31, lanes))     # (-1)**n
    if not cosine:
        sign = b.xor(sign, b.and_(bits, _splat(i32, -0x80000000, lanes)))
    return b.bitcast(b.xor(b.bitcast(y, _like(i32, lanes)), sign), y.type)


def _fast_lanes(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """i1: every lane of ``x`` is below the fast path's limit (false for inf and NaN)."""
    lanes = _lanes(x)
    ok = b.fcmp_ordered("<", _intrinsic(b, "fabs", x),
                        _splat(ir.FloatType(), FAST_TRIG_LIMIT, lanes))
    if lanes == 1:
        return ok
    every = ir.Constant(ir.IntType(lanes), (1 << lanes) - 1)
    return b.icmp_unsigned("==", b.bitcast(ok, ir.IntType(lanes)), every)


def define_sin_cos_f32(fn: ir.Function, ldexp_instruction: bool | None,
                      cosine: bool) -> ir.Function:
    """The body of the scalar f32 sin (cos) ``fn``: the fast path below the limit, else a call
    of ``<fn>.exact`` (defined here and returned): the reduction of :func:`sin_pi_f32`, for
    every argument (inf and NaN included). The vector versions call ``.exact`` too: ``fn``
    itself is mapped to them, so a vectorizer could turn their calls of ``fn`` back into
    themselves."""
    module = fn.module
    exact = ir.Function(module, fn.function_type, f"{fn.name}.exact")
    exact.linkage = "internal"
    for attribute in ("noinline", "nounwind", "readnone"):
        exact.attributes.add(attribute)
    mb = MathBuilder(ir.IRBuilder(exact.append_basic_block("entry")), FORMATS["f32"],
                     ldexp_instruction)
    mb.builder.ret(sin_pi_f32(mb, exact.args[0], cosine))
    (x,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fast, slow = fn.append_basic_block("fast"), fn.append_basic_block("slow")
    b.cbranch(_fast_lanes(b, x), fast, slow)
    b.position_at_end(fast)
    b.ret(emit_sin_cos_f32_fast(b, x, cosine))
    b.position_at_end(slow)
    b.ret(b.call(exact, [x]))
    return exact


def define_sin_cos_f32_vector(module: ir.Module, scalar: ir.Function, exact: ir.Function,
                              lanes: int, cosine: bool) -> ir.Function:
    """``<lanes x float> <scalar>.v<lanes>(<lanes x float>)``: the fast path when every lane
    allows it, else ``exact`` lane by lane (rare: arguments of 2**19 and more, inf, NaN)."""
    vec = ir.VectorType(ir.FloatType(), lanes)
    fn = ir.Function(module, ir.FunctionType(vec, [vec]), f"{scalar.name}.v{lanes}")
    fn.attributes.add("nounwind")
    fn.attributes.add("readnone")
    (x,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fast, lane_by_lane = fn.append_basic_block("fast"), fn.append_basic_block("lane_by_lane")
    b.cbranch(_fast_lanes(b, x), fast, lane_by_lane)
    b.position_at_end(fast)
    b.ret(emit_sin_cos_f32_fast(b, x, cosine))
    b.position_at_end(lane_by_lane)
    result = ir.Constant(vec, ir.Undefined)
    for i in range(lanes):
        index = ir.Constant(ir.IntType(32), i)
        result = b.insert_element(result, b.call(exact, [b.extract_element(x, index)]), index)
    b.ret(result)
    return fn
