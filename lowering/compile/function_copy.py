"""What ``Function.copy`` builds a copy from (Theano's ``Function.copy``).

A copy is the same function compiled again from its tensor-level module: a new maker and graph,
its own optimized module and executor. Its shared variables are the original's (a call of either
updates them), except those ``swap`` replaces (``{old_shared: new_shared}``, of the same type);
``delete_updates`` leaves every update out. ``share_memory`` (in Theano, whether the two share
the storage of intermediate results) changes nothing here: compiled functions keep no
intermediate results between calls. The copy returns a list of outputs, as Theano 1.0's does.

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x, acc = T.dscalar("x"), theano.shared(0.0, name="acc")
>>> step = theano.function([x], acc, updates={acc: acc + x})
>>> peek = step.copy(delete_updates=True, name="peek")
>>> _ = step(2.0); peek(5.0), float(acc.get_value())
([array(2.)], 2.0)
"""
from __future__ import annotations

from dataclasses import dataclass

from lowering.dialects.function_attrs import SHARED_UPDATES
from lowering.ir.attributes import TypeAttr
from lowering.ir.types import FunctionType

from .graph_to_module import BuiltModule
from .io import In, Out, graph_value
from .shared_storage import SharedContainer, shared_container


@dataclass
class CopyParts:
    """The arguments of the copy's ``Function``: its module and how arguments and results map to
    the user's side."""

    built: BuiltModule
    inputs: list[In]
    outputs: list[Out]
    states: dict[int, SharedContainer]


def copy_parts(tensor_module, maker, shared: list, targets: list, states: list,
               swap=None, delete_updates: bool = False) -> CopyParts:
    """A copy of ``tensor_module`` (a function's module as built) and its inputs and outputs
    (``maker``'s), with ``shared`` (the containers read after the inputs), ``targets`` (those
    the results after the outputs update) and ``states`` (one per ``In`` with an update, in
    input order) swapped and updates deleted as asked."""
    replace = _swap_containers(swap, shared)
    module = tensor_module.clone()
    func = module.regions[0].block.first_op
    block = func.regions[0].block
    num_outputs = len(maker.outputs)
    if delete_updates:
        _drop_updates(func, num_outputs)
        targets = []
    returned = list(block.last_op.operands)
    inputs = [In(block.args[pos], name=spec.name, value=spec.value, mutable=spec.mutable,
                 strict=spec.strict, allow_downcast=spec.allow_downcast)
              for pos, spec in enumerate(maker.inputs)]
    outputs = [Out(v, borrow=spec.borrow) for v, spec in zip(returned, maker.outputs)]
    state_positions = [pos for pos, spec in enumerate(maker.inputs) if spec.update is not None]
    built = BuiltModule(module, func, len(inputs), [replace.get(id(c), c) for c in shared],
                        [replace.get(id(c), c) for c in targets], num_outputs)
    return CopyParts(built, inputs, outputs, dict(zip(state_positions, states)))


def _swap_containers(swap, shared: list) -> dict[int, SharedContainer]:
    """``{id(old container): new container}`` from ``swap``'s shared variables, checked: each key
    is a shared variable the function reads, each value one of the same type."""
    if not swap:
        return {}
    replace = {}
    for old, new in dict(swap).items():
        old_c, new_c = _container(old, "key"), _container(new, "value")
        if not any(old_c is c for c in shared):
            raise ValueError(f"SharedVariable: {getattr(old, 'name', None)} not found")
        if old_c.type != new_c.type:
            raise TypeError(f"swap: the shared variable {getattr(new, 'name', None) or new} has "
                            f"type {new_c.type}, not the type {old_c.type} of "
                            f"{getattr(old, 'name', None) or old} that it replaces")
        replace[id(old_c)] = new_c
    return replace


def _container(variable, role: str) -> SharedContainer:
    container = shared_container(graph_value(variable, f"swap {role}"))
    if container is None:
        raise TypeError(f"swap: each {role} must be a shared variable, got {variable} "
                        f"({type(variable).__name__})")
    return container


def _drop_updates(func, num_outputs: int) -> None:
    """The function returns only its outputs: the update values go (dead code elimination
    removes what computed them), and so does the list of updates."""
    block = func.regions[0].block
    ret = block.last_op
    kept = list(ret.operands)[:num_outputs]
    ret.set_operands(kept)
    func.attributes["function_type"] = TypeAttr(FunctionType(
        tuple(a.type for a in block.args), tuple(v.type for v in kept)))
    SHARED_UPDATES.set(func, None)
