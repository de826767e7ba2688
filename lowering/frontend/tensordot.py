"""``T.tensordot``: NumPy's tensordot, as one matrix product between two reshapes.

The summed axes of ``a`` go last and those of ``b`` first, both sides are flattened to
matrices and multiplied with ``dot`` (one GEMM; its gradient is ``dot``'s), and the result is
reshaped to ``a``'s free axes followed by ``b``'s.

>>> import numpy as np
>>> import lowering.tensor as T
>>> a, b = T.dtensor3("a"), T.dmatrix("b")
>>> tensordot(a, b, axes=[[1, 2], [0, 1]]).ndim, tensordot(a, b, axes=1).ndim
(1, 3)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .constructors import as_tensor_variable
from .linalg import dot
from .shapes import reshape, shape_i, transpose
from .variable import TensorVariable


def _axis_lists(a: TensorVariable, b: TensorVariable, axes) -> tuple[list[int], list[int]]:
    """The summed axes of ``a`` and of ``b``, normalized and checked."""
    if isinstance(axes, (int, np.integer)):
        axes = int(axes)
        if axes < 0:
            raise ValueError(f"tensordot: axes must be non-negative, got {axes}")
        for name, t in (("a", a), ("b", b)):
            if axes > t.ndim:
                raise ValueError(f"tensordot: axes can not be larger than the dimension of {name} "
                                 f"({name}.ndim={t.ndim}, axes={axes})")
        return list(range(a.ndim - axes, a.ndim)), list(range(axes))
    if isinstance(axes, np.ndarray) and axes.ndim == 2:  # Theano takes a (2, n) array too
        axes = axes.tolist()
    if not isinstance(axes, Sequence) or len(axes) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of lists of axes, got {axes!r}")
    pair = [[int(x)] if isinstance(x, (int, np.integer)) else [int(v) for v in x] for x in axes]
    if len(pair[0]) != len(pair[1]):
        raise ValueError(f"tensordot: axes to sum over must have the same length, got {axes!r}")
    normalized = []
    for name, t, listed in (("a", a, pair[0]), ("b", b, pair[1])):
        for axis in listed:
            if not -t.ndim <= axis < t.ndim:
                raise ValueError(f"tensordot: axis {axis} is out of range for {name} of rank "
                                 f"{t.ndim}")
        listed = [axis % t.ndim for axis in listed]
        if len(set(listed)) != len(listed):
            raise ValueError(f"tensordot: {name}'s axes {listed} repeat an axis")
        normalized.append(listed)
    return normalized[0], normalized[1]


def _product(sizes: list):
    total = 1
    for s in sizes:
        total = total * s
    return total


def tensordot(a, b, axes=2) -> TensorVariable:
    """The sum of products of ``a`` and ``b`` over the axes ``axes`` names: an int ``n`` (the
    last ``n`` axes of ``a`` with the first ``n`` of ``b``) or a pair ``[a_axes, b_axes]``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    a_summed, b_summed = _axis_lists(a, b, axes)
    a_free = [d for d in range(a.ndim) if d not in a_summed]
    b_free = [d for d in range(b.ndim) if d not in b_summed]
    a_sizes = [shape_i(a, d) for d in range(a.ndim)]
    b_sizes = [shape_i(b, d) for d in range(b.ndim)]
    summed = _product([a_sizes[d] for d in a_summed])
    left = reshape(transpose(a, a_free + a_summed), (_product([a_sizes[d] for d in a_free]), summed))
    right = reshape(transpose(b, b_summed + b_free), (summed, _product([b_sizes[d] for d in b_free])))
    return reshape(dot(left, right), [a_sizes[d] for d in a_free] + [b_sizes[d] for d in b_free])
