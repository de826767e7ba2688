"""``require``: a variable checked when the function runs, as Theano's ``Assert`` op.

>>> import lowering.tensor as T
>>> x = T.lvector("x")
>>> require(x, x >= 0, "x must not be negative").eval({x: [1, 2]})
array([1, 2])
"""
from __future__ import annotations

from lowering.dialects.tensor import CheckOp

from .build import apply
from .elemwise import cast, eq, invert
from .reductions import sum as sum_
from .variable import TensorVariable


def require(x: TensorVariable, holds: TensorVariable, message: str) -> TensorVariable:
    """``x``, once every element of the boolean ``holds`` is true when the function runs; the
    function stops with ``message`` (and the op's line) otherwise."""
    every = eq(sum_(cast(invert(holds), "int64")), 0)
    return apply(CheckOp, x, every, message, named=[x])
