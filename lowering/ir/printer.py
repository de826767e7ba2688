"""Printing IR as text: MLIR's generic operation form, and the pretty forms ops define.

The generic form spells every op the same way::

    %0 = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
    %1:2 = "test.pair"(%0) ({
    ^bb0(%a: f32):
      ...
    }) {axis = 1 : i64} : (tensor<?xf32>) -> (f32, f32) loc("model.py":12:5)

An op class may define a **pretty form**, the printer uses it unless asked for the generic form,
and falls back to the generic form for ops without one. Most ops declare it as an assembly format
(``lowering.ir.assembly_format``), compiled into the two hooks below; a form a format cannot say
is written as the two hooks by hand::

    def print_pretty(self, printer) -> bool | None:
        # Write everything after the op name (results and name are already written; start with a
        # space). Return False, before writing anything, when this op has no pretty form (e.g. it is
        # malformed); the printer then writes the generic form.

    @classmethod
    def parse_pretty(cls, parser, num_results: int) -> Operation:
        # Read everything after the op name (see lowering.ir.parser) and return the new op,
        # created with ``location=parser.op_location``. ``num_results`` is how many result
        # names the text gave (0 when the op's results are unnamed).

Ops of the ``builtin`` dialect print their pretty name without the dialect (``module``).

Helpers a ``print_pretty`` hook uses (all write to the output):

- ``write(text)``: raw text.
- ``print_operand(value)``, ``print_operands(values)``: ``%0`` / ``%0, %x``.
- ``print_type(t)``, ``print_types(types)``, ``print_attribute(a)``,
  ``print_symbol(name)`` (``@f``).
- ``print_attr_dict(attrs, keyword=False)``: `` {a = 1}`` (`` attributes {a = 1}`` with the
  keyword); nothing when ``attrs`` is empty.
- ``print_block_arg(arg)``: ``%x: f32``, naming the argument.
- ``print_region(region, print_entry_block_args=True)``: ``{`` newline, blocks, ``}``; with
  False the entry block's label and arguments are left out (the hook printed them, as
  ``func.func`` does).
- ``print_list(items, print_item)``: items separated by ``", "``.
- ``value_name(v)``, ``type_text(t)``, ``attribute_text(a)``, ``results_text(types)`` return text.

Values print as their ``name_hint`` when they have one (made of ``[A-Za-z0-9_]``, with a ``_N``
suffix if taken), else as numbers (``%0``, ``%1``), and block arguments as ``%arg0``, ``%arg1``.
Names restart in each op with the ISOLATED trait (each function has its own ``%0``).

>>> from lowering.ir.core import Operation
>>> from lowering.ir.location import Location
>>> from lowering.ir.types import F32
>>> op = Operation(result_types=[F32], attributes={"n": 2}, location=Location("a.py", 3, 1))
>>> print(print_op(op, print_locations=True))
%0 = "builtin.unregistered"() {n = 2 : i64} : () -> f32 loc("a.py":3:1)
"""
from __future__ import annotations

import functools
import json
import re
from typing import Callable, Iterable

from .attributes import ArrayAttr, Attribute, DictAttr, SymbolRefAttr
from .core import ISOLATED, BlockArgument, Operation, Region, Value
from .location import UNKNOWN
from .types import FunctionType, Type

# What the parser reads as a bare identifier; other attribute names are written as strings.
_BARE_NAME = re.compile(r"[A-Za-z_][\w$.]*\Z")
_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")


def print_op(op: Operation, generic: bool = False, print_locations: bool = False,
             annotations: dict[Operation, str] | None = None) -> str:
    """The text of ``op`` and everything nested in it (no trailing newline).

    ``generic`` prints every op in the generic form; ``print_locations`` adds ``loc(...)`` after
    each op; ``annotations`` maps ops to messages printed under them (used by diagnostics).

    >>> from lowering.ir.core import Operation
    >>> from lowering.ir.types import I64
    >>> op = Operation(result_types=[I64, I64])
    >>> print(print_op(op, annotations={op: "error: two results"}))
    %0:2 = "builtin.unregistered"() : () -> (i64, i64)
           ^ error: two results
    """
    return Printer(generic, print_locations, annotations).render(op)


def location_text(loc) -> str:
    r"""``loc("file":line:col)``, ``loc(fused[...])`` or ``loc(unknown)``, file names escaped.

    >>> from lowering.ir.location import Location
    >>> print(location_text(Location('C:\\a.py', 2, 7)))
    loc("C:\\a.py":2:7)
    """
    parts = getattr(loc, "parts", None)
    if parts is not None:
        return "loc(fused[" + ", ".join(_file_line_col(p) for p in parts) + "])"
    if loc == UNKNOWN:
        return "loc(unknown)"
    return f"loc({_file_line_col(loc)})"


def _file_line_col(loc) -> str:
    return f"{json.dumps(loc.file)}:{loc.line}:{loc.col}"


@functools.lru_cache(maxsize=4096)
def _sanitize(hint: str) -> str:
    name = _NOT_NAME_CHAR.sub("_", hint)
    # A name of digits only would collide with the numbered names.
    return "v" + name if name[0].isdigit() else name


def attribute_name_text(name: str) -> str:
    """An attribute name as written in a dict: bare when it reads back as one, else quoted.

    >>> attribute_name_text("axis"), attribute_name_text("a b")
    ('axis', '"a b"')
    """
    return name if _BARE_NAME.match(name) else json.dumps(name)


class _NameScope:
    """The names taken inside one ISOLATED op (or at the top)."""

    __slots__ = ("used", "next_value", "next_arg", "next_suffix")

    def __init__(self):
        self.used: set[str] = set()
        self.next_value = 0
        self.next_arg = 0
        self.next_suffix: dict[str, int] = {}


class Printer:
    """Writes ops as text; see the module docstring for the helpers pretty-form hooks use.

    >>> from lowering.ir.core import Operation
    >>> Printer(generic=True).render(Operation())
    '"builtin.unregistered"() : () -> ()'
    """

    def __init__(self, generic: bool = False, print_locations: bool = False,
                 annotations: dict[Operation, str] | None = None, indent_width: int = 2):
        self.generic = generic
        self.print_locations = print_locations
        self.annotations = annotations or {}
        self._step = " " * indent_width
        self._out: list[str] = []
        self._names: dict[Value, str] = {}
        self._scopes = [_NameScope()]
        self._indent = ""
        self._type_texts: dict[Type, str] = {}

    def render(self, op: Operation) -> str:
        """The text of ``op`` (the printer keeps its value names across calls)."""
        start = len(self._out)
        self._print_op(op)
        text = "".join(self._out[start:])
        del self._out[start:]
        return text

    # -- text of values, types, attributes ---------------------------------------------------

    def value_name(self, value: Value) -> str:
        """``%name`` of a value; one not defined yet (or not printed at all) gets a name now."""
        name = self._names.get(value)
        if name is None:
            name = self._define(value, isinstance(value, BlockArgument))
        return name

    def type_text(self, t: Type) -> str:
        text = self._type_texts.get(t)
        if text is None:
            text = self._type_texts[t] = str(t)
        return text

    def results_text(self, types: Iterable[Type]) -> str:
        """Result types after ``->``: ``f32``, ``(f32, i64)`` or ``()`` (like FunctionType).

        >>> from lowering.ir.types import F32
        >>> Printer().results_text([F32]), Printer().results_text([])
        ('f32', '()')
        """
        types = list(types)
        if len(types) == 1 and not isinstance(types[0], FunctionType):
            return self.type_text(types[0])
        return "(" + ", ".join(map(self.type_text, types)) + ")"

    def attribute_text(self, a: Attribute) -> str:
        kind = type(a)
        if kind is DictAttr:
            return "{" + ", ".join(f"{attribute_name_text(k)} = {self.attribute_text(v)}"
                                   for k, v in a.data) + "}"
        if kind is ArrayAttr:
            return "[" + ", ".join(map(self.attribute_text, a.data)) + "]"
        return str(a)

    # -- helpers for pretty forms -------------------------------------------------------------

    def write(self, text: str) -> None:
        self._out.append(text)

    def print_operand(self, value: Value) -> None:
        self._out.append(self.value_name(value))

    def print_operands(self, values: Iterable[Value]) -> None:
        self._out.append(", ".join(map(self.value_name, values)))

    def print_type(self, t: Type) -> None:
        self._out.append(self.type_text(t))

    def print_types(self, types: Iterable[Type]) -> None:
        self._out.append(", ".join(map(self.type_text, types)))

    def print_attribute(self, a: Attribute) -> None:
        self._out.append(self.attribute_text(a))

    def print_symbol(self, name: str) -> None:
        self._out.append(str(SymbolRefAttr(name)))

    def print_list(self, items: Iterable, print_item: Callable) -> None:
        for index, item in enumerate(items):
            if index:
                self._out.append(", ")
            print_item(item)

    def print_attr_dict(self, attrs: dict[str, Attribute], keyword: bool = False) -> None:
        """`` {a = 1, b = "x"}`` (`` attributes {...}`` with ``keyword``); nothing if empty."""
        if attrs:
            self._out.append(self.attr_dict_text(attrs, keyword))

    def attr_dict_text(self, attrs: dict[str, Attribute], keyword: bool = False) -> str:
        """The text ``print_attr_dict`` writes (with its leading space), ``""`` if empty.

        >>> from lowering.ir.attributes import IntAttr
        >>> Printer().attr_dict_text({"axis": IntAttr(1)}, keyword=True)
        ' attributes {axis = 1 : i64}'
        """
        if not attrs:
            return ""
        return (" attributes {" if keyword else " {") + ", ".join(
            f"{attribute_name_text(k)} = {self.attribute_text(v)}" for k, v in attrs.items()) + "}"

    def print_block_arg(self, arg: BlockArgument) -> None:
        """``%x: f32``: names the argument where it is defined."""
        self._out.append(f"{self._define(arg, True)}: {self.type_text(arg.type)}")

    def print_region(self, region: Region, print_entry_block_args: bool = True) -> None:
        """``{``, the blocks with their ops indented, ``}`` (at the current op's indentation).

        The entry block gets a label when it has arguments or no ops (so that an empty block
        and an empty region read back differently), unless ``print_entry_block_args`` is False.
        """
        out = self._out
        outer = self._indent
        inner = self._indent = outer + self._step
        out.append("{\n")
        for index, block in enumerate(region.blocks):
            if index or (print_entry_block_args and (block.args or block.first_op is None)):
                out.append(f"{outer}^bb{index}")
                if block.args:
                    out.append("(")
                    self.print_list(block.args, self.print_block_arg)
                    out.append(")")
                out.append(":\n")
            op = block.first_op
            while op is not None:
                out.append(inner)
                self._print_op(op)
                out.append("\n")
                op = op.next_op
        self._indent = outer
        out.append(outer + "}")

    # -- ops ----------------------------------------------------------------------------------

    def _print_op(self, op: Operation) -> None:
        out = self._out
        start = len(out)
        prefix = self._define_results(op)
        out.append(prefix)
        isolated = ISOLATED in op.traits
        if isolated:
            self._scopes.append(_NameScope())
        pretty = None if self.generic else getattr(type(op), "print_pretty", None)
        if pretty is not None:
            body_start = len(out)
            name = op.name
            out.append(name[8:] if name.startswith("builtin.") else name)
            if pretty(op, self) is False:
                del out[body_start:]
                pretty = None
        if pretty is None:
            self._print_generic(op)
        if isolated:
            self._scopes.pop()
        if self.print_locations:
            out.append(" " + location_text(op.location))
        if self.annotations:
            message = self.annotations.get(op)
            if message is not None:
                self._annotate(start, len(self._indent) + len(prefix), message)

    def _print_generic(self, op: Operation) -> None:
        out = self._out
        name = self.value_name
        out.append(f'"{op.name}"(' + ", ".join([name(v) for v in op.operands]) + ")")
        if op.regions:
            out.append(" (")
            self.print_list(op.regions, self.print_region)
            out.append(")")
        self.print_attr_dict(op.attributes)
        text = self.type_text
        out.append(" : (" + ", ".join([text(v.type) for v in op.operands]) + ") -> "
                   + self.results_text([r.type for r in op.results]))

    def _annotate(self, start: int, column: int, message: str) -> None:
        # The message goes on a line of its own under the op's first line, the caret under its name.
        text = "".join(self._out[start:])
        first, newline, rest = text.partition("\n")
        note = " " * column + "^ " + message.replace("\n", "\n" + " " * (column + 2))
        del self._out[start:]
        self._out.append(first + "\n" + note + (newline + rest if newline else ""))

    # -- naming -------------------------------------------------------------------------------

    def _define_results(self, op: Operation) -> str:
        results = op.results
        if not results:
            return ""
        if len(results) == 1:
            return self._define(results[0], False) + " = "
        names = self._names
        if all(r.name_hint for r in results) or any(r in names for r in results):
            return ", ".join(self.value_name(r) for r in results) + " = "
        base = "%" + self._fresh(results[0].name_hint, False)
        for index, r in enumerate(results):
            names[r] = f"{base}#{index}"
        return f"{base}:{len(results)} = "

    def _define(self, value: Value, is_arg: bool) -> str:
        name = self._names.get(value)
        if name is None:
            name = self._names[value] = "%" + self._fresh(value.name_hint, is_arg)
        return name

    def _fresh(self, hint: str | None, is_arg: bool) -> str:
        scope = self._scopes[-1]
        used = scope.used
        if hint:
            base = name = _sanitize(hint)
            if name in used:
                suffix = scope.next_suffix.get(base, 1)
                while f"{base}_{suffix}" in used:
                    suffix += 1
                scope.next_suffix[base] = suffix + 1
                name = f"{base}_{suffix}"
        elif is_arg:
            name = f"arg{scope.next_arg}"
            while name in used:
                scope.next_arg += 1
                name = f"arg{scope.next_arg}"
            scope.next_arg += 1
        else:
            # Numbers cannot collide with hints (those never consist of digits only).
            scope.next_value += 1
            return str(scope.next_value - 1)
        used.add(name)
        return name
