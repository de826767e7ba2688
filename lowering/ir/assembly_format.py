"""Declarative assembly formats: an op's pretty printer and parser, generated from one string.

An op class declares its pretty form in the style of MLIR's ODS ``assemblyFormat``::

    class ExpOp(Operation):
        name = "tensor.exp"
        input = operand()
        result = result()
        assembly_format = "$input attr-dict : type($input, $result)"

which prints and parses ``%1 = tensor.exp %0 : tensor<?x?xf32>``. The format is compiled once,
when the class is defined; an unknown field or a malformed format is an error then, naming the op
and the directive. The directives:

- ``$name``: an operand (``%x``; a variadic operand is a comma list, possibly empty), an
  attribute (its attribute syntax; an ``IntAttr`` field is a bare ``i64`` integer or ``true`` /
  ``false``, and an ``i64`` integer in an array drops its ``: i64`` too) or a region
  (``{ ... }``; the entry block is labelled only when it has arguments, and ``{ }`` reads as one
  empty block).
- ``symbol($name)``: a string attribute written as a symbol, ``@name``.
- ``type($x)``: the type of operand or result ``x`` (of a variadic one, a comma list of types);
  ``type($a, $b, ...)``: one type that all of these values share, written once;
  ``type(operands)``, ``type(results)``: every operand's (result's) type, a comma list.
- ``functional-type(operands, results)``: ``(t, t) -> t``; each argument is ``operands``,
  ``results`` or one variadic field.
- ``attr-dict``: the attributes no other directive prints, `` {a = 1}`` (nothing when none);
  ``attr-dict-with-keyword``: the same after ``attributes`` (for ops whose regions follow).
- Literals: punctuation as is (``: , -> = [ ] < >``); keywords and parentheses in backticks
  (`` `to` ``, `` `(` ``).
- ``( ... )?``: an optional group, printed when its anchor is present: the element marked ``^``,
  else its first field; the anchor is a variadic operand (present when not empty) or an
  optional attribute (present when set; a unit attribute prints nothing but the group's
  literals). The group's first element is a literal or an operand, which tells the parser
  whether the group is there.

Every operand, result and region appears in the format with its type, and ``attr-dict`` once;
a format may leave out every result type when the class defines the classmethod
``infer_result_types(operand_types, attributes)``, and the types of some operands when it defines
``infer_operand_types(known, counts)`` (from the written operand types by field name, and every
operand field's number of values, the left-out fields' types). An
op the format cannot spell (a value count or attribute kind the fields do not allow, types that
differ where the format writes one) is printed in the generic form, which says everything; so
printing and parsing back always gives the same op.

>>> from lowering.ir.core import Operation, operand, result
>>> class Twice(Operation):
...     name = "demo.twice"
...     x = operand()
...     out = result()
...     assembly_format = "$x attr-dict : type($x) -> type($out)"
>>> [str(e) for e in Twice.compiled_format.elements]
['$x', 'attr-dict', ':', 'type($x)', '->', 'type($out)']
"""
from __future__ import annotations

import re
from typing import ClassVar

from .attributes import (ArrayAttr, Attribute, BoolAttr, IntAttr, StringAttr, SymbolRefAttr,
                         UnitAttr)
from .constraints import TypeClass
from .types import I1, I64, FunctionType


class FormatError(TypeError):
    """A malformed assembly format, found when its op class is defined."""


# -- elements ----------------------------------------------------------------------------------
# Each element prints (``text`` or ``write``), checks that an op can be printed (``printable``)
# and parses into a ``_ParseState``.

_NO_SPACE_BEFORE = frozenset({")", "]", ">", ","})
_OPENING = frozenset({"(", "[", "<"})


class _Element:
    # How the element sits among its neighbours, for spacing: "word" (a name, a value, a
    # keyword: an opening bracket follows it without a space), "open" (nothing follows it with a
    # space), or "" (other).
    shape: ClassVar[str] = ""
    # An opening bracket (it follows a word without a space).
    opening: ClassVar[bool] = False
    # Whether ``printable`` checks anything (the printer skips the elements that do not).
    checks: ClassVar[bool] = False

    def printable(self, op) -> bool:
        return True

    def text(self, op, printer) -> str:
        raise NotImplementedError

    def write(self, op, printer, space: bool) -> bool:
        """Print the element (after a space when ``space``); False when it printed nothing."""
        text = self.text(op, printer)
        if not text:
            return False
        printer.write(" " + text if space and self.space_before(text) else text)
        return True

    def space_before(self, text: str) -> bool:
        return True


class _Literal(_Element):
    def __init__(self, text: str):
        self.literal = text
        self.shape = "open" if text in _OPENING else "word" if text[0].isalpha() else ""
        self.opening = text in _OPENING

    def __str__(self):
        return self.literal

    def write(self, op, printer, space: bool) -> bool:
        printer.write(" " + self.literal if space and self.literal not in _NO_SPACE_BEFORE
                      else self.literal)
        return True

    def parse(self, parser, state) -> None:
        parser.expect(self.literal, f"in {state.cls.name}")

    def present(self, parser) -> bool:
        return parser.at(self.literal)


class _Operand(_Element):
    shape = "word"

    def __init__(self, field):
        self.field = field

    def __str__(self):
        return "$" + self.field.name

    def text(self, op, printer) -> str:
        values = getattr(op, self.field.name)
        if self.field.variadic:
            return ", ".join(map(printer.value_name, values))
        return printer.value_name(values)

    def parse(self, parser, state) -> None:
        if self.field.variadic:
            refs = [] if parser.at_result_names() else parser.parse_operand_list()
        else:
            refs = [parser.parse_operand()]
        state.refs[self.field.name] = refs

    def present(self, parser) -> bool:
        return parser.peek_kind() == "value" and not parser.at_result_names()

    def is_set(self, op) -> bool:
        return len(getattr(op, self.field.name)) > 0


def attribute_text(a: Attribute, printer) -> str:
    """An attribute as a format writes it: ``i64`` integers inside arrays drop their type (a
    bare integer reads back as ``i64``); a number alone keeps its type, which tells it from a
    ``:`` that follows.

    >>> from lowering.ir.printer import Printer
    >>> attribute_text(ArrayAttr((IntAttr(0), ArrayAttr((IntAttr(2),)))), Printer())
    '[0, [2]]'
    """
    if type(a) is ArrayAttr:
        return "[" + ", ".join(str(x.data) if type(x) is IntAttr and x.type == I64
                               else attribute_text(x, printer) for x in a.data) + "]"
    return printer.attribute_text(a)


class _Attribute(_Element):
    shape = "word"
    checks = True

    def __init__(self, field):
        self.field = field
        # An IntAttr field is written as a bare integer (i64), like MLIR's I64Attr, or as
        # true / false (i1).
        self.bare_int = _attribute_class(field) is IntAttr

    def __str__(self):
        return "$" + self.field.name

    def printable(self, op) -> bool:
        a = op.attributes.get(self.field.name)
        if a is None:
            return False
        if self.bare_int:
            return type(a) is IntAttr and (a.type == I64 or a.type == I1)
        return self.field.constraint.check(a, {})

    def text(self, op, printer) -> str:
        a = op.attributes[self.field.name]
        if isinstance(a, UnitAttr):
            return ""
        if self.bare_int:
            return str(a.data) if a.type == I64 else str(a)
        return attribute_text(a, printer)

    def parse(self, parser, state) -> None:
        name = self.field.name
        if _attribute_class(self.field) is UnitAttr:
            state.attributes[name] = UnitAttr()
            return
        at = parser.position()
        if not self.bare_int:
            a = parser.parse_attribute()
        elif parser.at("true") or parser.at("false"):
            a = BoolAttr(parser.parse_keyword() == "true")
        else:
            a = IntAttr(parser.parse_integer())
        if not self.field.constraint.check(a, {}):
            parser.error(f"{state.cls.name}: attribute '{name}' must be "
                         f"{self.field.constraint.describe({})}, got {a}", at)
        state.attributes[name] = a

    def is_set(self, op) -> bool:
        return self.field.name in op.attributes


def _attribute_class(field) -> type | None:
    """The Attribute class an attribute field must be an instance of, when its constraint says
    just that (``attr(IntAttr)``); else None."""
    constraint = field.constraint
    return constraint.cls if isinstance(constraint, TypeClass) and \
        isinstance(constraint.cls, type) else None


class _Symbol(_Attribute):
    def __str__(self):
        return f"symbol(${self.field.name})"

    def printable(self, op) -> bool:
        a = op.attributes.get(self.field.name)
        return isinstance(a, StringAttr)

    def text(self, op, printer) -> str:
        return str(SymbolRefAttr(op.attributes[self.field.name].data))

    def parse(self, parser, state) -> None:
        state.attributes[self.field.name] = StringAttr(parser.parse_symbol())

    def present(self, parser) -> bool:
        return parser.peek_kind() == "symbol"


class _Region(_Element):
    def __init__(self, field):
        self.field = field

    def __str__(self):
        return "$" + self.field.name

    # A region in a format has its entry block: ``{ }`` is one empty block, whose label is
    # left out unless it has arguments (an op with a region of no blocks prints generically).

    checks = True

    def printable(self, op) -> bool:
        blocks = getattr(op, self.field.name).blocks
        # An unlabelled empty entry block before other blocks would not read back.
        return bool(blocks) and (len(blocks) == 1 or bool(blocks[0].args)
                                 or blocks[0].first_op is not None)

    def write(self, op, printer, space: bool) -> bool:
        if space:
            printer.write(" ")
        region = getattr(op, self.field.name)
        printer.print_region(region, print_entry_block_args=bool(region.block.args))
        return True

    def parse(self, parser, state) -> None:
        state.regions[self.field.name] = parser.parse_region(implicit_entry_block=True)

    def present(self, parser) -> bool:
        return parser.at("{")


class _AttrDict(_Element):
    def __init__(self, keyword: bool):
        self.keyword = keyword
        self.named: frozenset = frozenset()  # the attributes other directives print

    def __str__(self):
        return "attr-dict-with-keyword" if self.keyword else "attr-dict"

    def write(self, op, printer, space: bool) -> bool:
        if not op.attributes:
            return False
        rest = {k: v for k, v in op.attributes.items() if k not in self.named}
        if not rest:
            return False
        text = printer.attr_dict_text(rest, self.keyword)
        printer.write(text if space else text[1:])
        return True

    def parse(self, parser, state) -> None:
        at = parser.position()
        found = parser.parse_optional_attr_dict("attributes" if self.keyword else None)
        for key in found:
            if key in state.attributes or key in self.named:
                parser.error(f"{state.cls.name}: attribute '{key}' is written in the op's "
                             f"format, not in its attribute dict", at)
        state.attributes.update(found)


# Values a type directive names: ("operand" | "result", field), or ("operands" | "results",
# None) for all of them.


def _values(op, target) -> list:
    kind, field = target
    if field is None:
        return list(op.operands if kind == "operands" else op.results)
    value = getattr(op, field.name)
    return list(value) if field.variadic else [value]


class _Type(_Element):
    def __init__(self, targets: list):
        self.targets = targets
        self.several = self.checks = len(targets) > 1
        kind, field = targets[0]
        # The common case: the type of one operand or result that is not variadic.
        self.single = None if self.several or field is None or field.variadic else field.name

    def __str__(self):
        return "type(" + ", ".join(_target_name(t) for t in self.targets) + ")"

    def printable(self, op) -> bool:
        return not self.several or any(_values(op, t) for t in self.targets)

    def text(self, op, printer) -> str:
        if self.single is not None:
            return printer.type_text(getattr(op, self.single).type)
        types = [v.type for t in self.targets for v in _values(op, t)]
        if self.several and len(set(types)) == 1:
            return printer.type_text(types[0])  # the type they share, once
        return ", ".join(map(printer.type_text, types))

    def parse(self, parser, state) -> None:
        counts = [state.expected_count(t) for t in self.targets]
        if self.several:
            at = parser.position()
            types = parser.parse_type_list()
            if len(types) == 1:
                for target in self.targets:
                    state.shared_types[target] = types[0]
                return
            if None in counts or len(types) != sum(counts):
                parser.error(f"{state.cls.name}: {len(types)} types for the values of {self}: "
                             f"write one type they share, or one type per value", at)
            for target, count in zip(self.targets, counts):
                state.types[target], types = types[:count], types[count:]
                state.type_positions[target] = at
            return
        target = self.targets[0]
        if target[1] is not None and not target[1].variadic:
            state.types[target] = [parser.parse_type()]
        elif counts[0] != 0:
            # A list: read as many as are written, so that a count that differs from the
            # values' is reported with both counts.
            state.type_positions[target] = parser.position()
            state.types[target] = parser.parse_type_list()


def _target_name(target) -> str:
    kind, field = target
    return kind if field is None else "$" + field.name


class _FunctionalType(_Element):
    def __init__(self, inputs, outputs):
        self.inputs = inputs
        self.outputs = outputs

    def __str__(self):
        return f"functional-type({_target_name(self.inputs)}, {_target_name(self.outputs)})"

    def text(self, op, printer) -> str:
        inputs = ", ".join(printer.type_text(v.type) for v in _values(op, self.inputs))
        return f"({inputs}) -> " + printer.results_text(v.type for v in _values(op, self.outputs))

    def parse(self, parser, state) -> None:
        at = parser.position()
        found = parser.parse_type()
        if not isinstance(found, FunctionType):
            parser.error(f"{state.cls.name}: expected a function type (inputs) -> results, "
                         f"found {found}", at)
        state.types[self.inputs] = list(found.inputs)
        state.types[self.outputs] = list(found.results)
        state.type_positions[self.inputs] = at


class _Group(_Element):
    checks = True

    def __init__(self, elements: list, anchor):
        self.elements = elements
        self.anchor = anchor

    def __str__(self):
        return "(" + " ".join(str(e) + ("^" if e is self.anchor else "")
                              for e in self.elements) + ")?"

    def printable(self, op) -> bool:
        return not self.anchor.is_set(op) or all(e.printable(op) for e in self.elements)

    def write(self, op, printer, space: bool) -> bool:
        if not self.anchor.is_set(op):
            return False
        return _write_all(self.elements, op, printer, space)

    def parse(self, parser, state) -> None:
        if self.elements[0].present(parser):
            for element in self.elements:
                element.parse(parser, state)


def _write_all(elements, op, printer, space: bool, previous: str = "") -> bool:
    """Print ``elements`` in order, spaced as MLIR does; whether anything was printed."""
    printed = False
    for element in elements:
        gap = space and previous != "open" and not (element.opening and previous == "word")
        if element.write(op, printer, gap):
            printed = space = True
            previous = element.shape
    return printed


# -- parsing state -----------------------------------------------------------------------------


class _ParseState:
    def __init__(self, cls, num_results: int):
        self.cls = cls
        self.num_results = num_results
        self.refs: dict[str, list] = {}
        self.types: dict[tuple, list] = {}
        self.shared_types: dict[tuple, object] = {}
        self.type_positions: dict[tuple, int] = {}
        self.attributes: dict[str, Attribute] = {}
        self.regions: dict[str, object] = {}

    def expected_count(self, target) -> int | None:
        """How many types a ``type(...)`` of ``target`` lists, when the text already says."""
        kind, field = target
        if kind == "operand":
            refs = self.refs.get(field.name)
            return None if refs is None else len(refs)
        if kind == "operands":
            if all(f.name in self.refs for f in self.cls._operand_fields):
                return sum(len(self.refs[f.name]) for f in self.cls._operand_fields)
            return None
        fixed = sum(not f.variadic for f in self.cls._result_fields)
        if kind == "results":
            return self.num_results or fixed
        return 1 if not field.variadic else max(self.num_results - fixed, 0)

    def field_types(self, kind: str, fields, count_of) -> dict[str, list]:
        """The parsed types of each field of ``kind`` ("operand" or "result")."""
        found: dict[str, list] = {}
        for field in fields:
            for target in ((kind, field), (kind + "s", None)):
                if target in self.shared_types:
                    found[field.name] = [self.shared_types[target]] * count_of(field)
                    break
                if target in self.types:
                    found[field.name] = self._split(target, field, fields, count_of)
                    break
        return found

    def _split(self, target, field, fields, count_of) -> list:
        types = self.types[target]
        if target[1] is not None:
            return types
        # A whole list (``type(operands)``): the field's part of it.
        fixed = sum(not f.variadic for f in fields)
        extra = len(types) - fixed
        start = 0
        for f in fields:
            size = extra if f.variadic else 1
            if f is field:
                return types[start:start + size]
            start += size
        return []


# -- the compiled format -------------------------------------------------------------------------


class AssemblyFormat:
    """A compiled format: ``print`` writes an op after its name, ``parse`` reads one back."""

    def __init__(self, cls, source: str, elements: list, infers_results: bool,
                 untyped_operands: frozenset = frozenset()):
        self.cls = cls
        self.source = source
        self.elements = elements
        # Operand types the format leaves out come from the class's ``infer_operand_types``.
        self.untyped_operands = untyped_operands
        self.cache: dict | None = {} if infers_results and not cls._attr_fields else None
        self.checked = [e for e in elements if e.checks]
        self.region_count = len(cls._region_fields)
        self.operand_count = (sum(not f.variadic for f in cls._operand_fields),
                              any(f.variadic for f in cls._operand_fields))
        self.result_count = (sum(not f.variadic for f in cls._result_fields),
                             any(f.variadic for f in cls._result_fields))
        # Result types the format leaves out come from the class's ``infer_result_types``.
        self.infers_results = infers_results

    def print(self, op, printer) -> bool | None:
        """Write the op's pretty form (after its name); False, writing nothing, when the format
        cannot spell this op (the printer writes the generic form instead)."""
        if not self._printable(op):
            return False
        # The op's name is a word: an opening bracket follows it directly (``loops.alloc(%n)``).
        _write_all(self.elements, op, printer, True, "word")
        return None

    def _printable(self, op) -> bool:
        cls = self.cls
        if len(op.regions) != self.region_count:
            return False
        for (fixed, variadic), values in ((self.operand_count, op.operands),
                                          (self.result_count, op.results)):
            if len(values) < fixed or (len(values) != fixed and not variadic):
                return False
        if self.untyped_operands:
            known = {f.name: [v.type for v in _values(op, ("operand", f))]
                     for f in cls._operand_fields if f.name not in self.untyped_operands}
            counts = {f.name: len(_values(op, ("operand", f))) for f in cls._operand_fields}
            try:
                inferred = cls.infer_operand_types(known, counts)
            except Exception:  # an op its class cannot type: the generic form says it all
                return False
            for name in self.untyped_operands:
                field = next(f for f in cls._operand_fields if f.name == name)
                if list(inferred[name]) != [v.type for v in _values(op, ("operand", field))]:
                    return False
        if self.infers_results:
            inferred = self._inferred_results([v.type for v in op.operands], op.attributes)
            if inferred is None or len(inferred) != len(op.results) or any(
                    r.type != t for r, t in zip(op.results, inferred)):
                return False
        for element in self.checked:
            if not element.printable(op):
                return False
        return True

    def _inferred_results(self, operand_types: list, attributes) -> list | None:
        """``infer_result_types``, None where it fails. An op class without attribute fields
        types its results from its operand types alone, so those answers are kept."""
        key = tuple(operand_types) if self.cache is not None else None
        if key is not None and key in self.cache:
            return self.cache[key]
        try:
            found = list(self.cls.infer_result_types(operand_types, attributes))
        except Exception:  # an op its class cannot type: the generic form says it all
            found = None
        if key is not None:
            self.cache[key] = found
        return found

    def parse(self, parser, num_results: int):
        """Read the op's pretty form (after its name) and create the op."""
        cls = self.cls
        state = _ParseState(cls, num_results)
        start = parser.position()
        for element in self.elements:
            element.parse(parser, state)
        operand_types = state.field_types("operand", cls._operand_fields,
                                          lambda f: len(state.refs.get(f.name, ())))
        # A variadic operand of an optional group that is not there has no values.
        refs = {f.name: state.refs.get(f.name, []) for f in cls._operand_fields}
        values = {}
        for field in cls._operand_fields:
            if field.name not in self.untyped_operands:
                values[field.name] = parser.resolve_operands(
                    refs[field.name], operand_types.get(field.name, []),
                    _types_at(state, field, start))
        if self.untyped_operands:
            inferred = self._infer_operands(parser, values, refs, start)
            for name in self.untyped_operands:
                values[name] = parser.resolve_operands(refs[name], list(inferred[name]), start)
        operands = [v for f in cls._operand_fields for v in values[f.name]]
        if self.infers_results:
            result_types = self._infer(parser, state, operands, start)
        else:
            result_types = []
            found = state.field_types("result", cls._result_fields, self._result_counter(state))
            for field in cls._result_fields:
                result_types += found.get(field.name, [])
        regions = [state.regions[f.name] for f in cls._region_fields]
        # The declared attributes first, in their fields' order (as builders make them).
        attributes = {f.name: state.attributes[f.name] for f in cls._attr_fields
                      if f.name in state.attributes}
        attributes.update(state.attributes)
        return cls.create(operands, result_types, attributes, regions,
                          location=parser.op_location)

    def _infer_operands(self, parser, values, refs, start: int) -> dict:
        known = {name: [v.type for v in found] for name, found in values.items()}
        try:
            return self.cls.infer_operand_types(known, {n: len(r) for n, r in refs.items()})
        except Exception as exc:  # whatever the class's typing rules raise about these types
            parser.error(f"cannot infer the operand types of '{self.cls.name}': "
                         f"{getattr(exc, 'message', exc)}", start - 1)

    def _infer(self, parser, state, operands, start: int) -> list:
        found = self._inferred_results([v.type for v in operands], state.attributes)
        if found is not None:
            return found
        try:  # again, for the reason
            return list(self.cls.infer_result_types([v.type for v in operands],
                                                    state.attributes))
        except Exception as exc:  # whatever the class's typing rules raise about these operands
            # Reported at the op's name, the token before its format.
            parser.error(f"cannot infer the result types of '{self.cls.name}': "
                         f"{getattr(exc, 'message', exc)}", start - 1)

    def _result_counter(self, state):
        fixed = sum(not f.variadic for f in self.cls._result_fields)
        return lambda f: 1 if not f.variadic else max(state.num_results - fixed, 0)


def _types_at(state, field, default: int) -> int:
    for target, at in state.type_positions.items():
        if target[1] is field or target[0] == "operands":
            return at
    refs = state.refs.get(field.name)
    return refs[0].token if refs else default


# -- compiling a format string -------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<var>\$\w+)|`(?P<literal>[^`]+)`|(?P<keyword>[A-Za-z][\w-]*)"
                    r"|(?P<arrow>->)|(?P<punct>[()?^,:=\[\]<>]))")


def compile_format(cls, source: str) -> AssemblyFormat:
    """Compile ``source`` for op class ``cls``; a ``FormatError`` names the op and the problem."""
    return _Compiler(cls, source).run()


class _Compiler:
    def __init__(self, cls, source: str):
        self.cls = cls
        self.source = source
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        source = source.rstrip()
        while pos < len(source):
            m = _TOKEN.match(source, pos)
            if m is None or m.end() == pos:
                self.fail(f"unexpected '{source[pos:].strip()[:20]}'")
            kind = m.lastgroup
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.fields = {f.name: f for f in (*cls._operand_fields, *cls._result_fields,
                                           *cls._region_fields, *cls._attr_fields)}
        self.seen: dict[str, str] = {}     # field name -> the directive that prints it
        self.typed: set[str] = set()       # operands and results whose type is written

    def fail(self, message: str):
        raise FormatError(f"{self.cls.name} ({self.cls.__name__}): assembly format "
                          f"{self.source!r}: {message}")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.i += 1
        return token

    def expect(self, text: str, where: str) -> None:
        kind, found = self.take()
        if found != text:
            self.fail(f"expected '{text}' {where}, found '{found or 'the end'}'")

    def run(self) -> AssemblyFormat:
        elements = self.elements()
        infers, untyped = self.check_complete(elements)
        return AssemblyFormat(self.cls, self.source, elements, infers, untyped)

    def elements(self) -> list:
        out = []
        while self.peek()[0] != "end":
            if self.peek() == ("punct", ")"):
                self.fail("unbalanced ')'")
            out.append(self.element())
        return out

    def element(self) -> _Element:
        kind, text = self.take()
        if kind == "var":
            return self.variable(text[1:])
        if kind == "literal":
            return _Literal(text)
        if kind in ("arrow", "punct") and text not in "()?^":
            return _Literal(text)
        if text == "(":
            return self.group()
        if kind == "keyword":
            return self.directive(text)
        self.fail(f"unexpected '{text}'")

    def variable(self, name: str) -> _Element:
        field = self.fields.get(name)
        if field is None:
            self.fail(f"unknown field '${name}' (fields: "
                      f"{', '.join('$' + n for n in self.fields) or 'none'})")
        if field.kind == "result":
            self.fail(f"'${name}' is a result: results are named before '=', write its type "
                      f"with type(${name})")
        self.mark(name, f"${name}")
        if field.kind == "operand":
            return _Operand(field)
        if field.kind == "region":
            return _Region(field)
        return _Attribute(field)

    def mark(self, name: str, directive: str) -> None:
        if name in self.seen:
            self.fail(f"'{directive}' prints '{name}', which '{self.seen[name]}' prints already")
        self.seen[name] = directive

    def directive(self, name: str) -> _Element:
        if name in ("attr-dict", "attr-dict-with-keyword"):
            if "attr-dict" in self.seen:
                self.fail(f"'{name}' appears twice")
            self.seen["attr-dict"] = name
            return _AttrDict(name == "attr-dict-with-keyword")
        if name == "type":
            targets = self.arguments(name)
            if len(targets) > 1 and any(t[1] is None for t in targets):
                self.fail("type(operands) and type(results) take no other argument")
            return _Type(targets)
        if name == "functional-type":
            targets = self.arguments(name)
            if len(targets) != 2:
                self.fail("functional-type takes two arguments: (inputs, results)")
            for target in targets:
                if target[1] is not None and not target[1].variadic:
                    self.fail(f"functional-type({_target_name(target)}, ...) needs a variadic "
                              f"field, operands or results")
            return _FunctionalType(*targets)
        if name == "symbol":
            self.expect("(", "after 'symbol'")
            kind, text = self.take()
            field = self.fields.get(text[1:]) if kind == "var" else None
            if field is None or field.kind != "attr" or _attribute_class(field) is not StringAttr:
                self.fail(f"symbol(...) takes a string attribute field, not '{text}'")
            self.expect(")", "to end symbol(...)")
            self.mark(field.name, f"symbol(${field.name})")
            return _Symbol(field)
        self.fail(f"unknown directive '{name}'")

    def arguments(self, directive: str) -> list:
        self.expect("(", f"after '{directive}'")
        targets = []
        while True:
            kind, text = self.take()
            if kind == "keyword" and text in ("operands", "results"):
                target = (text, None)
                fields = self.cls._operand_fields if text == "operands" else \
                    self.cls._result_fields
                self.typed.update(f.name for f in fields)
            elif kind == "var" and text[1:] in self.fields \
                    and self.fields[text[1:]].kind in ("operand", "result"):
                field = self.fields[text[1:]]
                target = (field.kind, field)
                self.typed.add(field.name)
            else:
                self.fail(f"{directive}(...) takes operands, results or an operand or result "
                          f"field, not '{text}'")
            targets.append(target)
            kind, text = self.take()
            if text == ")":
                return targets
            if text != ",":
                self.fail(f"expected ',' or ')' in {directive}(...), found '{text or 'the end'}'")

    def group(self) -> _Group:
        anchor = None
        elements = []
        while self.peek() not in (("punct", ")"), ("end", "")):
            element = self.element()
            if self.peek() == ("punct", "^"):
                self.take()
                if anchor is not None:
                    self.fail("an optional group has one anchor '^'")
                anchor = element
            elements.append(element)
        self.expect(")", "to end the optional group")
        self.expect("?", "after an optional group: '( ... )?'")
        if not elements:
            self.fail("an empty optional group")
        if anchor is None:
            anchor = next((e for e in elements if isinstance(e, (_Operand, _Attribute))), None)
        if not (isinstance(anchor, _Operand) and anchor.field.variadic) and not (
                isinstance(anchor, _Attribute) and anchor.field.optional):
            self.fail(f"the anchor of optional group {_Group(elements, anchor)} must be a "
                      f"variadic operand or an optional attribute")
        if not isinstance(elements[0], (_Literal, _Operand, _Symbol)):
            self.fail(f"optional group {_Group(elements, anchor)} must start with a literal, "
                      f"an operand or a symbol")
        return _Group(elements, anchor)

    def check_complete(self, elements: list) -> tuple[bool, frozenset]:
        """Check that the format says everything; whether it leaves the result types to the
        class's ``infer_result_types``, and the operands whose types it leaves to
        ``infer_operand_types``."""
        if "attr-dict" not in self.seen:
            self.fail("no 'attr-dict' directive (every format prints the other attributes)")
        for field in (*self.cls._operand_fields, *self.cls._region_fields):
            if field.name not in self.seen:
                self.fail(f"{field.kind} '${field.name}' is not in the format")
        untyped = frozenset(f.name for f in self.cls._operand_fields if f.name not in self.typed)
        if untyped and getattr(self.cls, "infer_operand_types", None) is None:
            name = next(f.name for f in self.cls._operand_fields if f.name in untyped)
            self.fail(f"the type of operand '${name}' is not in the format (nor inferred by "
                      f"infer_operand_types)")
        left_out = [f.name for f in self.cls._result_fields if f.name not in self.typed]
        infers = bool(left_out) and getattr(self.cls, "infer_result_types", None) is not None
        if left_out and (not infers or len(left_out) != len(self.cls._result_fields)):
            self.fail(f"the type of result '${left_out[0]}' is not in the format (nor inferred "
                      f"for all results by infer_result_types)")
        named = frozenset(n for n, f in self.fields.items()
                          if f.kind == "attr" and n in self.seen)
        for element in _flat(elements):
            if isinstance(element, _AttrDict):
                element.named = named
        return infers, untyped


def _flat(elements):
    for element in elements:
        yield element
        if isinstance(element, _Group):
            yield from _flat(element.elements)
