"""Moving the ops only one branch of a ``tensor.if`` needs into it (the ``sink-into-branches``
pass, ``lowering.passes.sink_into_branches``, and ``function()`` run it).

The front end builds ``tensor.if`` with branches that yield their inputs: everything either
branch computes is computed before the op, whichever branch is taken. This pass makes a branch
lazy: an op (pure, in the block of the ``tensor.if``) whose results only that op reads, and
only one of its branches uses, moves into that branch; its operands become inputs of the
``tensor.if`` in its place. Repeated until nothing moves, whole subgraphs move, and an op that
something else also reads stays where it is (it runs anyway). Inputs that neither branch uses
are dropped, and an input given twice is given once.

``function()`` runs it on the module it builds (so every mode and stage sees lazy branches; it
lives in the dialect so that a function loaded from the disk cache needs no pass), and
``bufferize`` again before lowering (so IR written by hand is lazy too).

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> m = parse_module('''
... func.func @f(%c: tensor<i1>, %x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
...   %e = tensor.exp %x : tensor<?xf64>
...   %r = tensor.if %c, %e, %y : tensor<i1>, (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
...   ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
...     tensor.yield %a : tensor<?xf64>
...   } else {
...   ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
...     tensor.yield %b : tensor<?xf64>
...   }
...   func.return %r : tensor<?xf64>
... }''')
>>> sink_into_branches(m)
1
>>> print(print_op(m.functions[0].body.block.first_op))
%r = tensor.if %c, %y, %x : tensor<i1>, (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
^bb0(%b: tensor<?xf64>, %x_1: tensor<?xf64>):
  %e = tensor.exp %x_1 : tensor<?xf64>
  tensor.yield %e : tensor<?xf64>
} else {
^bb0(%b_1: tensor<?xf64>, %x_2: tensor<?xf64>):
  tensor.yield %b_1 : tensor<?xf64>
}
"""
from __future__ import annotations

from lowering.ir.core import PURE, Block, Operation, OpResult

from .branches import IfOp


def sink_into_branches(root: Operation) -> int:
    """Move what only one branch needs into it, in every ``tensor.if`` under ``root``; returns
    the number of ops moved."""
    moved = 0
    changed = True
    while changed:
        changed = False
        for op in [o for o in root.walk() if isinstance(o, IfOp)]:
            _tidy_inputs(op)
            while _sink_one(op):
                moved += 1
                changed = True
    return moved


def _branch_using(op: IfOp, positions: list[int]) -> Block | None:
    """The block of the one branch that uses the inputs at ``positions`` (operand numbers),
    or None when both do (or neither)."""
    users = [block for block in (op.then_region.block, op.else_region.block)
             if any(block.args[p - 1].uses for p in positions)]
    return users[0] if len(users) == 1 else None


def _sink_one(op: IfOp) -> bool:
    """Move one op defining an input of ``op`` into the branch that alone uses it."""
    for position in range(len(op.operands) - 1, 0, -1):
        value = op.operands[position]
        if not isinstance(value, OpResult):
            continue
        producer = value.op
        if producer.parent is not op.parent or PURE not in producer.traits \
                or not _self_contained(producer):
            continue
        if any(use.op is not op or use.index == 0 for r in producer.results for use in r.uses):
            continue
        positions = [p for p in range(1, len(op.operands)) if op.operands[p] in producer.results]
        branch = _branch_using(op, positions)
        if branch is None:
            continue
        _move_into(op, producer, branch, positions)
        return True
    return False


def _self_contained(op: Operation) -> bool:
    """Whether the regions of ``op`` use only values defined inside ``op`` (a branch is
    isolated: what moves in can only bring its operands along)."""
    if not op.regions:
        return True
    inside = {v for inner in op.walk() for v in inner.results}
    inside.update(a for inner in op.walk() for r in inner.regions for b in r.blocks
                  for a in b.args)
    return all(v in inside for inner in op.walk() if inner is not op for v in inner.operands)


def _move_into(op: IfOp, producer: Operation, branch: Block, positions: list[int]) -> None:
    blocks = (op.then_region.block, op.else_region.block)
    mapping = {}
    for operand in producer.operands:
        mapping[operand] = branch.args[_input_position(op, operand) - 1]
    clone = producer.clone(mapping)
    if branch.first_op is None:
        branch.append(clone)
    else:
        branch.insert_before(clone, branch.first_op)
    for p in positions:
        result = producer.results[op.operands[p].index]
        branch.args[p - 1].replace_all_uses_with(clone.results[result.index])
    _drop_inputs(op, positions, blocks)
    producer.erase()


def _input_position(op: IfOp, value) -> int:
    """The operand number of ``value`` among ``op``'s inputs, added (with an argument in both
    branches) when it is not one yet."""
    for p in range(1, len(op.operands)):
        if op.operands[p] is value:
            return p
    op.set_operands([*op.operands, value])
    for block in (op.then_region.block, op.else_region.block):
        block.add_arg(value.type, value.name_hint)
    return len(op.operands) - 1


def _drop_inputs(op: IfOp, positions: list[int], blocks) -> None:
    """Remove the inputs at ``positions`` (operand numbers; their arguments are unused)."""
    gone = set(positions)
    for block in blocks:
        for p in sorted(gone, reverse=True):
            block.erase_arg(block.args[p - 1])
    op.set_operands([v for p, v in enumerate(op.operands) if p not in gone])


def _tidy_inputs(op: IfOp) -> None:
    """Drop inputs that neither branch uses; give an input passed twice once."""
    blocks = (op.then_region.block, op.else_region.block)
    first: dict[int, int] = {}
    dropped = []
    for p in range(1, len(op.operands)):
        earlier = first.setdefault(id(op.operands[p]), p)
        if earlier != p:
            for block in blocks:
                block.args[p - 1].replace_all_uses_with(block.args[earlier - 1])
        if not any(block.args[p - 1].uses for block in blocks):
            dropped.append(p)
    if dropped:
        _drop_inputs(op, dropped, blocks)
