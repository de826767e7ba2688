"""``theano.compile.ops.as_op``: an op made from a Python function and its input and output types.

``as_op(itypes, otypes, infer_shape=None)`` decorates a function of NumPy arrays; the result is a
``FromFunctionOp`` whose ``perform`` calls it (one array, or a list/tuple with one per output).
``infer_shape(node, input_shapes)``, when given, is the op's ``infer_shape``. The op has no
gradient. Like every op written in Python, it runs in compiled CPU code through a call into
Python.

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> @as_op(itypes=[T.dmatrix, T.dmatrix], otypes=[T.dmatrix])
... def numpy_dot(a, b):
...     return np.dot(a, b)
>>> x, y = T.dmatrix("x"), T.dmatrix("y")
>>> f = theano.function([x, y], numpy_dot(x, y) + 1)
>>> f(np.eye(2), np.ones((2, 2))), str(numpy_dot)
(array([[2., 2.],
       [2., 2.]]), 'FromFunctionOp{numpy_dot}')
"""
from __future__ import annotations

from .custom_op import Op
from .types import TensorType

__all__ = ["FromFunctionOp", "as_op"]


class FromFunctionOp(Op):
    """An op whose ``perform`` calls ``fn`` on the input arrays (Theano's ``FromFunctionOp``);
    two are equal when they wrap the same function."""

    def __init__(self, fn, itypes, otypes, infer_shape=None):
        self._fn = fn
        self.itypes = list(itypes)
        self.otypes = list(otypes)
        self._infer_shape = infer_shape
        if infer_shape is not None:
            self.infer_shape = infer_shape

    def __eq__(self, other):
        return type(self) is type(other) and self._fn == other._fn

    def __hash__(self):
        return hash(type(self)) ^ hash(self._fn)

    def __str__(self):
        return f"FromFunctionOp{{{getattr(self._fn, '__name__', self._fn)}}}"

    __repr__ = __str__

    def perform(self, node, inputs, output_storage):
        outs = self._fn(*inputs)
        if not isinstance(outs, (list, tuple)):
            outs = (outs,)
        if len(outs) != len(output_storage):
            raise ValueError(f"{self}: the function gave {len(outs)} result(s) for "
                             f"{len(output_storage)} output type(s)")
        for cell, value in zip(output_storage, outs):
            cell[0] = value


def as_op(itypes, otypes, infer_shape=None):
    """A decorator making a function of arrays an op with inputs ``itypes`` and outputs
    ``otypes`` (tensor types such as ``T.dmatrix``, or lists of them)."""
    itypes = _types(itypes, "itypes")
    otypes = _types(otypes, "otypes")
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError("as_op: infer_shape needs to be a callable")

    def make_op(fn):
        return FromFunctionOp(fn, itypes, otypes, infer_shape)
    return make_op


def _types(types, what: str) -> list:
    types = list(types) if isinstance(types, (list, tuple)) else [types]
    if not all(isinstance(t, TensorType) for t in types):
        raise TypeError(f"as_op: {what} has to be a list of tensor types (T.dmatrix, ...), got "
                        f"{[type(t).__name__ for t in types]}")
    return types


# Theano's path for these names, ``theano.compile.ops``, is a module of a lower layer: the front
# end gives it its names.
from lowering.compile import ops as _theano_path  # noqa: E402

_theano_path.as_op, _theano_path.FromFunctionOp = as_op, FromFunctionOp
