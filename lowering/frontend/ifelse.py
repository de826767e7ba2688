"""``ifelse``: Theano's lazy conditional, one ``tensor.if`` op.

``ifelse(condition, then_branch, else_branch)`` is the ``then_branch`` value(s) when the scalar
``condition`` is non-zero, the ``else_branch`` value(s) otherwise. Unlike ``T.switch``, which
is elementwise and computes both sides, only the branch taken is computed: what only it needs
runs inside it (``function()`` moves it there, see ``lowering.dialects.tensor.branch_sinking``).
A branch is a variable or a list or tuple of them (the result is then a list or tuple too);
the two branches give as many values, pairwise of the same dtype and broadcastable pattern.
The gradient flows into the branch that was taken (the other gets zeros), none into the
condition.

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering import function
>>> a, b = T.dscalars("a", "b")
>>> x = T.dvector("x")
>>> f = function([a, b, x], ifelse(T.lt(a, b), x.sum(), (x * x).sum()))
>>> float(f(1.0, 2.0, np.arange(3.0))), float(f(2.0, 1.0, np.arange(3.0)))
(3.0, 5.0)
"""
from __future__ import annotations

from lowering.dialects.tensor.branches import IfOp
from lowering.ir.location import caller_location

from .build import build_op
from .constructors import as_tensor_variable
from .errors import GraphBuildError, GraphTypeError
from .theano_ops import Op, register_theano_op
from .variable import wrap


class IfElse(Op):
    """How a ``tensor.if`` shows in debugprint, graphs and profiles: Theano's ``if{}``."""

    def __str__(self):
        return "if{}"


register_theano_op("tensor.if", (IfElse, IfElse))


def ifelse(condition, then_branch, else_branch, name: str | None = None):
    """The value(s) of ``then_branch`` if ``condition`` is non-zero, else of ``else_branch``,
    computing only the branch taken (see the module docstring); ``name`` names the results."""
    kind = type(then_branch) if type(then_branch) in (list, tuple) else None
    then_values = _values(then_branch, "then_branch")
    else_values = _values(else_branch, "else_branch")
    if len(then_values) != len(else_values):
        raise GraphBuildError(f"ifelse: then_branch gives {len(then_values)} value(s) but "
                              f"else_branch gives {len(else_values)}; the two branches must give "
                              f"as many values", caller_location())
    condition = _condition(condition)
    for k, (t, e) in enumerate(zip(then_values, else_values)):
        if t.dtype != e.dtype or t.broadcastable != e.broadcastable:
            which = f"value {k} of the branches" if len(then_values) > 1 else "the branches"
            raise GraphTypeError(
                f"ifelse: {which} should have identical types, but then_branch gives {t} of "
                f"type {_theano_type(t)} and else_branch gives {e} of type {_theano_type(e)}; "
                f"cast one (T.cast) or change its broadcastable pattern (T.addbroadcast, "
                f"T.unbroadcast)", caller_location())
    op = build_op(IfOp, condition, [v.value for v in then_values],
                  [v.value for v in else_values], named=[condition, *then_values, *else_values])
    results = [wrap(r) for r in op.results]
    if name is not None:
        for k, r in enumerate(results):
            r.name = name if len(results) == 1 else f"{name}[{k}]"
    if kind is None:
        return results[0]
    return kind(results)


def _values(branch, argument: str) -> list:
    items = list(branch) if type(branch) in (list, tuple) else [branch]
    if not items:
        raise GraphBuildError(f"ifelse: {argument} is empty; give it a variable or a list of "
                              f"variables", caller_location())
    values = []
    for k, item in enumerate(items):
        try:
            values.append(as_tensor_variable(item))
        except (TypeError, ValueError) as exc:
            where = f"{argument}[{k}]" if len(items) > 1 or type(branch) in (list, tuple) \
                else argument
            raise GraphTypeError(f"ifelse: {where} is not a tensor or something that converts "
                                 f"to one ({type(item).__name__}: {exc})",
                                 caller_location()) from None
    return values


def _condition(condition):
    try:
        condition = as_tensor_variable(condition)
    except (TypeError, ValueError) as exc:
        raise GraphTypeError(f"ifelse: condition is not a scalar tensor "
                             f"({type(condition).__name__}: {exc})", caller_location()) from None
    if condition.ndim != 0:
        raise GraphTypeError(f"ifelse: condition must be a scalar (0 stands for false, anything "
                             f"else for true), got {condition} of type {_theano_type(condition)}; "
                             f"reduce it first (e.g. T.any(c) or c.sum() > 0)", caller_location())
    return condition


def _theano_type(variable) -> str:
    return f"TensorType({variable.dtype}, {variable.broadcastable})"
