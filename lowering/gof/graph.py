"""``theano.gof.graph``: walking, comparing and copying expression graphs by Theano's names.

A variable's ``owner`` is its node (``Apply``: ``op``, ``inputs``, ``outputs``), None for inputs,
shared variables and constants; these functions follow ``owner.inputs`` as Theano's do, in
Theano's order, over the IR ops underneath (see docs/compatibility.md, "The object model").

>>> import lowering as theano
>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> w = theano.shared(1.5, name="w")
>>> y = (x * w).sum()
>>> [v.name for v in inputs([y]) if v.owner is None and not isinstance(v, Constant)]
['x', 'w']
>>> [str(node.op) for node in io_toposort([x], [y])]
['InplaceDimShuffle{x}', 'Elemwise{mul,no_inplace}', 'Sum{acc_dtype=float64}']
>>> is_same_graph(y, (x * w).sum())
True
"""
from __future__ import annotations

from collections import deque

import numpy as np

from lowering.dialects.tensor import ConstantOp
from lowering.frontend.clone import clone_with_inputs
from lowering.frontend.constructors import as_tensor_variable
from lowering.frontend.graph import toposort
from lowering.frontend.theano_ops import Apply
from lowering.frontend.variable import Constant, Variable, wrap
from lowering.ir.core import OpResult
from lowering.unsupported import mirror_getattr

__all__ = ["Apply", "Constant", "Variable", "ancestors", "clone", "equal_computations",
           "inputs", "io_toposort", "is_same_graph", "ops", "stack_search", "variables"]


def stack_search(start: deque, expand, mode: str = "bfs") -> list:
    """The items reachable from ``start`` through ``expand`` (an item -> its neighbours, or
    None), each once, in breadth-first (``'bfs'``) or depth-first (``'dfs'``) order."""
    if mode not in ("bfs", "dfs"):
        raise ValueError(f"stack_search: mode must be 'bfs' or 'dfs', got {mode!r}")
    pop = start.popleft if mode == "bfs" else start.pop
    seen: set[int] = set()
    found = []
    while start:
        item = pop()
        if id(item) not in seen:
            seen.add(id(item))
            found.append(item)
            more = expand(item)
            if more:
                start.extend(more)
    return found


def _as_list(variables) -> list:
    if isinstance(variables, Variable):
        return [variables]
    return [as_tensor_variable(v) for v in variables]


def ancestors(variable_list, blockers=None) -> list:
    """Every variable the variables depend on (themselves included), depth first; the walk
    stops at ``blockers``."""
    blocked = set(_as_list(blockers or ()))

    def expand(v):
        owner = v.owner
        if owner is not None and v not in blocked:
            return reversed(owner.inputs)
        return None

    return stack_search(deque(_as_list(variable_list)), expand, "dfs")


def inputs(variable_list, blockers=None) -> list:
    """The variables without an owner (inputs, shared variables, constants) the variables
    depend on, in Theano's order; the walk does not go past ``blockers``."""
    return [v for v in ancestors(variable_list, blockers) if v.owner is None]


def io_toposort(inputs, outputs, orderings=None, clients=None) -> list:
    """The nodes computing ``outputs`` from ``inputs``, each after the nodes it reads."""
    stop = {v.value for v in _as_list(inputs)}
    nodes = []
    for op in toposort([v.value for v in _as_list(outputs)], stop):
        if op.results and not isinstance(op, ConstantOp):
            nodes.append(wrap(op.results[0]).owner)
    return nodes


def variables(i, o) -> list:
    """The variables on the paths from inputs ``i`` to outputs ``o``: the inputs, then each
    node's outputs in order."""
    found = list(_as_list(i))
    seen = set(found)
    for node in io_toposort(i, o):
        for v in (*node.inputs, *node.outputs):
            if v not in seen:
                seen.add(v)
                found.append(v)
    for v in _as_list(o):
        if v not in seen:
            seen.add(v)
            found.append(v)
    return found


def ops(i, o) -> list:
    """The nodes between inputs ``i`` and outputs ``o`` (as ``io_toposort``)."""
    return io_toposort(i, o)


def clone(i, o, copy_inputs: bool = True):
    """Copies ``(inputs, outputs)`` of the graph from ``i`` to ``o``; with ``copy_inputs``
    False the copy reads the same inputs."""
    return clone_with_inputs(_as_list(i), _as_list(o), copy_inputs)


def equal_computations(xs, ys, in_xs=None, in_ys=None) -> bool:
    """Whether each ``xs[k]`` computes what ``ys[k]`` computes: the same ops with the same
    attributes on equal operands, equal constants, the same inputs (or ``in_xs[k]`` standing
    for ``in_ys[k]``)."""
    xs, ys = _as_list(xs), _as_list(ys)
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations: {len(xs)} outputs against {len(ys)}")
    given = {a.value: b.value for a, b in zip(_as_list(in_xs or ()), _as_list(in_ys or ()))}
    given_back = set(given.values())
    memo: dict = {}
    return all(_same(x.value, y.value, given, given_back, memo) for x, y in zip(xs, ys))


def is_same_graph(var1, var2, givens=None, debug: bool = False) -> bool:
    """Whether ``var1`` and ``var2`` compute the same thing, the keys of ``givens`` (a dict)
    standing for their values in ``var1``'s graph."""
    pairs = list((givens or {}).items())
    return equal_computations([var1], [var2], [a for a, _ in pairs], [b for _, b in pairs])


def _same(x, y, given: dict, given_back: set, memo: dict) -> bool:
    """Iterative: graphs can be deeper than Python's recursion limit."""
    stack = [(x, y)]
    while stack:
        a, b = stack[-1]
        if (a, b) in memo:
            stack.pop()
            continue
        shallow = _shallow(a, b, given, given_back)
        if shallow is not None:
            memo[(a, b)] = shallow
            stack.pop()
            continue
        pairs = list(zip(a.op.operands, b.op.operands))
        pending = [p for p in pairs if p not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[(a, b)] = all(memo[p] for p in pairs)
        stack.pop()
    return memo[(x, y)]


def _shallow(a, b, given: dict, given_back: set):
    """True or False when the pair is decided without their operands; None when it depends
    on them."""
    if a in given or b in given_back:
        return given.get(a) is b
    if a is b:
        return True
    if a.type != b.type or not (isinstance(a, OpResult) and isinstance(b, OpResult)):
        return False
    op_a, op_b = a.op, b.op
    if isinstance(op_a, ConstantOp) or isinstance(op_b, ConstantOp):
        return (isinstance(op_a, ConstantOp) and isinstance(op_b, ConstantOp)
                and np.array_equal(wrap(a).data, wrap(b).data))
    if (a.index != b.index or op_a.name != op_b.name or op_a.regions or op_b.regions
            or len(op_a.operands) != len(op_b.operands)
            or dict(op_a.attributes) != dict(op_b.attributes)
            or [r.type for r in op_a.results] != [r.type for r in op_b.results]):
        return False
    return None


__getattr__ = mirror_getattr(__name__)
