"""``T.extra_ops``: Theano's ``theano.tensor.extra_ops`` functions.

``cumsum`` and ``cumprod`` are ops of their own (``tensor.cumsum``, ``tensor.cumprod``: one
sequential pass along the axis); the others are compositions of tensor ops, so they fuse,
differentiate and run on a GPU as those do. Values Theano checked when the function ran (an
index out of range, a negative count) are checked then too (``tensor.check``), with a message
naming the function.

>>> import numpy as np
>>> import lowering.tensor as T
>>> y = T.lvector("y")
>>> to_one_hot(y, 3).eval({y: [2, 0]})
array([[0., 0., 1.],
       [1., 0., 0.]])
>>> x = T.dvector("x")
>>> cumsum(x).eval({x: [1.0, 2.0, 3.0]}), diff(x).eval({x: [1.0, 2.0, 4.0]})
(array([1., 3., 6.]), array([1., 2.]))
"""
from __future__ import annotations


import numpy as np

from lowering.config import config
from lowering.dialects.tensor import CumProdOp, CumSumOp

from .build import apply
from .checked import require
from .constructors import as_tensor_variable, constant
from .diagonals import fill_diagonal, fill_diagonal_offset  # noqa: F401  (Theano's names here)
from .elemwise import cast, clip, eq, ge, int_div, lt, maximum, mod
from .errors import GraphBuildError, GraphTypeError
from .indexing import inc_subtensor
from .reductions import max as max_
from .shapes import (alloc, arange, dimshuffle, flatten, reshape, shape_i,  # noqa: F401
                     squeeze, zeros)
from .variable import TensorVariable

__all__ = ["bincount", "cumprod", "cumsum", "diff", "fill_diagonal", "fill_diagonal_offset",
           "ravel_multi_index", "repeat", "squeeze", "to_one_hot", "unravel_index"]


def _axis(x: TensorVariable, axis: int, name: str) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise GraphBuildError(f"{name}: axis {axis} is out of range for {x} of rank {x.ndim}")
    return axis % x.ndim


def _cumulative(op_class, x, axis, name: str) -> TensorVariable:
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x), 0
    if x.ndim == 0:
        x = flatten(x)
    if x.dtype == "bool":
        x = cast(x, "int64")
    return apply(op_class, x, axis=_axis(x, axis, name), named=[x])


def cumsum(x, axis=None) -> TensorVariable:
    """Running sums of ``x`` along ``axis`` (None: of the flattened ``x``), in ``x``'s dtype
    (booleans count as int64)."""
    return _cumulative(CumSumOp, x, axis, "cumsum")


def cumprod(x, axis=None) -> TensorVariable:
    """Running products of ``x`` along ``axis`` (None: of the flattened ``x``), in ``x``'s
    dtype. Its gradient divides by ``x``, as Theano's does."""
    return _cumulative(CumProdOp, x, axis, "cumprod")


def diff(x, n: int = 1, axis: int = -1) -> TensorVariable:
    """The ``n``-th differences of ``x`` along ``axis``: ``x[1:] - x[:-1]``, ``n`` times."""
    x = as_tensor_variable(x)
    axis = _axis(x, axis, "diff")
    before = (slice(None),) * axis
    for _ in range(n):
        x = x[before + (slice(1, None),)] - x[before + (slice(None, -1),)]
    return x


def to_one_hot(y, nb_class, dtype=None) -> TensorVariable:
    """The rows of the identity of size ``nb_class`` picked by the integer vector ``y``: a
    matrix of ``dtype`` (floatX by default) with one 1 per row."""
    y = as_tensor_variable(y)
    if y.ndim != 1 or not y.dtype.startswith(("int", "uint")):
        raise GraphTypeError(f"to_one_hot: y must be a vector of integers, got {y} of type "
                             f"{y.type}")
    classes = dimshuffle(arange(nb_class), ("x", 0))
    return cast(eq(dimshuffle(y, (0, "x")), classes), dtype or config.floatX)


def _take(x: TensorVariable, indices: TensorVariable, axis: int) -> TensorVariable:
    return x[(slice(None),) * axis + (indices,)]


def repeat(x, repeats, axis=None) -> TensorVariable:
    """The elements of ``x`` repeated along ``axis`` (None: of the flattened ``x``), each
    ``repeats`` times (an int or integer scalar), or ``repeats[i]`` times for element ``i``
    (an integer vector as long as that axis).

    >>> import lowering.tensor as T
    >>> x = T.lvector("x")
    >>> repeat(x, 2).eval({x: [1, 2]}), repeat(x, [0, 3]).eval({x: [1, 2]})
    (array([1, 1, 2, 2]), array([2, 2, 2]))
    """
    x = as_tensor_variable(x)
    repeats = as_tensor_variable(repeats)
    if repeats.ndim > 1:
        raise ValueError("repeat: the dimension of repeats should not exceed 1")
    if not repeats.dtype.startswith(("int", "uint")):
        raise TypeError(f"repeat: repeats must be integers, got {repeats} of type {repeats.type}")
    if axis is None:
        x, axis = flatten(x), 0
    axis = _axis(x, axis, "repeat")
    if repeats.ndim == 1 and not repeats.broadcastable[0]:
        return _take(x, _repeated_positions(repeats), axis)
    if repeats.ndim == 1:
        repeats = repeats[0]
    # One broadcast axis after ``axis`` filled ``repeats`` times, then merged into it.
    sizes = [shape_i(x, d) for d in range(x.ndim)]
    spread = alloc(dimshuffle(x, list(range(axis + 1)) + ["x"] + list(range(axis + 1, x.ndim))),
                   *(sizes[:axis + 1] + [repeats] + sizes[axis + 1:]))
    merged = sizes[:axis] + [sizes[axis] * repeats] + sizes[axis + 1:]
    return reshape(spread, merged)


def _repeated_positions(repeats: TensorVariable) -> TensorVariable:
    """For each output position, the input position it repeats: a 1 where each input's run
    starts after the first, summed by a running sum (zero repeats put several starts at one
    position; they add up)."""
    repeats = require(repeats, ge(repeats, 0), "repeat: repeats may not be negative")
    ends = cumsum(cast(repeats, "int64"))
    total = ends[-1]
    starts = zeros([total + 1], dtype="int64")
    starts = inc_subtensor(starts[ends[:-1]], constant(1, dtype="int64"))
    return cumsum(starts)[:total]


def bincount(x, weights=None, minlength=None, assert_nonneg: bool = False) -> TensorVariable:
    """How often each value ``0 .. max(x)`` occurs in the integer vector ``x`` (in ``x``'s
    dtype), or the sums of ``weights`` per value; at least ``minlength`` entries. With
    ``assert_nonneg`` a negative value stops the function."""
    x = as_tensor_variable(x)
    if x.ndim != 1:
        raise TypeError("bincount: inputs must be of dimension 1")
    if not x.dtype.startswith(("int", "uint")):
        raise TypeError(f"bincount: x must hold integers, got {x} of type {x.type}")
    if assert_nonneg:
        x = require(x, ge(x, 0), "bincount: the input has negative values")
    length = cast(max_(x) + 1, "int64")
    if minlength is not None:
        length = maximum(length, minlength)
    if weights is None:
        counts = zeros([length], dtype=x.dtype)
        return inc_subtensor(counts[x], constant(1, dtype=x.dtype))
    weights = as_tensor_variable(weights)
    return inc_subtensor(zeros([length], dtype=weights.dtype)[x], weights)


def _dims(dims, name: str, ndim: int | None = None) -> list:
    """The sizes of ``dims`` (a list of ints and integer scalars, or an integer vector of
    known length, or of length ``ndim``)."""
    if isinstance(dims, TensorVariable):
        length = dims.value.type.shape[0] if dims.ndim == 1 else None
        if dims.ndim == 1 and length is None:
            length = ndim
        if length is None:
            raise TypeError(f"{name}: dims must be a list, or a vector of known length (else "
                            f"pass ndim=), got {dims} of type {dims.type}")
        return [dims[i] for i in range(length)]
    if isinstance(dims, (int, np.integer)):
        return [int(dims)]
    return list(dims)


def _row_major(dims: list, order: str, name: str) -> list:
    if order not in ("C", "F"):
        raise ValueError(f"{name}: order must be 'C' or 'F', got {order!r}")
    return dims if order == "C" else dims[::-1]


def unravel_index(indices, dims, order: str = "C", ndim: int | None = None) -> tuple:
    """``numpy.unravel_index``: one integer tensor per dimension of ``dims``, the coordinates
    of the flat ``indices`` in an array of that shape (an index outside it stops the function).
    ``ndim`` gives the length of a symbolic ``dims`` whose type does not know it.

    >>> import lowering.tensor as T
    >>> i = T.lvector("i")
    >>> [c.eval({i: [5, 4]}) for c in unravel_index(i, (2, 3))]
    [array([1, 1]), array([2, 1])]
    """
    indices = as_tensor_variable(indices)
    if not indices.dtype.startswith(("int", "uint")):
        raise TypeError(f"unravel_index: indices must be integers, got {indices} of type "
                        f"{indices.type}")
    sizes = _dims(dims, "unravel_index", ndim)
    total = constant(1, dtype="int64")
    for s in sizes:
        total = total * s
    flat = cast(indices, "int64")
    flat = require(flat, ge(flat, 0) & lt(flat, total),
                    "unravel_index: an index is out of bounds for the given dims")
    coords = []
    for s in reversed(_row_major(sizes, order, "unravel_index")):
        coords.append(mod(flat, s))
        flat = int_div(flat, s)
    coords.reverse()
    return tuple(_row_major(coords, order, "unravel_index"))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C") -> TensorVariable:
    """``numpy.ravel_multi_index``: the flat int64 index of the coordinates ``multi_index`` (a
    tuple of integer tensors, one per dimension of ``dims``). ``mode``: ``'raise'`` (a
    coordinate outside its dimension stops the function), ``'wrap'`` or ``'clip'``.

    >>> import lowering.tensor as T
    >>> r, c = T.lvector("r"), T.lvector("c")
    >>> ravel_multi_index((r, c), (2, 3)).eval({r: [1, 0], c: [2, 1]})
    array([5, 1])
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', got "
                         f"{mode!r}")
    sizes = _dims(dims, "ravel_multi_index")
    coords = [cast(as_tensor_variable(c), "int64") for c in multi_index]
    if len(coords) != len(sizes):
        raise ValueError(f"ravel_multi_index: {len(coords)} coordinates for {len(sizes)} dims")
    flat = None
    pairs = _row_major(list(zip(coords, sizes)), order, "ravel_multi_index")
    for c, s in pairs:
        if mode == "wrap":
            c = mod(c, s)
        elif mode == "clip":
            c = clip(c, 0, s - 1)
        else:
            c = require(c, ge(c, 0) & lt(c, s),
                         "ravel_multi_index: invalid entry in coordinates array")
        flat = c if flat is None else flat * s + c
    return flat
