"""Op traits: properties an op class declares in ``traits = frozenset({...})``, as objects.

A trait is a small frozen value. Passes ask for one with ``PURE in op.traits`` (or, for a trait
with parameters, ``get_trait(op, MemoryEffects)``); a trait may also verify the ops that carry it:
``verify(op)`` returns what is wrong (the verifier raises it as a ``VerifyError`` at ``op``) or
``None``. Dialects define their own traits the same way (the gpu dialect's placement traits).

>>> str(PURE), PURE == Pure(), sorted([TERMINATOR, PURE])
('pure', True, [Pure(), Terminator()])
>>> str(HasParent(Pure)), str(MemoryEffects(reads=("buffer",)))
('has_parent(pure)', 'memory_effects(reads=buffer)')
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .types import TensorType


@dataclass(frozen=True, eq=False)
class Trait:
    """Base of op traits; ``str`` is the name the op reference lists."""

    name = "trait"

    def __post_init__(self):
        # Traits are looked up in every op's trait set: the hash is computed once, and differs
        # between trait classes.
        object.__setattr__(self, "_hash", hash((type(self), self._key())))

    def _key(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self))

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return self._hash

    def verify(self, op) -> str | None:
        """What is wrong with ``op`` by this trait's rule, or None."""
        return None

    def check_op_class(self, op_class: type) -> None:
        """Raise TypeError if ``op_class`` cannot carry this trait (when the class is defined)."""

    def __str__(self) -> str:
        return self.name

    def __lt__(self, other: "Trait") -> bool:
        return str(self) < str(other)


@dataclass(frozen=True, eq=False)
class Pure(Trait):
    """No side effects: the op may be CSE'd, folded, erased when unused."""

    name = "pure"


@dataclass(frozen=True, eq=False)
class Commutative(Trait):
    """The operands may be swapped (CSE compares them as a set)."""

    name = "commutative"


@dataclass(frozen=True, eq=False)
class Elementwise(Trait):
    """The op applies one scalar function to each element of its tensor operands (with
    broadcasting); every operand and result is a tensor."""

    name = "elementwise"

    def verify(self, op):
        for what, values in (("operand", op.operands), ("result", op.results)):
            for index, v in enumerate(values):
                if not isinstance(v.type, TensorType):
                    return f"{op.name}: {what} #{index} must be a tensor, got {v.type}"
        return None


@dataclass(frozen=True, eq=False)
class Terminator(Trait):
    """The op ends its block."""

    name = "terminator"

    def verify(self, op):
        if op.parent is not None and op.next_op is not None:
            return "a terminator must be the last op of its block"
        return None


@dataclass(frozen=True, eq=False)
class IsolatedFromAbove(Trait):
    """The op's regions may not use values defined outside it (``func.func``)."""

    name = "isolated"


@dataclass(frozen=True, eq=False)
class Symbol(Trait):
    """The op defines a symbol named by its ``sym_name`` attribute."""

    name = "symbol"


@dataclass(frozen=True, eq=False)
class SymbolTable(Trait):
    """The op's regions define symbols (ops with the Symbol trait), each name at most once."""

    name = "symbol_table"

    def verify(self, op):
        names = [inner.get_attr("sym_name") for reg in op.regions for block in reg.blocks
                 for inner in block.ops if SYMBOL in inner.traits]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            return f"symbol defined twice: {', '.join(sorted(dup))}"
        return None


@dataclass(frozen=True, eq=False, init=False)
class HasParent(Trait):
    """The op sits directly in the region of one of ``parents`` (op classes).

    An op not in a block yet (being built) is not checked.
    """

    parents: tuple[type, ...]

    def __init__(self, *parents: type):
        object.__setattr__(self, "parents", parents)
        self.__post_init__()

    def verify(self, op):
        parent = op.parent_op
        if op.parent is None or isinstance(parent, self.parents):
            return None
        where = "outside any op" if parent is None else f"in {parent.name}"
        return f"{op.name} must be directly inside {self._names()}, found {where}"

    def _names(self) -> str:
        return " or ".join(p.name for p in self.parents)

    def __str__(self) -> str:
        return f"has_parent({', '.join(self._names().split(' or '))})"


@dataclass(frozen=True, eq=False)
class MemoryEffects(Trait):
    """The shared memory the op touches: ``reads`` and ``writes`` name operand fields whose
    buffers it reads and writes (an op with this trait touches no other memory).

    >>> from lowering.ir.core import Operation, operand
    >>> class Copy(Operation):
    ...     name = "demo.copy"
    ...     traits = frozenset({MemoryEffects(reads=("source",), writes=("target",))})
    ...     source = operand()
    ...     target = operand()
    >>> fx = get_trait(Copy, MemoryEffects)
    >>> fx.reads, fx.writes
    (('source',), ('target',))
    """

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    def read_values(self, op) -> list:
        """The operands ``op`` reads from."""
        return _field_values(op, self.reads)

    def written_values(self, op) -> list:
        """The operands ``op`` writes to."""
        return _field_values(op, self.writes)

    def check_op_class(self, op_class: type) -> None:
        """Each named field must be an operand field of ``op_class``."""
        fields = {f.name for f in op_class._operand_fields}
        for name in self.reads + self.writes:
            if name not in fields:
                raise TypeError(f"{op_class.__name__}: memory effect on unknown operand field "
                                f"{name!r}")

    def __str__(self) -> str:
        parts = [f"{k}={','.join(v)}" for k, v in (("reads", self.reads),
                                                   ("writes", self.writes)) if v]
        return f"memory_effects({', '.join(parts)})"


def _field_values(op, names) -> list:
    values = []
    for name in names:
        got = getattr(op, name)
        values.extend(got if isinstance(got, list) else [got])
    return values


# Canonicalization patterns by op class, filled by ``add_canonicalization_pattern`` (patterns may
# live away from the op definitions, as the tensor dialect's do in ``canonical.py``).
CANONICALIZATION_PATTERNS: dict[type, list] = {}


def add_canonicalization_pattern(op_class: type, pattern) -> None:
    """Make ``pattern`` one of the canonicalization patterns of ``op_class`` and its subclasses
    (those with the HasCanonicalizationPatterns trait hand them to ``canonicalize``)."""
    patterns = CANONICALIZATION_PATTERNS.setdefault(op_class, [])
    if pattern not in patterns:
        patterns.append(pattern)


@dataclass(frozen=True, eq=False)
class HasCanonicalizationPatterns(Trait):
    """The op class's canonicalization patterns are those added for it and for its bases
    (``add_canonicalization_pattern``); ``Operation.canonicalization_patterns`` returns them."""

    name = "canonicalization"

    def patterns(self, op_class: type) -> list:
        return [p for klass in op_class.__mro__ for p in CANONICALIZATION_PATTERNS.get(klass, ())]


@dataclass(frozen=True, eq=False)
class SameOperandsAndResultType(Trait):
    """Every operand and result has one type."""

    name = "same_operands_and_result_type"

    def verify(self, op):
        types = [v.type for v in (*op.operands, *op.results)]
        if any(t != types[0] for t in types[1:]):
            return (f"{op.name}: operands and results must have one type, got "
                    f"{', '.join(map(str, types))}")
        return None


def get_trait(op_or_class: Any, kind: type) -> Trait | None:
    """The trait of class ``kind`` that an op (or op class) declares, or None.

    >>> from lowering.ir.core import Operation
    >>> class Demo(Operation):
    ...     traits = frozenset({PURE})
    >>> get_trait(Demo, Pure) is PURE, get_trait(Demo, Terminator)
    (True, None)
    """
    for trait in op_or_class.traits:
        if isinstance(trait, kind):
            return trait
    return None


# The traits without parameters, by the names the rest of the code base imports.
PURE = Pure()
COMMUTATIVE = Commutative()
ELEMENTWISE = Elementwise()
TERMINATOR = Terminator()
ISOLATED = IsolatedFromAbove()
SYMBOL = Symbol()
SYMBOL_TABLE = SymbolTable()
SAME_OPERANDS_AND_RESULT_TYPE = SameOperandsAndResultType()
HAS_CANONICALIZATION_PATTERNS = HasCanonicalizationPatterns()
