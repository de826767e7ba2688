"""The verifier: structure, each op's own rules, dialect attributes, and SSA dominance.

``verify(module)`` raises ``VerifyError`` whose ``op`` is the first failing op; its diagnostic
(``diagnostics.render_op_error``) prints the enclosing function with the message under that op.
"""
from __future__ import annotations

from .core import ISOLATED, Block, Operation, Value, VerifyError
from .dialect_attrs import verify_dialect_attributes


def verify(op: Operation) -> None:
    """Check ``op`` and everything nested in it; raise VerifyError at the first problem.

    >>> from lowering.ir.core import Operation
    >>> verify(Operation())
    """
    _verify_op(op, set())


def _verify_op(op: Operation, visible: set[Value]) -> None:
    op.verify_structure()
    for index, value in enumerate(op.operands):
        if value not in visible and _in_graph(op):
            raise VerifyError(f"operand #{index} does not dominate this use "
                              f"(it is defined later, in another function, or not at all)", op)
    for reg in op.regions:
        inner = set() if ISOLATED in op.traits else visible
        for block in reg.blocks:
            _verify_block(block, inner)
    op.verify_()
    verify_dialect_attributes(op)


def _in_graph(op: Operation) -> bool:
    # A detached op (a front-end graph node) has no block to dominate in.
    return op.parent is not None


def _verify_block(block: Block, visible: set[Value]) -> None:
    added: list[Value] = []
    for arg in block.args:
        if arg not in visible:
            visible.add(arg)
            added.append(arg)
    try:
        for op in block.ops:
            _verify_op(op, visible)
            for res in op.results:
                visible.add(res)
                added.append(res)
    finally:
        for v in added:
            visible.discard(v)
