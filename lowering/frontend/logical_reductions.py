"""``T.any`` and ``T.all``: whether some or every element is non-zero, as booleans (counts of
the non-zero and zero elements, so an empty axis gives NumPy's False and True).

>>> import lowering.tensor as T
>>> m = T.lmatrix("m")
>>> any(m, axis=1).eval({m: [[0, 2], [0, 0]]}), all(m).eval({m: [[1, 2], [3, 0]]})
(array([ True, False]), array(False))
"""
from __future__ import annotations

from .constructors import as_tensor_variable
from .elemwise import cast, eq, gt, neq
from .reductions import sum as sum_


def _count(flags, axis, keepdims):
    return sum_(cast(flags, "int64"), axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims: bool = False):  # noqa: A001
    """Whether any element of ``x`` along ``axis`` (all axes by default) is non-zero."""
    x = as_tensor_variable(x)
    return gt(_count(neq(x, 0), axis, keepdims), 0)


def all(x, axis=None, keepdims: bool = False):  # noqa: A001
    """Whether every element of ``x`` along ``axis`` (all axes by default) is non-zero."""
    x = as_tensor_variable(x)
    return eq(_count(eq(x, 0), axis, keepdims), 0)
