"""Copies of expression graphs: Theano's ``theano.clone`` and ``gof.graph.clone``.

A copy clones every IR op between the outputs and the leaves (inputs, shared variables), with
some values replaced by others (``replace``). The leaves are kept (``share_inputs=True``) or
copied too: a copied input is a new input of the same type and name; a copied shared variable
is a new ``SharedVariable`` on the same storage, as Theano's copies are.

>>> import lowering.tensor as T
>>> x, y = T.dscalar("x"), T.dscalar("y")
>>> z = clone_replace(x * 2 + 1, {x: y})
>>> z.eval({y: 3.0})
array(7.)
"""
from __future__ import annotations

from lowering.ir.core import BlockArgument, Value

from .constructors import as_tensor_variable
from .graph import toposort
from .shared import SharedVariable
from .variable import TensorVariable, new_input, wrap


def clone_replace(outputs, replace=None, strict: bool = True, share_inputs: bool = True):
    """``outputs`` (a variable or a list of them) computed again with each key of ``replace``
    (a dict or a list of pairs) standing for its value.

    A replacement needs the dtype and rank of what it replaces, and static sizes that agree
    with it (``strict`` is accepted for Theano's signature; no conversion is done either way).
    """
    single = not isinstance(outputs, (list, tuple))
    outs = [as_tensor_variable(o) for o in ([outputs] if single else outputs)]
    value_map = _replacements(replace)
    new = copy_graph([o.value for o in outs], value_map, share_inputs)
    result = [wrap(v) for v in new]
    return result[0] if single else result


def clone_with_inputs(inputs, outputs, copy_inputs: bool = True):
    """Theano's ``gof.graph.clone(i, o, copy_inputs)``: copies of ``inputs`` and of
    ``outputs`` computed from them; the inputs are kept when ``copy_inputs`` is False."""
    ins = [as_tensor_variable(v) for v in inputs]
    value_map: dict[Value, Value] = {}
    if copy_inputs:
        for v in ins:
            value_map[v.value] = _copy_leaf(v.value)
    new = copy_graph([as_tensor_variable(o).value for o in outputs], value_map, True,
                     stop={v.value for v in ins})
    return [wrap(value_map.get(v.value, v.value)) for v in ins], [wrap(v) for v in new]


def copy_graph(outputs: list[Value], value_map: dict[Value, Value], share_inputs: bool,
               stop=()) -> list[Value]:
    """The values standing for ``outputs`` once the ops computing them are cloned, with
    ``value_map`` (old value -> new value) extended by each clone. Leaves not in the map are
    kept, or copied when ``share_inputs`` is False."""
    stop = set(stop) | set(value_map)
    for op in toposort(outputs, stop):
        for operand in op.operands:
            if operand not in value_map and isinstance(operand, BlockArgument):
                value_map[operand] = operand if share_inputs else _copy_leaf(operand)
        op.clone(value_map)
    for v in outputs:
        if v not in value_map and isinstance(v, BlockArgument) and not share_inputs:
            value_map[v] = _copy_leaf(v)
    return [value_map.get(v, v) for v in outputs]


def _copy_leaf(value: Value) -> Value:
    """A new leaf like ``value``: a shared variable on the same storage, or a new input."""
    old = wrap(value)
    if isinstance(old, SharedVariable):
        return SharedVariable(old.container, old.name).value
    return new_input(old.type, old.name).value


def _replacements(replace) -> dict[Value, Value]:
    pairs = list(replace.items() if isinstance(replace, dict) else (replace or ()))
    out: dict[Value, Value] = {}
    for old, new in pairs:
        if not isinstance(old, TensorVariable):
            raise TypeError(f"clone: the keys of replace must be symbolic variables, got "
                            f"{type(old).__name__}")
        new = as_tensor_variable(new)
        want, got = old.value.type, new.value.type
        if want.element != got.element or len(want.shape) != len(got.shape) or not all(
                w is None or w == g for w, g in zip(want.shape, got.shape)):
            raise TypeError(f"clone: {old} (type {old.type}) cannot be replaced by {new} "
                            f"(type {new.type}): the replacement needs the same dtype and rank, "
                            f"and sizes that agree")
        out[old.value] = new.value
    return out
