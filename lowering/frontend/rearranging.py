"""Moving elements around: Theano's ``T.roll``, ``T.swapaxes``, ``T.split``, ``T.take``,
``T.choose``, ``T.horizontal_stack`` / ``T.vertical_stack``, ``T.permute_row_elements`` and
``T.inverse_permutation``.

Each is a composition of slices, ``dimshuffle``, ``concatenate`` and advanced indexing, so its
gradient is the one those ops give (a roll's gradient is the gradient rolled back, a take's is
scattered with ``inc_subtensor``, ...). Values Theano checked when the function ran (split sizes
that do not add up, an index out of range in ``choose``) are checked then too.

>>> import lowering.tensor as T
>>> x = T.lvector("x")
>>> roll(x, 1).eval({x: [1, 2, 3]}), take(x, [2, 0]).eval({x: [1, 2, 3]})
(array([3, 1, 2]), array([3, 1]))
"""
from __future__ import annotations

import operator

from .checked import require
from .constructors import as_tensor_variable, constant
from .elemwise import clip, eq, ge, lt, mod, switch
from .errors import GraphBuildError, GraphTypeError
from .extra_ops import cumsum
from .indexing import set_subtensor
from .reductions import sum as sum_
from .shapes import arange, concatenate, dimshuffle, flatten, reshape, shape, shape_i, zeros
from .variable import TensorVariable


def _axis(x: TensorVariable, axis, name: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: the axis must be a Python int, got {axis!r}") from None
    if not -x.ndim <= axis < x.ndim:
        raise GraphBuildError(f"{name}: axis {axis} is out of range for {x} of rank {x.ndim}")
    return axis % x.ndim


def _integers(v: TensorVariable, name: str, what: str) -> TensorVariable:
    if not v.dtype.startswith(("int", "uint")):
        raise GraphTypeError(f"{name}: {what} must be integers, got {v} of type {v.type}")
    return v


def roll(x, shift, axis=None) -> TensorVariable:
    """``x`` with its elements moved ``shift`` places (symbolic or an int; negative moves
    back) along ``axis``, those that leave at one end coming back at the other, as NumPy's
    ``roll``; with ``axis`` None the flattened ``x`` is rolled and reshaped back.

    >>> import lowering.tensor as T
    >>> m = T.lmatrix("m")
    >>> roll(m, -1, axis=1).eval({m: [[1, 2, 3], [4, 5, 6]]})
    array([[2, 3, 1],
           [5, 6, 4]])
    """
    x = as_tensor_variable(x)
    if axis is None:
        if x.ndim > 1:
            return reshape(roll(flatten(x), shift, axis=0), shape(x))
        axis = 0
    if x.ndim == 0:
        raise GraphBuildError(f"roll: {x} is a scalar; there is nothing to roll")
    axis = _axis(x, axis, "roll")
    size = shape_i(x, axis)
    # The last ``shift`` elements come first: x[n - s:] then x[:n - s], with s = shift mod n.
    cut = size - mod(shift, size)
    before = (slice(None),) * axis
    return concatenate([x[before + (slice(cut, None),)], x[before + (slice(None, cut),)]],
                       axis=axis)


def swapaxes(y, axis1, axis2) -> TensorVariable:
    """``y`` with axes ``axis1`` and ``axis2`` exchanged (a ``dimshuffle``).

    >>> import lowering.tensor as T
    >>> swapaxes(T.dtensor3("t"), 0, -1).value.op.name
    'tensor.dimshuffle'
    """
    y = as_tensor_variable(y)
    axis1, axis2 = _axis(y, axis1, "swapaxes"), _axis(y, axis2, "swapaxes")
    order = list(range(y.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return dimshuffle(y, order)


def split(x, splits_size, n_splits, axis=0) -> list:
    """``x`` cut along ``axis`` into ``n_splits`` consecutive pieces of the sizes in the
    integer vector ``splits_size`` (symbolic or a list), which must add up to the size of that
    axis (checked when the function runs).

    >>> import lowering.tensor as T
    >>> x = T.lvector("x")
    >>> [p.eval({x: [0, 1, 2, 3, 4, 5]}).tolist() for p in split(x, [3, 2, 1], 3)]
    [[0, 1, 2], [3, 4], [5]]
    """
    x = as_tensor_variable(x)
    sizes = _integers(as_tensor_variable(splits_size), "split", "splits_size")
    if sizes.ndim != 1:
        raise GraphTypeError(f"split: splits_size must be a vector, got {sizes} of rank "
                             f"{sizes.ndim}")
    n_splits = operator.index(n_splits)
    if n_splits < 1:
        raise ValueError(f"split: n_splits must be at least 1, got {n_splits}")
    static = sizes.value.type.shape[0]
    if static is not None and static != n_splits:
        raise ValueError(f"split: splits_size has {static} sizes for n_splits={n_splits}")
    if x.ndim == 0:
        raise GraphBuildError(f"split: {x} is a scalar; there is nothing to split")
    axis = _axis(x, axis, "split")
    sizes = require(sizes, eq(shape_i(sizes, 0), n_splits),
                    f"split: splits_size must have n_splits={n_splits} sizes")
    sizes = require(sizes, ge(sizes, 0), "split: the sizes may not be negative")
    sizes = require(sizes, eq(sum_(sizes), shape_i(x, axis)),
                    "split: the sizes must add up to the size of the split axis")
    ends = cumsum(sizes)
    before = (slice(None),) * axis
    pieces, start = [], 0
    for i in range(n_splits):
        pieces.append(x[before + (slice(start, ends[i]),)])
        start = ends[i]
    return pieces


def _bounded(indices: TensorVariable, size, mode: str, name: str) -> TensorVariable:
    """``indices`` brought into ``[0, size)`` as ``mode`` says: ``raise`` checks them (when the
    function runs), ``wrap`` takes them modulo ``size``, ``clip`` clips them."""
    if mode == "raise":
        inside = ge(indices, 0) & lt(indices, size)
        return require(indices, inside, f"{name}: an index is out of range (mode='raise')")
    if mode == "wrap":
        return mod(indices, size)
    if mode == "clip":
        return clip(indices, 0, size - 1)
    raise ValueError(f"{name}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")


def take(a, indices, axis=None, mode="raise") -> TensorVariable:
    """The elements of ``a`` at the integer ``indices`` along ``axis`` (None: of the flattened
    ``a``), as NumPy's ``take``: the result has ``indices``' dimensions in place of ``axis``.
    Negative indices count from the end in ``raise`` mode; ``wrap`` and ``clip`` bring any
    index into range.

    >>> import lowering.tensor as T
    >>> m = T.lmatrix("m")
    >>> take(m, [[1], [0]], axis=1).eval({m: [[1, 2], [3, 4]]}).shape
    (2, 2, 1)
    """
    a = as_tensor_variable(a)
    indices = _integers(as_tensor_variable(indices), "take", "indices")
    if axis is None:
        a, axis = flatten(a), 0
    if a.ndim == 0:
        raise GraphBuildError(f"take: {a} is a scalar; there is nothing to take from")
    axis = _axis(a, axis, "take")
    size = shape_i(a, axis)
    if mode == "raise":
        inside = ge(indices, -size) & lt(indices, size)
        indices = require(indices, inside, "take: an index is out of range (mode='raise')")
    else:
        indices = _bounded(indices, size, mode, "take")
    return a[(slice(None),) * axis + (indices,)]


def choose(a, choices, out=None, mode="raise") -> TensorVariable:
    """For each element of the integer tensor ``a``, the element at the same place of the
    choice it names: ``choices`` is a list of tensors or a tensor whose first axis lists them;
    ``a`` and the choices broadcast together, as NumPy's ``choose``.

    >>> import lowering.tensor as T
    >>> a = T.lvector("a")
    >>> choose(a, [[1, 2, 3], [10, 20, 30]]).eval({a: [1, 0, 1]})
    array([10,  2, 30])
    """
    if out is not None:
        raise ValueError("choose: out is not supported (Theano's choose takes out=None only)")
    a = _integers(as_tensor_variable(a), "choose", "a")
    if isinstance(choices, (list, tuple)):
        choices = [as_tensor_variable(c) for c in choices]
        if not choices:
            raise ValueError("choose: choices may not be empty")
        a = _bounded(a, len(choices), mode, "choose")
        result = choices[-1]
        for i in range(len(choices) - 2, -1, -1):
            result = switch(eq(a, i), choices[i], result)
        # A lone choice does not broadcast with ``a`` through a switch.
        return result if len(choices) > 1 else switch(eq(a, 0), result, result)
    choices = as_tensor_variable(choices)
    if choices.ndim == 0:
        raise GraphBuildError(f"choose: choices {choices} must have at least one dimension")
    a = _bounded(a, shape_i(choices, 0), mode, "choose")
    rank = max(a.ndim, choices.ndim - 1)
    index = [dimshuffle(a, ("x",) * (rank - a.ndim) + tuple(range(a.ndim)))]
    lead = rank - (choices.ndim - 1)
    for d in range(1, choices.ndim):
        place = lead + d - 1
        if choices.broadcastable[d]:
            index.append(constant(0, dtype="int64"))
        else:
            pattern = ["x"] * rank
            pattern[place] = 0
            index.append(dimshuffle(arange(shape_i(choices, d)), pattern))
    return choices[tuple(index)]


def _stack_matrices(args, axis: int, name: str) -> TensorVariable:
    if len(args) < 2:
        raise TypeError(f"{name} needs at least two matrices, got {len(args)}")
    args = [as_tensor_variable(a) for a in args]
    for arg in args:
        if arg.ndim != 2:
            raise GraphTypeError(f"{name}: every argument must be a matrix, {arg} has rank "
                                 f"{arg.ndim}")
    return concatenate(args, axis=axis)


def horizontal_stack(*args) -> TensorVariable:
    """Matrices joined side by side (along axis 1).

    >>> import lowering.tensor as T
    >>> str(horizontal_stack(T.dmatrix(), T.dmatrix()).type)
    'TensorType(float64, matrix)'
    """
    return _stack_matrices(args, 1, "horizontal_stack")


def vertical_stack(*args) -> TensorVariable:
    """Matrices joined one above the other (along axis 0)."""
    return _stack_matrices(args, 0, "vertical_stack")


def _row_positions(shapes: list, rank: int) -> list:
    """Index vectors for every axis but the last, each along its own axis: with a last index
    they pick one element per position of the broadcast shape (a size-1 axis stays at 0)."""
    out = []
    for d, size in enumerate(shapes):
        if size is None:
            out.append(constant(0, dtype="int64"))
        else:
            pattern = ["x"] * rank
            pattern[d] = 0
            out.append(dimshuffle(arange(size), pattern))
    return out


def permute_row_elements(x, y, inverse=0) -> TensorVariable:
    """Each row (last axis) of ``x`` reordered by the permutation in the matching row of the
    integer tensor ``y``: ``out[..., i] = x[..., y[..., i]]``, or with ``inverse``
    ``out[..., y[..., i]] = x[..., i]``. ``x`` and ``y`` broadcast over their leading axes
    (a vector ``y`` permutes every row of ``x``).

    >>> import lowering.tensor as T
    >>> x = T.dmatrix("x")
    >>> permute_row_elements(x, [2, 0, 1]).eval({x: [[1.0, 2.0, 3.0]]})
    array([[3., 1., 2.]])
    """
    x = as_tensor_variable(x)
    y = _integers(as_tensor_variable(y), "permute_row_elements", "the permutations y")
    if x.ndim == 0 or y.ndim == 0:
        raise GraphBuildError("permute_row_elements: x and y must have at least one dimension")
    rank = max(x.ndim, y.ndim)
    x = dimshuffle(x, ("x",) * (rank - x.ndim) + tuple(range(x.ndim)))
    y = dimshuffle(y, ("x",) * (rank - y.ndim) + tuple(range(y.ndim)))
    # Along each leading axis, the size comes from whichever of x and y is not broadcast.
    sizes = []
    for d in range(rank - 1):
        if not (x.broadcastable[d] or y.broadcastable[d]):
            # Only dimensions typed broadcastable broadcast, as in Theano.
            y = require(y, eq(shape_i(y, d), shape_i(x, d)),
                        f"permute_row_elements: x and y differ in size along axis {d}")
        sizes.append(None if x.broadcastable[d] else shape_i(x, d))
    rows = _row_positions(sizes, rank)
    if not inverse:
        return x[tuple(rows) + (y,)]
    # Scatter: x written at the places y names, over the shape x and y broadcast to.
    full = [shape_i(y, d) if x.broadcastable[d] else shape_i(x, d) for d in range(rank - 1)]
    spread = _row_positions([None if x.broadcastable[d] and y.broadcastable[d] else full[d]
                             for d in range(rank - 1)], rank)
    target = zeros(full + [shape_i(y, rank - 1)], dtype=x.dtype)
    return set_subtensor(target[tuple(spread) + (y,)], x)


def inverse_permutation(perm) -> TensorVariable:
    """The inverse of each permutation (along the last axis) of the integer tensor ``perm``.

    >>> import lowering.tensor as T
    >>> p = T.lvector("p")
    >>> inverse_permutation(p).eval({p: [2, 0, 1]})
    array([1, 2, 0])
    """
    perm = _integers(as_tensor_variable(perm), "inverse_permutation", "perm")
    if perm.ndim == 0:
        raise GraphBuildError(f"inverse_permutation: {perm} must have at least one dimension")
    positions = arange(shape_i(perm, perm.ndim - 1), dtype=perm.dtype)
    return permute_row_elements(positions, perm, inverse=True)
