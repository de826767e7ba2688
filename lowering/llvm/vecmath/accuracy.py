"""Measuring the vector math library: extended-precision references and errors in ulps.

The references are evaluated in ``numpy.longdouble`` (x87 extended, 64-bit significand, on x86-64
Linux): 40 bits more than f32 and 11 more than f64, so their own error is below 1/1000 ulp of an
f64 result.  ``sigmoid``, ``softplus`` and ``erf``, which NumPy lacks, are written here in
extended precision as well.  Errors are measured in ulps of the exact result in the target
format; a result of another class than the correctly rounded reference (NaN, ±inf, finite) counts
as an infinite error.

>>> import numpy as np
>>> x = np.array([1.0, 2.0], dtype=np.float32)
>>> bool(ulp_error(np.exp(x), reference("exp", x), "f32").max() < 1)
True
"""
from __future__ import annotations

import numpy as np

LD = np.longdouble
EXTENDED = np.finfo(LD).nmant >= 63
PRECISION = {"f32": 24, "f64": 53}
MIN_EXPONENT = {"f32": -126, "f64": -1022}
DTYPES = {"f32": np.float32, "f64": np.float64}


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    with np.errstate(invalid="ignore"):
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x):
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, x, LD(0)) + np.log1p(np.exp(-np.abs(x)))


def _erf(x):
    """erf in extended precision: Taylor series below 3 (at most ~2 digits of cancellation),
    1 - erfc by its continued fraction from 3 on (where erfc < 2.3e-5 needs few digits)."""
    x = np.asarray(x, dtype=LD)
    a = np.abs(x)
    result = np.empty_like(a)
    small = a < 3
    xs = a[small]
    term = xs.copy()
    total = xs.copy()
    x2 = xs * xs
    for k in range(1, 200):
        term = -term * x2 / k
        step = term / (2 * k + 1)
        total += step
        if not np.any(np.abs(step) > np.abs(total) * LD(2) ** -70):
            break
    result[small] = total * 2 / np.sqrt(np.pi * LD(1))
    big = ~small & np.isfinite(a)
    xb = a[big]
    # erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...))))), from the tail.
    tail = np.zeros_like(xb)
    for k in range(120, 0, -1):
        tail = (LD(k) / 2) / (xb + tail)
    erfc = np.exp(-xb * xb) / np.sqrt(np.pi * LD(1)) / (xb + tail)
    result[big] = 1 - erfc
    result[np.isinf(a)] = 1
    result[np.isnan(a)] = np.nan
    return np.copysign(result, x)


_REFERENCES = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "arctan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh,
    "arccosh": np.arccosh, "arctanh": np.arctanh, "sigmoid": _sigmoid,
    "softplus": _softplus, "pow": np.power, "sqrt": np.sqrt, "erf": _erf, "cbrt": np.cbrt,
}

_NUMPY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "arctan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh,
    "arccosh": np.arccosh, "arctanh": np.arctanh, "pow": np.power, "sqrt": np.sqrt,
    "cbrt": np.cbrt,
}


def reference(name: str, *args: np.ndarray) -> np.ndarray:
    """``name`` evaluated in extended precision on the (exactly converted) arguments."""
    with np.errstate(all="ignore"):
        wide = [np.asarray(a).astype(LD) for a in args]
        return np.asarray(_REFERENCES[name](*wide), dtype=LD)


def numpy_result(name: str, *args: np.ndarray) -> np.ndarray | None:
    """NumPy's own result in the arguments' format, or None where NumPy has no such function."""
    fn = _NUMPY.get(name)
    if fn is None:
        return None
    with np.errstate(all="ignore"):
        return fn(*args)


def ulp_of(value: np.ndarray, fmt: str) -> np.ndarray:
    """The spacing of ``fmt`` numbers at ``|value|`` (the subnormal spacing below the normals).

    >>> [float(u) for u in ulp_of(np.array([1.5, 0.0]), "f32")] == [2.0 ** -23, 2.0 ** -149]
    True
    """
    value = np.abs(np.asarray(value, dtype=LD))
    _, exponent = np.frexp(value)
    exponent = np.where(value == 0, MIN_EXPONENT[fmt], exponent.astype(np.int64) - 1)
    exponent = np.maximum(exponent, MIN_EXPONENT[fmt])
    return np.ldexp(LD(1), exponent - (PRECISION[fmt] - 1))


def ulp_error(result: np.ndarray, exact: np.ndarray, fmt: str) -> np.ndarray:
    """|result - exact| in ulps of ``exact`` in ``fmt``; inf where the classes differ.

    The class is taken from ``exact`` rounded to ``fmt``: NaN must give NaN, a result that
    rounds to ±inf must be that infinity, and a finite one must be finite.
    """
    result = np.asarray(result)
    exact = np.asarray(exact, dtype=LD)
    with np.errstate(all="ignore"):
        rounded = exact.astype(DTYPES[fmt])
        error = np.abs(result.astype(LD) - exact) / ulp_of(exact, fmt)
    nan_ref, nan_res = np.isnan(rounded), np.isnan(result)
    inf_ref, inf_res = np.isinf(rounded), np.isinf(result)
    error = np.where(nan_ref | nan_res, np.where(nan_ref & nan_res, 0, np.inf), error)
    mismatch = (inf_ref | inf_res) & ~(nan_ref | nan_res)
    same_inf = inf_ref & inf_res & (np.sign(rounded) == np.sign(result))
    error = np.where(mismatch, np.where(same_inf, 0, np.inf), error)
    return error.astype(np.float64)


def class_of(values: np.ndarray) -> np.ndarray:
    """'nan', '+inf', '-inf', '+0', '-0' or 'finite' per element (the classes NumPy fixes)."""
    values = np.asarray(values)
    out = np.full(values.shape, "finite", dtype=object)
    out[np.isnan(values)] = "nan"
    out[values == np.inf] = "+inf"
    out[values == -np.inf] = "-inf"
    zero = values == 0
    out[zero & ~np.signbit(values)] = "+0"
    out[zero & np.signbit(values)] = "-0"
    return out
