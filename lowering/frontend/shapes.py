"""Shape functions: shape, reshape, flatten, dimshuffle, transpose, concatenate/join, stack,
arange, zeros/ones, alloc and fill.

Sizes may be Python ints or symbolic integer scalars (``x.shape[0]``); a shape may also be a
symbolic vector of static length (``x.shape``).

>>> from lowering.frontend.constructors import matrix
>>> x = matrix("x")
>>> x.shape[0].value.op.name, x.T.broadcastable, x.dimshuffle(0, "x", 1).broadcastable
('tensor.shape_i', (False, False), (False, True, False))
>>> str(flatten(x).type), str(zeros((x.shape[0], 3)).value.type)
('TensorType(float64, vector)', 'tensor<?x3xf64>')
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from lowering.config import config
from lowering.dialects.tensor import (AllocOp, ArangeOp, ConcatenateOp, DimShuffleOp, FillOp,
                                      MakeVectorOp, ReshapeOp, ShapeIOp, ShapeOp)

from .build import apply
from .constructors import as_tensor_variable, constant
from .elemwise import cast, common_dtype
from .errors import GraphBuildError, GraphTypeError
from .types import canonical_dtype
from .variable import TensorVariable


def shape(x) -> TensorVariable:
    """The shape of ``x`` as an int64 vector of static length ``x.ndim``."""
    return apply(ShapeOp, as_tensor_variable(x))


def shape_i(x, axis: int) -> TensorVariable:
    """One size of ``x`` as an int64 scalar (what ``x.shape[axis]`` builds)."""
    return apply(ShapeIOp, as_tensor_variable(x), axis=axis)


def _size_variable(size, what: str = "size") -> TensorVariable:
    """A size (Python int or symbolic integer scalar) as an int64 scalar variable."""
    if isinstance(size, TensorVariable):
        if size.ndim != 0 or size.dtype.startswith(("float", "bool")):
            raise GraphTypeError(f"a {what} must be an integer scalar, got {size} of type {size.type}")
        return cast(size, "int64")
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return constant(int(size), dtype="int64")
    raise GraphTypeError(f"a {what} must be an int or an integer scalar variable, got {size!r}")


def _sizes(shape_arg) -> list[TensorVariable]:
    """The sizes of a shape given as a sequence, an int, or a symbolic vector of static length."""
    if isinstance(shape_arg, TensorVariable):
        if shape_arg.ndim == 0:
            return [_size_variable(shape_arg)]
        if shape_arg.ndim != 1 or shape_arg.value.type.shape[0] is None:
            raise GraphBuildError(f"a symbolic shape must be a vector of known length, got "
                                  f"{shape_arg} of type {shape_arg.value.type}")
        return [_size_variable(shape_arg[i]) for i in range(shape_arg.value.type.shape[0])]
    if isinstance(shape_arg, (int, np.integer)):
        return [_size_variable(shape_arg)]
    return [_size_variable(s) for s in shape_arg]


# ---------------------------------------------------------------------------------------------
# dimshuffle, transpose, reshape, flatten


def dimshuffle(x, pattern: Sequence) -> TensorVariable:
    """Permute dims (ints), insert broadcastable dims (``'x'``) and drop broadcastable dims."""
    x = as_tensor_variable(x)
    pattern = tuple(pattern)
    if pattern == tuple(range(x.ndim)):
        return x
    return apply(DimShuffleOp, x, pattern=pattern)


def transpose(x, axes=None) -> TensorVariable:
    """``x`` with its dims reversed, or permuted by ``axes``."""
    x = as_tensor_variable(x)
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(axes)
    return dimshuffle(x, axes)


def squeeze(x, axis=None) -> TensorVariable:
    """``x`` without its broadcastable dimensions among ``axis`` (an int, a list of them, or
    None for all); a listed dimension that is not broadcastable stays, as in Theano.

    >>> import lowering.tensor as T
    >>> squeeze(T.tensor3("t", dtype="float32").dimshuffle(0, "x", 1, 2), axis=1).ndim
    3
    """
    x = as_tensor_variable(x)
    axes = range(x.ndim) if axis is None else \
        list(axis) if isinstance(axis, (list, tuple, range)) else [axis]
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise GraphBuildError(f"squeeze: axis {a} is out of range for {x} of rank {x.ndim}")
    axes = {a % x.ndim for a in axes}
    return dimshuffle(x, [d for d in range(x.ndim) if not (x.broadcastable[d] and d in axes)])


def shape_padleft(x, n_ones: int = 1) -> TensorVariable:
    """``x`` with ``n_ones`` broadcastable dims in front."""
    x = as_tensor_variable(x)
    return dimshuffle(x, ("x",) * n_ones + tuple(range(x.ndim)))


def shape_padright(x, n_ones: int = 1) -> TensorVariable:
    """``x`` with ``n_ones`` broadcastable dims at the end."""
    x = as_tensor_variable(x)
    return dimshuffle(x, tuple(range(x.ndim)) + ("x",) * n_ones)


def reshape(x, newshape, ndim: int | None = None) -> TensorVariable:
    """``x`` reshaped (NumPy rules, one ``-1`` allowed); ``newshape`` is a sequence of ints and
    integer scalars, or a symbolic vector (``ndim`` gives its length when the type does not).

    >>> from lowering.frontend.constructors import matrix
    >>> x = matrix()
    >>> reshape(x, (x.shape[0], 2, -1)).ndim
    3
    """
    x = as_tensor_variable(x)
    if isinstance(newshape, TensorVariable) and newshape.ndim == 1:
        if newshape.dtype.startswith(("float", "bool")):
            raise GraphTypeError(f"reshape: the shape must have an integer dtype, got {newshape.dtype}")
        target = newshape
        if target.value.type.shape[0] is None:
            if ndim is None:
                raise GraphBuildError("reshape: a symbolic shape of unknown length needs ndim=")
            target = reshape(target, (ndim,))
        return apply(ReshapeOp, x, cast(target, "int64"), named=[x, newshape])
    sizes = [newshape] if isinstance(newshape, (int, np.integer, TensorVariable)) else list(newshape)
    if all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in sizes):
        target = constant(np.asarray(sizes, dtype=np.int64).reshape(len(sizes)))
    else:
        target = apply(MakeVectorOp, *_sizes(sizes), dtype="int64")
    if ndim is not None and ndim != len(sizes):
        raise GraphBuildError(f"reshape: ndim={ndim} differs from the {len(sizes)} sizes given")
    return apply(ReshapeOp, x, target, named=[x])


def flatten(x, ndim: int = 1, outdim: int | None = None) -> TensorVariable:
    """``x`` with its last dims merged so that ``ndim`` dims are left (``outdim`` is Theano's
    older name)."""
    x = as_tensor_variable(x)
    ndim = outdim if outdim is not None else ndim
    if not 1 <= ndim <= max(x.ndim, 1):
        raise GraphBuildError(f"flatten: ndim={ndim} must be between 1 and the rank {x.ndim} of {x}")
    if x.ndim == ndim:
        return x
    return reshape(x, [shape_i(x, d) for d in range(ndim - 1)] + [-1])


# ---------------------------------------------------------------------------------------------
# joining


def concatenate(tensors, axis: int = 0) -> TensorVariable:
    """``tensors`` joined along ``axis``; dtypes are promoted, ranks must agree."""
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise GraphBuildError("concatenate needs at least one tensor")
    dtype = common_dtype(*tensors)
    return apply(ConcatenateOp, *[cast(t, dtype) for t in tensors], axis=axis, named=tensors)


def join(axis: int, *tensors) -> TensorVariable:
    """Theano's argument order for ``concatenate``: ``join(axis, a, b, ...)``."""
    return concatenate(tensors, axis=axis)


def stack(*args, **kwargs) -> TensorVariable:
    """``stack(tensors, axis=0)``: ``tensors`` of one rank stacked along a new dim ``axis``;
    scalars make a vector. Theano's older form ``stack(a, b, ...)`` (separate arguments,
    stacked along axis 0) is accepted too.

    >>> from lowering.frontend.constructors import scalar, vector
    >>> str(stack([scalar(), scalar()]).type), str(stack([vector(), vector()], axis=1).type)
    ('TensorType(float64, vector)', 'TensorType(float64, matrix)')
    >>> str(stack(scalar(), scalar(), scalar()).value.type)
    'tensor<3xf64>'
    """
    unknown = set(kwargs) - {"tensors", "axis"}
    if unknown:
        raise TypeError(f"stack got unexpected keyword arguments {sorted(unknown)}")
    if "tensors" in kwargs:
        if args:
            raise TypeError("stack: tensors given both by position and as tensors=")
        tensors, axis = kwargs["tensors"], kwargs.get("axis", 0)
    elif not args:
        raise TypeError("stack needs the tensors to stack: stack(tensors, axis=0)")
    elif isinstance(args[0], (list, tuple)):
        if len(args) > 2 or (len(args) == 2 and "axis" in kwargs):
            raise TypeError("stack takes a list of tensors and an axis")
        tensors, axis = args[0], args[1] if len(args) == 2 else kwargs.get("axis", 0)
    else:  # Theano's stack(a, b, ...)
        tensors, axis = args, kwargs.get("axis", 0)
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise GraphBuildError("stack needs at least one tensor")
    ranks = {t.ndim for t in tensors}
    if len(ranks) > 1:
        raise GraphBuildError(f"stack: tensors have different ranks {sorted(ranks)}")
    dtype = common_dtype(*tensors)
    tensors = [cast(t, dtype) for t in tensors]
    rank = ranks.pop()
    if rank == 0 and axis in (0, -1):
        return apply(MakeVectorOp, *tensors)
    if not -rank - 1 <= axis <= rank:
        raise GraphBuildError(f"stack: axis {axis} is out of range for tensors of rank {rank}")
    axis = axis % (rank + 1)
    pattern = tuple(range(axis)) + ("x",) + tuple(range(axis, rank))
    return concatenate([dimshuffle(t, pattern) for t in tensors], axis=axis)


# ---------------------------------------------------------------------------------------------
# making tensors


def arange(start, stop=None, step=1, dtype=None) -> TensorVariable:
    """NumPy's arange with symbolic or Python bounds; the dtype is the bounds' promoted dtype.

    >>> from lowering.frontend.constructors import matrix
    >>> arange(matrix().shape[0]).dtype, arange(0.0, 1.0, 0.25).value.type.shape
    ('int64', (4,))
    """
    if stop is None:
        start, stop = 0, start
    bounds = [b if isinstance(b, TensorVariable) or isinstance(b, (bool, int, float))
              else as_tensor_variable(b) for b in (start, stop, step)]
    for b in bounds:
        if isinstance(b, TensorVariable) and b.ndim != 0:
            raise GraphBuildError(f"arange: bounds must be scalars, got {b} of type {b.type}")
    dtype = canonical_dtype(dtype) if dtype is not None else common_dtype(*bounds)
    operands = [cast(b, dtype) if isinstance(b, TensorVariable) else constant(b, dtype=dtype)
                for b in bounds]
    return apply(ArangeOp, *operands, named=[b for b in bounds if isinstance(b, TensorVariable)])


def alloc(value, *shape) -> TensorVariable:
    """``value`` broadcast to ``shape`` (sizes are ints or integer scalars)."""
    value = as_tensor_variable(value)
    return apply(AllocOp, value, *_sizes(shape), named=[value])


def _filled(shape_arg, number, dtype) -> TensorVariable:
    dtype = canonical_dtype(dtype or config.floatX)
    return apply(AllocOp, constant(number, dtype=dtype), *_sizes(shape_arg))


def zeros(shape, dtype=None) -> TensorVariable:
    """Zeros of ``shape`` (ints, integer scalars or a symbolic shape vector), dtype floatX."""
    return _filled(shape, 0, dtype)


def ones(shape, dtype=None) -> TensorVariable:
    """Ones of ``shape``, dtype floatX by default."""
    return _filled(shape, 1, dtype)


def fill(model, value) -> TensorVariable:
    """``value`` broadcast to ``model``'s shape (Theano's ``fill``/``second``); the result has
    ``value``'s dtype (a Python scalar takes ``model``'s)."""
    model = as_tensor_variable(model)
    if isinstance(value, (bool, int, float)):
        value = constant(value, dtype=common_dtype(model, value))
    value = as_tensor_variable(value)
    return apply(FillOp, model, value, named=[model, value])


second = fill


def zeros_like(x, dtype=None) -> TensorVariable:
    """Zeros with ``x``'s shape and (by default) dtype."""
    x = as_tensor_variable(x)
    return apply(FillOp, x, constant(0, dtype=dtype or x.dtype), named=[x])


def ones_like(x, dtype=None) -> TensorVariable:
    """Ones with ``x``'s shape and (by default) dtype."""
    x = as_tensor_variable(x)
    return apply(FillOp, x, constant(1, dtype=dtype or x.dtype), named=[x])

