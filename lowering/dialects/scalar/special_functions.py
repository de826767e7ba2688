"""Special functions of Theano's ``theano.scalar.basic_scipy``: ``erfc``, ``gammaln``, ``gamma``,
``j0`` and ``j1`` as scalar ops, with the NumPy reference semantics they evaluate with.

The references compute in float64 and round to the input's dtype. They follow the C library's
functions, which compiled code calls (``erfc``, ``lgamma``, ``tgamma``, ``j0``, ``j1``): the
gamma functions are infinite at their poles (``gamma`` of a negative integer is NaN), as there.

>>> import numpy as np
>>> float(erfc(np.float64(0.0))), round(float(gammaln(np.float64(10.0))), 12)
(1.0, 12.801827480081)
>>> gamma(np.array([0.0, -0.0, -1.0, 5.0])).tolist()
[inf, -inf, nan, 24.0]
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from .ops import _unary


def _elementwise(scalar_fn):
    """``scalar_fn`` (float -> float) on each element, in float64, rounded to the input dtype."""
    vectorized = np.vectorize(scalar_fn, otypes=[np.float64])

    def apply(x):
        x = np.asarray(x)
        return vectorized(x.astype(np.float64)).astype(x.dtype, copy=False)
    apply.__name__ = scalar_fn.__name__
    return apply


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # the poles (non-positive integers) and +-inf
        return math.inf


def _gamma(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)
    if math.isnan(x) or x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf


@functools.lru_cache(maxsize=None)
def _libm_function(name: str):
    """The C library's double-precision ``name`` (the Bessel functions, which Python's ``math``
    lacks)."""
    fn = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
    return fn


def _j0(x: float) -> float:
    return _libm_function("j0")(x)


def _j1(x: float) -> float:
    return _libm_function("j1")(x)


erfc = _elementwise(math.erfc)
gammaln = _elementwise(_lgamma)
gamma = _elementwise(_gamma)
j0 = _elementwise(_j0)
j1 = _elementwise(_j1)

ErfcOp = _unary("scalar.erfc", "float", erfc, True, "The complementary error function 1 - erf(x).",
                module=__name__)
GammaLnOp = _unary("scalar.gammaln", "float", gammaln, True,
                   "The logarithm of the absolute value of the gamma function.", module=__name__)
GammaOp = _unary("scalar.gamma", "float", gamma, True, "The gamma function.", module=__name__)
J0Op = _unary("scalar.j0", "float", j0, True, "The Bessel function of the first kind of order 0.",
              module=__name__)
J1Op = _unary("scalar.j1", "float", j1, True, "The Bessel function of the first kind of order 1.",
              module=__name__)

__all__ = ["ErfcOp", "GammaLnOp", "GammaOp", "J0Op", "J1Op"]
