"""``T.batched_dot``: one product per entry of the leading (batch) axis, as Theano's.

``batched_dot(a, b)[i] = dot(a[i], b[i])`` for operands of rank 2 or 3; a vector operand
scales the other one's entries; higher ranks contract ``a``'s last axis with ``b``'s axis
``max(1, b.ndim - 2)`` (Theano's ``batched_tensordot``). The product is built from elementwise
multiplication and a sum, so it has gradients and lowers like any other graph.

>>> import numpy as np
>>> import lowering.tensor as T
>>> a, b = T.dtensor3("a"), T.dtensor3("b")
>>> A, B = np.ones((4, 2, 3)), np.ones((4, 3, 5))
>>> batched_dot(a, b).eval({a: A, b: B}).shape
(4, 2, 5)
"""
from __future__ import annotations

from .constructors import as_tensor_variable
from .errors import GraphBuildError, GraphTypeError
from .reductions import sum as sum_
from .shapes import dimshuffle
from .variable import TensorVariable


def batched_dot(a, b) -> TensorVariable:
    """``dot(a[i], b[i])`` for each ``i`` of the leading axis (see the module docstring)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0:  # (Theano's messages; a GraphTypeError is a TypeError with the user's line)
        raise GraphTypeError(f"a must have at least one (batch) axis, got {a} of type {a.type}")
    if b.ndim == 0:
        raise GraphTypeError(f"b must have at least one (batch) axis, got {b} of type {b.type}")
    if a.ndim == 1:
        return dimshuffle(a, [0] + ["x"] * (b.ndim - 1)) * b
    if b.ndim == 1:
        return a * dimshuffle(b, [0] + ["x"] * (a.ndim - 1))
    return _contract(a, b, a.ndim - 1, max(1, b.ndim - 2))


def _contract(a, b, a_axis: int, b_axis: int) -> TensorVariable:
    """Sum over ``a``'s ``a_axis`` against ``b``'s ``b_axis``, batch by batch: the result's axes
    are the batch axis, ``a``'s others, then ``b``'s others."""
    a_rest = [d for d in range(1, a.ndim) if d != a_axis]
    b_rest = [d for d in range(1, b.ndim) if d != b_axis]
    a_wide = dimshuffle(a, [0, *a_rest, *["x"] * len(b_rest), a_axis])
    b_wide = dimshuffle(b, [0, *["x"] * len(a_rest), *b_rest, b_axis])
    if not (a.broadcastable[a_axis] or b.broadcastable[b_axis]) and \
            a.value.type.shape[a_axis] is not None and b.value.type.shape[b_axis] is not None \
            and a.value.type.shape[a_axis] != b.value.type.shape[b_axis]:
        raise GraphBuildError(f"batched_dot: the contracted axes differ in size: "
                              f"{a.value.type.shape[a_axis]} (axis {a_axis} of {a}) and "
                              f"{b.value.type.shape[b_axis]} (axis {b_axis} of {b})")
    return sum_(a_wide * b_wide, axis=-1)
