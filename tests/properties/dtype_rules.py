"""The front end's documented dtype rules, restated for the NumPy mirror of random graphs.

These functions are written from the documentation of ``lowering.frontend.elemwise`` and
``lowering.frontend.reductions`` (and ``lowering.dialects.tensor.reduction``), not taken from the
code, so that a graph's computed dtype can be checked against what the rules promise:

- tensors and NumPy data promote as NumPy does (``numpy.result_type``);
- Python scalars are *weak*: they take the tensors' dtype when their kind fits (bool < int <
  float); a Python float with integer tensors gives ``floatX`` promoted with them; a Python int
  that does not fit an integer dtype widens it to the smallest signed type holding it;
- real functions of integers and booleans compute in float64, or float32 when ``floatX`` is
  float32 and the integers have at most 16 bits;
- arithmetic on booleans computes in int8, except maximum/minimum, which are or/and;
- sums and products of booleans and signed integers are int64, of unsigned integers uint64;
  means of integers and booleans are float64; argmax/argmin are int64.

>>> int8 = np.zeros(2, np.int8)
>>> promote([int8, 1000], "float64"), promote([int8, 0.5], "float32")
('int16', 'float32')
>>> float_for("int32", "float32"), float_for("uint8", "float32"), float_for("bool", "float64")
('float64', 'float32', 'float64')
"""
from __future__ import annotations

import numpy as np

# The order of kinds: a weak scalar of a higher kind than the tensors changes their dtype.
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def is_weak(operand) -> bool:
    """Whether ``operand`` is a Python scalar (bool, int or float), which promotes weakly.

    >>> is_weak(2), is_weak(np.int64(2)), is_weak(True)
    (True, False, True)
    """
    return isinstance(operand, (bool, int, float)) and not isinstance(operand, np.generic)


def weak_dtype(scalar, floatx: str) -> str:
    """The dtype a Python scalar has on its own: bool, int64, or ``floatX`` for floats.

    >>> weak_dtype(True, "float32"), weak_dtype(3, "float32"), weak_dtype(0.5, "float32")
    ('bool', 'int64', 'float32')
    """
    if isinstance(scalar, bool):
        return "bool"
    if isinstance(scalar, int):
        return "int64"
    return floatx


def _smallest_signed(value: int) -> str:
    for name in ("int8", "int16", "int32", "int64"):
        info = np.iinfo(name)
        if info.min <= value <= info.max:
            return name
    raise ValueError(f"{value} fits no signed integer type")


def promote(operands, floatx: str) -> str:
    """The dtype operands are brought to: arrays (and NumPy scalars) by their dtype, Python
    scalars weakly.

    >>> promote([np.zeros(1, np.uint8), -3], "float64"), promote([np.zeros(1, bool), 1], "float64")
    ('int16', 'int64')
    """
    strong = [np.asarray(o).dtype for o in operands if not is_weak(o)]
    weak = [o for o in operands if is_weak(o)]
    if not strong:
        return np.result_type(*[weak_dtype(w, floatx) for w in weak]).name
    dtype = np.result_type(*strong)
    for w in weak:
        own = np.dtype(weak_dtype(w, floatx))
        if _KIND_RANK[own.kind] > _KIND_RANK[dtype.kind]:
            dtype = np.result_type(dtype, own)
        elif isinstance(w, int) and not isinstance(w, bool) and dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= w <= info.max:
                dtype = np.result_type(dtype, _smallest_signed(w))
    return dtype.name


def float_for(dtype: str, floatx: str) -> str:
    """The float dtype real functions (exp, /, arctan2, ...) of ``dtype`` compute in."""
    if np.dtype(dtype).kind == "f":
        return dtype
    if floatx != "float64" and np.dtype(dtype).itemsize <= 2:
        return "float32"
    return "float64"


def arith_dtype(dtype: str) -> str:
    """The dtype arithmetic (+, -, *, //, %, **, neg, abs, ...) computes in: booleans as int8.

    >>> arith_dtype("bool"), arith_dtype("uint8")
    ('int8', 'uint8')
    """
    return "int8" if dtype == "bool" else dtype


def sum_dtype(dtype: str) -> str:
    """The dtype of a sum or product of ``dtype`` values (NumPy's).

    >>> sum_dtype("bool"), sum_dtype("int8"), sum_dtype("uint8"), sum_dtype("float32")
    ('int64', 'int64', 'uint64', 'float32')
    """
    kind = np.dtype(dtype).kind
    return {"b": "int64", "i": "int64", "u": "uint64"}.get(kind, dtype)


def mean_dtype(dtype: str) -> str:
    """The dtype of a mean: float64 for integers and booleans, floats keep theirs.

    >>> mean_dtype("int8"), mean_dtype("float32")
    ('float64', 'float32')
    """
    return dtype if np.dtype(dtype).kind == "f" else "float64"
