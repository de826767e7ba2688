"""Reverse-mode differentiation of a detached graph: ``T.grad``.

Each tensor op class knows its own gradient (``op.grad(output_grads)`` returns one gradient per
operand, of exactly that operand's type, or None); this driver walks the ops between the ``wrt``
variables and the cost in reverse order, calls those rules, and adds up the contributions that
reach each value. New ops take the location of the op they differentiate, so errors and profiles
point at the user's line that built the forward computation.

>>> from lowering.frontend.constructors import vector
>>> x = vector("x")
>>> g = grad((x ** 2).sum(), x)
>>> str(g.type)
'TensorType(float64, vector)'
"""
from __future__ import annotations

import warnings

from lowering.config import config
from lowering.dialects.tensor import ConstantOp, GradFilterOp
from lowering.dialects.tensor.elementwise import AddOp
from lowering.dialects.tensor.shape_ops import match_type
from lowering.ir.core import Operation, Value
from lowering.ir.location import default_location

from .constructors import as_tensor_variable, constant
from .errors import DisconnectedInputError, GraphBuildError, GraphTypeError
from .graph import depends_on, toposort
from .shapes import ones_like, zeros_like
from .variable import TensorVariable, wrap


def grad(cost, wrt, consider_constant=None, disconnected_inputs: str = "raise",
         add_names: bool = True, known_grads=None, return_disconnected: str = "zero",
         null_gradients: str = "raise"):
    """The gradient of the scalar ``cost`` with respect to ``wrt`` (a variable or a list).

    - ``consider_constant``: variables whose dependence on ``wrt`` is ignored (gradients stop).
    - ``disconnected_inputs``: ``'raise'`` (default), ``'warn'`` or ``'ignore'`` when the cost does
      not depend on a ``wrt`` variable; its gradient is then zeros (``return_disconnected='zero'``),
      None (``'None'``) or a ``DisconnectedVariable`` placeholder (``'Disconnected'``). A cost
      that reaches ``wrt`` only through ``disconnected_grad`` does not depend on it.
    - ``null_gradients``: ``'raise'`` (default) when the gradient must go through an op with no
      gradient rule; ``'return'`` gives None for the ``wrt`` variables behind such an op.
    - ``known_grads``: a dict from variables to their gradients, which flow back from there; with
      it, ``cost`` may be None.
    - ``add_names``: name the gradients ``(dcost/dwrt)`` when both are named.

    Each result has its ``wrt`` variable's type; as in Theano 1.0 the gradient of an integer
    ``wrt`` variable is float zeros (floatX), and an integer-valued cost has zero gradients
    (ones with respect to itself).

    >>> from lowering.frontend.constructors import scalar
    >>> a, b = scalar("a"), scalar("b")
    >>> cost = a * b + a
    >>> cost.name = "cost"
    >>> ga, gb = grad(cost, [a, b])
    >>> ga.name, str(gb.type)
    ('(dcost/da)', 'TensorType(float64, scalar)')
    """
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"disconnected_inputs must be 'raise', 'warn' or 'ignore', "
                         f"got {disconnected_inputs!r}")
    if return_disconnected.lower() not in ("zero", "none", "disconnected"):
        raise ValueError(f"return_disconnected must be 'zero', 'None' or 'Disconnected', "
                         f"got {return_disconnected!r}")
    if null_gradients not in ("raise", "return"):
        raise ValueError(f"null_gradients must be 'raise' or 'return', got {null_gradients!r}")
    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    for w in wrt_list:
        if not isinstance(w, TensorVariable):
            raise TypeError(f"grad: wrt must be symbolic variables, got {type(w).__name__} ({w!r})")

    seeds = _seeds(cost, known_grads)
    # Theano 1.0: an integer-valued cost is differentiable, and its gradient is zero everywhere
    # but on itself (its op's gradient may not flow through an integer output). It takes part
    # in the walk only to tell connected inputs from disconnected ones.
    discrete_cost = as_tensor_variable(cost).value if _is_discrete_cost(cost) else None
    outputs = list(seeds) + ([discrete_cost] if discrete_cost is not None else [])
    stop = {as_tensor_variable(v).value for v in (consider_constant or ())}
    stop |= _disconnected_filters(outputs, stop)
    sources = [w.value for w in wrt_list]
    relevant = depends_on(outputs, sources, stop)
    null: set[Value] = set()
    grads = _backpropagate(seeds, relevant, stop, null if null_gradients == "return" else None)

    results = []
    for w in wrt_list:
        g = grads.get(w.value)
        if w.value is discrete_cost:
            g = ones_like(w, dtype=config.floatX)
        elif w.value not in relevant:
            _disconnected(w, disconnected_inputs)
            g = {"none": None, "zero": _float_zeros_like(w),
                 "disconnected": DisconnectedVariable()}[return_disconnected.lower()]
        elif w.value in null:  # behind an op with no gradient rule (null_gradients='return')
            g = None
        elif g is None or not _is_continuous(w.dtype):
            # Connected only through ops with no gradient (integers, shapes), or an integer
            # input, whose gradient Theano defines as float zeros.
            g = _float_zeros_like(w)
        else:
            g = wrap(match_type(g, w.value) if g.type != w.value.type else g)
        cost_name = getattr(cost, "name", None)
        if isinstance(g, TensorVariable) and add_names and w.name is not None and cost_name is not None \
                and g.name is None:
            g.name = f"(d{cost_name}/d{w.name})"
        results.append(g)
    return results[0] if single else results


def _seeds(cost, known_grads) -> dict[Value, list[Value]]:
    """The gradients to start from: 1 for the cost, and the known ones."""
    seeds: dict[Value, list[Value]] = {}
    if cost is None and not known_grads:
        raise ValueError("grad needs a cost, or known_grads")
    if cost is not None:
        cost = as_tensor_variable(cost)
        if cost.ndim != 0:
            raise GraphTypeError(f"grad: the cost must be a scalar (rank 0), got {cost} of type "
                                 f"{cost.type}; sum or average it first")
        if cost.dtype.startswith("complex"):  # Theano refuses it too
            raise GraphTypeError(f"grad: the cost must be a float scalar, not complex: got "
                                 f"{cost} of type {cost.type}; take T.real, T.imag or abs of it")
        if _is_continuous(cost.dtype):
            seeds[cost.value] = [constant(1, dtype=cost.dtype).value]
    for var, g in (known_grads or {}).items():
        var, g = as_tensor_variable(var), as_tensor_variable(g)
        if g.ndim != var.ndim:
            raise GraphTypeError(f"grad: the known gradient {g} of {var} has rank {g.ndim}, "
                                 f"not {var.ndim}")
        seeds.setdefault(var.value, []).append(match_type(g.value, var.value))
    return seeds


def _is_continuous(dtype: str) -> bool:
    return dtype.startswith(("float", "complex"))


def _is_discrete_cost(cost) -> bool:
    """Whether ``cost`` is an integer or boolean scalar (Theano differentiates those too)."""
    return cost is not None and not _is_continuous(as_tensor_variable(cost).dtype)


def _float_zeros_like(w: TensorVariable) -> TensorVariable:
    """Zeros of ``w``'s shape, in ``w``'s dtype when it is a float, else in floatX: Theano's
    gradients are never integers."""
    return zeros_like(w, dtype=None if _is_continuous(w.dtype) else config.floatX)


def _total(contributions: list[Value]) -> Value:
    total = contributions[0]
    for g in contributions[1:]:
        if getattr(total.type, "encoding", None) is not None:  # sparse gradients
            from lowering.dialects.sparse import sum_sparse
            total = sum_sparse(total, g)
            continue
        total = AddOp.build(total, g).result
    return total


def _disconnected_filters(outputs: list[Value], stop: set[Value]) -> set[Value]:
    """The results of ``disconnected_grad`` between the inputs and ``outputs``: no gradient
    goes through them, so they stop the walk as ``consider_constant`` values do."""
    return {op.result for op in toposort(outputs, stop)
            if isinstance(op, GradFilterOp) and op.kind == "disconnected"}


def _backpropagate(seeds: dict[Value, list[Value]], relevant: set[Value],
                   stop: set[Value], null: set[Value] | None = None) -> dict[Value, Value]:
    """The summed gradient of every relevant value reached from the seeds. With ``null`` (a
    set), an op with no gradient rule adds the values behind it to ``null`` instead of raising."""
    pending: dict[Value, list[Value]] = {v: list(gs) for v, gs in seeds.items()}
    totals: dict[Value, Value] = {}
    for op in reversed(toposort(list(seeds), stop)):
        if not any(r in relevant for r in op.results) or isinstance(op, ConstantOp):
            continue
        output_grads = []
        for r in op.results:
            contributions = pending.pop(r, None)
            output_grads.append(_total(contributions) if contributions else None)
            if contributions:
                totals[r] = output_grads[-1]
        if all(g is None for g in output_grads):
            continue
        if null is not None and _lacks_rule(op):
            null |= depends_on(list(op.operands), list(relevant), stop)
            continue
        for operand, g in zip(op.operands, _operand_grads(op, output_grads)):
            if g is not None and operand in relevant and operand not in stop:
                pending.setdefault(operand, []).append(g)
    for value, contributions in pending.items():  # inputs (block arguments) and stop values
        totals[value] = _total(contributions)
    return totals


def _lacks_rule(op: Operation) -> bool:
    """Whether ``op`` should differentiate (float in, float out) but has no gradient rule."""
    return getattr(op, "grad", None) is None and any(
        r.type.element.is_float for r in op.results) and any(
        v.type.element.is_float for v in op.operands)


def _operand_grads(op: Operation, output_grads: list[Value | None]) -> list[Value | None]:
    rule = getattr(op, "grad", None)
    if rule is None:
        if _lacks_rule(op):
            raise GraphBuildError(f"{op.name} has no gradient rule (built at "
                                  f"{op.location.short()})", op.location, op)
        return [None] * len(op.operands)
    with default_location(op.location):
        return rule(output_grads)


class DisconnectedType:
    """The type of ``DisconnectedVariable``: Theano's placeholder for a gradient that does not
    exist (``return_disconnected='Disconnected'``)."""

    def __repr__(self) -> str:
        return "DisconnectedType"

    def __eq__(self, other) -> bool:
        return isinstance(other, DisconnectedType)

    def __hash__(self) -> int:
        return hash(DisconnectedType)

    def __call__(self) -> "DisconnectedVariable":
        return DisconnectedVariable()


class DisconnectedVariable:
    """A placeholder standing for "no gradient": it has a type and no value, and cannot be used
    in a graph.

    >>> DisconnectedVariable().type
    DisconnectedType
    """

    type = DisconnectedType()

    def __repr__(self) -> str:
        return "<DisconnectedType>"


disconnected_type = DisconnectedType()


def _disconnected(w: TensorVariable, policy: str) -> None:
    message = (f"grad: the cost does not depend on {w} (of type {w.type}); pass "
               f"disconnected_inputs='ignore' (or 'warn') to get a zero gradient")
    if policy == "raise":
        raise DisconnectedInputError(message)
    if policy == "warn":
        warnings.warn(message, stacklevel=3)
