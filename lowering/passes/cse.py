"""``cse``: common subexpression elimination.

A PURE op equal to one that dominates it (same name, operands, attributes, result types and
structurally equal regions) is replaced by that one, which then carries both locations. Ops are
looked up in scopes: an op sees the earlier ops of its block and of the blocks enclosing it, but
nothing across an ISOLATED op (a function) nor from a sibling block of a multi-block region.
COMMUTATIVE ops match with their operands in any order.

>>> from lowering.ir.core import Block, Operation, PURE, Region
>>> from lowering.ir.types import F32
>>> class Two(Operation):
...     name = "doc.two"
...     traits = frozenset({PURE})
>>> a, b = Two(result_types=[F32]), Two(result_types=[F32])
>>> user = Operation(operands=[a.results[0], b.results[0]])
>>> holder = Operation(regions=[Region([Block(ops=[a, b, user])])])
>>> eliminate_common_subexpressions(holder), user.operands[1] is a.results[0]
(1, True)
"""
from __future__ import annotations

from lowering.ir.core import COMMUTATIVE, ISOLATED, PURE, Block, Operation, Region, Value
from lowering.ir.passes import ModulePass, register_pass
from lowering.ir.rewriter import Rewriter


@register_pass
class CommonSubexpressionElimination(ModulePass):
    """Replace each PURE op by an equal op that dominates it."""

    name = "cse"

    def apply(self, module: Operation) -> None:
        eliminate_common_subexpressions(module)


def eliminate_common_subexpressions(root: Operation, rewriter: Rewriter | None = None) -> int:
    """Eliminate the common subexpressions nested in ``root``; return how many ops were erased."""
    driver = _CSE(rewriter if rewriter is not None else Rewriter())
    driver.simplify_regions(root)
    return driver.erased


class _CSE:
    def __init__(self, rewriter: Rewriter):
        self.rewriter = rewriter
        self.known: dict[tuple, list[Operation]] = {}  # key -> candidates, innermost scope last
        self.erased = 0

    def simplify_regions(self, op: Operation) -> None:
        if ISOLATED in op.traits:  # nothing outside may be used inside
            outer, self.known = self.known, {}
            try:
                self._simplify_each_region(op)
            finally:
                self.known = outer
        else:
            self._simplify_each_region(op)

    def _simplify_each_region(self, op: Operation) -> None:
        for reg in op.regions:
            for block in reg.blocks:
                self._simplify_block(block)

    def _simplify_block(self, block: Block) -> None:
        added: list[tuple] = []
        for op in list(block.ops):
            if op.regions:
                self.simplify_regions(op)
            if PURE not in op.traits or not op.results:
                continue
            key = _key(op)
            existing = next((c for c in reversed(self.known.get(key, ()))
                             if _same_regions(c, op)), None)
            if existing is None:
                self.known.setdefault(key, []).append(op)
                added.append(key)
                continue
            existing.location = self.rewriter.fused_location(existing, op)
            self.rewriter.replace_op(op, existing)
            self.erased += 1
        for key in reversed(added):  # leave the scope of this block
            candidates = self.known[key]
            candidates.pop()
            if not candidates:
                del self.known[key]


def _key(op: Operation) -> tuple:
    operands = (tuple(sorted(op.operands, key=id)) if COMMUTATIVE in op.traits
                else tuple(op.operands))
    return (op.name, operands, tuple(sorted(op.attributes.items())),
            tuple(r.type for r in op.results), len(op.regions))


def _same_regions(a: Operation, b: Operation) -> bool:
    mapping: dict[Value, Value] = {}
    return all(_equivalent_regions(ra, rb, mapping) for ra, rb in zip(a.regions, b.regions))


def _equivalent_regions(ra: Region, rb: Region, mapping: dict[Value, Value]) -> bool:
    """Whether two regions do the same: equal ops in the same order, operands corresponding."""
    if len(ra.blocks) != len(rb.blocks):
        return False
    for ba, bb in zip(ra.blocks, rb.blocks):
        if len(ba) != len(bb) or [x.type for x in ba.args] != [x.type for x in bb.args]:
            return False
        mapping.update(zip(bb.args, ba.args))
        for oa, ob in zip(ba.ops, bb.ops):
            if not _equivalent_ops(oa, ob, mapping):
                return False
            mapping.update(zip(ob.results, oa.results))
    return True


def _equivalent_ops(oa: Operation, ob: Operation, mapping: dict[Value, Value]) -> bool:
    return (oa.name == ob.name and oa.attributes == ob.attributes
            and [r.type for r in oa.results] == [r.type for r in ob.results]
            and len(oa.operands) == len(ob.operands)
            and all(mapping.get(vb, vb) is va for va, vb in zip(oa.operands, ob.operands))
            and len(oa.regions) == len(ob.regions)
            and all(_equivalent_regions(ra, rb, mapping) for ra, rb in zip(oa.regions, ob.regions)))
