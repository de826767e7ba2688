"""Where a tensor is not zero: Theano's ``T.nonzero``, ``T.flatnonzero`` and
``T.nonzero_values``, whose sizes are known only when the function runs.

The positions are found without a sequential pass: a running sum of the nonzero marks gives each
nonzero element its place in the result, and every element is written there (the zeros to one
spare place past the end, which is then cut off). The count, a sum, sizes the result.

>>> import lowering.tensor as T
>>> m = T.lmatrix("m")
>>> [v.eval({m: [[0, 3], [4, 0]]}) for v in nonzero(m)]
[array([0, 1]), array([1, 0])]
"""
from __future__ import annotations

from .constructors import as_tensor_variable
from .elemwise import cast, int_div, mod, neq, switch
from .errors import GraphBuildError
from .extra_ops import cumsum
from .indexing import set_subtensor
from .reductions import sum as sum_
from .shapes import arange, flatten, shape_i, stack, zeros
from .variable import TensorVariable


def _not_scalar(a, name: str) -> TensorVariable:
    a = as_tensor_variable(a)
    if a.ndim == 0:
        raise GraphBuildError(f"{name}: nonzero only supports non-scalar arrays, {a} is a scalar")
    return a


def _flat_positions(flat: TensorVariable) -> TensorVariable:
    """The positions of the nonzero elements of the vector ``flat``, in order (int64)."""
    marks = cast(neq(flat, 0), "int64")
    count = sum_(marks)
    places = switch(marks, cumsum(marks) - 1, count)
    positions = zeros([count + 1], dtype="int64")
    positions = set_subtensor(positions[places], arange(shape_i(flat, 0), dtype="int64"))
    return positions[:count]


def flatnonzero(a) -> TensorVariable:
    """The positions of the nonzero elements of the flattened ``a`` (an int64 vector).

    >>> import lowering.tensor as T
    >>> flatnonzero(T.constant([[0.0, 1.5], [2.0, 0.0]])).eval()
    array([1, 2])
    """
    return _flat_positions(flatten(_not_scalar(a, "flatnonzero")))


def nonzero(a, return_matrix=False):
    """The indices of the nonzero elements of ``a``: one int64 vector per dimension (NumPy's
    ``nonzero``), or with ``return_matrix`` one matrix of shape ``(a.ndim, count)``."""
    a = _not_scalar(a, "nonzero")
    flat = _flat_positions(flatten(a))
    indices, stride = [], None
    for d in range(a.ndim - 1, -1, -1):
        position = flat if stride is None else int_div(flat, stride)
        indices.append(mod(position, shape_i(a, d)) if d else position)
        stride = shape_i(a, d) if stride is None else stride * shape_i(a, d)
    indices.reverse()
    return stack(indices) if return_matrix else tuple(indices)


def nonzero_values(a) -> TensorVariable:
    """The nonzero elements of ``a``, flattened in order; differentiable with respect to them.

    >>> import lowering.tensor as T
    >>> nonzero_values(T.constant([[0.0, 1.5], [2.0, 0.0]])).eval()
    array([1.5, 2. ])
    """
    flat = flatten(_not_scalar(a, "nonzero_values"))
    return flat[_flat_positions(flat)]
