"""``T.xlogx``: ``xlogx(x) = x log(x)`` and ``xlogy0(x, y) = x log(y)``, both 0 where ``x`` is 0
(Theano's ``theano.tensor.xlogx``); integer inputs give floats, as ``log`` does.

>>> import numpy as np
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> xlogx(x).eval({x: np.array([0.0, 1.0, np.e])}).round(6).tolist()
[0.0, 0.0, 2.718282]
>>> xlogy0(x, x * 0).eval({x: np.array([0.0])}).tolist()
[0.0]
"""
from __future__ import annotations

from .constructors import as_tensor_variable
from .elemwise import eq, log, switch
from .variable import TensorVariable


def xlogx(x) -> TensorVariable:
    """``x * log(x)``, with ``0 log 0 = 0``."""
    x = as_tensor_variable(x)
    # log reads 1 where x is 0, so neither the value nor its gradient sees log(0)
    return x * log(switch(eq(x, 0), 1, x))


def xlogy0(x, y) -> TensorVariable:
    """``x * log(y)``, 0 wherever ``x`` is 0 (whatever ``y`` is)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    product = x * log(y)
    return switch(eq(x, 0), 0, product)
