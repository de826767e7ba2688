"""Indexing (``x[...]``) and its functional updates ``set_subtensor`` / ``inc_subtensor``.

Supported keys, with NumPy's semantics: integers (Python or symbolic integer scalars), slices
whose bounds are ints or symbolic scalars (``x[i*n:(i+1)*n]``), ``None``/``numpy.newaxis``,
``Ellipsis``, and integer arrays (symbolic or NumPy) for integer-array indexing
(``p[T.arange(y.shape[0]), y]``). Boolean masks are not supported.

>>> from lowering.frontend.constructors import matrix, iscalar, lvector
>>> x, i, y = matrix("x"), iscalar("i"), lvector("y")
>>> x[i * 2:(i + 1) * 2].value.op.name, x[0].ndim, x[:, None].broadcastable
('tensor.subtensor', 1, (False, True, False))
>>> p = x[shape_ops.arange(y.shape[0]), y]
>>> p.value.op.name, p.ndim
('tensor.advanced_subtensor', 1)
"""
from __future__ import annotations

import numpy as np

from lowering.dialects.tensor import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp,
                                      AdvancedSubtensorOp, IncSubtensorOp, SetSubtensorOp, ShapeOp,
                                      SubtensorOp)
from lowering.dialects.tensor.indexing import DYN, ArrayIndex, Index, Slice

from . import shapes as shape_ops
from .build import apply, build_op
from .constructors import as_tensor_variable, constant
from .elemwise import cast
from .errors import GraphTypeError
from .variable import TensorVariable, wrap


def _is_int(item) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _index_variable(v: TensorVariable, what: str) -> TensorVariable:
    if v.dtype == "bool":
        raise GraphTypeError(f"boolean mask indexing is not supported ({v}); use T.switch, or "
                             f"integer indices")
    if not v.dtype.startswith(("int", "uint")):
        raise GraphTypeError(f"{what} must have an integer dtype, got {v} of dtype {v.dtype}")
    return v


def _slice_part(p):
    if p is None or _is_int(p):
        return None if p is None else int(p)
    if isinstance(p, TensorVariable):
        _index_variable(p, "a slice bound")
        if p.ndim != 0:
            raise GraphTypeError(f"a slice bound must be a scalar, got {p} of type {p.type}")
        return p.value
    raise GraphTypeError(f"a slice bound must be an int, None or an integer scalar, got {p!r}")


def _is_array_item(item) -> bool:
    if isinstance(item, TensorVariable):
        return item.ndim > 0 or item.dtype == "bool"
    return isinstance(item, (list, np.ndarray)) and np.ndim(item) > 0


def getitem(x: TensorVariable, key) -> TensorVariable:
    """``x[key]``."""
    if isinstance(key, list) and any(isinstance(k, slice) for k in key):
        key = tuple(key)  # Theano reads a list holding slices as the tuple of its items
    items = list(key) if isinstance(key, tuple) else [key]
    if (len(items) == 1 and _is_int(items[0]) and isinstance(x.operation, ShapeOp)):
        # x.shape[i] is one size: build shape_i directly (Theano's Shape_i{i}).
        source, axis = wrap(x.operation.input), int(items[0])
        if not -source.ndim <= axis < source.ndim:
            # Theano's shape vectors have no static length: the error comes when the function
            # runs, and code testing ranks after taking a size raises its own error first.
            from .checked import require
            return require(constant(0, dtype="int64"), constant(False),
                           f"{source}.shape[{axis}]: index {axis} is out of range for a tensor "
                           f"of rank {source.ndim}")
        return shape_ops.shape_i(source, axis)
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    indexing = [i for i in items if i is not None and i is not Ellipsis]
    if len(indexing) > x.ndim:
        raise IndexError(f"too many indices for {x}: it has rank {x.ndim}, the key has "
                         f"{len(indexing)} indices")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (x.ndim - len(indexing))
    advanced = any(_is_array_item(i) for i in items)

    new_axes, out_pos, converted, named = [], 0, [], [x]
    for item in items:
        if item is None:
            if advanced:
                raise IndexError("new axes (None) cannot be mixed with integer-array indexing; "
                                 "dimshuffle the result instead")
            new_axes.append(out_pos)
            out_pos += 1
        elif isinstance(item, slice):
            converted.append(slice(*(_slice_part(p) for p in (item.start, item.stop, item.step))))
            named += [p for p in (item.start, item.stop, item.step) if isinstance(p, TensorVariable)]
            out_pos += 1
        elif _is_int(item):
            converted.append(int(item))
        elif isinstance(item, TensorVariable):
            _index_variable(item, "an index")
            converted.append(item.value)
            named.append(item)
        elif isinstance(item, (list, np.ndarray)):
            arr = np.asarray(item)
            if arr.dtype == bool:
                raise GraphTypeError("boolean mask indexing is not supported; use integer indices")
            if arr.dtype.kind not in "iu" and arr.size:
                raise GraphTypeError(f"index arrays must hold integers, got {arr.dtype}")
            converted.append(constant(arr.astype(np.int64)).value)
        else:
            raise GraphTypeError(f"cannot index {x} with {type(item).__name__} ({item!r})")

    if all(isinstance(c, slice) and c == slice(None) for c in converted):
        result = x
    else:
        op_class = AdvancedSubtensorOp if advanced else SubtensorOp
        result = apply(op_class, x, key=tuple(converted), named=named)
    if new_axes:
        pattern, source = [], 0
        for position in range(result.ndim + len(new_axes)):
            if position in new_axes:
                pattern.append("x")
            else:
                pattern.append(source)
                source += 1
        result = shape_ops.dimshuffle(result, pattern)
    return result


# ---------------------------------------------------------------------------------------------
# Functional updates


def _key_of(op) -> tuple:
    """The NumPy-style key an indexing op was built from (its spec with its index operands)."""
    indices = iter(op.indices)

    def part(p):
        return next(indices) if p is DYN else p

    key = []
    for entry in op.entries:
        if isinstance(entry, Index):
            key.append(part(entry.value))
        elif isinstance(entry, Slice):
            key.append(slice(part(entry.start), part(entry.stop), part(entry.step)))
        elif isinstance(entry, ArrayIndex):
            key.append(next(indices))
    return tuple(key)


def _update(x_view, y, name: str, basic_class, advanced_class) -> TensorVariable:
    if not isinstance(x_view, TensorVariable) or not isinstance(
            x_view.operation, (SubtensorOp, AdvancedSubtensorOp)):
        raise GraphTypeError(f"{name}: the first argument must be an indexed variable such as "
                             f"x[2:5] or x[idx], got {x_view}")
    op = x_view.operation
    x = wrap(op.input)
    value = as_tensor_variable(y) if not isinstance(y, (bool, int, float)) else constant(y, dtype=x.dtype)
    op_class = advanced_class if isinstance(op, AdvancedSubtensorOp) else basic_class
    return wrap(build_op(op_class, x, cast(value, x.dtype), key=_key_of(op), named=[x, value]).result)


def set_subtensor(x_view, y, inplace: bool = False, tolerate_inplace_aliasing: bool = False):
    """The tensor ``x`` of ``x_view = x[key]`` with ``x[key]`` replaced by ``y`` (broadcast to
    the view, cast to ``x``'s dtype). ``inplace`` is accepted for Theano compatibility: the
    compiler decides where updates happen in place.

    >>> from lowering.frontend.constructors import vector
    >>> x = vector("x")
    >>> set_subtensor(x[1:3], 0.0).value.op.name
    'tensor.set_subtensor'
    """
    return _update(x_view, y, "set_subtensor", SetSubtensorOp, AdvancedSetSubtensorOp)


def inc_subtensor(x_view, y, inplace: bool = False, set_instead_of_inc: bool = False,
                  tolerate_inplace_aliasing: bool = False):
    """The tensor ``x`` of ``x_view = x[key]`` with ``y`` added to ``x[key]`` (repeated integer
    indices accumulate, as ``numpy.add.at``)."""
    if set_instead_of_inc:
        return set_subtensor(x_view, y)
    return _update(x_view, y, "inc_subtensor", IncSubtensorOp, AdvancedIncSubtensorOp)
