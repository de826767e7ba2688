"""The rewriter: the one way patterns and passes change IR, so that drivers see every change.

Like MLIR's ``PatternRewriter``: every insertion, replacement, erasure, in-place change and change
of a value's type goes through a ``Rewriter``, which records that something changed and tells its ``RewriteListener``
(the greedy driver keeps its worklist right that way). The rewriter knows no dialect.

Locations: an op created while a rewrite of ``op`` runs (inside ``rewriter.location(...)``, which
the greedy driver opens around every pattern) gets ``op``'s location unless it is given one. A
rewrite that merges several ops gives the new ops ``rewriter.fused_location(a, b, ...)``.

>>> from lowering.ir.core import Block, Operation
>>> from lowering.ir.types import F32
>>> a = Operation(result_types=[F32]); b = Operation(operands=[a.results[0]])
>>> block = Block(ops=[a, b])
>>> rw = Rewriter()
>>> c = rw.insert_op_before(Operation(result_types=[F32]), a)
>>> rw.replace_op(a, c)
>>> [op is c for op in block.ops], b.operands[0] is c.results[0], rw.changed
([True, False], True, True)
"""
from __future__ import annotations

import contextlib
from typing import Iterable, Iterator, Sequence

from .attributes import to_attribute
from .core import Block, IRError, Operation, Value
from .location import FusedLoc, Location, default_location, fuse_locations


class RewriteListener:
    """Told about every change a ``Rewriter`` makes. Override the methods you need."""

    def op_inserted(self, op: Operation) -> None:
        """``op`` was put into a block (a new op, or one moved)."""

    def op_modified(self, op: Operation) -> None:
        """``op``'s operands or attributes changed in place."""

    def op_replaced(self, op: Operation, new_values: Sequence[Value]) -> None:
        """Every use of ``op``'s results is about to read ``new_values`` instead."""

    def op_erased(self, op: Operation) -> None:
        """``op`` is about to be erased (called for nested ops first; operands still readable)."""

    def value_retyped(self, value: Value, old_type) -> None:
        """``value`` (a result or block argument) now has another type than ``old_type``; each
        op reading it is then reported modified."""


class Rewriter:
    """Changes IR and reports each change to a listener; ``changed`` says whether anything did.

    Ops passed to ``insert_op_*`` may be detached new ops or ops already in a block (they move).
    """

    def __init__(self, listener: RewriteListener | None = None):
        self.listener = listener if listener is not None else RewriteListener()
        self.changes = 0  # a counter, so drivers can tell whether one pattern changed anything

    @property
    def changed(self) -> bool:
        return self.changes > 0

    # -- locations ----------------------------------------------------------------------------

    @staticmethod
    def location(loc: Location | FusedLoc):
        """Context manager: ops created inside without a location get ``loc``."""
        return default_location(loc)

    @staticmethod
    def fused_location(*ops: Operation) -> Location | FusedLoc:
        """The location of a rewrite that merges ``ops``: all of theirs, in order, deduplicated.

        >>> from lowering.ir.core import Operation
        >>> a = Operation(location=Location("f.py", 1, 1))
        >>> b = Operation(location=Location("f.py", 2, 1))
        >>> str(Rewriter.fused_location(a, b))
        'loc(fused["f.py":1:1, "f.py":2:1])'
        """
        return fuse_locations(op.location for op in ops)

    # -- insertion ----------------------------------------------------------------------------

    def insert_op_before(self, new: Operation | Iterable[Operation], anchor: Operation):
        """Insert ``new`` (an op or a list of ops, kept in order) right before ``anchor``."""
        block = _block_of(anchor)
        for op in _as_list(new):
            self._place(op, lambda o: block.insert_before(o, anchor))
        return new

    def insert_op_after(self, new: Operation | Iterable[Operation], anchor: Operation):
        """Insert ``new`` (an op or a list of ops, kept in order) right after ``anchor``."""
        block = _block_of(anchor)
        last = anchor
        for op in _as_list(new):
            self._place(op, lambda o, after=last: block.insert_after(o, after))
            last = op
        return new

    def insert_op_at_end(self, new: Operation | Iterable[Operation], block: Block):
        """Append ``new`` (an op or a list of ops) to ``block``."""
        for op in _as_list(new):
            self._place(op, block.append)
        return new

    def insert_op_at_start(self, new: Operation | Iterable[Operation], block: Block):
        """Put ``new`` (an op or a list of ops, kept in order) at the start of ``block``."""
        if block.first_op is None:
            return self.insert_op_at_end(new, block)
        return self.insert_op_before(new, block.first_op)

    def _place(self, op: Operation, put) -> None:
        if op.parent is not None:
            op.detach()
        put(op)
        self.changes += 1
        self.listener.op_inserted(op)

    # -- replacement --------------------------------------------------------------------------

    def replace_op(self, op: Operation, new: Operation | Sequence[Value | None]) -> None:
        """Replace ``op`` by ``new`` and erase it.

        ``new`` is an op (a detached one is inserted before ``op``; its results replace ``op``'s)
        or one value per result of ``op``. ``None`` stands for a result that has no uses.
        """
        if isinstance(new, Operation):
            if new.parent is None:
                self.insert_op_before(new, op)
            values: list = list(new.results)
        else:
            values = list(new)
        if len(values) != len(op.results):
            raise IRError(f"cannot replace {op.name} ({len(op.results)} results) "
                          f"by {len(values)} values", op)
        for res, value in zip(op.results, values):
            if value is None and res.uses:
                raise IRError(f"cannot replace result #{res.index} of {op.name} by nothing: "
                              f"it still has uses", op)
        self.listener.op_replaced(op, values)
        for res, value in zip(op.results, values):
            if value is not None:
                if value.name_hint is None:  # a new value keeps the name the IR text gave
                    value.name_hint = res.name_hint
                self.replace_all_uses_with(res, value)
        self.erase_op(op)

    def replace_all_uses_with(self, old: Value, new: Value) -> None:
        """Make every user of ``old`` read ``new``."""
        self.replace_uses_where(old, new, lambda _op: True)

    def replace_uses_where(self, old: Value, new: Value, predicate) -> None:
        """Make the users of ``old`` for which ``predicate(user_op)`` holds read ``new``."""
        if new is old:
            return
        for use in list(old.uses):
            user = use.op
            if predicate(user):
                user._set_operand(use.index, new)
                self.changes += 1
                self.listener.op_modified(user)

    # -- erasure ------------------------------------------------------------------------------

    def erase_op(self, op: Operation) -> None:
        """Erase ``op`` and everything nested in it; its results must have no uses left."""
        for res in op.results:
            if res.uses:
                users = ", ".join(u.op.name for u in res.uses)
                raise IRError(f"cannot erase {op.name}: result #{res.index} is still used by "
                              f"{users}", op)
        for nested in op.walk(post_order=True):
            self.listener.op_erased(nested)
        op.erase(check_uses=False)
        self.changes += 1

    # -- in-place changes ---------------------------------------------------------------------

    @contextlib.contextmanager
    def modify_op_in_place(self, op: Operation) -> Iterator[Operation]:
        """Change ``op``'s operands or attributes inside the ``with`` block; the driver is told."""
        yield op
        self.changes += 1
        self.listener.op_modified(op)

    def set_operand(self, op: Operation, index: int, value: Value) -> None:
        """Make operand ``index`` of ``op`` read ``value``."""
        with self.modify_op_in_place(op):
            op.set_operand(index, value)

    def set_type(self, value: Value, new_type) -> None:
        """Give ``value`` the type ``new_type`` (an argument made contiguous, a view re-inferred
        from it); the listener hears of the value and of every op that reads it.

        >>> from lowering.ir.core import Block, Operation
        >>> from lowering.ir.types import F32, F64
        >>> block = Block([F32]); user = block.append(Operation(operands=[block.args[0]]))
        >>> class Seen(RewriteListener):
        ...     def value_retyped(self, value, old_type): print("retyped", old_type, value.type)
        ...     def op_modified(self, op): print("modified", op is user)
        >>> Rewriter(Seen()).set_type(block.args[0], F64)
        retyped f32 f64
        modified True
        """
        old = value.type
        if new_type == old:
            return
        value.type = new_type
        self.changes += 1
        self.listener.value_retyped(value, old)
        for user in value.users():
            self.listener.op_modified(user)

    def set_attribute(self, op: Operation, name: str, value) -> None:
        """Set (or, with ``None``, remove) attribute ``name`` of ``op``."""
        with self.modify_op_in_place(op):
            if value is None:
                op.attributes.pop(name, None)
            else:
                op.attributes[name] = to_attribute(value)


def _as_list(new) -> list[Operation]:
    return [new] if isinstance(new, Operation) else list(new)


def _block_of(anchor: Operation) -> Block:
    if anchor.parent is None:
        raise IRError(f"cannot insert next to {anchor.name}: it is not in a block", anchor)
    return anchor.parent
