"""Comparing a compiled function's results with NumPy's.

A float result is only as precise as the least precise float any value on its way passed
through: ``exp`` of a float32 value, upcast to float64 by a ``switch``, carries float32's
rounding (the compiled math library and NumPy may differ there by an ulp of float32).
``lowest_float_precision`` finds that dtype in the graph, and the comparisons take their
tolerance from it.

>>> assert_same_result(np.float32([1.0, np.nan]), np.float32([1.0, np.nan]), "y")
>>> assert_same_result(np.int8([1]), np.int16([1]), "y")
Traceback (most recent call last):
    ...
AssertionError: y: dtype int8, NumPy int16
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> lowest_float_precision(x * 2), lowest_float_precision(T.cast(T.exp(T.cast(x, "float32")), "float64"))
(dtype('float64'), dtype('float32'))
"""
from __future__ import annotations

import numpy as np

from lowering.frontend.graph import toposort

# Relative and absolute tolerances of float results (compiled math may differ by a few ulps).
TOLERANCE = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


def lowest_float_precision(var) -> np.dtype | None:
    """The float dtype with the largest epsilon among the results of the ops computing the
    front-end variable ``var`` (inputs and constants are exact, so they do not count); None
    where nothing on the way is a float."""
    lowest = None
    for op in toposort([var.value]):
        if not op.operands:
            continue  # constants hold exactly the values NumPy is given
        for result in op.results:
            dtype = getattr(result.type, "dtype", None)
            if dtype is not None and dtype.kind == "f" and (
                    lowest is None or np.finfo(dtype).eps > np.finfo(lowest).eps):
                lowest = dtype
    return lowest


def least_precise(dtype, precision) -> np.dtype:
    """``dtype``, or ``precision`` where it is a float of lower precision."""
    dtype = np.dtype(dtype)
    if precision is None or np.finfo(precision).eps <= np.finfo(dtype).eps:
        return dtype
    return np.dtype(precision)


def assert_same_result(got, expected, what: str, precision=None) -> None:
    """Same dtype and shape; floats equal within the rounding of their dtype or of
    ``precision`` (the ``lowest_float_precision`` of the graph, when lower), NaN where NumPy
    has NaN, infinities of the same sign; everything else exactly."""
    got = np.asarray(got)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype}, NumPy {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, NumPy {expected.shape}"
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, equal_nan=True, err_msg=what,
                                   **TOLERANCE[least_precise(got.dtype, precision).name])
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)
