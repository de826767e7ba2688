"""Dialects and the context that holds the loaded ones, as MLIR's ``MLIRContext`` and xDSL's
``Context``.

A ``Dialect`` is a name and the op classes it defines. A ``Context`` holds loaded dialects and
finds op classes by name: the parser creates ops through it, and the passes that collect every
op's canonicalization patterns ask it which ops there are. ``Context()`` starts with the default
dialects (those ``lowering.dialects`` loads: builtin, scalar, tensor, loops, gpu, sparse);
``Context([])`` starts empty. Loading a dialect into one context leaves every other context as it
was, so a test loads the test dialect (``lowering.dialects.test``) into its own context and the
default context never sees it. Code that passes no context uses ``default_context()``.

>>> from lowering.ir.core import Operation
>>> class Ping(Operation):
...     name = "demo.ping"
>>> demo = Dialect("demo", [Ping])
>>> context = Context([])
>>> context.load_dialect(demo)
>>> context.lookup_op("demo.ping") is Ping, "demo.ping" in default_context().ops
(True, False)
"""
from __future__ import annotations

from collections import Counter
from types import MappingProxyType
from typing import Iterable, Mapping

from .core import IRError, Operation, defined_ops, did_you_mean


class Dialect:
    """A dialect: its ``name`` and the op classes it defines (``ops``), each under its ``name``.

    >>> from lowering.ir.core import Operation
    >>> class Ping(Operation):
    ...     name = "demo.ping"
    >>> Dialect("demo", [Ping]).ops
    (<class 'lowering.ir.context.Ping'>,)
    """

    def __init__(self, name: str, ops: Iterable[type[Operation]]):
        self.name = name
        self.ops: tuple[type[Operation], ...] = tuple(ops)
        twice = [n for n, count in Counter(op.name for op in self.ops).items() if count > 1]
        if twice:
            raise ValueError(f"dialect '{name}' defines op '{twice[0]}' twice")

    @classmethod
    def of_package(cls, name: str, package: str) -> "Dialect":
        """The dialect ``name`` of the ops that module ``package`` and its submodules define
        (the classes ``register_op`` marked), in the order they were defined.

        >>> import lowering.dialects
        >>> [op.name for op in Dialect.of_package("builtin", "lowering.dialects.builtin").ops]
        ['builtin.module', 'func.func', 'func.return', 'func.call']
        """
        prefix = package + "."
        return cls(name, [op for op in defined_ops()
                          if op.__module__ == package or op.__module__.startswith(prefix)])

    def __repr__(self):
        return f"Dialect({self.name!r}, {len(self.ops)} ops)"


# The dialects ``Context()`` starts with: ``lowering.dialects`` adds its own on import.
_DEFAULT_DIALECTS: list[Dialect] = []


class Context:
    """The loaded dialects and their ops. ``dialects`` defaults to the default dialects.

    >>> import lowering.dialects  # defines the default dialects
    >>> context = Context()
    >>> context.lookup_op("tensor.exp").__name__
    'ExpOp'
    >>> context.lookup_op("tensor.epx")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lowering.ir.errors.IRError: unknown op 'tensor.epx'; did you mean 'tensor.exp', ...?
    """

    def __init__(self, dialects: Iterable[Dialect] | None = None):
        self._dialects: dict[str, Dialect] = {}
        self._ops: dict[str, type[Operation]] = {}
        self._dialect_of_op: dict[str, Dialect] = {}
        for dialect in _DEFAULT_DIALECTS if dialects is None else dialects:
            self.load_dialect(dialect)

    @property
    def dialects(self) -> Mapping[str, Dialect]:
        """The loaded dialects by name (read-only)."""
        return MappingProxyType(self._dialects)

    @property
    def ops(self) -> Mapping[str, type[Operation]]:
        """Every loaded op class by op name (read-only)."""
        return MappingProxyType(self._ops)

    def load_dialect(self, dialect: Dialect) -> None:
        """Make ``dialect``'s ops known here. Loading the same dialect again does nothing; a
        different dialect of the same name, or one defining an op name another loaded dialect
        defines, is an error (and loads nothing)."""
        loaded = self._dialects.get(dialect.name)
        if loaded is dialect:
            return
        if loaded is not None:
            raise ValueError(f"another dialect called '{dialect.name}' is loaded already")
        for op in dialect.ops:
            owner = self._dialect_of_op.get(op.name)
            if owner is not None:
                raise ValueError(f"op '{op.name}' of dialect '{dialect.name}' is defined by "
                                 f"dialect '{owner.name}' already")
        self._dialects[dialect.name] = dialect
        for op in dialect.ops:
            self._ops[op.name] = op
            self._dialect_of_op[op.name] = dialect

    def get_op(self, name: str) -> type[Operation] | None:
        """The op class called ``name``, or None."""
        return self._ops.get(name)

    def lookup_op(self, name: str) -> type[Operation]:
        """The op class called ``name``; an unknown name is an IRError naming the nearest known
        dialects or ops."""
        found = self._ops.get(name)
        if found is not None:
            return found
        prefix = name.split(".")[0]
        prefixes = sorted({n.split(".")[0] for n in self._ops})
        if prefix not in prefixes:
            raise IRError(f"unknown dialect '{prefix}' in op '{name}'"
                          f"{did_you_mean(prefix, prefixes)}")
        raise IRError(f"unknown op '{name}'{did_you_mean(name, self._ops)}")

    def __repr__(self):
        return f"Context({list(self._dialects)})"


_DEFAULT_CONTEXT = Context([])


def default_context() -> Context:
    """The context of code that passes none: the default dialects, nothing else.

    >>> import lowering.dialects
    >>> list(default_context().dialects)
    ['builtin', 'scalar', 'tensor', 'loops', 'gpu', 'sparse']
    """
    return _DEFAULT_CONTEXT


def load_default_dialect(dialect: Dialect) -> None:
    """Add ``dialect`` to the default dialects: load it into the default context, and into every
    ``Context()`` made from now on."""
    _DEFAULT_CONTEXT.load_dialect(dialect)
    if dialect not in _DEFAULT_DIALECTS:
        _DEFAULT_DIALECTS.append(dialect)
