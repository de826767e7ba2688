"""Small elementwise helpers of ``theano.tensor``: ``T.power``, ``T.deg2rad``, ``T.rad2deg``,
``T.iround``, ``T.divmod`` and ``T.tensor_copy``; compositions of existing elementwise ops.

>>> import numpy as np
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> deg2rad(x).eval({x: [180.0]}), iround(x).eval({x: [2.5, 3.5]})
(array([3.14159265]), array([2, 4]))
"""
from __future__ import annotations

import math

import numpy as np

from lowering.dialects.tensor import CastOp

from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast, float_dtype_for, floor_div, mod, pow as pow_, round as round_
from .errors import GraphTypeError
from .variable import TensorVariable


def power(x, y) -> TensorVariable:
    """``x ** y`` (NumPy's name)."""
    return pow_(x, y)


def _in_float(a) -> TensorVariable:
    a = as_tensor_variable(a)
    return cast(a, float_dtype_for(a.dtype))


def deg2rad(a) -> TensorVariable:
    """Degrees converted to radians; integers compute in a float type, as Theano's."""
    return _in_float(a) * (math.pi / 180.0)


def rad2deg(a) -> TensorVariable:
    """Radians converted to degrees; integers compute in a float type, as Theano's.

    >>> import lowering.tensor as T
    >>> rad2deg(T.constant(np.pi, dtype="float32")).eval()
    array(180., dtype=float32)
    """
    return _in_float(a) * (180.0 / math.pi)


def iround(a, mode=None) -> TensorVariable:
    """``a`` rounded (``mode`` as ``T.round``: halves to even by default) and cast to int64."""
    return cast(round_(a, mode), "int64")


def divmod(x, y) -> tuple:  # noqa: A001 - Theano's name
    """``(x // y, x % y)`` elementwise (floored, as Python's ``divmod``); complex operands are
    refused, as Theano refuses them.

    >>> import lowering.tensor as T
    >>> [v.eval() for v in divmod(T.constant([7, -7]), 2)]
    [array([ 3, -4]), array([1, 1])]
    """
    for v in (x, y):
        if np.dtype(getattr(v, "dtype", np.asarray(v).dtype)).kind == "c":
            raise GraphTypeError("divmod: complex numbers have no floored division or modulo")
    return floor_div(x, y), mod(x, y)


def tensor_copy(x) -> TensorVariable:
    """A new variable holding ``x``'s values (Theano's elementwise identity).

    >>> import lowering.tensor as T
    >>> x = T.dvector("x")
    >>> tensor_copy(x) is x, tensor_copy(x).eval({x: [1.0]})
    (False, array([1.]))
    """
    x = as_tensor_variable(x)
    return apply(CastOp, x, to=x.value.type.element)
