"""Reductions built from others: Theano's ``T.max_and_argmax``, ``T.ptp`` and ``T.cov``.

>>> import numpy as np
>>> import lowering.tensor as T
>>> x = T.dmatrix("x")
>>> [v.eval({x: [[1.0, 7.0], [3.0, 2.0]]}) for v in max_and_argmax(x, axis=1)]
[array([7., 3.]), array([1, 0])]
>>> ptp(x, axis=0).eval({x: [[1.0, 7.0], [3.0, 2.0]]})
array([2., 5.])
"""
from __future__ import annotations

import operator

from .constructors import as_tensor_variable, constant
from .errors import GraphBuildError
from .linalg import dot
from .reductions import argmax, max as max_, mean, min as min_
from .shapes import concatenate, dimshuffle, reshape, shape_i, squeeze
from .variable import TensorVariable


def _normalized_axes(x: TensorVariable, axis, name: str) -> list[int]:
    """``axis`` (None, an int or ints; negative ones count from the end) as sorted axes."""
    if axis is None:
        return list(range(x.ndim))
    axes = [axis] if not isinstance(axis, (list, tuple)) else list(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -x.ndim <= a < x.ndim:
            raise GraphBuildError(f"{name}: axis {a} is out of range for {x} of rank {x.ndim}")
        if a % x.ndim in out:
            raise GraphBuildError(f"{name}: axis {a} is given twice")
        out.append(a % x.ndim)
    return sorted(out)


def max_and_argmax(a, axis=None, keepdims=False) -> list:
    """``[max, argmax]`` of ``a`` over ``axis`` (None: all axes). Over several axes the index
    counts in those axes flattened (row-major), as Theano's.

    >>> import lowering.tensor as T
    >>> t = T.dtensor3("t")
    >>> m, i = max_and_argmax(t, axis=(0, 2), keepdims=True)
    >>> m.ndim, i.broadcastable
    (3, (True, False, True))
    """
    a = as_tensor_variable(a)
    axes = _normalized_axes(a, axis, "max_and_argmax")
    high = max_(a, axis=axes, keepdims=keepdims)
    if len(axes) == a.ndim:
        index = argmax(a, axis=None)
    elif len(axes) == 1:
        index = argmax(a, axis=axes[0])
    else:
        kept = [d for d in range(a.ndim) if d not in axes]
        moved = dimshuffle(a, kept + axes)
        folded = reshape(moved, [shape_i(a, d) for d in kept] + [-1])
        index = argmax(folded, axis=-1)
    if keepdims:
        pattern, i = [], 0
        for d in range(a.ndim):
            if d in axes:
                pattern.append("x")
            else:
                pattern.append(i)
                i += 1
        index = dimshuffle(index, pattern)
    return [high, index]


def ptp(a, axis=None) -> TensorVariable:
    """The range (maximum minus minimum) of ``a`` over ``axis`` (None: all axes)."""
    a = as_tensor_variable(a)
    return max_(a, axis) - min_(a, axis)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
        aweights=None) -> TensorVariable:
    """The covariance matrix of the variables in the rows of matrix ``m`` (its columns with
    ``rowvar=False``), observations along the other axis, with those of ``y`` appended; divided
    by ``N - 1`` (``N`` with ``bias``; ``N - ddof`` when ``ddof`` is given). Squeezed, as
    Theano's: one variable gives a scalar.

    >>> import numpy as np
    >>> import lowering.tensor as T
    >>> x = T.dmatrix("x")
    >>> cov(x).eval({x: [[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]})
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if fweights is not None:
        raise NotImplementedError("cov: fweights are not implemented")
    if aweights is not None:
        raise NotImplementedError("cov: aweights are not implemented")
    m = as_tensor_variable(m)
    if m.ndim != 2:
        raise GraphBuildError(f"cov: m must be a matrix, {m} has rank {m.ndim}")
    if not rowvar:
        m = m.T
    if y is not None:
        y = as_tensor_variable(y)
        if y.ndim != 2:
            raise GraphBuildError(f"cov: y must be a matrix, {y} has rank {y.ndim}")
        m = concatenate([m, y if rowvar else y.T], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = shape_i(m, 1) - ddof
    m = m - mean(m, axis=1, keepdims=True)
    c = dot(m, m.T) * (constant(1) / fact)
    return squeeze(c)
