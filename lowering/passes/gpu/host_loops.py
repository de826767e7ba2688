"""Which loops of a host function stay on the host when it runs on a GPU: those that only
decide whether, or how often, whole constructs run (fills, copies, calls, parallel loop nests,
allocations, checks), each construct becoming kernels launched from the host's loop.

- a **branch**: a ``loops.for`` of 0 or 1 iterations, no carried values (how bufferize writes
  "if");
- a **host loop**: a branch, or a ``loops.for``/``loops.while`` carrying only scalars (a scan's
  step counter, a ``while`` loop's condition) around whole constructs: a scan's steps.

A loop whose body reads or writes device elements itself, or that carries a value computed
there, is not one of these: it runs inside a kernel.

>>> from lowering.ir.parser import parse_module
>>> m = parse_module('''
... func.func @f(%b: !loops.buffer<4xf32, space="device">, %n: index) {
...   %c0 = scalar.constant 0 : index
...   %c1 = scalar.constant 1 : index
...   %x = scalar.constant 1.0 : f32
...   loops.for %t = %c0 to %n step %c1 {
...     loops.fill %x, %b : !loops.buffer<4xf32, space="device">
...     loops.yield
...   }
...   func.return
... }''')
>>> loop = [op for op in m.functions[0].body.block.ops if op.name == "loops.for"][0]
>>> is_host_loop(loop)
True
"""
from __future__ import annotations

from lowering.dialects.loops import (AllocOp, AssertOp, CallOp, CopyOp, DeallocOp, FillOp, ForOp,
                                     ParallelOp)
from lowering.dialects.loops.control import WhileOp
from lowering.ir.core import Block, Operation
from lowering.ir.types import ScalarType

_CONSTRUCTS = (FillOp, CopyOp, CallOp, ParallelOp, AllocOp, DeallocOp, AssertOp)


def is_branch(op: ForOp) -> bool:
    """Whether a ``loops.for`` only decides whether (or how often) host-level work runs: no
    carried values, and its body holds whole constructs rather than element accesses of its
    own."""
    return not op.inits and holds_constructs(op.body.block)


def is_host_loop(op: Operation) -> bool:
    """Whether a ``loops.for`` or ``loops.while`` runs on the host, launching the constructs in
    its body: a branch, or a loop carrying only scalars around whole constructs."""
    if not isinstance(op, (ForOp, WhileOp)):
        return False
    if isinstance(op, ForOp) and is_branch(op):
        return True
    return all(isinstance(v.type, ScalarType) for v in op.inits) \
        and holds_constructs(op.body.block)


def holds_constructs(block: Block) -> bool:
    """Whether ``block`` holds a whole construct, or a host loop, at its top level."""
    return any(isinstance(inner, _CONSTRUCTS) or is_host_loop(inner) for inner in block.ops)
