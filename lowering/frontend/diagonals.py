"""Diagonals: ``T.eye``, ``T.identity_like``, and ``fill_diagonal`` /
``fill_diagonal_offset`` of ``T.extra_ops``.

All are compositions: ``eye`` compares two index ranges (one fused loop), the fills are
``set_subtensor`` at the diagonal's positions, whose gradient is Theano's (the input's gradient
with the diagonal zeroed, and the sum of the diagonal's gradient for the value).

>>> import lowering.tensor as T
>>> eye(2, 3, k=1).eval()
array([[0., 1., 0.],
       [0., 0., 1.]])
"""
from __future__ import annotations

from lowering.config import config

from .checked import require
from .constructors import as_tensor_variable
from .elemwise import cast, eq, maximum, minimum
from .errors import GraphBuildError
from .indexing import set_subtensor
from .shapes import arange, dimshuffle, shape_i
from .types import canonical_dtype
from .variable import TensorVariable


def eye(n, m=None, k=0, dtype=None) -> TensorVariable:
    """An ``n`` x ``m`` matrix (``m`` defaults to ``n``) of ``dtype`` (floatX by default) with
    ones on diagonal ``k`` (above the main one for ``k > 0``); sizes may be symbolic."""
    m = n if m is None else m
    rows = dimshuffle(arange(n), (0, "x"))
    cols = dimshuffle(arange(m), ("x", 0))
    return cast(eq(rows + k, cols), canonical_dtype(dtype or config.floatX))


def identity_like(x) -> TensorVariable:
    """The identity matrix of ``x``'s shape and dtype."""
    x = as_tensor_variable(x)
    return eye(shape_i(x, 0), shape_i(x, 1), dtype=x.dtype)


def fill_diagonal(a, val) -> TensorVariable:
    """``a`` (of rank 2 or more) with its main diagonal set to the scalar ``val``; a tensor of
    rank more than 2 must have equal sizes (it is checked when the function runs)."""
    a, val = as_tensor_variable(a), as_tensor_variable(val)
    if a.ndim < 2:
        raise GraphBuildError(f"fill_diagonal: {a} must have at least 2 dimensions")
    if val.ndim != 0:
        raise GraphBuildError(f"fill_diagonal: the value {val} must be a scalar")
    if a.ndim > 2:
        first = shape_i(a, 0)
        for d in range(1, a.ndim):
            a = require(a, eq(shape_i(a, d), first),
                         "fill_diagonal: all dimensions of the input must be of equal length")
    length = shape_i(a, 0)
    for d in range(1, a.ndim):
        length = minimum(length, shape_i(a, d))
    diagonal = arange(length)
    return set_subtensor(a[(diagonal,) * a.ndim], val)


def fill_diagonal_offset(a, val, offset) -> TensorVariable:
    """The matrix ``a`` with diagonal ``offset`` (above the main one for ``offset > 0``) set to
    the scalar ``val``; ``offset`` may be symbolic."""
    a, val = as_tensor_variable(a), as_tensor_variable(val)
    if a.ndim != 2:
        raise GraphBuildError(f"fill_diagonal_offset: {a} must be a matrix")
    if val.ndim != 0:
        raise GraphBuildError(f"fill_diagonal_offset: the value {val} must be a scalar")
    offset = as_tensor_variable(offset)
    first_row, first_col = maximum(-offset, 0), maximum(offset, 0)
    length = maximum(minimum(shape_i(a, 0) - first_row, shape_i(a, 1) - first_col), 0)
    steps = arange(length)
    return set_subtensor(a[steps + first_row, steps + first_col], val)
