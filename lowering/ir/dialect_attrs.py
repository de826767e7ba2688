"""Dialect attributes: discardable attributes whose names a dialect defines, typed and verified.

As MLIR's dialect attributes: an attribute named ``dialect.name`` on any op belongs to that
dialect, which declares it with a ``DialectAttr`` (its kind and the rules it obeys on the op that
carries it). The verifier checks every attribute whose prefix is a registered dialect: an
undeclared name, a value of the wrong kind or one the op-level rule refuses is a ``VerifyError``.
Code reads and writes such attributes through their definitions, never by their names:

>>> from lowering.ir.core import Operation
>>> flag = DialectAttr("example", "flag", FLAG, "a flag")
>>> example = AttrDialect("example", [flag])
>>> op = Operation()
>>> flag.set(op, True)
>>> flag.name, flag.get(op), example.problem(op, "example.flag")
('example.flag', True, None)
>>> flag.set(op, False)
>>> flag.present(op), flag.get(op, False)
(False, False)
>>> flag.set(op, True)
>>> op.attributes["example.flag"] = IntAttr(1)
>>> example.problem(op, "example.flag")
'example.flag must be unit, got 1 : i64'
>>> example.problem(op, "example.other")
'example.other is not an attribute of the example dialect (it has example.flag)'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .attributes import ArrayAttr, Attribute, IntAttr, StringAttr, UnitAttr
from .core import Operation, VerifyError
from .types import I1


@dataclass(frozen=True)
class AttrKind:
    """What values an attribute holds: ``describe`` says it in words, ``accepts`` checks an
    Attribute, ``to_python``/``to_attribute`` convert between the Attribute and a Python value."""

    describe: str
    accepts: Callable[[Attribute], bool]
    to_python: Callable[[Attribute], Any]
    to_attribute: Callable[[Any], Attribute]


def _is_int(a: Attribute) -> bool:
    return isinstance(a, IntAttr) and a.type != I1


def _is_int_pair(a: Attribute) -> bool:
    return isinstance(a, ArrayAttr) and len(a) == 2 and all(_is_int(x) for x in a)


def _array_of(accepts: Callable[[Attribute], bool]) -> Callable[[Attribute], bool]:
    return lambda a: isinstance(a, ArrayAttr) and all(accepts(x) for x in a)


FLAG = AttrKind("unit", lambda a: isinstance(a, UnitAttr), lambda a: True,
                lambda flag: UnitAttr())
INT_LIST = AttrKind("an array of integers", _array_of(_is_int),
                    lambda a: [x.data for x in a],
                    lambda values: ArrayAttr(tuple(IntAttr(int(v)) for v in values)))
INT_PAIR_LIST = AttrKind("an array of [integer, integer] pairs", _array_of(_is_int_pair),
                         lambda a: [(p.data[0].data, p.data[1].data) for p in a],
                         lambda pairs: ArrayAttr(tuple(
                             ArrayAttr((IntAttr(int(x)), IntAttr(int(y)))) for x, y in pairs)))
STRING_LIST = AttrKind("an array of strings", _array_of(lambda a: isinstance(a, StringAttr)),
                       lambda a: [x.data for x in a],
                       lambda names: ArrayAttr(tuple(StringAttr(str(n)) for n in names)))


@dataclass(frozen=True)
class DialectAttr:
    """The definition of attribute ``dialect.short``: its ``kind``, what it means (``doc``), and
    ``check(op, value)``, which says what is wrong with the Python ``value`` on ``op`` (or None).
    """

    dialect: str
    short: str
    kind: AttrKind
    doc: str
    check: Callable[[Operation, Any], str | None] = lambda op, value: None

    @property
    def name(self) -> str:
        return f"{self.dialect}.{self.short}"

    def present(self, op: Operation) -> bool:
        return self.name in op.attributes

    def get(self, op: Operation, default: Any = None) -> Any:
        """The Python value of the attribute on ``op`` (``default`` when absent)."""
        attribute = op.attributes.get(self.name)
        return default if attribute is None else self.kind.to_python(attribute)

    def attribute(self, value: Any) -> Attribute:
        """The Attribute holding ``value``."""
        return self.kind.to_attribute(value)

    def set(self, op: Operation, value: Any, rewriter=None) -> None:
        """Put ``value`` on ``op`` (None, or False for a flag, removes it), through ``rewriter``
        when given."""
        absent = value is None or (self.kind is FLAG and not value)
        attribute = None if absent else self.attribute(value)
        if rewriter is not None:
            rewriter.set_attribute(op, self.name, attribute)
        elif attribute is None:
            op.attributes.pop(self.name, None)
        else:
            op.attributes[self.name] = attribute

    def problem(self, op: Operation) -> str | None:
        """What is wrong with the attribute on ``op``, or None."""
        attribute = op.attributes[self.name]
        if not self.kind.accepts(attribute):
            return f"{self.name} must be {self.kind.describe}, got {attribute}"
        wrong = self.check(op, self.kind.to_python(attribute))
        return None if wrong is None else f"{self.name}: {wrong}"


class AttrDialect:
    """A dialect's attribute definitions, registered under its prefix for the verifier."""

    def __init__(self, name: str, attributes: Iterable[DialectAttr]):
        self.name = name
        self.attributes = {a.name: a for a in attributes}
        for a in self.attributes.values():
            if a.dialect != name:
                raise ValueError(f"{a.name} is not an attribute of the {name} dialect")

    def problem(self, op: Operation, name: str) -> str | None:
        """What is wrong with attribute ``name`` (of this dialect) on ``op``, or None."""
        definition = self.attributes.get(name)
        if definition is None:
            known = ", ".join(sorted(self.attributes))
            return f"{name} is not an attribute of the {self.name} dialect (it has {known})"
        return definition.problem(op)


_DIALECTS: dict[str, AttrDialect] = {}


def register_attr_dialect(dialect: AttrDialect) -> AttrDialect:
    """Make the verifier check the attributes named ``dialect.*`` against ``dialect``."""
    _DIALECTS[dialect.name] = dialect
    return dialect


def verify_dialect_attributes(op: Operation) -> None:
    """Raise ``VerifyError`` at the first attribute of ``op`` that a registered dialect owns and
    refuses (the message names the op, the attribute and what is wrong)."""
    for name in list(op.attributes):
        prefix, dot, _ = name.partition(".")
        dialect = _DIALECTS.get(prefix) if dot else None
        wrong = dialect.problem(op, name) if dialect is not None else None
        if wrong is not None:
            raise VerifyError(f"{_describe(op)}: {wrong}", op)


def _describe(op: Operation) -> str:
    symbol = op.attributes.get("sym_name")
    return f"{op.name} @{symbol.data}" if isinstance(symbol, StringAttr) else op.name
