"""Comparing and picking: Theano's ``T.isclose``, ``T.allclose``, ``T.largest`` and
``T.smallest``, compositions of elementwise ops.

>>> import numpy as np
>>> import lowering.tensor as T
>>> a = T.dvector("a")
>>> isclose(a, [1.00001e10, 1e-8]).eval({a: [1e10, 1e-7]})
array([ True, False])
"""
from __future__ import annotations

from .constructors import as_tensor_variable
from .elemwise import abs as abs_, eq, gt, isinf, isnan, le, lt, switch
from .logical_reductions import all as all_
from .reductions import max as max_, min as min_
from .shapes import stack
from .variable import TensorVariable


def isclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False) -> TensorVariable:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` as NumPy's ``isclose`` (a boolean tensor):
    infinities are close only to the same infinity, NaNs to nothing unless ``equal_nan``.

    >>> import lowering.tensor as T
    >>> a = T.dvector("a")
    >>> isclose(a, [1.0, float("nan")], equal_nan=True).eval({a: [1.0, float("nan")]})
    array([ True,  True])
    """
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    a_nan, b_nan = isnan(a), isnan(b)
    a_inf, b_inf = isinf(a), isinf(b)
    finite_close = le(abs_(a - b), atol + rtol * abs_(b)) & ~(a_nan | b_nan | a_inf | b_inf)
    same_inf = a_inf & b_inf & eq(a, b)
    close = finite_close | same_inf
    return close | (a_nan & b_nan) if equal_nan else close


def allclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False) -> TensorVariable:
    """Whether every element of ``a`` is close to ``b``'s (``isclose``): a boolean scalar.

    >>> import lowering.tensor as T
    >>> allclose(T.constant([1.0, 2.0]), [1.0, 2.0 + 1e-9]).eval()
    array(True)
    """
    return all_(isclose(a, b, rtol, atol, equal_nan))


def _extreme(args, name: str, wins, reduce) -> TensorVariable:
    """Two arguments: a ``switch`` on ``wins(a, b)``; more: ``reduce`` over them stacked."""
    if not args:
        raise TypeError(f"{name} needs at least one argument")
    if len(args) == 2:
        a, b = args
        return switch(wins(a, b), a, b)
    return reduce(stack([as_tensor_variable(a) for a in args]), axis=0)


def largest(*args) -> TensorVariable:
    """The elementwise largest of the arguments (as Python's ``max`` of them).

    >>> import lowering.tensor as T
    >>> largest(T.constant([1, 5]), T.constant([4, 2]), T.constant([3, 3])).eval()
    array([4, 5])
    """
    return _extreme(args, "largest", gt, max_)


def smallest(*args) -> TensorVariable:
    """The elementwise smallest of the arguments (as Python's ``min`` of them)."""
    return _extreme(args, "smallest", lt, min_)
