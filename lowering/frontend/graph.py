"""Walking a detached expression graph: its ops in dependency order and its inputs.

A user's graph is detached tensor-dialect IR: each op's operands are the results of other detached
ops or block arguments of detached blocks (the inputs). These walks follow operands only, so they
never visit ops that merely *use* a value.

>>> from lowering.frontend.constructors import vector
>>> x = vector("x")
>>> y = (x * 2).sum()
>>> [op.name for op in toposort([y.value])]
['tensor.constant', 'tensor.mul', 'tensor.sum']
>>> graph_inputs([y.value]) == [x.value]
True
"""
from __future__ import annotations

from typing import Iterable

from lowering.ir.core import BlockArgument, Operation, OpResult, Value


def toposort(outputs: Iterable[Value], stop: Iterable[Value] = ()) -> list[Operation]:
    """The ops computing ``outputs``, each after the ops computing its operands.

    Values in ``stop`` (a collection, or any object answering ``in``) are treated as inputs: the
    ops computing them are not visited.
    """
    stop = _container(stop)
    order: list[Operation] = []
    seen: set[int] = set()
    for out in outputs:
        if not isinstance(out, OpResult) or out in stop or id(out.op) in seen:
            continue
        # Iterative post-order DFS: deep graphs (long training loops unrolled) must not hit
        # Python's recursion limit.
        stack: list[tuple[Operation, int]] = [(out.op, 0)]
        seen.add(id(out.op))
        while stack:
            op, index = stack.pop()
            if index < len(op.operands):
                stack.append((op, index + 1))
                operand = op.operands[index]
                if isinstance(operand, OpResult) and operand not in stop and id(operand.op) not in seen:
                    seen.add(id(operand.op))
                    stack.append((operand.op, 0))
            else:
                order.append(op)
    return order


def _container(stop):
    return set(stop) if isinstance(stop, (list, tuple)) or not hasattr(stop, "__contains__") else stop


def graph_inputs(outputs: Iterable[Value], stop: Iterable[Value] = ()) -> list[Value]:
    """The block arguments (and ``stop`` values) the outputs depend on, in first-use order."""
    outputs = list(outputs)
    stop = _container(stop)
    found: list[Value] = []
    seen: set[Value] = set()

    def note(v: Value) -> None:
        if (isinstance(v, BlockArgument) or v in stop) and v not in seen:
            seen.add(v)
            found.append(v)

    for op in toposort(outputs, stop):
        for v in op.operands:
            note(v)
    for v in outputs:
        note(v)
    return found


def depends_on(outputs: Iterable[Value], sources: Iterable[Value],
               stop: Iterable[Value] = ()) -> set[Value]:
    """Every value on a path from one of ``sources`` to the outputs (sources included when they
    reach an output), not going through ``stop`` values."""
    outputs = list(outputs)
    stop = _container(stop)
    reached = {s for s in sources if s not in stop}
    for op in toposort(outputs, stop):
        if any(v in reached and v not in stop for v in op.operands):
            reached.update(op.results)
    # Keep only values from which an output can be reached.
    useful = {v for v in outputs if v in reached}
    for op in reversed(toposort(outputs, stop)):
        if any(r in useful for r in op.results):
            useful.update(v for v in op.operands if v in reached and v not in stop)
    return useful
