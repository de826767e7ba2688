"""From a user's expression graph to a module: the first step of ``function()``.

The front end's graphs are detached tensor-dialect ops whose leaves are block arguments of
detached blocks (input variables and shared variables) and ``tensor.constant`` ops. Building a
function clones the ops that the outputs and update values need into one ``func.func`` of a
``builtin.module``:

- its arguments are the explicit inputs, then the shared variables the graph reads;
- its results are the outputs, then the new values of the updated shared variables;
- ``givens`` replace values while cloning (the user's graph and shared values stay untouched);
- ops keep their locations (the user's lines), and the return op gets the line of the call;
- ``lowering.shared_updates = [[r, a], ...]`` on the func says that result ``r`` is the new value of
  the shared variable read as argument ``a`` (so a pass may write it into that argument's buffer).

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> from lowering.dialects.tensor import ConstantOp
>>> x = Block([TensorType((None,), F64)]).args[0]; x.name_hint = "x"
>>> built = build_module([x], [x, ConstantOp.build(np.float64(2)).result], name="f")
>>> [str(t) for t in built.func.function_type.inputs], len(built.func.function_type.results)
(['tensor<?xf64>'], 2)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.tensor.branch_sinking import sink_into_branches
from lowering.dialects.function_attrs import SHARED_UPDATES
from lowering.ir.attributes import TypeAttr
from lowering.ir.core import Block, OpResult, Operation, Value
from lowering.ir.location import UNKNOWN, caller_location
from lowering.ir.types import FunctionType, TensorType

from .shared_storage import SharedContainer, shared_container


class MissingInputError(ValueError):
    """An output needs an input variable that was neither given to ``function()`` nor replaced
    by ``givens`` (the message names it and the op and line that use it)."""


class UnusedInputError(ValueError):
    """An explicit input that no output or update needs (``on_unused_input='raise'``)."""


@dataclass
class BuiltModule:
    """A module built from a graph, and how its arguments and results map to the user's side.

    ``shared`` are the containers read as the arguments after the explicit inputs;
    ``update_targets`` the containers the results after the outputs are written to.
    """

    module: ModuleOp
    func: FuncOp
    num_inputs: int
    shared: list[SharedContainer] = field(default_factory=list)
    update_targets: list[SharedContainer] = field(default_factory=list)
    num_outputs: int = 0

    def unused_inputs(self) -> list[int]:
        """Positions of explicit inputs that nothing in the function reads."""
        return [i for i, arg in enumerate(self.func.args[:self.num_inputs]) if not arg.uses]


def value_label(v: Value) -> str:
    """How errors name a graph value: ``'x' (tensor<?xf32>)``, or ``an unnamed tensor<?xf32>
    variable``."""
    return f"'{v.name_hint}' ({v.type})" if v.name_hint else f"an unnamed {v.type} variable"


def build_module(inputs: list[Value], outputs: list[Value],
                 updates: list[tuple[SharedContainer, Value]] = (),
                 givens: dict[Value, Value] | None = None, name: str = "function",
                 default_updates: bool = True) -> BuiltModule:
    """Clone what ``outputs`` and the update values need into a new module (see the module doc).

    ``inputs`` may be leaves or intermediate values (the graph is cut there); ``givens`` maps a
    value to its replacement, both in the user's graph. With ``default_updates``, a shared
    variable the function reads that has a ``default_update`` and no update in ``updates`` gets
    its default update.
    """
    func = FuncOp.build(_symbol_name(name), [], [])
    block = func.body.block
    value_map: dict[Value, Value] = {}
    for v in inputs:
        value_map[v] = block.add_arg(v.type, v.name_hint)
    built = BuiltModule(ModuleOp.build([func]), func, len(inputs), num_outputs=len(outputs))
    cloner = _Cloner(block, value_map, givens or {}, built)
    results = [cloner.materialize(v) for v in outputs]
    for container, new_value in updates:
        results.append(cloner.materialize(new_value))
        built.update_targets.append(container)
    if default_updates:
        read = 0
        while read < len(built.shared):  # grows while default updates read more variables
            container = built.shared[read]
            read += 1
            if container.default_update is not None and container not in built.update_targets:
                results.append(cloner.materialize(container.default_update))
                built.update_targets.append(container)
    block.append(ReturnOp.create(results))
    func.attributes["function_type"] = TypeAttr(FunctionType(
        tuple(a.type for a in block.args), tuple(v.type for v in results)))
    pairs = [(len(outputs) + k, cloner.shared_arg_index[id(c)])
             for k, c in enumerate(built.update_targets) if id(c) in cloner.shared_arg_index]
    if pairs:  # lets later passes write an update into its variable's own buffer
        SHARED_UPDATES.set(func, pairs)
    sink_into_branches(func)  # what only one branch of an ifelse needs runs in that branch
    return built


class _Cloner:
    """Clones the graph below a value into ``block`` (iteratively: graphs can be deep)."""

    def __init__(self, block: Block, value_map, givens, built: BuiltModule):
        self.block = block
        self.value_map = value_map
        self.givens = givens
        self.built = built
        self.shared_arg_index: dict[int, int] = {}
        self.replacing: set[Value] = set()  # givens keys whose replacement is being cloned

    def materialize(self, root: Value) -> Value:
        """The value inside the function standing for ``root``."""
        vmap = self.value_map
        stack: list[tuple[Value, bool, Operation | None]] = [(root, False, None)]
        while stack:
            v, expanded, user = stack.pop()
            if v in vmap:
                continue
            if v in self.givens:
                replacement = self.givens[v]
                if expanded:
                    vmap[v] = vmap[replacement]
                    self.replacing.discard(v)
                elif v in self.replacing:
                    raise ValueError(f"givens: the replacement of {value_label(v)} depends on "
                                     f"{value_label(v)} itself")
                else:
                    self.replacing.add(v)
                    stack.append((v, True, user))
                    stack.append((replacement, False, user))
                continue
            if not isinstance(v, OpResult):
                vmap[v] = self._leaf(v, user)
                continue
            op = v.op
            if expanded:
                self.block.append(op.clone(vmap))
                continue
            stack.append((v, True, user))
            for operand in reversed(_needed_values(op)):
                if operand not in vmap:
                    stack.append((operand, False, op))
        return vmap[root]

    def _leaf(self, v: Value, user: Operation | None) -> Value:
        container = shared_container(v)
        if container is None:
            raise MissingInputError(_missing_message(v, user))
        self.shared_arg_index[id(container)] = len(self.block.args)
        self.built.shared.append(container)
        return self.block.add_arg(v.type, v.name_hint or container.name)


def _needed_values(op: Operation) -> list[Value]:
    """The operands of ``op`` and the outside values its regions use, in order."""
    values = list(op.operands)
    if op.regions:
        inner: set[Value] = set()
        for nested in op.walk():
            if nested is not op:
                inner.update(nested.results)
            for reg in nested.regions:
                for blk in reg.blocks:
                    inner.update(blk.args)
        for nested in op.walk():
            if nested is not op:
                values.extend(x for x in nested.operands if x not in inner and x not in values)
    return values


def _missing_message(v: Value, user: Operation | None) -> str:
    where = ""
    if user is not None:
        where = f", needed by {user.name} at {user.location.short()},"
    return (f"input variable {value_label(v)}{where} was not given to function(): list it in "
            f"the inputs, or replace it with givens")


def _symbol_name(name: str) -> str:
    """A symbol name for the func: the function's name made of ``[A-Za-z0-9_.]``."""
    text = re.sub(r"[^A-Za-z0-9_.]", "_", name or "function")
    return text if text and not text[0].isdigit() else "f_" + text


def check_update_type(target: Value, new_value: Value, target_name: str) -> None:
    """An update must keep its shared variable's type: same dtype and rank, and no dimension the
    variable has as static (e.g. broadcastable) that the new value has not.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32, F64, TensorType
    >>> w, g = Block([TensorType((None,), F32), TensorType((None,), F64)]).args
    >>> check_update_type(w, g, "w")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: the update of shared variable 'w' has type tensor<?xf64>, but the variable has type tensor<?xf32>; cast the update expression to float32 (e.g. T.cast(expr, 'float32')) (the update is given at ...)
    """
    want, got = target.type, new_value.type
    if not (isinstance(want, TensorType) and isinstance(got, TensorType)):
        raise TypeError(f"the update of shared variable '{target_name}' must be a tensor"
                        f"{_update_origin(new_value)}")
    prefix = (f"the update of shared variable '{target_name}' has type {got}, but the variable "
              f"has type {want}")
    if want.element != got.element:
        raise TypeError(f"{prefix}; cast the update expression to {want.dtype} "
                        f"(e.g. T.cast(expr, '{want.dtype}')){_update_origin(new_value)}")
    if want.rank != got.rank:
        raise TypeError(f"{prefix}; the ranks differ ({want.rank} and {got.rank})"
                        f"{_update_origin(new_value)}")
    if not all(w is None or w == g for w, g in zip(want.shape, got.shape)):
        raise TypeError(f"{prefix}; the update does not keep the variable's static (broadcastable) "
                        f"dimensions: make its broadcast pattern match, e.g. with "
                        f"T.addbroadcast or T.unbroadcast{_update_origin(new_value)}")


def _update_origin(new_value: Value) -> str:
    """Where the user wrote an update, for errors: the line that built its expression, or (for
    a variable given as it is) the line that passed it to ``function()`` or ``default_update``."""
    if isinstance(new_value, OpResult) and new_value.op.location != UNKNOWN:
        return f" (the update is built at {new_value.op.location.short()})"
    given = caller_location()
    return f" (the update is given at {given.short()})" if given != UNKNOWN else ""
