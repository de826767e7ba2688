"""What is known of a graph before it runs: Theano's ``T.get_scalar_constant_value``,
``T.extract_constant`` and ``T.get_vector_length``.

A value is a scalar constant when it is computed only from constants and static sizes through
ops that keep it one value: casts, dimshuffles, reshapes, fills and allocs, basic indexing, and
(with ``elemwise``) elementwise ops. Those ops are run on the constants by the interpreter,
exactly as the compiled function would.

>>> import lowering.tensor as T
>>> x = T.row("x")
>>> get_scalar_constant_value(x.shape[0] * 3 + 1)
array(4)
>>> get_vector_length(x.shape), get_vector_length(T.stack([x[0, 0], x[0, 0]]))
(2, 2)
"""
from __future__ import annotations

import numpy as np

from lowering.dialects.tensor import (AllocOp, ConstantOp, DimShuffleOp, ElementwiseOp, FillOp,
                                      MakeVectorOp, ReshapeOp, ShapeIOp, ShapeOp)
from lowering.dialects.tensor.elementwise import CastOp
from lowering.dialects.tensor.indexing import SubtensorOp
from lowering.ir.core import OpResult
from lowering.ir.interpreter import INTERPRETER, Interpreter

from .constructors import as_tensor_variable
from .variable import TensorVariable

_VIEWS = (CastOp, DimShuffleOp, ReshapeOp, SubtensorOp, MakeVectorOp, FillOp, AllocOp)


class NotScalarConstantError(Exception):
    """A value that is not a constant scalar (raised by ``get_scalar_constant_value``)."""


class EmptyConstantError(NotScalarConstantError):
    """An empty constant, which has no scalar value."""


def _scalar(data) -> np.ndarray:
    data = np.asarray(data)
    if data.size == 0:
        raise EmptyConstantError(f"the constant {data!r} is empty")
    if data.dtype.kind not in "biufc":
        raise NotScalarConstantError(f"the constant {data!r} is not numeric")
    first = data.flat[0]
    if data.size > 1 and not (data == first).all():
        raise NotScalarConstantError(f"the constant {data!r} has more than one value")
    return np.array(first, dtype=data.dtype)


def _constant_array(value, elemwise: bool, only_constants: bool, depth: int) -> np.ndarray:
    """The array ``value`` (an IR value) always holds, or ``NotScalarConstantError``."""
    if not isinstance(value, OpResult) or depth < 0:
        raise NotScalarConstantError(f"{value} is not a constant")
    op = value.op
    if isinstance(op, ConstantOp):
        return op.attributes["value"].array
    if only_constants:
        raise NotScalarConstantError(f"{value} is computed by {op.name}, not a constant")
    if isinstance(op, ShapeIOp):
        size = op.operands[0].type.shape[op.axis]
        if size is None:
            raise NotScalarConstantError(f"the size of {op.operands[0]} along axis {op.axis} "
                                         f"is known only when the function runs")
        return np.array(size, dtype=np.int64)
    if isinstance(op, ShapeOp):
        shape = op.operands[0].type.shape
        if None in shape:
            raise NotScalarConstantError(f"the shape of {op.operands[0]} is known only when "
                                         f"the function runs")
        return np.array(shape, dtype=np.int64)
    if not isinstance(op, _VIEWS) and not (elemwise and isinstance(op, ElementwiseOp)):
        raise NotScalarConstantError(f"{value} is computed by {op.name}, whose value is known "
                                     f"only when the function runs")
    args = [_constant_array(v, elemwise, only_constants, depth - 1) for v in op.operands]
    outs = INTERPRETER.find(type(op))(Interpreter(), op, args)
    return np.asarray(outs[op.results.index(value)], dtype=value.type.dtype)


def get_scalar_constant_value(orig_v, elemwise=True, only_process_constants=False,
                              max_recur=10) -> np.ndarray:
    """The one value ``orig_v`` (a variable, NumPy data or a Python number) always holds, as a
    0-d array; ``NotScalarConstantError`` when it is not known before the function runs (or
    has several values). ``elemwise=False`` does not look through elementwise ops;
    ``only_process_constants`` accepts only constants themselves; ``max_recur`` bounds how many
    ops deep it looks.

    >>> import lowering.tensor as T
    >>> get_scalar_constant_value(T.constant([[2.0]]) + 1)
    array(3.)
    """
    if orig_v is None:
        raise NotScalarConstantError("None is not a scalar")
    if not isinstance(orig_v, TensorVariable):
        return _scalar(orig_v)
    return _scalar(_constant_array(orig_v.value, elemwise, only_process_constants, max_recur))


def extract_constant(x, elemwise=True, only_process_constants=False):
    """``get_scalar_constant_value(x)``, or ``x`` itself when it has no constant value.

    >>> import lowering.tensor as T
    >>> v = T.dvector("v")
    >>> extract_constant(v) is v, extract_constant(T.constant(2) * 3)
    (True, array(6))
    """
    try:
        return get_scalar_constant_value(x, elemwise, only_process_constants)
    except NotScalarConstantError:
        return x


def get_vector_length(v) -> int:
    """The length of the vector ``v`` when it is known before the function runs (a static
    size, a constant, a stack of scalars, a shape or a slice of one); ``ValueError``
    otherwise, and ``TypeError`` for a tensor that is not a vector."""
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError(f"get_vector_length: the argument must be a vector, got {v} of rank "
                        f"{v.ndim}")
    length = v.value.type.shape[0]
    if length is not None:
        return length
    try:
        return int(_constant_array(v.value, True, False, 10).shape[0])
    except NotScalarConstantError:
        raise ValueError(f"get_vector_length: the length of {v} is known only when the "
                         f"function runs") from None
