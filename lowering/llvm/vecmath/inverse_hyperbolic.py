"""arcsinh, arccosh, arctanh, through log1p in the forms that avoid cancellation.

- ``asinh |x| = log1p(|x| + x²/(1 + √(1 + x²)))``, and ``log|x| + ln2`` once ``x²`` would swamp 1;
- ``acosh x = log1p(t + √(t·(t + 2)))`` with ``t = x - 1`` (exact near 1), ``log x + ln2`` above;
- ``atanh |x| = log1p(2|x| + 2x²/(1 - |x|))/2`` (fdlibm's split, ``1 - |x|`` exact above 1/2).

>>> import llvmlite.ir as ir
>>> from lowering.llvm.vecmath.emit import FORMATS, MathBuilder
>>> fn = ir.Function(ir.Module(), ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "h")
>>> mb = MathBuilder(ir.IRBuilder(fn.append_basic_block()), FORMATS["f32"])
>>> _ = mb.builder.ret(emit_arctanh(mb, fn.args[0]))
>>> "br " in str(fn)
False
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from lowering.llvm.vecmath.emit import LN2, MathBuilder
from lowering.llvm.vecmath.log import combine_log, log1p_dd, log1p_small, reduce_log


def _log_twice(mb: MathBuilder, a: ir.Value) -> ir.Value:
    """log(2a) for large finite a (the limit of asinh and acosh)."""
    kf, f = reduce_log(mb, a)
    return combine_log(mb, mb.add(kf, 1.0), log1p_small(mb, f), LN2)


def _large(mb: MathBuilder) -> float:
    """Above this, x² + 1 and x² - 1 round to x²: asinh x = acosh x = log 2x to the last bit."""
    return 2.0 ** (mb.fmt.precision // 2 + 1)


def _tiny(mb: MathBuilder) -> float:
    """Below this, asinh x and atanh x (x ∓ x³/3...) round to x itself (and ±0 stays ±0)."""
    return 2.0 ** -(mb.fmt.precision // 2 + 1)


def _log1p_of(mb: MathBuilder, t: ir.Value, t_lo: ir.Value) -> ir.Value:
    """log1p(t + t_lo) for a double-word argument."""
    kf, part = log1p_dd(mb, t, t_lo)
    return combine_log(mb, kf, part, LN2)


def _sqrt_dd(mb: MathBuilder, hi: ir.Value, lo: ir.Value) -> tuple[ir.Value, ir.Value]:
    """√(hi + lo) as a double-word (one Newton correction of the rounded root)."""
    s = mb.sqrt(hi)
    s_lo = mb.div(mb.add(mb.fma(mb.neg(s), s, hi), lo), mb.add(s, s))
    return s, mb.select(mb.eq(s, 0.0), 0.0, s_lo)


def emit_arcsinh(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Inverse hyperbolic sine."""
    a = mb.abs(x)
    large = mb.gt(a, _large(mb))
    a_mid = mb.select(large, 1.0, a)                 # keeps a² finite on the unused path
    a2 = mb.mul(a_mid, a_mid)
    # t = a + a²/(1 + √(1 + a²)), its final rounding kept: the quotient is the small part.
    t, t_lo = mb.two_sum(a_mid, mb.div(a2, mb.add(mb.sqrt(mb.add(a2, 1.0)), 1.0)))
    result = mb.select(large, _log_twice(mb, mb.select(large, a, 1.0)), _log1p_of(mb, t, t_lo))
    result = mb.select(mb.isinf(a), a, result)
    return mb.select(mb.or_(mb.lt(a, _tiny(mb)), mb.isnan(x)), x, mb.copysign(result, x))


def emit_arccosh(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Inverse hyperbolic cosine; NaN below 1."""
    large = mb.gt(x, _large(mb))
    x_mid = mb.select(large, 1.0, x)
    t = mb.sub(x_mid, 1.0)
    # √(t·(t + 2)) dominates near 1: form it from an exact product, as a double-word.
    t2, t2_err = mb.two_sum(t, 2.0)
    p, p_err = mb.two_prod(t, t2)
    root, root_lo = _sqrt_dd(mb, p, mb.fma(t, t2_err, p_err))
    u, u_err = mb.two_sum(t, root)
    u_lo = mb.add(u_err, root_lo)
    result = mb.select(large, _log_twice(mb, mb.select(large, x, 2.0)), _log1p_of(mb, u, u_lo))
    result = mb.select(mb.eq(x, math.inf), math.inf, result)
    return mb.select(mb.lt_or_nan(x, 1.0), math.nan, result)


def emit_arctanh(mb: MathBuilder, x: ir.Value) -> ir.Value:
    """Inverse hyperbolic tangent; ±inf at ±1, NaN outside [-1, 1]."""
    a = mb.abs(x)
    one_minus = mb.sub(1.0, a)
    twice = mb.add(a, a)
    small, small_err = mb.two_sum(twice, mb.div(mb.mul(twice, a), one_minus))
    quotient = mb.div(twice, one_minus)
    quotient_err = mb.div(mb.fma(mb.neg(quotient), one_minus, twice), one_minus)
    below_half = mb.lt(a, 0.5)
    t = mb.select(below_half, small, quotient)
    t_lo = mb.select(below_half, small_err, quotient_err)
    result = mb.mul(_log1p_of(mb, t, mb.select(mb.eq(a, 1.0), 0.0, t_lo)), 0.5)
    result = mb.select(mb.eq(a, 1.0), math.inf, result)
    result = mb.select(mb.gt(a, 1.0), math.nan, mb.copysign(result, x))
    return mb.select(mb.or_(mb.lt(a, _tiny(mb)), mb.isnan(x)), x, result)
