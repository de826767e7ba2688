"""NumPy implementations of the scalar functions NumPy does not spell directly.

These are the reference semantics the ``scalar`` ops evaluate with; each works on NumPy scalars and
arrays alike and keeps its input's dtype.

>>> import numpy as np
>>> float(sigmoid(np.float64(0.0))), float(softplus(np.float64(0.0)))
(0.5, 0.6931471805599453)
"""
from __future__ import annotations

import math

import numpy as np


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))``, without overflow for large ``|x|``.

    >>> import numpy as np
    >>> sigmoid(np.array([-1000.0, 1000.0])).tolist()
    [0.0, 1.0]
    """
    x = np.asarray(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def softplus(x):
    """``log(1 + exp(x))``, exact for large ``x`` (no overflow) and tiny for very negative ``x``.

    >>> import numpy as np
    >>> softplus(np.array([1000.0])).tolist()
    [1000.0]
    """
    x = np.asarray(x)
    return np.logaddexp(np.zeros_like(x), x)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    """The error function, computed in float64 and rounded to ``x``'s dtype.

    >>> import numpy as np
    >>> round(float(erf(np.float32(1.0))), 6)
    0.842701
    """
    x = np.asarray(x)
    return _erf(x.astype(np.float64)).astype(x.dtype, copy=False)


def round_half_away_from_zero(x):
    """The nearest integer, halves rounded away from zero (C's ``round``), in ``x``'s dtype.

    ``x - trunc(x)`` is exact, so no value just below a half is rounded up by an addition.

    >>> import numpy as np
    >>> round_half_away_from_zero(np.array([-2.5, -0.5, 0.5, 1.5, 0.49999999999999994])).tolist()
    [-3.0, -1.0, 1.0, 2.0, 0.0]
    """
    x = np.asarray(x)
    whole = np.trunc(x)
    away = np.abs(x - whole) >= 0.5
    return np.where(away, whole + np.sign(x), whole).astype(x.dtype, copy=False)


def power(x, y):
    """``x ** y`` with NumPy's semantics for floats and wrapping integer semantics for ints.

    NumPy refuses negative integer exponents; here ``x ** -k`` is the truncated quotient
    ``1 / x ** k``: ``1`` for ``x == 1``, ``±1`` for ``x == -1``, and ``0`` otherwise (``0 ** -k``
    included), so that compiled code never traps.

    >>> import numpy as np
    >>> base = np.array([2, 1, -1, -1, 0], dtype=np.int32)
    >>> power(base, np.array([-1, -3, -3, -2, -1], dtype=np.int32)).tolist()
    [0, 1, -1, 1, 0]
    >>> power(np.int8(3), np.int8(5)).item()  # 243 wraps
    -13
    >>> power(np.float32(-np.inf), np.float32(0.5)).item()  # C's pow, also for scalars
    inf
    """
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind != "i":
        # On arrays NumPy calls C's pow; on 0-d operands its scalar path differs from it
        # ((-inf) ** 0.5 is nan there, inf in C and in compiled code).
        shape = np.broadcast_shapes(x.shape, y.shape)
        return np.power(np.atleast_1d(x), np.atleast_1d(y)).reshape(shape)
    negative = y < 0
    result = np.power(x, np.where(negative, 0, y).astype(y.dtype))
    if np.any(negative):
        odd = (y % 2) != 0
        special = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        result = np.where(negative, special, result)
    return np.asarray(result).astype(x.dtype, copy=False)


def clip(x, lo, hi):
    """``minimum(maximum(x, lo), hi)``: with ``lo > hi`` every element becomes ``hi``.

    >>> import numpy as np
    >>> clip(np.array([-2, 0, 5]), np.array(-1), np.array(3)).tolist()
    [-1, 0, 3]
    """
    return np.minimum(np.maximum(x, lo), hi)


def isnan(x):
    """``numpy.isnan`` that also accepts integers and booleans (never NaN).

    >>> import numpy as np
    >>> isnan(np.array([1, 2])).tolist(), isnan(np.array([np.nan])).tolist()
    ([False, False], [True])
    """
    x = np.asarray(x)
    return np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, dtype=bool)


def isinf(x):
    """``numpy.isinf`` that also accepts integers and booleans (never infinite).

    >>> import numpy as np
    >>> isinf(np.array([1, 2])).tolist(), isinf(np.array([-np.inf])).tolist()
    ([False, False], [True])
    """
    x = np.asarray(x)
    return np.isinf(x) if x.dtype.kind == "f" else np.zeros(x.shape, dtype=bool)


def reciprocal(x):
    """``1 / x`` in ``x``'s float type (``numpy.reciprocal`` truncates integers).

    >>> import numpy as np
    >>> reciprocal(np.array([4.0, -0.5])).tolist()
    [0.25, -2.0]
    """
    x = np.asarray(x)
    return np.divide(np.ones_like(x), x)


def sqr(x):
    """``x * x`` (wrapping for integers).

    >>> import numpy as np
    >>> sqr(np.array([3, -4])).tolist()
    [9, 16]
    """
    return np.multiply(x, x)


def select(cond, on_true, on_false):
    """``on_true`` where ``cond`` holds, else ``on_false`` (``numpy.where``, keeping the dtype).

    >>> import numpy as np
    >>> select(np.array([True, False]), np.array([1, 2]), np.array([3, 4])).tolist()
    [1, 4]
    """
    on_true = np.asarray(on_true)
    return np.where(cond, on_true, on_false).astype(on_true.dtype, copy=False)
