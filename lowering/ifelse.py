"""``theano.ifelse``: the lazy conditional, ``from lowering.ifelse import ifelse``.

>>> import lowering.tensor as T
>>> c = T.iscalar("c")
>>> y = ifelse(c, T.constant(1.0), T.constant(2.0))
>>> y.ndim, y.dtype
(0, 'float64')
"""
from .frontend.ifelse import IfElse, ifelse  # noqa: F401

__all__ = ["IfElse", "ifelse"]
