"""Theano's broadcast-pattern functions: ``T.addbroadcast`` and ``T.patternbroadcast``.

A dimension made broadcastable gets the static size 1 (a reshape to the same sizes with 1
there), so a value whose size there is not 1 stops the function when it runs, as Theano's
``Rebroadcast`` did.

>>> import lowering.tensor as T
>>> x = T.dmatrix("x")
>>> addbroadcast(x, 1).broadcastable, patternbroadcast(x, (True, False)).broadcastable
((False, True), (True, False))
"""
from __future__ import annotations

from .checked import require
from .constructors import as_tensor_variable
from .elemwise import eq
from .shapes import reshape, shape_i
from .variable import TensorVariable


def addbroadcast(x, *axes) -> TensorVariable:
    """``x`` with dimensions ``axes`` broadcastable; each must have size 1 when the function
    runs."""
    x = as_tensor_variable(x)
    wanted = set()
    for axis in axes:
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"addbroadcast: axis {axis} is out of range for {x} of rank {x.ndim}")
        wanted.add(axis % x.ndim)
    if all(x.broadcastable[d] for d in wanted):
        return x
    for d in sorted(wanted):
        if not x.broadcastable[d]:
            x = require(x, eq(shape_i(x, d), 1), f"addbroadcast: dimension {d} must have "
                                                 f"size 1 to be broadcastable")
    return reshape(x, [1 if d in wanted else shape_i(x, d) for d in range(x.ndim)])


def patternbroadcast(x, broadcastable) -> TensorVariable:
    """``x`` with the dimensions ``broadcastable`` marks True made broadcastable. A dimension
    it marks False that ``x``'s type already knows has size 1 stays broadcastable: the values
    are the same, only where they may broadcast differs."""
    x = as_tensor_variable(x)
    broadcastable = tuple(bool(b) for b in broadcastable)
    if len(broadcastable) != x.ndim:
        raise ValueError(f"patternbroadcast: the pattern {broadcastable} has {len(broadcastable)} "
                         f"entries for {x} of rank {x.ndim}")
    return addbroadcast(x, *[d for d, b in enumerate(broadcastable) if b])
