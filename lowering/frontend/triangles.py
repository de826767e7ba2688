"""Diagonals and triangles: Theano's ``T.diag``, ``T.diagonal``, ``T.tri``, ``T.tril`` and
``T.triu``.

All are compositions: ``diagonal`` reads the diagonal with two index vectors (advanced indexing,
whose gradient scatters back onto the diagonal), ``diag`` of a vector writes one into zeros, and
the triangles compare two index ranges (one fused loop) and pick with ``switch``, so values above
or below the kept triangle are zeros even where the input holds NaN, as NumPy's are.

>>> import numpy as np
>>> import lowering.tensor as T
>>> x = T.dmatrix("x")
>>> diagonal(x, 1).eval({x: np.arange(6.0).reshape(2, 3)})
array([1., 5.])
>>> tril(x).eval({x: np.ones((2, 3))})
array([[1., 0., 0.],
       [1., 1., 0.]])
"""
from __future__ import annotations

import operator

from lowering.config import config

from .constructors import as_tensor_variable
from .elemwise import cast, ge, maximum, minimum, switch
from .errors import GraphBuildError
from .indexing import set_subtensor
from .shapes import arange, dimshuffle, shape_i, zeros, zeros_like
from .types import canonical_dtype
from .variable import TensorVariable


def _static_int(value, what: str, name: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {what} must be a Python int, got {value!r}") from None


def _axis(x: TensorVariable, axis, name: str) -> int:
    axis = _static_int(axis, "an axis", name)
    if not -x.ndim <= axis < x.ndim:
        raise GraphBuildError(f"{name}: axis {axis} is out of range for {x} of rank {x.ndim}")
    return axis % x.ndim


def diagonal(a, offset=0, axis1=0, axis2=1) -> TensorVariable:
    """Diagonal ``offset`` (above the main one for ``offset > 0``) of the 2-d sub-arrays of
    ``a`` on ``axis1`` and ``axis2``, as NumPy's ``diagonal``: those two axes are removed and
    the diagonal is the last axis of the result.

    >>> import lowering.tensor as T
    >>> diagonal(T.dtensor3("t"), axis1=1, axis2=2).ndim
    2
    """
    a = as_tensor_variable(a)
    if a.ndim < 2:
        raise GraphBuildError(f"diagonal: {a} must have at least 2 dimensions, it has {a.ndim}")
    offset = _static_int(offset, "the offset", "diagonal")
    axis1, axis2 = _axis(a, axis1, "diagonal"), _axis(a, axis2, "diagonal")
    if axis1 == axis2:
        raise GraphBuildError(f"diagonal: axis1 and axis2 are both {axis1}; they must differ")
    rest = [d for d in range(a.ndim) if d not in (axis1, axis2)]
    moved = dimshuffle(a, rest + [axis1, axis2])
    first_row, first_col = max(-offset, 0), max(offset, 0)
    length = maximum(minimum(shape_i(a, axis1) - first_row, shape_i(a, axis2) - first_col), 0)
    steps = arange(length)
    return moved[(slice(None),) * len(rest) + (steps + first_row, steps + first_col)]


def diag(v, k=0) -> TensorVariable:
    """For a vector ``v``: the square matrix with ``v`` on diagonal ``k`` and zeros elsewhere;
    for a tensor of rank 2 or more: its diagonal ``k`` (``diagonal(v, k)``).

    >>> import lowering.tensor as T
    >>> v = T.dvector("v")
    >>> diag(v, -1).eval({v: [1.0, 2.0]})
    array([[0., 0., 0.],
           [1., 0., 0.],
           [0., 2., 0.]])
    """
    v = as_tensor_variable(v)
    if v.ndim >= 2:
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError(f"diag: the input must have at least 1 dimension, {v} has none")
    k = _static_int(k, "k", "diag")
    size = shape_i(v, 0) + abs(k)
    steps = arange(shape_i(v, 0))
    out = zeros((size, size), dtype=v.dtype)
    return set_subtensor(out[steps + max(-k, 0), steps + max(k, 0)], v)


def _lower_mask(rows, cols, k) -> TensorVariable:
    """``j <= i + k`` for row indices ``i`` and column indices ``j``: a boolean matrix."""
    return ge(dimshuffle(arange(rows), (0, "x")) + k, dimshuffle(arange(cols), ("x", 0)))


def tri(N, M=None, k=0, dtype=None) -> TensorVariable:
    """An ``N`` x ``M`` matrix (``M`` defaults to ``N``) of ``dtype`` (floatX by default) with
    ones at and below diagonal ``k`` and zeros above; sizes and ``k`` may be symbolic.

    >>> tri(2, 3, 1, dtype="int8").eval()
    array([[1, 1, 0],
           [1, 1, 1]], dtype=int8)
    """
    M = N if M is None else M
    return cast(_lower_mask(N, M, k), canonical_dtype(dtype or config.floatX))


def _triangle(m, k, name: str, lower: bool) -> TensorVariable:
    m = as_tensor_variable(m)
    if m.ndim < 2:
        raise GraphBuildError(f"{name}: {m} must have at least 2 dimensions, it has {m.ndim}")
    rows, cols = shape_i(m, m.ndim - 2), shape_i(m, m.ndim - 1)
    keep = _lower_mask(rows, cols, k) if lower else ~_lower_mask(rows, cols, k - 1)
    return switch(keep, m, zeros_like(m))


def tril(m, k=0) -> TensorVariable:
    """``m`` with the elements above diagonal ``k`` zeroed (of the last two axes when ``m``
    has more than two, as NumPy's ``tril``)."""
    return _triangle(m, k, "tril", lower=True)


def triu(m, k=0) -> TensorVariable:
    """``m`` with the elements below diagonal ``k`` zeroed (of the last two axes when ``m``
    has more than two, as NumPy's ``triu``)."""
    return _triangle(m, k, "triu", lower=False)
