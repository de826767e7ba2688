"""Reductions: sum, prod, mean, max, min, argmax, argmin, and var, std and norm built from them.

``axis`` is None (all axes), an int or a sequence of ints (negative ones count from the end).
Result dtypes follow NumPy (and Theano): sums and products of booleans and integers are int64,
means of integers float64; ``dtype`` casts the input first (the sum accumulates in it) and gives
the result that dtype; ``acc_dtype`` only sets the accumulation type.

>>> from lowering.frontend.constructors import bmatrix, fmatrix
>>> x = fmatrix()
>>> x.sum(axis=0).dtype, bmatrix().sum().dtype, bmatrix().mean(axis=1).dtype, x.argmax(axis=-1).dtype
('float32', 'int64', 'float64', 'int64')
"""
from __future__ import annotations

import math

from lowering.dialects.tensor import (ArgMaxOp, ArgMinOp, MaxOp, MeanOp, MinOp, ProdOp, SumOp)
from lowering.dialects.tensor.typing import normalize_axes
from lowering.ir.core import VerifyError

from . import elemwise
from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast
from .errors import build_error
from .shapes import shape_i
from .variable import TensorVariable


def _reduce(op_class, x, axis, keepdims, dtype=None, acc_dtype=None) -> TensorVariable:
    x = as_tensor_variable(x)
    accumulate = acc_dtype or dtype
    source = cast(x, accumulate) if accumulate is not None else x
    out = apply(op_class, source, axes=_axes(axis), keepdims=bool(keepdims), named=[x])
    return cast(out, dtype) if dtype is not None else out


def _axes(axis):
    if axis is None or isinstance(axis, int):
        return axis
    return [int(a) for a in axis]


def sum(x, axis=None, dtype=None, keepdims=False, acc_dtype=None) -> TensorVariable:  # noqa: A001
    """The sum over ``axis``."""
    return _reduce(SumOp, x, axis, keepdims, dtype, acc_dtype)


def prod(x, axis=None, dtype=None, keepdims=False, acc_dtype=None) -> TensorVariable:
    """The product over ``axis``."""
    return _reduce(ProdOp, x, axis, keepdims, dtype, acc_dtype)


def mean(x, axis=None, dtype=None, keepdims=False, acc_dtype=None) -> TensorVariable:
    """The arithmetic mean over ``axis`` (integers average to float64)."""
    return _reduce(MeanOp, x, axis, keepdims, dtype, acc_dtype)


def max(x, axis=None, keepdims=False) -> TensorVariable:  # noqa: A001
    """The maximum over ``axis``."""
    return _reduce(MaxOp, x, axis, keepdims)


def min(x, axis=None, keepdims=False) -> TensorVariable:  # noqa: A001
    """The minimum over ``axis``."""
    return _reduce(MinOp, x, axis, keepdims)


def argmax(x, axis=None, keepdims=False) -> TensorVariable:
    """The index of the first maximum along one axis, or in the flattened ``x`` (axis None)."""
    return _reduce(ArgMaxOp, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False) -> TensorVariable:
    """The index of the first minimum along one axis, or in the flattened ``x`` (axis None)."""
    return _reduce(ArgMinOp, x, axis, keepdims)


def _count(x: TensorVariable, axis) -> TensorVariable | int:
    """How many elements a reduction over ``axis`` combines (an int when static)."""
    try:
        axes = normalize_axes(_axes(axis), x.ndim)
    except VerifyError as exc:
        raise build_error("count", exc, [x]) from None
    sizes = [x.value.type.shape[a] for a in axes]
    if all(s is not None for s in sizes):
        return math.prod(sizes)
    count: TensorVariable | int = 1
    for a, s in zip(axes, sizes):
        count = count * (s if s is not None else shape_i(x, a))
    return count


def var(x, axis=None, ddof: int = 0, keepdims=False) -> TensorVariable:
    """The variance over ``axis``: the mean squared deviation, divided by ``n - ddof`` instead of
    ``n`` when ``ddof`` is given.

    >>> from lowering.frontend.constructors import matrix
    >>> var(matrix(), axis=0).ndim
    1
    """
    x = as_tensor_variable(x)
    deviation = x - mean(x, axis=axis, keepdims=True)
    squares = elemwise.sqr(deviation)
    if ddof == 0:
        return mean(squares, axis=axis, keepdims=keepdims)
    total = sum(squares, axis=axis, keepdims=keepdims)
    count = _count(x, axis) - ddof
    # A symbolic count is int64: cast it so that a float32 variance stays float32.
    return total / (cast(count, total.dtype) if isinstance(count, TensorVariable) else count)


def std(x, axis=None, ddof: int = 0, keepdims=False) -> TensorVariable:
    """The standard deviation: ``sqrt(var(x, axis, ddof))``."""
    return elemwise.sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims))


def norm(x, L, axis=None, keepdims=False) -> TensorVariable:
    """The ``L``-norm over ``axis``: ``L`` a positive number or ``inf``."""
    x = as_tensor_variable(x)
    magnitude = elemwise.abs(x)
    if L == math.inf:
        return max(magnitude, axis=axis, keepdims=keepdims)
    if L <= 0:
        raise ValueError(f"norm: L must be positive or inf, got {L}")
    if L == 1:
        return sum(magnitude, axis=axis, keepdims=keepdims)
    if L == 2:
        return elemwise.sqrt(sum(elemwise.sqr(x), axis=axis, keepdims=keepdims))
    return sum(magnitude ** L, axis=axis, keepdims=keepdims) ** (1.0 / L)
