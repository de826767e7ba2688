"""``T.sort`` and ``T.argsort``: NumPy's stable ascending order along an axis (NaNs last).

``argsort`` is one ``tensor.argsort`` op; ``sort`` gathers the input with its result, so the
gradient of a sort is the gather's: each element's gradient goes back to where it came from.

>>> import numpy as np
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> sort(x).eval({x: [3.0, 1.0, 2.0]}), argsort(x).eval({x: [3.0, 1.0, 2.0]})
(array([1., 2., 3.]), array([1, 2, 0]))
"""
from __future__ import annotations

from lowering.dialects.tensor import ArgSortOp

from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast
from .errors import GraphBuildError
from .shapes import arange, dimshuffle, flatten, shape_i
from .variable import TensorVariable


def _prepared(a, axis, order) -> tuple[TensorVariable, int]:
    """The tensor to sort and the normalized axis (``axis=None`` sorts the flattened tensor)."""
    if order is not None:
        raise ValueError("sort/argsort: the order argument (sorting by record fields) is not "
                         "supported for tensors")
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = flatten(a), 0
    if a.ndim == 0:
        raise GraphBuildError(f"sort/argsort: {a} is a scalar; there is no axis to sort along")
    if not -a.ndim <= axis < a.ndim:
        raise GraphBuildError(f"sort/argsort: axis {axis} is out of range for {a} of rank {a.ndim}")
    if a.dtype == "bool":
        a = cast(a, "int8")
    return a, axis % a.ndim


def argsort(a, axis=-1, kind="quicksort", order=None) -> TensorVariable:
    """The int64 indices that sort ``a`` along ``axis`` (the last by default; None: the
    flattened ``a``). Equal elements keep their order, whatever ``kind`` says."""
    a, axis = _prepared(a, axis, order)
    return apply(ArgSortOp, a, axis=axis, named=[a])


def take_along_axis(a: TensorVariable, indices: TensorVariable, axis: int) -> TensorVariable:
    """``numpy.take_along_axis``: ``a`` gathered along ``axis`` by ``indices`` of ``a``'s
    shape (integer-array indexing, with index ranges for the other axes)."""
    key = []
    for d in range(a.ndim):
        if d == axis:
            key.append(indices)
            continue
        pattern = ["x"] * a.ndim
        pattern[d] = 0
        key.append(dimshuffle(arange(shape_i(a, d)), pattern))
    return a[tuple(key)]


def sort(a, axis=-1, kind="quicksort", order=None) -> TensorVariable:
    """``a`` sorted along ``axis`` (the last by default; None: the flattened ``a``), with a
    gradient."""
    a, axis = _prepared(a, axis, order)
    return take_along_axis(a, apply(ArgSortOp, a, axis=axis, named=[a]), axis)
