"""Theano's ``T.erfinv``, ``T.erfcinv`` and ``T.erfcx``, composed from ``erf``, ``erfc`` and
other elementwise ops (so CPU only, as ``erfc`` is).

``erfinv`` and ``erfcinv`` start from Giles's approximation ("Approximating the erfinv function",
2010; about 1e-7 relative in single precision's range; beyond it, from ``erfc``'s asymptotic
form) and take Newton steps: on ``erf(x) = p`` in the middle, and on
``log(erfc(x)) = log(q)`` in the tails, where ``q`` (1 - |p|) is exact and small, so values near
+-1 (and near 0 and 2 for ``erfcinv``) keep their precision. The last step is the only one the
gradient goes through: its derivative is exactly ``sqrt(pi)/2 * exp(x**2)`` (times -1 for
``erfcinv``). ``erfcx`` is ``exp(x**2) * erfc(x)``, or its asymptotic series where those
overflow and underflow.

>>> import lowering.tensor as T
>>> y = T.dvector("y")
>>> erfinv(y).eval({y: [0.0, 0.5, -0.999]})
array([ 0.        ,  0.47693628, -2.32675377])
>>> erfcx(y).eval({y: [0.0, 30.0]})
array([1.        , 0.01879589])
"""
from __future__ import annotations

import math

from .elemwise import abs as abs_, erf, exp, ge, gt, log, lt, sgn, sqr, sqrt, switch
from .gradient import zero_grad
from .special_functions import as_real_float, erfc
from .variable import TensorVariable

_C = 2.0 / math.sqrt(math.pi)
# Giles's single-precision coefficients, highest degree first: w < 5 (in w - 2.5), and beyond
# (in sqrt(w) - 3).
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_NEWTON_STEPS = 2  # from 1e-4 at worst: 1e-8, 1e-16, then the last (differentiated) one


def _horner(coefficients, w):
    total = coefficients[0]
    for c in coefficients[1:]:
        total = total * w + c
    return total


def _first_guess(a, q):
    """About ``erfinv(a)`` for ``a`` in [0, 1], with ``q = 1 - a`` given exactly: Giles's
    approximation where single precision reaches (``w < 16``), beyond it two rounds of
    ``x**2 = L - log(x sqrt(pi)) + log(1 - 1 / (2 x**2))`` (``erfc``'s asymptotic form, with
    ``L = -log(q)``), within 1e-4."""
    w = -log(q * (1.0 + a))
    central = lt(w, 5.0)
    far = ge(w, 16.0)
    inner = _horner(_CENTRAL, switch(central, w, 5.0) - 2.5)
    outer = _horner(_TAIL, sqrt(switch(central | far, 5.0, w)) - 3.0)
    big = -log(switch(far, q, 1e-10))
    square = big
    for _ in range(2):
        square = big - 0.5 * log(math.pi * square) + log(1.0 - 0.5 / square)
    giles = switch(central, inner, outer) * a
    return switch(far, sqrt(square), giles)


def _step(x, p, q, s, tail):
    """One Newton step towards ``erf(x) = p`` (``erfc(s x) = q`` in the tails)."""
    slope = _C * exp(-sqr(x))
    middle = x - (erf(x) - p) / slope
    ax = abs_(x)
    outer = s * (ax + (log(erfc(ax)) - log(q)) * erfc(ax) / slope)
    return switch(tail, outer, middle)


def _inverse(p, q, s) -> TensorVariable:
    """x with ``erf(x) = p``, given ``q = 1 - |p|`` exactly and ``s = sign(p)``."""
    a = abs_(p)
    tail = ge(a, 0.5) & gt(q, 0.0)
    x = s * _first_guess(a, q)
    for _ in range(_NEWTON_STEPS):
        x = _step(x, p, q, s, tail)
    fixed = zero_grad(x)
    # The last step with inputs at which both branches are finite, so the branch not taken
    # passes no NaN into the gradient.
    fixed = switch(tail, fixed, switch(gt(abs_(fixed), 5.0), 0.0, fixed))
    x = _step(fixed, switch(tail, 0.0, p), switch(tail, q, 1.0), s, tail)
    x = switch(lt(q, 0.0), math.nan, x)
    return switch(ge(q, 0.0) & (q <= 0.0), s * math.inf, x)


def erfinv(a) -> TensorVariable:
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside); its gradient is
    ``sqrt(pi)/2 * exp(erfinv(a)**2)``."""
    y = as_real_float(a, "erfinv")
    return _inverse(y, 1.0 - abs_(y), sgn(y))


def erfcinv(a) -> TensorVariable:
    """The inverse complementary error function on [0, 2] (+inf at 0, -inf at 2, NaN outside),
    precise near 0 and 2.

    >>> import lowering.tensor as T
    >>> y = T.dvector("y")
    >>> erfcinv(y).eval({y: [1e-300, 1.0, 1.5]})
    array([26.20946996,  0.        , -0.47693628])
    """
    y = as_real_float(a, "erfcinv")
    p = 1.0 - y
    return _inverse(p, switch(lt(y, 1.0), y, 2.0 - y), sgn(p))


def erfcx(a) -> TensorVariable:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, finite for large ``x``
    (where it is about ``1 / (x sqrt(pi))``)."""
    x = as_real_float(a, "erfcx")
    start = 9.0 if x.dtype != "float64" else 25.0  # where exp(x**2) is near overflowing
    large = ge(x, start)
    near = switch(large, 0.0, x)
    far = switch(large, x, start)
    inv = 1.0 / (2.0 * sqr(far))
    series, term = 1.0, 1.0
    for k in range(1, 8):
        term = term * -(2 * k - 1) * inv
        series = series + term
    return switch(large, series / (far * math.sqrt(math.pi)), exp(sqr(near)) * erfc(near))
