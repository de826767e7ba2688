"""Reading IR text: MLIR's generic operation form and the pretty forms ops define.

``parse_module(text)`` gives back the top op (a ``builtin.module``; several top-level ops are
wrapped in one). ``parse_type`` and ``parse_attribute`` read a single type or attribute. Ops are
created through the classes a ``Context`` (``lowering.ir.context``; ``parse_module(text,
context=...)``, by default the default context) finds by name, so their typed fields work; an op
the context does not know is an error naming the nearest ones. An op's location is its
trailing ``loc(...)`` when there is one, else the line and column of its name in the text.

Malformed text raises ``ParseError``, whose message names the file, line and column and shows the
line with a caret under the column::

    model.mlir:3:23: error: use of undefined value '%y'
        %1 = "tensor.exp"(%y) : (tensor<?xf32>) -> tensor<?xf32>
                          ^

The grammar, as in MLIR (``[...]`` optional, ``{...}*`` repeated)::

    op         ::= [results '='] (generic-op | pretty-op) [location]
    results    ::= result-group {',' result-group}*      result-group ::= '%name' [':' count]
    generic-op ::= '"dialect.op"' '(' operands ')' ['(' region {',' region}* ')'] [attr-dict]
                   ':' '(' types ')' '->' result-types
    pretty-op  ::= dialect.op <what the op's assembly format (or parse_pretty hook) reads>
    region     ::= '{' [ops] {block-label ops}* '}'
    block-label ::= '^bb1' ['(' '%x: type' {',' '%y: type'}* ')'] ':'
    operand    ::= '%name' | '%name#index'              location ::= 'loc(' ... ')'

An op with a pretty form reads it in ``parse_pretty(cls, parser, num_results)`` (the hook pair
is described in ``lowering.ir.printer``): the parser has read the result names and the op name,
and reads a trailing ``loc(...)`` itself. Hooks and dialect types use these public helpers:

- ``peek_kind()``: the kind of the next token: ``"value"`` (``%x``), ``"symbol"`` (``@f``),
  ``"string"``, ``"number"``, ``"ident"``, ``"dims"`` (``4x?x``), ``"bang"`` (``!dialect.type``),
  ``"label"`` (``^bb0``), ``"punct"``, ``"arrow"``, ``"tensor"`` (``tensor<4xf32>``),
  ``"loc"`` (``loc("a.py":1:2)``), ``"eof"``.
- ``at(text)``, ``accept(text)`` (consume if next), ``expect(text, context="")``.
- ``parse_integer()``, ``parse_float()``, ``parse_string()``, ``parse_keyword()``,
  ``parse_symbol()`` (the name after ``@``).
- ``parse_type()``, ``parse_type_list()`` (``t, t``), ``parse_result_types()`` (after ``->``:
  ``t`` or ``(t, t)``), ``parse_dims()`` (``4x?x`` → ``[4, None]``; ``[]`` if absent).
- ``parse_attribute()``, ``parse_attr_dict()`` (``{a = 1, flag}``),
  ``parse_optional_attr_dict(keyword=None)``.
- ``parse_operand()`` → ``OperandRef``; ``parse_operand_list()`` (possibly empty);
  ``at_result_names()`` (the next tokens are the result names of another op);
  ``resolve_operand(ref, type)``, ``resolve_operands(refs, types)`` → values (checking types).
- ``parse_block_arg()`` → ``(OperandRef, type)`` for ``%x: f32``;
  ``parse_region(entry_args=None, implicit_entry_block=False)``: with a list of
  ``(OperandRef, type)`` the entry block is created with those arguments (as ``func.func``
  does); ``[]`` for an entry block without any; ``implicit_entry_block`` reads ``{ }`` as one
  empty block (as assembly formats do).
- ``parse_comma_list(parse_item, open="(", close=")")``, ``position()``,
  ``error(message, at=None)`` (raises ParseError at a ``position()``), ``op_location``.

A dialect type registers ``TYPE_PARSERS[keyword] = parse`` (``types.register_type_parser``);
``parse(parser)`` is called after the keyword and reads the rest, e.g.
``parser.expect("<"); dims = parser.parse_dims(); elem = parser.parse_type(); parser.expect(">")``.

>>> from lowering.ir.types import TensorType
>>> parse_type("tensor<?x784xf32>") == TensorType((None, 784), parse_type("f32"))
True
>>> parse_attribute('[1 : i32, "a", dense<0.5> : tensor<2xf32>]').value[2].tolist()
[0.5, 0.5]
"""
from __future__ import annotations

import bisect
import contextlib
import gc
import json
import math
import re
from typing import Callable, NamedTuple, NoReturn

import numpy as np

from .attributes import (ArrayAttr, Attribute, BoolAttr, ComplexAttr, DenseAttr, DictAttr,
                         FloatAttr, IntAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr)
from .context import Context, default_context
from .core import ISOLATED, Block, IRError, Operation, Region, Value, did_you_mean
from .location import UNKNOWN, FusedLoc, Location
from .types import (F32, F64, I64, SCALAR_TYPES, SPARSE_ENCODINGS, TYPE_PARSERS, FunctionType,
                    ScalarType, TensorType, Type, complex_type_of)

# One token per match; the leading part skips blanks and comments. Frequent tokens come first;
# the order settles overlaps: simple tensor types are one token (before identifiers), dims
# (``4x?x``) come before numbers and ``?``, ``->`` before ``-``.
_TOKEN = re.compile(r"""
    (?:\s+|//[^\n]*+)*+
    (?:
      (?P<punct>[()\[\]{}<>,:=*+])
    | (?P<value>%[\w$.\-]+(?:\#\d+)?)
    | (?P<tensor>tensor<(?:(?:\?|\d+)x)*+
                 (?:f16|f32|f64|i1|i8|i16|i32|i64|ui8|ui16|ui32|ui64|index)>)
    | (?P<loc>loc\("(?:[^"\\\n]|\\.)*+":\d+:\d+\))
    | (?P<ident>[A-Za-z_][\w$.]*)
    | (?P<string>"(?:[^"\\\n]|\\.)*+")
    | (?P<arrow>->)
    | (?P<dims>(?:(?:\?|\d+)x)++)
    | (?P<number>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)
    | (?P<symbol>@(?:[\w$.\-]+|"(?:[^"\\\n]|\\.)*+"))
    | (?P<label>\^[\w$.\-]+)
    | (?P<bang>![A-Za-z_][\w$.]*)
    | (?P<rare_punct>[?\-#])
    | (?P<eof>\Z)
    | (?P<badstring>")
    | (?P<error>\S)
    )""", re.VERBOSE)

(_PUNCT, _VALUE, _TENSOR, _LOC, _IDENT, _STRING, _ARROW, _DIMS, _NUMBER, _SYMBOL, _LABEL, _BANG,
 _RARE_PUNCT, _EOF, _BADSTRING, _ERROR) = range(1, 17)
assert _TOKEN.groupindex["rare_punct"] == _RARE_PUNCT and _TOKEN.groupindex["error"] == _ERROR
# The kind of each group's tokens (both punctuation groups are "punct").
_KIND_OF_GROUP = tuple(_PUNCT if g == _RARE_PUNCT else g for g in range(17))
_KIND_NAMES = {index: name for name, index in _TOKEN.groupindex.items() if index != _RARE_PUNCT}

# Attributes, types and regions nest at most this deep: deeper text is refused with an error at
# the offending token (instead of exhausting Python's recursion limit here or in later passes).
MAX_NESTING_DEPTH = 100

_TENSOR_BODY = re.compile(r"((?:(?:\?|\d+)x)*)(\w+)")
_LOC_PARTS = re.compile(r'loc\((".*"):(\d+):(\d+)\)', re.S)  # of a "loc" token
_ESCAPE = re.compile(r'\\(?:([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))', re.S)
_SIMPLE_ESCAPES = {'"': b'"', "\\": b"\\", "/": b"/", "n": b"\n", "t": b"\t", "r": b"\r",
                   "b": b"\b", "f": b"\f"}


def _flatten(literal):
    """The numbers of a (nested) dense literal, in order."""
    if isinstance(literal, list):
        for item in literal:
            yield from _flatten(item)
    else:
        yield literal


class ParseError(IRError):
    """Malformed IR text: ``file:line:col: error: reason``, the line, a caret under the column."""

    def __init__(self, reason: str, filename: str, line: int, col: int, source_line: str):
        pointer = "".join("\t" if c == "\t" else " " for c in source_line[:col - 1]) + "^"
        super().__init__(f"{filename}:{line}:{col}: error: {reason}\n{source_line}\n{pointer}")
        self.reason = reason
        self.filename = filename
        self.line = line
        self.col = col


class OperandRef(NamedTuple):
    """A use of a value as written (``%x#1``), before it is resolved to a Value."""

    name: str
    index: int
    token: int  # position() of the use, for errors

    def __str__(self) -> str:
        return f"%{self.name}" + (f"#{self.index}" if self.index else "")


def parse_module(text: str, filename: str = "<input>", context: Context | None = None
                 ) -> Operation:
    """The top op of ``text``; several top-level ops (or none) are wrapped in a ``builtin.module``.
    Ops are found by name in ``context`` (default: the default context).

    >>> from lowering.dialects import builtin
    >>> m = parse_module('func.func @f(%x: f32) -> f32 { func.return %x : f32 }')
    >>> m.name, [op.name for op in m.body.block.ops]
    ('builtin.module', ['func.func'])
    """
    with _gc_paused():
        parser = Parser(text, filename, context)
        ops = parser.parse_top_level()
    if len(ops) == 1 and ops[0].name == "builtin.module":
        return ops[0]
    try:
        module_class = parser.context.lookup_op("builtin.module")
    except IRError as exc:
        raise IRError(f"{exc.message} (import lowering.dialects to register the dialects)"
                      ) from None
    return module_class.create(regions=[Region([Block(ops=ops)])],
                               location=Location(filename, 1, 1))


def parse_type(text: str, filename: str = "<input>") -> Type:
    """The type written in ``text``.

    >>> str(parse_type("(tensor<2xi64>, f32) -> (f32, f32)"))
    '(tensor<2xi64>, f32) -> (f32, f32)'
    """
    parser = Parser(text, filename)
    result = parser.parse_type()
    parser.expect_end()
    return result


def parse_attribute(text: str, filename: str = "<input>") -> Attribute:
    """The attribute written in ``text``.

    >>> parse_attribute("-inf : f32")
    FloatAttr(data=-inf, type=ScalarType(name='f32'))
    """
    parser = Parser(text, filename)
    result = parser.parse_attribute()
    parser.expect_end()
    return result


@contextlib.contextmanager
def _gc_paused():
    """Pause the cycle collector: reading a large module makes many objects and none are garbage,
    so its passes over the growing heap would only cost time (several times the parse itself)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Scope:
    """The value names of one region; ``parent`` is None at an isolated region (or the top).

    Uses of names not yet defined wait in ``forward`` (one dict per isolated region) until the
    definition comes, as MLIR allows; what is still there when the region ends is undefined.
    """

    __slots__ = ("values", "positions", "parent", "forward")

    def __init__(self, parent: "_Scope | None", isolated: bool):
        self.values: dict[str, list[Value]] = {}
        self.positions: dict[str, int] = {}
        self.parent = None if isolated else parent
        self.forward: dict[str, dict[int, tuple[Value, int]]] = (
            {} if isolated or parent is None else parent.forward)


class Parser:
    """A recursive-descent parser over a token list; see the module docstring for its helpers."""

    def __init__(self, text: str, filename: str = "<input>", context: Context | None = None):
        self.text = text
        self.filename = filename
        self.context = context or default_context()  # where op classes are found by name
        self._op_classes = self.context.ops
        self._line_starts = [0]
        self._line_starts.extend(m.end() for m in re.finditer("\n", text))
        self._open_regions: list[int] = []  # where each region being read starts
        self._depth = 0  # attributes, types and regions being read, one inside the other
        self._kinds: list[int] = []
        self._texts: list[str] = []
        self._starts: list[int] = []
        self._tokenize()
        self._i = 0
        self._scope = _Scope(None, True)
        self._op_stack: list[tuple[type, Location]] = []
        # Types written as one token (``f32``, ``tensor<?x4xf32>``), by their text.
        self._simple_types: dict[str, Type] = dict(SCALAR_TYPES)

    def _tokenize(self) -> None:
        kinds, texts, starts = self._kinds, self._texts, self._starts
        for m in _TOKEN.finditer(self.text):
            kind = m.lastindex
            kinds.append(_KIND_OF_GROUP[kind])
            texts.append(m.group(kind))
            starts.append(m.start(kind))
            if kind >= _EOF:
                break
        if kind == _BADSTRING:
            self.error("unterminated string (a string ends with '\"' on the same line)",
                       len(kinds) - 1)
        if kind != _EOF:
            self.error(f"unexpected character '{texts[-1]}'", len(kinds) - 1)

    # -- positions and errors -----------------------------------------------------------------

    def position(self) -> int:
        """The index of the next token, to report an error there later."""
        return self._i

    def _enter(self, at: int) -> None:
        """One more level of nesting (an array, dict, function type or region) starts at ``at``."""
        self._depth += 1
        if self._depth > MAX_NESTING_DEPTH:
            self.error(f"nesting too deep: attributes, types and regions nest at most "
                       f"{MAX_NESTING_DEPTH} levels", at)

    def error(self, message: str, at: int | None = None) -> NoReturn:
        """Raise ParseError at token ``at`` (default: the next token)."""
        at = self._i if at is None else at
        if self._kinds[at] == _EOF and self._open_regions:
            # The text ended inside a region: its missing '}' is the error to point at.
            message, at = "unterminated region: this '{' is never closed", self._open_regions[-1]
        offset = self._starts[at]
        line = bisect.bisect_right(self._line_starts, offset)
        line_start = self._line_starts[line - 1]
        line_end = self.text.find("\n", line_start)
        source = self.text[line_start:None if line_end < 0 else line_end]
        raise ParseError(message, self.filename, line, offset - line_start + 1, source)

    def _location(self, at: int) -> Location:
        offset = self._starts[at]
        line = bisect.bisect_right(self._line_starts, offset)
        return Location(self.filename, line, offset - self._line_starts[line - 1] + 1)

    @property
    def op_location(self) -> Location:
        """Where the op being parsed starts (its name); pretty forms create their op with it."""
        return self._op_stack[-1][1]

    def _describe(self, at: int | None = None) -> str:
        at = self._i if at is None else at
        if self._kinds[at] == _EOF:
            return "the end of the input"
        text = self._texts[at]
        return f"'{text[:30]}...'" if len(text) > 33 else f"'{text}'"

    # -- tokens -------------------------------------------------------------------------------

    def peek_kind(self) -> str:
        return _KIND_NAMES[self._kinds[self._i]]

    def at(self, text: str) -> bool:
        return self._texts[self._i] == text

    def accept(self, text: str) -> bool:
        if self._texts[self._i] == text:
            self._i += 1
            return True
        return False

    def expect(self, text: str, context: str = "") -> None:
        if self._texts[self._i] != text:
            self.error(f"expected '{text}'{' ' + context if context else ''}, "
                       f"found {self._describe()}")
        self._i += 1

    def expect_end(self) -> None:
        if self._kinds[self._i] != _EOF:
            self.error(f"unexpected {self._describe()} after the end")

    def parse_integer(self) -> int:
        text = self._texts[self._i]
        if self._kinds[self._i] != _NUMBER or not text.lstrip("-").isdigit():
            self.error(f"expected an integer, found {self._describe()}")
        self._i += 1
        return int(text)

    def parse_float(self) -> float:
        """A number, ``inf``, ``-inf`` or ``nan``."""
        value = self._parse_number_text()
        if value is None:
            self.error(f"expected a number, found {self._describe()}")
        return float(value)

    def _parse_number_text(self) -> str | None:
        i = self._i
        kind, text = self._kinds[i], self._texts[i]
        if kind == _NUMBER or (kind == _IDENT and text in ("inf", "nan")):
            self._i += 1
            return text
        if text == "-" and self._kinds[i + 1] == _IDENT and self._texts[i + 1] in ("inf", "nan"):
            self._i += 2
            return "-" + self._texts[i + 1]
        return None

    def parse_string(self) -> str:
        if self._kinds[self._i] != _STRING:
            self.error(f"expected a string, found {self._describe()}")
        self._i += 1
        return self._string_value(self._i - 1)

    def parse_keyword(self) -> str:
        if self._kinds[self._i] != _IDENT:
            self.error(f"expected a keyword, found {self._describe()}")
        self._i += 1
        return self._texts[self._i - 1]

    def parse_symbol(self) -> str:
        """The name of ``@name`` or ``@"any name"``."""
        i = self._i
        if self._kinds[i] != _SYMBOL:
            self.error(f"expected a symbol such as @f, found {self._describe()}")
        self._i += 1
        text = self._texts[i]
        return self._decode(text[1:], i) if text[1] == '"' else text[1:]

    def _string_value(self, at: int) -> str:
        return self._decode(self._texts[at], at)

    def _decode(self, quoted: str, at: int) -> str:
        body = quoted[1:-1]
        if "\\" not in body:
            return body
        try:
            return json.loads(quoted)
        except ValueError:
            return self._decode_escapes(body, at)

    def _decode_escapes(self, body: str, at: int) -> str:
        # MLIR's escapes: \XX is a byte (of UTF-8 text), besides \n, \t, \", \\ and \uXXXX.
        out = bytearray()
        pos = 0
        for m in _ESCAPE.finditer(body):
            out += body[pos:m.start()].encode("utf-8", "surrogatepass")
            byte, code, char = m.groups()
            if byte is not None:
                out.append(int(byte, 16))
            elif code is not None:
                out += chr(int(code, 16)).encode("utf-8", "surrogatepass")
            elif char in _SIMPLE_ESCAPES:
                out += _SIMPLE_ESCAPES[char]
            else:
                self.error(f"unknown escape '\\{char}' in string", at)
            pos = m.end()
        out += body[pos:].encode("utf-8", "surrogatepass")
        try:
            return out.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            self.error("string escapes do not form valid UTF-8", at)

    def parse_comma_list(self, parse_item: Callable, open: str | None = "(",
                         close: str = ")") -> list:
        """``open item, item, ... close`` (possibly empty); ``open=None`` if already consumed."""
        if open is not None:
            self.expect(open)
        items: list = []
        if self.accept(close):
            return items
        while True:
            items.append(parse_item())
            if not self.accept(","):
                break
        self.expect(close, "to end the list")
        return items

    # -- types --------------------------------------------------------------------------------

    def parse_type(self) -> Type:
        """A builtin type, a dialect type (through ``TYPE_PARSERS``) or a function type."""
        i = self._i
        kind, text = self._kinds[i], self._texts[i]
        found = self._simple_types.get(text)
        if found is not None:
            self._i += 1
            return found
        if kind == _TENSOR:
            self._i += 1
            dims, element = _TENSOR_BODY.fullmatch(text, 7, len(text) - 1).groups()
            found = self._simple_types[text] = TensorType(
                tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1]),
                SCALAR_TYPES[element])
            return found
        if kind == _IDENT and text == "tensor":
            return self._parse_tensor_type()
        if kind == _IDENT and text == "complex":
            return self._parse_complex_type()
        if kind == _IDENT or kind == _BANG:
            parse = TYPE_PARSERS.get(text)
            if parse is None:
                known = [*SCALAR_TYPES, "tensor", "complex", *TYPE_PARSERS]
                self.error(f"unknown type '{text}'{did_you_mean(text, known)}", i)
            self._i += 1
            self._enter(i)
            try:
                found = parse(self)
            except ParseError:
                raise
            except (IRError, ValueError, TypeError) as exc:
                self.error(f"bad '{text}' type: {exc}", i)
            self._depth -= 1
            return found
        if text == "(":
            self._i += 1
            self._enter(i)
            inputs = self._parse_types_until(")")
            self.expect("->", "in a function type")
            found = FunctionType(tuple(inputs), tuple(self.parse_result_types()))
            self._depth -= 1
            return found
        self.error(f"expected a type, found {self._describe()}")

    def _parse_tensor_type(self) -> TensorType:
        self._enter(self._i)
        self._i += 1
        self.expect("<", "after 'tensor'")
        dims = self.parse_dims()
        element_at = self._i
        element = self.parse_type()
        if not isinstance(element, ScalarType):
            self.error(f"a tensor's element type must be a scalar type, not {element}", element_at)
        encoding = None
        if self.accept(","):
            encoding = self._parse_sparse_encoding(len(dims))
        self.expect(">", "to end the tensor type")
        self._depth -= 1
        return TensorType(tuple(dims), element, encoding)

    def _parse_sparse_encoding(self, rank: int):
        """``#csr`` or ``#csc`` after a tensor's element type (a rank-2 tensor's storage)."""
        self.expect("#", "before a sparse encoding (#csr, #csc)")
        at = self._i
        name = self._texts[at]
        if self._kinds[at] != _IDENT or name not in SPARSE_ENCODINGS:
            self.error(f"unknown sparse encoding '#{name}'"
                       f"{did_you_mean(name, list(SPARSE_ENCODINGS))}; known: "
                       f"{', '.join('#' + n for n in SPARSE_ENCODINGS)}", at)
        if rank != 2:
            self.error(f"a sparse tensor (#{name}) must have rank 2, got rank {rank}", at)
        self._i += 1
        return SPARSE_ENCODINGS[name]

    def _parse_complex_type(self) -> ScalarType:
        """``complex<f32>`` or ``complex<f64>``."""
        self._i += 1
        self.expect("<", "after 'complex'")
        part_at = self._i
        part = self.parse_type()
        if part not in (F32, F64):
            self.error(f"a complex type's parts must be f32 or f64, not {part}", part_at)
        self.expect(">", "to end the complex type")
        return complex_type_of(part)

    def _parse_complex_literal(self) -> complex:
        """``(real, imag)``: two numbers (``inf``, ``nan`` allowed)."""
        self.expect("(", "to start a complex number")
        real = self.parse_float()
        self.expect(",", "between a complex number's parts")
        imag = self.parse_float()
        self.expect(")", "to end a complex number")
        return complex(real, imag)

    def _at_complex_literal(self) -> bool:
        """Whether the tokens start ``(number, ...`` (not a function type's ``(f32) -> ...``)."""
        i = self._i
        if self._texts[i] != "(":
            return False
        kind, text = self._kinds[i + 1], self._texts[i + 1]
        return kind == _NUMBER or text in ("inf", "nan", "-")

    def parse_dims(self) -> list[int | None]:
        """``4x?x`` → ``[4, None]`` (each dimension is followed by ``x``); ``[]`` if none."""
        i = self._i
        if self._kinds[i] != _DIMS:
            return []
        self._i += 1
        return [None if d == "?" else int(d) for d in self._texts[i].split("x")[:-1]]

    def parse_type_list(self) -> list[Type]:
        """``t, t, ...`` (at least one)."""
        types = [self.parse_type()]
        while self.accept(","):
            types.append(self.parse_type())
        return types

    def parse_result_types(self) -> list[Type]:
        """What follows ``->``: one type, or a parenthesized list (``()`` for none)."""
        if self.accept("("):
            return self._parse_types_until(")")
        return [self.parse_type()]

    # -- attributes ---------------------------------------------------------------------------

    def parse_attribute(self) -> Attribute:
        """Any attribute of ``lowering.ir.attributes``; a type alone is a TypeAttr."""
        i = self._i
        kind, text = self._kinds[i], self._texts[i]
        if kind == _STRING:
            self._i += 1
            return StringAttr(self._string_value(i))
        if kind == _SYMBOL:
            return SymbolRefAttr(self.parse_symbol())
        if kind == _IDENT:
            if text == "true" or text == "false":
                self._i += 1
                return BoolAttr(text == "true")
            if text == "unit":
                self._i += 1
                return UnitAttr()
            if text == "dense":
                return self._parse_dense()
        if text == "[":
            self._enter(i)
            found = ArrayAttr(tuple(self.parse_comma_list(self.parse_attribute, "[", "]")))
            self._depth -= 1
            return found
        if text == "{":
            self._enter(i)
            found = DictAttr(tuple(self.parse_attr_dict().items()))
            self._depth -= 1
            return found
        number = self._parse_number_text()
        if number is not None:
            return self._typed_number(number, i)
        if self._at_complex_literal():
            return self._typed_complex(i)
        if kind == _IDENT or kind == _BANG or kind == _TENSOR or text == "(":
            return TypeAttr(self.parse_type())
        self.error(f"expected an attribute, found {self._describe()}")

    def _typed_number(self, text: str, at: int) -> Attribute:
        is_float = not text.lstrip("-").isdigit()
        number_type = F64 if is_float else I64  # without a type
        if self.accept(":"):
            type_at = self._i
            number_type = self.parse_type()
            if not isinstance(number_type, ScalarType):
                self.error(f"a number's type must be a scalar type, not {number_type}", type_at)
        if number_type.is_float:
            value = self._finite_float(text, at)
            self._check_float_range(np.array([value]), number_type, at)
            return FloatAttr(value, number_type)
        if is_float:
            self.error(f"{text} is not an integer, but its type is {number_type}", at)
        value = int(text)
        self._check_int_range(value, value, number_type, at)
        return IntAttr(value, number_type)

    def _typed_complex(self, at: int) -> ComplexAttr:
        value = self._parse_complex_literal()
        self.expect(":", "before a complex number's type")
        type_at = self._i
        number_type = self.parse_type()
        if not (isinstance(number_type, ScalarType) and number_type.is_complex):
            self.error(f"a complex number's type must be a complex type, not {number_type}",
                       type_at)
        self._check_float_range(np.array([value.real, value.imag]), number_type.real_part, at)
        return ComplexAttr(value, number_type)

    def _check_int_range(self, low: int, high: int, of_type: ScalarType, at: int) -> None:
        """Integers from ``low`` to ``high`` must fit ``of_type`` (i1 holds 0 and 1)."""
        info = np.iinfo(np.uint8 if of_type.is_bool else of_type.dtype)
        smallest, largest = (0, 1) if of_type.is_bool else (int(info.min), int(info.max))
        bad = low if low < smallest else high if high > largest else None
        if bad is not None:
            self.error(f"{bad} is out of range for {of_type} ({smallest} to {largest})", at)

    def _check_float_range(self, values: np.ndarray, of_type: ScalarType, at: int) -> None:
        """Finite float64 ``values`` must stay finite in ``of_type`` (f16 and f32 are narrower)."""
        with np.errstate(over="ignore"):
            rounded = values.astype(of_type.dtype)
        overflow = np.isinf(rounded) & np.isfinite(values)
        if overflow.any():
            self.error(f"{values[overflow][0]:.6e} is out of range for {of_type} (largest "
                       f"finite: {float(np.finfo(of_type.dtype).max):.6e})", at)

    def _parse_dense(self) -> DenseAttr:
        at = self._i
        self._i += 1
        self.expect("<", "after 'dense'")
        saw_float = [False]
        literal = self._parse_dense_literal(saw_float)
        self.expect(">", "to end the dense literal")
        self.expect(":", "before the dense literal's tensor type")
        type_at = self._i
        tensor_type = self.parse_type()
        if not isinstance(tensor_type, TensorType):
            self.error(f"a dense literal's type must be a tensor type, not {tensor_type}", type_at)
        if saw_float[0] and tensor_type.dtype.kind in "iub":
            self.error(f"a dense literal of {tensor_type} cannot hold floats", at)
        element = tensor_type.element
        try:
            # Checked as Python numbers (NumPy would wrap, saturate or make inf silently).
            elements = list(_flatten(literal))
            if any(isinstance(e, complex) for e in elements) and not element.is_complex:
                self.error(f"a dense literal of {tensor_type} cannot hold complex numbers", at)
            if elements and element.is_complex:
                parts = np.array([complex(e) for e in elements], dtype=np.complex128)
                self._check_float_range(np.concatenate([parts.real, parts.imag]),
                                        element.real_part, at)
            elif elements and element.is_float:
                self._check_float_range(np.array(elements, dtype=np.float64), element, at)
            elif elements:
                self._check_int_range(int(min(elements)), int(max(elements)), element, at)
            if isinstance(literal, list):
                array = np.array(literal, dtype=tensor_type.dtype)
                if array.size == 0 and None not in tensor_type.shape:
                    array = array.reshape(tensor_type.shape)
                if array.ndim != tensor_type.rank or not tensor_type.accepts_shape(array.shape):
                    self.error(f"the dense literal has shape {array.shape}, "
                               f"which does not fit {tensor_type}", at)
                return DenseAttr(array, tensor_type)
            if None in tensor_type.shape:
                self.error(f"a splat dense literal needs a static shape, not {tensor_type}",
                           type_at)
            return DenseAttr.splat(literal, tensor_type)  # one value, however many elements
        except (ValueError, OverflowError) as exc:
            self.error(f"bad dense literal for {tensor_type}: {exc}", at)

    def _parse_dense_literal(self, saw_float: list):
        if self.at("["):
            self._enter(self._i)
            self._i += 1
            found = self.parse_comma_list(lambda: self._parse_dense_literal(saw_float), None, "]")
            self._depth -= 1
            return found
        text = self._texts[self._i]
        if text == "true" or text == "false":
            self._i += 1
            return text == "true"
        if self._at_complex_literal():
            return self._parse_complex_literal()
        number = self._parse_number_text()
        if number is None:
            self.error(f"expected a number, true, false or '[' in a dense literal, "
                       f"found {self._describe()}")
        if number.lstrip("-").isdigit():
            return int(number)
        saw_float[0] = True
        return self._finite_float(number, self._i - 1)

    def _finite_float(self, text: str, at: int) -> float:
        """``float(text)``; a finite literal too large for any float (``1e400``) is an error."""
        value = float(text)
        if math.isinf(value) and "inf" not in text:
            self.error(f"{text} is out of range for a float (largest finite: "
                       f"{np.finfo(np.float64).max:.6e})", at)
        return value

    def parse_attr_dict(self) -> dict[str, Attribute]:
        """``{name = attr, flag, "any name" = attr}``; a name alone is a unit attribute."""
        self.expect("{")
        attrs: dict[str, Attribute] = {}
        if self.accept("}"):
            return attrs
        kinds = self._kinds
        while True:
            at = self._i
            if kinds[at] == _IDENT:
                key = self._texts[at]
            elif kinds[at] == _STRING:
                key = self._string_value(at)
            else:
                self.error(f"expected an attribute name, found {self._describe()}")
            self._i += 1
            if key in attrs:
                self.error(f"attribute '{key}' is given twice", at)
            attrs[key] = self.parse_attribute() if self.accept("=") else UnitAttr()
            if not self.accept(","):
                break
        self.expect("}", "to end the attributes")
        return attrs

    def parse_optional_attr_dict(self, keyword: str | None = None) -> dict[str, Attribute]:
        """An attribute dict if one follows (after ``keyword`` when given), else ``{}``."""
        if keyword is not None:
            return self.parse_attr_dict() if self.accept(keyword) else {}
        return self.parse_attr_dict() if self.at("{") else {}

    def parse_location(self) -> Location | FusedLoc:
        """``loc("file":line:col)``, ``loc(fused["a":1:2, ...])`` or ``loc(unknown)``."""
        at = self._i
        if self._kinds[at] == _LOC:  # the common form, read as one token
            self._i += 1
            file, line, col = _LOC_PARTS.fullmatch(self._texts[at]).groups()
            return Location(self._decode(file, at), int(line), int(col))
        self.expect("loc")
        self.expect("(", "after 'loc'")
        if self.accept("unknown"):
            loc = UNKNOWN
        elif self.accept("fused"):
            loc = FusedLoc(tuple(self.parse_comma_list(self._parse_file_line_col, "[", "]")))
        else:
            loc = self._parse_file_line_col()
        self.expect(")", "to end the location")
        return loc

    def _parse_file_line_col(self) -> Location:
        file = self.parse_string()
        self.expect(":", "after the file name of a location")
        line = self.parse_integer()
        self.expect(":", "after the line of a location")
        return Location(file, line, self.parse_integer())

    # -- values -------------------------------------------------------------------------------

    def parse_operand(self) -> OperandRef:
        i = self._i
        if self._kinds[i] != _VALUE:
            self.error(f"expected a value such as %0, found {self._describe()}")
        self._i += 1
        name, _, index = self._texts[i][1:].partition("#")
        return OperandRef(name, int(index) if index else 0, i)

    def parse_operand_list(self) -> list[OperandRef]:
        """``%a, %b#1, ...``, or ``[]`` when no value follows."""
        if self._kinds[self._i] != _VALUE:
            return []
        refs = [self.parse_operand()]
        while self.accept(","):
            refs.append(self.parse_operand())
        return refs

    def at_result_names(self) -> bool:
        """Whether the next tokens name the results of the next op (``%a, %b:2 =``), not
        operands: a variadic operand list that may be empty stops there."""
        kinds, texts = self._kinds, self._texts
        i = self._i
        while kinds[i] == _VALUE:
            i += 1
            if texts[i] == ":" and kinds[i + 1] == _NUMBER:
                i += 2
            if texts[i] == "=":
                return True
            if texts[i] != ",":
                return False
            i += 1
        return False

    def parse_block_arg(self) -> tuple[OperandRef, Type]:
        """``%x: type``, an argument to define (see ``parse_region``)."""
        ref = self.parse_operand()
        if "#" in self._texts[ref.token]:
            self.error("an argument name cannot have a '#index'", ref.token)
        self.expect(":", "after the argument name")
        return ref, self.parse_type()

    def resolve_operand(self, ref: OperandRef, type: Type | None) -> Value:
        """The value ``ref`` names; it must have ``type`` (None: whatever it has)."""
        return self._resolve(ref.name, ref.index, ref.token, type)

    def _resolve(self, name: str, index: int, at: int, of_type: Type | None) -> Value:
        scope = self._scope
        while scope is not None:
            values = scope.values.get(name)
            if values is not None:
                break
            scope = scope.parent
        else:
            return self._forward_reference(OperandRef(name, index, at), of_type)
        if index >= len(values):
            self.error(f"'%{name}#{index}' does not exist: '%{name}' names {len(values)} "
                       f"value(s)", at)
        value = values[index]
        if of_type is not None and value.type is not of_type and value.type != of_type:
            self.error(f"'{OperandRef(name, index, at)}' has type {value.type}, but is used here "
                       f"as {of_type}", at)
        return value

    def resolve_operands(self, refs: list[OperandRef], types: list[Type],
                         at: int | None = None) -> list[Value]:
        """Resolve each ref with its type; the counts must agree (else an error at ``at``)."""
        if len(refs) != len(types):
            self.error(f"{len(refs)} operand(s) but {len(types)} type(s)",
                       refs[0].token if at is None and refs else at)
        return [self.resolve_operand(r, t) for r, t in zip(refs, types)]

    def _forward_reference(self, ref: OperandRef, type: Type | None) -> Value:
        uses = self._scope.forward.setdefault(ref.name, {})
        if ref.index in uses:
            placeholder, first = uses[ref.index]
            if type is not None and placeholder.type != type:
                self.error(f"'{ref}' is used here as {type}, but as {placeholder.type} "
                           f"at {self._line_col(first)}", ref.token)
            return placeholder
        if type is None:
            self.error(f"use of undefined value '{ref}'", ref.token)
        placeholder = Value(type)
        uses[ref.index] = (placeholder, ref.token)
        return placeholder

    def _line_col(self, at: int) -> str:
        loc = self._location(at)
        return f"line {loc.line}, column {loc.col}"

    def _define(self, name: str, values: list[Value], at: int) -> None:
        scope = self._scope
        outer = scope
        while outer is not None:
            if name in outer.values:
                self.error(f"redefinition of value '%{name}' "
                           f"(first defined at {self._line_col(outer.positions[name])})", at)
            outer = outer.parent
        scope.values[name] = values
        scope.positions[name] = at
        if scope.forward:
            uses = scope.forward.pop(name, None)
            for index, (placeholder, use_at) in (uses or {}).items():
                if index >= len(values):
                    self.error(f"'%{name}#{index}' does not exist: '%{name}' names "
                               f"{len(values)} value(s)", use_at)
                value = values[index]
                if value.type != placeholder.type:
                    self.error(f"'%{name}' is defined with type {value.type}, but its use at "
                               f"{self._line_col(use_at)} expects {placeholder.type}", at)
                placeholder.replace_all_uses_with(value)

    def _check_no_forward_references(self, scope: _Scope) -> None:
        if scope.forward:
            first = min((at, name, index) for name, uses in scope.forward.items()
                        for index, (_, at) in uses.items())
            at, name, index = first
            self.error(f"use of undefined value '{OperandRef(name, index, at)}'", at)

    # -- regions and ops ----------------------------------------------------------------------

    def parse_region(self, entry_args: list[tuple[OperandRef, Type]] | None = None,
                     implicit_entry_block: bool = False) -> Region:
        """``{ ops ^bb1(...): ops }``. With ``entry_args`` the entry block is made with them;
        with ``implicit_entry_block``, ``{ }`` is one empty block instead of no block."""
        open_at = self._i
        self.expect("{", "to start a region")
        self._enter(open_at)
        isolated = bool(self._op_stack) and ISOLATED in self._op_stack[-1][0].traits
        self._open_regions.append(open_at)
        outer = self._scope
        scope = self._scope = _Scope(outer, isolated)
        region = Region()
        block = None
        if entry_args is not None:
            block = region.add_block(Block())
            self._define_block_args(block, entry_args)
        kinds, texts = self._kinds, self._texts
        labels: set[str] = set()
        while True:
            i = self._i
            kind = kinds[i]
            if kind == _PUNCT and texts[i] == "}":
                break
            if kind == _LABEL:
                block = region.add_block(self._parse_block_header(labels))
                continue
            if block is None:
                block = region.add_block(Block())
            block.append(self._parse_operation())
        if implicit_entry_block and not region.blocks:
            region.add_block(Block())
        self._i += 1
        self._depth -= 1
        self._open_regions.pop()
        if isolated:
            self._check_no_forward_references(scope)
        self._scope = outer
        return region

    def _parse_block_header(self, labels: set[str]) -> Block:
        at = self._i
        label = self._texts[at]
        if label in labels:
            self.error(f"redefinition of block '{label}'", at)
        labels.add(label)
        self._i += 1
        args = self.parse_comma_list(self.parse_block_arg) if self.at("(") else []
        self.expect(":", "after the block label")
        block = Block()
        self._define_block_args(block, args)
        return block

    def _define_block_args(self, block: Block, args: list[tuple[OperandRef, Type]]) -> None:
        for ref, kind in args:
            arg = block.add_arg(kind, None if ref.name.isdigit() else ref.name)
            self._define(ref.name, [arg], ref.token)

    def parse_top_level(self) -> list[Operation]:
        """Every op up to the end of the text (they share one scope of names)."""
        ops = []
        while self._kinds[self._i] != _EOF:
            ops.append(self._parse_operation())
        self._check_no_forward_references(self._scope)
        return ops

    def _parse_operation(self) -> Operation:
        kinds, texts = self._kinds, self._texts
        groups: list[tuple[str, int, int]] = []
        if kinds[self._i] == _VALUE:
            while True:
                at = self._i
                if "#" in texts[at]:
                    self.error("a result name cannot have a '#index'", at)
                self._i += 1
                count = 1
                if self.accept(":"):
                    count_at = self._i
                    count = self.parse_integer()
                    if count < 1:
                        self.error("a result group has at least one result", count_at)
                groups.append((texts[at][1:], count, at))
                if not self.accept(","):
                    break
            self.expect("=", "after the result names")
        name_at = self._i
        kind = kinds[name_at]
        if kind == _STRING:
            self._i += 1
            name = self._string_value(name_at)
            cls = self._op_classes.get(name) or self._unknown_op(name, name_at)
        elif kind == _IDENT:
            self._i += 1
            name = texts[name_at]
            cls = (self._op_classes.get(name)
                   or ("." not in name and self._op_classes.get("builtin." + name))
                   or self._unknown_op(name, name_at))
        else:
            self.error(f"expected an operation, found {self._describe()}")
        location = self._location(name_at)
        num_results = sum(group[1] for group in groups)
        self._op_stack.append((cls, location))
        if kind == _STRING:
            op = self._parse_generic(cls, num_results, name_at)
        else:
            op = self._parse_pretty(cls, num_results, name_at)
        self._op_stack.pop()
        if kinds[self._i] == _LOC or (texts[self._i] == "loc" and texts[self._i + 1] == "("):
            op.location = self.parse_location()
        if groups:
            self._bind_results(op, groups, num_results)
        return op

    def _unknown_op(self, name: str, at: int) -> NoReturn:
        if "." not in name:
            # Builtin ops are spelled without their dialect; others need theirs.
            known = [n[len("builtin."):] if n.startswith("builtin.") else n
                     for n in self._op_classes]
            self.error(f"unknown op '{name}'{did_you_mean(name, known)}", at)
        try:
            self.context.lookup_op(name)
        except IRError as exc:
            self.error(exc.message, at)
        raise AssertionError(name)  # lookup_op found it after all: unreachable

    def _parse_generic(self, cls: type, num_results: int, name_at: int) -> Operation:
        # The hot path of reading large modules: token loops with a local index.
        kinds, texts = self._kinds, self._texts
        self.expect("(", "to start the operands")
        i = self._i
        uses: list[int] = []  # token positions of the operands
        if texts[i] != ")":
            while kinds[i] == _VALUE:
                uses.append(i)
                i += 1
                if texts[i] != ",":
                    break
                i += 1
                if kinds[i] != _VALUE:
                    self._i = i
                    self.parse_operand()  # raises: a value must follow the comma
        self._i = i
        self.expect(")", "to end the operands")
        regions = []
        if self.accept("("):
            while True:
                regions.append(self.parse_region())
                if not self.accept(","):
                    break
            self.expect(")", "to end the regions")
        attrs = self.parse_attr_dict() if texts[self._i] == "{" else {}
        self.expect(":", "before the op's type")
        types_at = self._i
        self.expect("(", "to start the operand types")
        operand_types = self._parse_types_until(")")
        self.expect("->", "after the operand types")
        result_types = self._parse_types_until(")") if self.accept("(") else [self.parse_type()]
        if len(uses) != len(operand_types):
            self.error(f"'{cls.name}' has {len(uses)} operand(s), but its type lists "
                       f"{len(operand_types)}", types_at)
        if num_results and num_results != len(result_types):
            self.error(f"'{cls.name}' has {num_results} result name(s), but its type lists "
                       f"{len(result_types)} result(s)", types_at)
        operands = []
        for at, of_type in zip(uses, operand_types):
            name, _, index = texts[at][1:].partition("#")
            operands.append(self._resolve(name, int(index) if index else 0, at, of_type))
        try:
            return cls.create(operands, result_types, attrs, regions, self.op_location)
        except ParseError:
            raise
        except (IRError, ValueError) as exc:
            self.error(f"cannot build '{cls.name}': {exc}", name_at)

    def _parse_types_until(self, close: str) -> list[Type]:
        """``t, t, ... close`` (possibly empty), the opening bracket already read."""
        texts, simple = self._texts, self._simple_types
        i = self._i
        types: list[Type] = []
        if texts[i] != close:
            while True:
                found = simple.get(texts[i])
                if found is None:
                    self._i = i
                    found = self.parse_type()
                    i = self._i
                else:
                    i += 1
                types.append(found)
                if texts[i] != ",":
                    break
                i += 1
        self._i = i
        self.expect(close, "to end the types")
        return types

    def _parse_pretty(self, cls: type, num_results: int, name_at: int) -> Operation:
        hook = getattr(cls, "parse_pretty", None)
        if hook is None:
            self.error(f"'{cls.name}' has no pretty form; write it in the generic form "
                       f"\"{cls.name}\"(...) : (...) -> (...)", name_at)
        try:
            op = hook(self, num_results)
        except ParseError:
            raise
        except (IRError, ValueError) as exc:
            self.error(f"cannot build '{cls.name}': {exc}", name_at)
        op.location = self.op_location
        return op

    def _bind_results(self, op: Operation, groups: list[tuple[str, int, int]],
                      num_results: int) -> None:
        results = op.results
        if len(results) != num_results:
            self.error(f"'{op.name}' has {len(results)} result(s), but {num_results} name(s) "
                       f"are given", groups[0][2])
        start = 0
        for name, count, at in groups:
            values = results[start:start + count]
            start += count
            if not name.isdigit():
                values[0].name_hint = name
            self._define(name, values, at)
