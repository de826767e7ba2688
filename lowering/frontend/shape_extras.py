"""Shape functions Theano programs use beyond the basic ones: ``shape_padaxis``,
``stacklists`` and ``specify_shape``.

>>> import lowering.tensor as T
>>> shape_padaxis(T.matrix(), 1).broadcastable
(False, True, False)
>>> a, b, c, d = T.scalars("abcd")
>>> stacklists([[a, b], [c, d]]).broadcastable
(False, False)
"""
from __future__ import annotations

from lowering.dialects.tensor import SpecifyShapeOp

from .build import apply
from .constructors import as_tensor_variable
from .shapes import dimshuffle, stack
from .variable import TensorVariable


def shape_padaxis(t, axis: int) -> TensorVariable:
    """``t`` with a broadcastable dimension inserted at ``axis`` (``-1`` appends one); an axis
    outside ``[-(ndim + 1), ndim + 1)`` is Theano's IndexError."""
    t = as_tensor_variable(t)
    ndim = t.ndim + 1
    if not -ndim <= axis < ndim:
        raise IndexError(f"axis {axis} is out of bounds [-{ndim}, {ndim})")
    if axis < 0:
        axis += ndim
    pattern: list = list(range(t.ndim))
    pattern.insert(axis, "x")
    return dimshuffle(t, pattern)


def stacklists(arg):
    """Nested lists of tensors stacked into one tensor of the same nesting: a 2 x 2 list of
    scalars gives a 2 x 2 matrix, of matrices a 2 x 2 x m x n tensor. Anything that is not a
    list or tuple is returned as it is."""
    if isinstance(arg, (tuple, list)):
        return stack([stacklists(item) for item in arg])
    return arg


def specify_shape(x, shape) -> TensorVariable:
    """``x``, checked when the graph runs to have ``shape`` (a list of ints and integer scalars,
    or an integer vector such as ``y.shape``): a different shape stops the function with an
    error naming both. Theano's ``T.specify_shape``; gradients pass through.

    >>> import numpy as np
    >>> import lowering.tensor as T
    >>> x = T.dmatrix("x")
    >>> specify_shape(x, (2, 3)).eval({x: np.zeros((2, 3))}).shape
    (2, 3)
    """
    x = as_tensor_variable(x)
    if isinstance(shape, TensorVariable):
        if shape.ndim != 1 or not shape.dtype.startswith(("int", "uint")):
            raise TypeError(f"specify_shape: the shape must be a vector of integers, got "
                            f"{shape} of type {shape.type}")
    else:
        shape = [as_tensor_variable(s).value if isinstance(s, TensorVariable) else int(s)
                 for s in shape]
    return apply(SpecifyShapeOp, x, shape, named=[x])
