"""What a derivative was taken of, for ``function()``'s check of unused inputs.

A tangent is a function of every input of the expression it differentiates, even where its graph
no longer reads one: the tangent of ``dot(x, W)`` along ``W`` is ``dot(x, V)``, which does not
read ``W``. Theano checks for unused inputs on the graph before optimization, where its R-op
still reads them, so the tutorial's ``function([W, V, x], Rop(dot(x, W), W, V))`` runs;
``function()`` here counts the inputs of a derivative's expression as used in the same way
(and ``function([V, x], ...)``, without ``W``, runs too: the graph does not need it).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> w, tangent = Block([TensorType((None,), F64)] * 2).args
>>> record_derivative(tangent, [w])
>>> inputs_differentiated([tangent], [w]) == {w}
True
"""
from __future__ import annotations

import weakref
from typing import Iterable, Sequence

from lowering.ir.core import Operation, Value

# A derivative's value -> the values of the expressions it is a derivative of.
_OF: "weakref.WeakKeyDictionary[Value, tuple[Value, ...]]" = weakref.WeakKeyDictionary()


def record_derivative(result: Value, of: Sequence[Value]) -> None:
    """Note that ``result`` is a derivative (a tangent) of the expressions ``of``."""
    _OF[result] = tuple(of)


def inputs_differentiated(outputs: Iterable[Value], inputs: Iterable[Value]) -> set[Value]:
    """Those of ``inputs`` that an expression some of ``outputs`` are derivatives of reads."""
    wanted = set(inputs)
    stack = [v for out in outputs for v in _OF.get(out, ())]
    seen: set[Value] = set()
    found: set[Value] = set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        if value in wanted:
            found.add(value)
        owner = value.owner
        if isinstance(owner, Operation):
            stack.extend(owner.operands)
    return found
