"""The NumPy mirror of front-end operations: what each one computes, written with NumPy directly.

Each function takes the operands as the user gave them (arrays for variables and NumPy data,
Python scalars as they are), applies the documented dtype rules of ``dtype_rules``, and computes
the result with NumPy in that dtype.

>>> a = np.array([1, -2], dtype=np.int8)
>>> elementwise("add", a, 1000, floatx="float64")
array([1001,  998], dtype=int16)
>>> elementwise("exp", np.array([0], np.uint8), floatx="float32").dtype
dtype('float32')
>>> reduce("sum", np.ones((2, 3), np.uint8), axis=0, keepdims=True)
array([[2, 2, 2]], dtype=uint64)
"""
from __future__ import annotations

import warnings

import numpy as np

from .dtype_rules import arith_dtype, float_for, is_weak, mean_dtype, promote, sum_dtype


def _int_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Documented integer ``**``: wrapping for exponents >= 0; for ``b ** -k`` the truncated
    quotient ``1 / b ** k`` (1 for b == 1, +-1 for b == -1, 0 otherwise)."""
    negative = exponent < 0
    out = np.power(base, np.where(negative, 0, exponent).astype(exponent.dtype))
    odd = exponent % 2 != 0
    special = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, special, out).astype(base.dtype)


def _power(a, b):
    return _int_power(a, b) if a.dtype.kind in "iu" else np.power(a, b)


def _isnan(a):
    return np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)


def _isinf(a):
    return np.isinf(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)


# name -> (kind, NumPy function). Kinds: "float" (computes in float_for), "arith" (booleans as
# int8), "logical" (integers and booleans only), "compare" and "predicate" (give booleans).
UNARY = {
    "neg": ("arith", np.negative), "abs": ("arith", np.abs), "sgn": ("arith", np.sign),
    "sqr": ("arith", lambda a: a * a), "sqrt": ("float", np.sqrt), "exp": ("float", np.exp),
    "log": ("float", np.log), "log1p": ("float", np.log1p), "expm1": ("float", np.expm1),
    "sin": ("float", np.sin), "cos": ("float", np.cos), "tanh": ("float", np.tanh),
    "arctan": ("float", np.arctan), "floor": ("float", np.floor), "ceil": ("float", np.ceil),
    "round": ("float", np.round), "trunc": ("float", np.trunc), "inv": ("float", lambda a: 1 / a),
    "isnan": ("predicate", _isnan), "isinf": ("predicate", _isinf),
    "invert": ("logical", np.invert),
}
BINARY = {
    "add": ("arith", np.add), "sub": ("arith", np.subtract), "mul": ("arith", np.multiply),
    "true_div": ("float", np.true_divide), "int_div": ("arith", np.floor_divide),
    "mod": ("arith", np.mod), "pow": ("arith", _power), "maximum": ("arith", np.maximum),
    "minimum": ("arith", np.minimum), "arctan2": ("float", np.arctan2),
    "eq": ("compare", np.equal), "neq": ("compare", np.not_equal), "lt": ("compare", np.less),
    "le": ("compare", np.less_equal), "gt": ("compare", np.greater),
    "ge": ("compare", np.greater_equal), "and_": ("logical", np.logical_and),
    "or_": ("logical", np.logical_or), "xor": ("logical", np.logical_xor),
}
# Bitwise forms of the logical functions, for integers.
_BITWISE = {"and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}
# On booleans the maximum is the logical or and the minimum the logical and.
_BOOLEAN_FORMS = {"maximum": "or_", "minimum": "and_"}


def compute_dtype(kind: str, common: str, floatx: str) -> str | None:
    """The dtype a function of ``kind`` computes in for operands promoted to ``common``; None
    where the function does not accept them (logical functions of floats)."""
    if kind == "float":
        return float_for(common, floatx)
    if kind == "arith":
        return arith_dtype(common)
    if kind == "logical" and np.dtype(common).kind == "f":
        return None
    return common


def accepts(name: str, operands, floatx: str) -> bool:
    """Whether the elementwise function ``name`` is defined for these operands' dtypes."""
    kind, _ = UNARY.get(name) or BINARY[name]
    common = promote(operands, floatx)
    if common == "bool" and name in _BOOLEAN_FORMS:
        return True
    return compute_dtype(kind, common, floatx) is not None


def _as(operand, dtype: str) -> np.ndarray:
    if is_weak(operand):
        return np.asarray(operand, dtype=dtype)
    return np.asarray(operand).astype(dtype)


def elementwise(name: str, *operands, floatx: str) -> np.ndarray:
    """``T.<name>(*operands)`` computed with NumPy (broadcasting as NumPy does)."""
    common = promote(operands, floatx)
    if common == "bool" and name in _BOOLEAN_FORMS:
        name = _BOOLEAN_FORMS[name]
    kind, fn = UNARY.get(name) or BINARY[name]
    dtype = compute_dtype(kind, common, floatx)
    if dtype is None:
        raise TypeError(f"{name} does not accept {common}")
    if kind == "logical" and dtype != "bool":
        fn = _BITWISE.get(name, fn)
    args = [_as(o, dtype) for o in operands]
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*args))
    return out.astype("bool" if kind in ("compare", "predicate") else dtype)


def switch(cond, if_true, if_false, floatx: str) -> np.ndarray:
    """``T.switch``: a non-boolean condition means ``cond != 0``; the branches promote together."""
    cond = np.asarray(cond)
    if cond.dtype != bool:
        cond = elementwise("neq", cond, 0, floatx=floatx)
    dtype = promote([if_true, if_false], floatx)
    return np.where(cond, _as(if_true, dtype), _as(if_false, dtype)).astype(dtype)


def clip(x, low, high, floatx: str) -> np.ndarray:
    """``T.clip``: arithmetic on the promoted operands (``high`` wins where ``low > high``)."""
    dtype = arith_dtype(promote([x, low, high], floatx))
    with np.errstate(all="ignore"):
        return np.minimum(np.maximum(_as(x, dtype), _as(low, dtype)), _as(high, dtype))


def reduce(name: str, x: np.ndarray, axis, keepdims: bool) -> np.ndarray:
    """``x.<name>(axis=axis, keepdims=keepdims)`` with NumPy's reductions."""
    axes = axis if axis is None or isinstance(axis, int) else tuple(axis)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is NaN
        if name in ("sum", "prod"):
            fn = np.sum if name == "sum" else np.prod
            return np.asarray(fn(x, axis=axes, keepdims=keepdims, dtype=sum_dtype(x.dtype.name)))
        if name == "mean":
            dtype = mean_dtype(x.dtype.name)
            return np.asarray(np.mean(x, axis=axes, keepdims=keepdims, dtype=dtype)).astype(dtype)
        if name in ("max", "min"):
            fn = np.max if name == "max" else np.min
            return np.asarray(fn(x, axis=axes, keepdims=keepdims))
        fn = np.argmax if name == "argmax" else np.argmin
        return np.asarray(fn(x, axis=axes, keepdims=keepdims)).astype(np.int64)


def dot(a, b, floatx: str) -> np.ndarray:
    """``T.dot``: NumPy's dot of the promoted operands; a rank-0 operand multiplies."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return elementwise("mul", a, b, floatx=floatx)
    dtype = np.result_type(a, b)
    return np.asarray(np.dot(a.astype(dtype), b.astype(dtype)))


def dimshuffle(x: np.ndarray, pattern) -> np.ndarray:
    """``x.dimshuffle(*pattern)``: ints pick dims in order, ``'x'`` inserts size-1 dims, and
    dims not named (all of size 1) are dropped."""
    kept = [p for p in pattern if p != "x"]
    dropped = tuple(d for d in range(x.ndim) if d not in kept)
    squeezed = np.squeeze(x, axis=dropped)
    position = {d: i for i, d in enumerate(d for d in range(x.ndim) if d not in dropped)}
    moved = np.transpose(squeezed, [position[d] for d in kept])
    sizes = iter(moved.shape)
    return moved.reshape([1 if p == "x" else next(sizes) for p in pattern])


def cast(x: np.ndarray, dtype: str) -> np.ndarray:
    """``T.cast``: NumPy's ``astype``."""
    return np.asarray(x).astype(dtype)


def cast_is_defined(x: np.ndarray, dtype: str) -> bool:
    """Whether ``astype(dtype)`` is defined for every value: floats to integers need finite
    values whose truncation fits the target."""
    if np.dtype(dtype).kind not in "iu" or x.dtype.kind != "f" or x.size == 0:
        return True
    if not np.all(np.isfinite(x)):
        return False
    truncated = np.trunc(x.astype(np.float64))
    info = np.iinfo(dtype)
    return bool(np.all((truncated >= int(info.min)) & (truncated <= int(info.max))))
