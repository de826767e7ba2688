"""A builder that inserts new ops at an insertion point.

>>> from lowering.ir.core import Block, Operation
>>> block = Block()
>>> b = Builder.at_end(block)
>>> op = b.insert(Operation())
>>> len(block)
1
"""
from __future__ import annotations

from dataclasses import dataclass

from .core import Block, IRError, Operation


@dataclass
class InsertPoint:
    """Where new ops go: before ``before`` in ``block``, or at the end when ``before`` is None."""

    block: Block
    before: Operation | None = None

    @staticmethod
    def at_end(block: Block) -> "InsertPoint":
        return InsertPoint(block, None)

    @staticmethod
    def at_start(block: Block) -> "InsertPoint":
        return InsertPoint(block, block.first_op)

    @staticmethod
    def before_op(op: Operation) -> "InsertPoint":
        if op.parent is None:
            raise IRError("op is not in a block", op)
        return InsertPoint(op.parent, op)

    @staticmethod
    def after_op(op: Operation) -> "InsertPoint":
        if op.parent is None:
            raise IRError("op is not in a block", op)
        return InsertPoint(op.parent, op.next_op)


class Builder:
    """Inserts ops at an insertion point that moves as ops are added (like MLIR's OpBuilder)."""

    def __init__(self, insertion_point: InsertPoint | None = None):
        self.insertion_point = insertion_point

    @staticmethod
    def at_end(block: Block) -> "Builder":
        return Builder(InsertPoint.at_end(block))

    @staticmethod
    def at_start(block: Block) -> "Builder":
        return Builder(InsertPoint.at_start(block))

    @staticmethod
    def before(op: Operation) -> "Builder":
        return Builder(InsertPoint.before_op(op))

    @staticmethod
    def after(op: Operation) -> "Builder":
        return Builder(InsertPoint.after_op(op))

    def insert(self, op: Operation) -> Operation:
        """Insert ``op`` at the insertion point; later ops go after it."""
        ip = self.insertion_point
        if ip is None:
            return op  # a detached builder: ops stay detached (the front end's graphs)
        if ip.before is None:
            ip.block.append(op)
        else:
            ip.block.insert_before(op, ip.before)
        return op

    def insert_all(self, ops) -> list[Operation]:
        return [self.insert(op) for op in ops]
