"""``dce``: erase ops that compute values nobody reads.

>>> from lowering.ir.core import Block, Operation, PURE, Region
>>> class Pure(Operation):
...     name = "doc.pure"
...     traits = frozenset({PURE})
>>> from lowering.ir.types import F32
>>> a = Pure(result_types=[F32]); b = Pure(operands=[a.results[0]], result_types=[F32])
>>> holder = Operation(regions=[Region([Block(ops=[a, b])])])
>>> eliminate_dead_code(holder)
2
"""
from __future__ import annotations

from lowering.ir.core import Block, Operation
from lowering.ir.passes import ModulePass, register_pass
from lowering.ir.patterns import is_trivially_dead
from lowering.ir.rewriter import Rewriter


@register_pass
class DeadCodeElimination(ModulePass):
    """Erase PURE ops whose results are never used (and what only they used)."""

    name = "dce"

    def apply(self, module: Operation) -> None:
        eliminate_dead_code(module)


def eliminate_dead_code(root: Operation, rewriter: Rewriter | None = None) -> int:
    """Erase the dead PURE ops nested in ``root``; return how many were erased.

    One sweep suffices: ops are visited in reverse program order, so every user of a value is
    visited (and erased if dead) before the op defining it.
    """
    rewriter = rewriter if rewriter is not None else Rewriter()
    return sum(_sweep(block, rewriter) for reg in root.regions for block in reg.blocks)


def _sweep(block: Block, rewriter: Rewriter) -> int:
    erased = 0
    op = block.last_op
    while op is not None:
        previous = op.prev_op
        erased += sum(_sweep(inner, rewriter) for reg in op.regions for inner in reg.blocks)
        if is_trivially_dead(op):
            rewriter.erase_op(op)
            erased += 1
        op = previous
    return erased
