"""Independent reference semantics of the elementwise functions, for tests.

Integer functions are computed on Python integers and wrapped to the dtype (two's complement);
float functions are computed in float64 from textbook formulas. The result dtype rules are restated
here from the contract rather than taken from the dialect.
"""
from __future__ import annotations

import math

import numpy as np

UNARY = ["neg", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
         "sqr", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
         "tanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "softplus", "erf", "floor", "ceil",
         "round", "round_half_away_from_zero", "trunc", "not", "isnan", "isinf"]
BINARY = ["add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum", "arctan2",
          "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor"]
TERNARY = ["select", "clip"]
ALL_FUNCTIONS = UNARY + BINARY + TERNARY + ["cast"]

FLOATS = ["float16", "float32", "float64"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTS = SIGNED + UNSIGNED
ALL_DTYPES = FLOATS + INTS + ["bool"]

FLOAT_FUNCTIONS = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "reciprocal",
                   "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                   "arcsinh", "arccosh", "arctanh", "sigmoid", "softplus", "erf", "floor", "ceil",
                   "round", "round_half_away_from_zero", "trunc", "div", "arctan2"}
ARITH = {"neg", "abs", "sign", "sqr", "add", "sub", "mul", "floordiv", "mod", "pow", "maximum",
         "minimum", "clip"}
LOGICAL = {"not", "and", "or", "xor"}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
PREDICATE = {"isnan", "isinf"}
PIECEWISE_CONSTANT = {"floor", "ceil", "round", "round_half_away_from_zero", "trunc", "sign",
                      "floordiv"}
NOT_DIFFERENTIABLE = LOGICAL | COMPARE | PREDICATE | PIECEWISE_CONSTANT


def accepted_dtypes(short: str) -> list[str]:
    """The operand dtypes the function accepts (all operands share one)."""
    if short in ARITH:
        return FLOATS + INTS
    if short in LOGICAL:
        return INTS + ["bool"]
    return ALL_DTYPES


def float_for(dtype: str) -> str:
    """Theano's upgrade_to_float."""
    if dtype in FLOATS:
        return dtype
    return "float64" if dtype in ("int32", "int64", "uint32", "uint64") else "float32"


def result_dtype(short: str, dtype: str) -> str:
    if short in FLOAT_FUNCTIONS:
        return float_for(dtype)
    if short in COMPARE or short in PREDICATE:
        return "bool"
    return dtype


# ---------------------------------------------------------------------------------------------
# Integer semantics on Python ints


def wrap(value: int, dtype: str) -> int:
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (int(value) - int(info.min)) % span + int(info.min)


def _int_pow(a: int, b: int) -> int:
    if b >= 0:
        return a ** b
    if a == 1:
        return 1
    if a == -1:
        return -1 if b % 2 else 1
    return 0


INT_FUNCTIONS = {
    "neg": lambda a: -a, "abs": abs, "sign": lambda a: (a > 0) - (a < 0), "sqr": lambda a: a * a,
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: 0 if b == 0 else a // b, "mod": lambda a, b: 0 if b == 0 else a % b,
    "pow": _int_pow, "maximum": max, "minimum": min,
    "clip": lambda x, lo, hi: min(max(x, lo), hi),
    "not": lambda a: ~a, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
}

BOOL_FUNCTIONS = {"not": lambda a: not a, "and": lambda a, b: a and b, "or": lambda a, b: a or b,
                  "xor": lambda a, b: a != b}


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _round_half_away_from_zero(x):
    # C's round, which NumPy lacks; x - trunc(x) is exact, where x + 0.5 may round up.
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def _softplus(x):
    return np.where(x > 30, x, np.log1p(np.exp(np.minimum(x, 30))))


FLOAT_REFERENCE = {
    "neg": np.negative, "abs": np.abs, "sign": np.sign, "sqr": lambda a: a * a,
    "exp": np.exp, "exp2": lambda a: 2.0 ** a, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "reciprocal": lambda a: 1.0 / a, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh,
    "arctanh": np.arctanh, "sigmoid": _sigmoid, "softplus": _softplus,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "round_half_away_from_zero": _round_half_away_from_zero,
    "isnan": np.isnan, "isinf": np.isinf,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": lambda a, b: a / b,
    "floordiv": np.floor_divide, "mod": np.mod, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "arctan2": np.arctan2,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
    "clip": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    "select": lambda c, a, b: np.where(c, a, b),
}


def reference(short: str, *arrays) -> np.ndarray:
    """The expected value of ``short`` on same-dtype operands (broadcast NumPy-style)."""
    arrays = [np.asarray(a) for a in arrays]
    dtype = str(arrays[-1].dtype)
    out_dtype = result_dtype(short, dtype) if short != "select" else dtype
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    if short == "select":
        return np.where(arrays[0], arrays[1], arrays[2]).astype(dtype)
    if short in COMPARE:
        with np.errstate(invalid="ignore"):
            return FLOAT_REFERENCE[short](*[a.astype(object) for a in arrays]).astype(bool)
    if dtype == "bool" and short in BOOL_FUNCTIONS:
        fn = np.frompyfunc(BOOL_FUNCTIONS[short], len(arrays), 1)
        return np.asarray(fn(*[a.astype(object) for a in arrays]), dtype=bool).reshape(shape)
    if dtype in INTS and short in INT_FUNCTIONS:
        exact = INT_FUNCTIONS[short]
        fn = np.frompyfunc(lambda *xs: wrap(exact(*map(int, xs)), dtype), len(arrays), 1)
        return np.asarray(fn(*arrays), dtype=object).astype(dtype).reshape(shape)
    with np.errstate(all="ignore"):
        # At least 1-d: NumPy's scalar path for 0-d operands departs from C's functions
        # ((-inf) ** 0.5 is nan there), which the ops follow.
        value = FLOAT_REFERENCE[short](*[np.atleast_1d(a.astype(np.float64)) for a in arrays])
        return np.asarray(value).reshape(shape).astype(out_dtype)


def cast_reference(array, dtype: str) -> np.ndarray:
    """``astype`` restated: integers wrap, floats truncate toward zero, anything to bool is != 0."""
    array = np.asarray(array)
    if dtype == "bool":
        return array != 0
    if dtype in FLOATS:
        with np.errstate(over="ignore"):
            return array.astype(np.float64).astype(dtype)
    if array.dtype.kind == "f":
        truncated = np.trunc(array.astype(np.float64))
        return np.array([wrap(int(v), dtype) for v in truncated.ravel()],
                        dtype=dtype).reshape(array.shape)
    return np.array([wrap(int(v), dtype) for v in array.ravel()], dtype=dtype).reshape(array.shape)


def tolerance(dtype: str) -> dict:
    """assert_allclose tolerances for results of ``dtype`` against float64 references."""
    return {"float16": dict(rtol=2e-3, atol=2e-3), "float32": dict(rtol=2e-5, atol=1e-6),
            "float64": dict(rtol=1e-10, atol=1e-12)}.get(dtype, dict(rtol=0, atol=0))


def assert_matches(got, expected) -> None:
    """Same dtype and shape, equal within the dtype's tolerance (NaN equals NaN)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    tol = tolerance(str(got.dtype))
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   equal_nan=True, **tol)
    else:
        np.testing.assert_array_equal(got, expected)
