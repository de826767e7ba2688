"""``T.unbroadcast``: dimensions made non-broadcastable, as Theano's ``Rebroadcast`` with
``False``.

The values do not change; only the type forgets the static size 1 (a ``tensor.cast`` to the same
element type that relaxes the size to ``?``), so the result no longer broadcasts there.

>>> import lowering.tensor as T
>>> r = T.row("r")
>>> unbroadcast(r, 0).broadcastable, unbroadcast(r, 1).broadcastable
((False, False), (True, False))
"""
from __future__ import annotations

import operator

from lowering.dialects.tensor import CastOp

from .build import apply
from .constructors import as_tensor_variable
from .variable import TensorVariable


def unbroadcast(x, *axes) -> TensorVariable:
    """``x`` with ``axes`` not broadcastable; ``x`` itself when none of them is."""
    x = as_tensor_variable(x)
    wanted = set()
    for axis in axes:
        axis = operator.index(axis)
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"unbroadcast: axis {axis} is out of range for {x} of rank {x.ndim}")
        wanted.add(axis % x.ndim)
    static = x.value.type.shape
    if not any(static[d] == 1 for d in wanted):
        return x
    relaxed = tuple(None if d in wanted and size == 1 else size for d, size in enumerate(static))
    return apply(CastOp, x, to=x.value.type.element, shape=relaxed)
