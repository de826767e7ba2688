"""erf, cbrt and sqrt.

erf: ``x·(2/√π) + x·P(x²)`` below 1; above, ``1 - exp(-x²)·g(x)`` where ``g = erfc·exp(x²)`` is
smooth and fitted on [1, 4] (f32) or [1, 6] (f64), beyond which erf rounds to 1; ``x²`` is kept as
a double-word so ``exp(-x²)`` is accurate.  cbrt: the exponent divided by 3 in integers, a cubic
seed for the mantissa and Newton steps with an fma residual.  sqrt: LLVM's ``llvm.sqrt``
(correctly rounded, and a vector instruction).

>>> import llvmlite.ir as ir
>>> from lowering.llvm.vecmath.emit import FORMATS, MathBuilder
>>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "c")
>>> mb = MathBuilder(ir.IRBuilder(fn.append_basic_block()), FORMATS["f64"])
>>> _ = mb.builder.ret(emit_cbrt(mb, fn.args[0]))
>>> "br " in str(fn)
False
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.llvm.vecmath.coefficients import COEFFICIENTS
from lowering.llvm.vecmath.emit import MathBuilder
from lowering.llvm.vecmath.exp import exp_dd
from lowering.llvm.vecmath.remez import ERF_LARGE, two_over_sqrt_pi


def emit_erf(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """The error function."""
    fmt = mb.fmt.name
    a = mb.abs(x)
    z = mb.mul(a, a)
    correction = mb.mul(a, mb.horner(z, COEFFICIENTS["erf_small", fmt]))
    small = mb.fma(a, two_over_sqrt_pi(fmt), correction)
    lo_bound, hi_bound = (float(v) for v in ERF_LARGE[fmt])
    ac = mb.intrinsic("minnum", a, hi_bound)
    center, half = (lo_bound + hi_bound) / 2, (hi_bound - lo_bound) / 2
    u = mb.mul(mb.sub(ac, center), 1.0 / half)
    g = mb.horner(u, COEFFICIENTS["erfc_scaled", fmt])
    sq_hi, sq_lo = mb.two_prod(ac, ac)
    e = exp_dd(mb, (mb.neg(sq_hi), mb.neg(sq_lo)))
    large = mb.fma(mb.neg(e), g, 1.0)
    result = mb.copysign(mb.select(mb.lt(a, lo_bound), small, large), x)
    return mb.select(mb.isnan(x), x, result)


def emit_cbrt(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """The real cube root (negative for negative x)."""
    fmt = mb.fmt
    b = mb.builder
    i32 = mb.i32
    a = mb.abs(x)
    # Subnormals: scale by 2**(3k) first, divide the root by 2**k after.
    k = fmt.precision + (-fmt.precision) % 3
    subnormal = mb.lt(a, fmt.smallest_normal)
    a = mb.select(subnormal, mb.mul(a, 2.0 ** k), a)
    field = mb.exponent_bits(a)
    e = b.sub(field, mb.iconst(fmt.exponent_bias, i32))
    offset = 3 * 1024                               # floor division by 3 of a non-negative number
    q = b.sub(b.sdiv(b.add(e, mb.iconst(offset, i32)), mb.iconst(3, i32)),
              mb.iconst(offset // 3, i32))
    rem = b.sub(e, b.mul(q, mb.iconst(3, i32)))     # 0, 1 or 2
    # m·2**rem ∈ [1, 8): the mantissa with exponent field bias + rem.
    fraction = b.and_(mb.to_bits(a), mb.iconst((1 << fmt.fraction_bits) - 1))
    exponent = b.shl(mb.widen(b.add(rem, mb.iconst(fmt.exponent_bias, i32))),
                     mb.iconst(fmt.fraction_bits))
    m = mb.from_bits(b.or_(fraction, exponent))
    y = mb.horner(m, COEFFICIENTS["cbrt_seed", fmt.name])
    steps = 2 if fmt.bits == 32 else 3               # 7.6 bits doubled per step
    for _ in range(steps):
        y2 = mb.mul(y, y)
        residual = mb.fma(y2, y, mb.neg(m))
        y = mb.sub(y, mb.div(residual, mb.mul(y2, 3.0)))
    root = mb.mul(y, mb.pow2i(q))
    root = mb.select(subnormal, mb.mul(root, 2.0 ** -(k // 3)), root)
    result = mb.copysign(root, x)
    special = mb.or_(mb.eq(x, 0.0), mb.or_(mb.isinf(x), mb.isnan(x)))
    return mb.select(special, x, result)


def emit_sqrt(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Correctly rounded square root (NaN below -0, sqrt(-0) = -0)."""
    return mb.sqrt(x)

