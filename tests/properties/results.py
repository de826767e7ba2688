"""Comparing a compiled function's results with NumPy's.

>>> assert_same_result(np.float32([1.0, np.nan]), np.float32([1.0, np.nan]), "y")
>>> assert_same_result(np.int8([1]), np.int16([1]), "y")
Traceback (most recent call last):
    ...
AssertionError: y: dtype int8, NumPy int16
"""
import numpy as np

# Relative and absolute tolerances of float results (compiled math may differ by a few ulps).
TOLERANCE = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


def assert_same_result(got, expected, what: str) -> None:
    """Same dtype and shape; floats equal within the dtype's rounding (NaN where NumPy has NaN,
    infinities of the same sign), everything else exactly."""
    got = np.asarray(got)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype}, NumPy {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, NumPy {expected.shape}"
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, equal_nan=True, err_msg=what,
                                   **TOLERANCE[got.dtype.name])
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)
