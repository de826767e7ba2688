"""Rule tables: what one layer of the compiler does with each op, found from the op's class.

Every layer that handles ops one at a time (the interpreter, bufferization, the CPU lowering, the
GPU kernel lowering, the GPU host program) owns one ``RuleTable``. A rule is registered for an op
class and serves its subclasses too, as ``functools.singledispatch`` does: the rule of the most
derived class in the op's MRO wins, so one rule for ``ElementwiseOp`` covers every elementwise op
and ``ExpOp`` may still have its own. A layer may also declare that it cannot handle an op
(``unsupported``); that declaration is inherited the same way, and a lookup of such an op fails
with the reason instead of a rule. A table may name a ``fallback`` table with the same calling
convention, asked when neither the op's class nor its bases have a rule or a declaration here.

>>> from lowering.ir.core import Operation
>>> class Shape(Operation):
...     name = "doc.shape"
>>> class Circle(Shape):
...     name = "doc.circle"
>>> class Square(Shape):
...     name = "doc.square"
>>> AREA = RuleTable("area")
>>> @AREA.register(Shape)
... def _any_shape(op):
...     return "unknown"
>>> AREA.unsupported(Square, "squares have no area here")
>>> AREA.find(Circle) is _any_shape, AREA.find(Square), AREA.unsupported_reason(Square)
(True, None, 'squares have no area here')
>>> AREA.lookup(Square())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
lowering.ir.rules.RuleError: area: doc.square (at ...) is not supported: squares have no area here
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from .core import IRError


class _Unsupported:
    """The entry of an op class a layer declared it cannot handle."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason


class RuleError(IRError, LookupError):
    """A layer has no rule for an op, or declares it unsupported; the message names both."""


class RuleTable:
    """The rules of one layer (``layer`` names it in errors, with ``hint`` when an op has no
    rule), keyed by op class.

    ``register(*classes)`` is a decorator; ``unsupported(cls, reason)`` declares an op class (and
    its subclasses without an entry of their own) out of this layer's reach; ``find(cls)`` gives
    the rule or None, ``lookup(op)`` the rule or a ``RuleError`` (or the ``error`` class given)
    naming the op, its location and the layer.
    """

    def __init__(self, layer: str, fallback: RuleTable | None = None, hint: str = ""):
        self.layer = layer
        self.fallback = fallback
        self.hint = hint  # what ops this layer handles, said when it has no rule for one
        self._entries: dict[type, Callable | _Unsupported] = {}
        self._resolved: dict[type, Callable | _Unsupported | None] = {}

    def __repr__(self) -> str:
        return f"RuleTable({self.layer!r}, {len(self._entries)} entries)"

    def register(self, *op_classes: type) -> Callable[[Callable], Callable]:
        """Decorator registering ``fn`` as the rule of ``op_classes`` and their subclasses."""
        self._check_classes(op_classes)

        def register(fn: Callable) -> Callable:
            for cls in op_classes:
                self._set(cls, fn)
            return fn
        return register

    def unsupported(self, op_class: type, reason: str) -> None:
        """Declare that this layer cannot handle ``op_class`` (nor its subclasses without an entry
        of their own), and why: a lookup then fails with ``reason``."""
        self._check_classes((op_class,))
        self._set(op_class, _Unsupported(reason))

    @contextmanager
    def registered(self, op_class: type, rule: Callable) -> Iterator[None]:
        """``rule`` serves ``op_class`` inside a ``with`` block; the entry it had comes back after.

        >>> from lowering.ir.core import Operation
        >>> table = RuleTable("demo")
        >>> with table.registered(Operation, len):
        ...     table.find(Operation)
        <built-in function len>
        >>> table.find(Operation) is None
        True
        """
        self._check_classes((op_class,))
        previous = self._entries.get(op_class)
        self._set(op_class, rule)
        try:
            yield
        finally:
            if previous is None:
                del self._entries[op_class]
                self._resolved.clear()
            else:
                self._set(op_class, previous)

    def _check_classes(self, op_classes) -> None:
        for cls in op_classes:
            if not isinstance(cls, type):
                raise TypeError(f"{self.layer} rules are registered for op classes, got {cls!r}")

    def _set(self, cls: type, entry) -> None:
        self._entries[cls] = entry
        self._resolved.clear()

    def _resolve(self, op_class: type):
        """The entry of the most derived class in ``op_class``'s MRO, else the fallback's."""
        try:
            entry = self._resolved[op_class]
        except KeyError:
            entry = next((self._entries[c] for c in op_class.__mro__ if c in self._entries), None)
            self._resolved[op_class] = entry
        if entry is None and self.fallback is not None:
            return self.fallback._resolve(op_class)
        return entry

    def find(self, op_class: type) -> Callable | None:
        """The rule for ops of ``op_class``, or None (no rule, or declared unsupported)."""
        entry = self._resolve(op_class)
        return None if isinstance(entry, _Unsupported) else entry

    def unsupported_reason(self, op_class: type) -> str | None:
        """Why this layer cannot handle ``op_class``, when it declares so; else None."""
        entry = self._resolve(op_class)
        return entry.reason if isinstance(entry, _Unsupported) else None

    def __contains__(self, op_class: type) -> bool:
        return self.find(op_class) is not None

    def classes(self) -> list[type]:
        """The op classes registered here directly (rules and declarations), in order."""
        return list(self._entries)

    def missing_message(self, op) -> str:
        """What ``lookup`` says of ``op`` when this layer has no rule for it."""
        where = f"{op.name} (at {op.location.short()})"
        reason = self.unsupported_reason(type(op))
        if reason is not None:
            return f"{self.layer}: {where} is not supported: {reason}"
        return f"{self.layer}: no rule for {where}" + (f"; {self.hint}" if self.hint else "")

    def lookup(self, op, error: type[Exception] = RuleError) -> Callable:
        """The rule for ``op``; when there is none, raises ``error(message, op)``."""
        rule = self.find(type(op))
        if rule is None:
            raise error(self.missing_message(op), op)
        return rule
