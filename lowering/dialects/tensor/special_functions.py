"""Special functions, elementwise: ``tensor.erfc``, ``tensor.gammaln``, ``tensor.gamma``,
``tensor.j0`` and ``tensor.j1`` (ops of the scalar dialect's ``special_functions``, compiled as
calls of the C library's functions), and the digamma and trigamma functions built from other
elementwise ops (``digamma``, ``trigamma``), which the gamma functions' gradients use.

Digamma and trigamma follow their recurrences up to ``x + 10`` and then their asymptotic series
(truncation error below 1e-15 there); below 0 the reflection formulas. Each branch gets an input
it is finite at, so a ``select`` between them passes no NaN into a gradient.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> (x,) = Block([TensorType((3,), F64)]).args
>>> GammaLnOp.build(x).result.type == x.type
True
"""
from __future__ import annotations

import math

from lowering.dialects import scalar
from lowering.ir.core import Value

from .elementwise import ELEMENTWISE_OPS, Emitter, UnaryElementwiseOp, _define

_SHIFT = 10  # recurrence steps before the asymptotic series
# Asymptotic series in 1/y**2 beyond the leading terms (Bernoulli numbers B2k / 2k, and B2k).
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760)
_TRIGAMMA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)


def _series(e: Emitter, inv_sq: Value, coefficients) -> Value:
    """sum(c_k * inv_sq**k, k >= 1) by Horner's rule."""
    total = e.const(coefficients[-1], inv_sq)
    for c in reversed(coefficients[:-1]):
        total = e.add(e.mul(total, inv_sq), e.const(c, inv_sq))
    return e.mul(total, inv_sq)


def _shifted(e: Emitter, x: Value, power: int) -> tuple[Value, Value]:
    """``y = x + SHIFT`` and sum(1 / (x + k)**power for k < SHIFT)."""
    terms = None
    for k in range(_SHIFT):
        t = e.reciprocal(e.add(x, e.const(k, x)) if k else x)
        t = e.sqr(t) if power == 2 else t
        terms = t if terms is None else e.add(terms, t)
    return e.add(x, e.const(_SHIFT, x)), terms


def _digamma_positive(e: Emitter, x: Value) -> Value:
    y, terms = _shifted(e, x, 1)
    inv = e.reciprocal(y)
    at_y = e.sub(e.sub(e.log(y), e.mul(e.const(0.5, x), inv)),
                 _series(e, e.sqr(inv), _DIGAMMA_SERIES))
    return e.sub(at_y, terms)


def _trigamma_positive(e: Emitter, x: Value) -> Value:
    y, terms = _shifted(e, x, 2)
    inv = e.reciprocal(y)
    inv_sq = e.sqr(inv)
    at_y = e.add(e.add(inv, e.mul(e.const(0.5, x), inv_sq)),
                 e.mul(inv, _series(e, inv_sq, _TRIGAMMA_SERIES)))
    return e.add(at_y, terms)


def _branches(e: Emitter, x: Value) -> tuple[Value, Value, Value, Value]:
    """Whether ``x > 0``, an input for the positive branch (1 elsewhere), one for the reflected
    branch (0.5 elsewhere), and whether ``x`` is a pole (a non-positive integer)."""
    positive = e.gt(x, e.const(0, x))
    for_positive = e.where(positive, x, e.const(1, x))
    for_reflected = e.where(positive, e.const(0.5, x), x)
    pole = e.apply("and", e.le(x, e.const(0, x)), e.eq(e.floor(x), x))
    return positive, for_positive, for_reflected, pole


def digamma(e: Emitter, x: Value) -> Value:
    """psi(x) = d/dx log(gamma(x)) of a float tensor: -inf at 0, +inf at -0 and NaN at the
    negative integers, as SciPy's ``psi``."""
    positive, xp, xr, pole = _branches(e, x)
    pi = e.const(math.pi, x)
    # psi(x) = psi(1 - x) - pi / tan(pi x)
    reflected = e.sub(_digamma_positive(e, e.sub(e.const(1, x), xr)),
                      e.div(pi, e.tan(e.mul(pi, xr))))
    negative_pole = e.apply("and", pole, e.lt(x, e.const(0, x)))
    reflected = e.where(negative_pole, e.const(math.nan, x), reflected)
    return e.where(positive, _digamma_positive(e, xp), reflected)


def trigamma(e: Emitter, x: Value) -> Value:
    """psi'(x) of a float tensor: +inf at the poles (the non-positive integers)."""
    positive, xp, xr, pole = _branches(e, x)
    pi = e.const(math.pi, x)
    # psi'(x) = pi**2 / sin(pi x)**2 - psi'(1 - x)
    reflected = e.sub(e.div(e.sqr(pi), e.sqr(e.sin(e.mul(pi, xr)))),
                      _trigamma_positive(e, e.sub(e.const(1, x), xr)))
    reflected = e.where(pole, e.const(math.inf, x), reflected)
    return e.where(positive, _trigamma_positive(e, xp), reflected)


def _j1_partial(e, gz, x, y):
    # j1'(x) = j0(x) - j1(x) / x, which is 1/2 at 0.
    zero = e.eq(x, e.const(0, x))
    safe = e.where(zero, e.const(1, x), x)
    slope = e.sub(J0Op.build(x, location=e.location).result, e.div(y, safe))
    return e.mul(gz, e.where(zero, e.const(0.5, x), slope))


ErfcOp = _define(UnaryElementwiseOp, scalar.ErfcOp, lambda e, gz, x, y: e.neg(e.mul(
    gz, e.mul(e.const(2 / math.sqrt(math.pi), x), e.exp(e.neg(e.sqr(x)))))))
GammaLnOp = _define(UnaryElementwiseOp, scalar.GammaLnOp,
                    lambda e, gz, x, y: e.mul(gz, digamma(e, x)))
GammaOp = _define(UnaryElementwiseOp, scalar.GammaOp,
                  lambda e, gz, x, y: e.mul(gz, e.mul(y, digamma(e, x))))
J0Op = _define(UnaryElementwiseOp, scalar.J0Op,
               lambda e, gz, x, y: e.neg(e.mul(gz, J1Op.build(x, location=e.location).result)))
J1Op = _define(UnaryElementwiseOp, scalar.J1Op, _j1_partial)

# Short name -> class, for the ops of this module (kept apart from ELEMENTWISE_OPS: a GPU kernel
# has no C library to call).
SPECIAL_ELEMENTWISE_OPS = {cls.short: cls for cls in (ErfcOp, GammaLnOp, GammaOp, J0Op, J1Op)}
assert not set(SPECIAL_ELEMENTWISE_OPS) & set(ELEMENTWISE_OPS)
for _cls in SPECIAL_ELEMENTWISE_OPS.values():
    _cls.__module__ = __name__  # defined here, by the helper of elementwise.py
del _cls

__all__ = ["SPECIAL_ELEMENTWISE_OPS", "ErfcOp", "GammaLnOp", "GammaOp", "J0Op", "J1Op",
           "digamma", "trigamma"]
