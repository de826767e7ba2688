"""Passes, the registry of passes by name, and MLIR's pass-pipeline syntax.

A pass is a small frozen dataclass with a kebab-case ``name``; its options are fields (the option
``max-inputs`` is the field ``max_inputs``) and ``apply(module)`` does the work::

    @register_pass
    class Fuse(ModulePass):
        \"\"\"Fuse elementwise ops.\"\"\"
        name = "fuse"
        max_inputs: int = option(32, "most inputs of one fused op")
        explain: bool = False

        def apply(self, module):
            ...

``register_pass`` makes the class a frozen dataclass if it is not one already. Option types:
``bool``, ``int``, ``float``, ``str``, ``Literal[...]``, ``X | None`` and ``tuple[X, ...]`` (a
comma-separated list in the text). A pipeline is a comma-separated list of passes with options in
braces; ``builtin.module(...)`` and ``func.func(...)`` nesting is accepted and flattened. A pass
that finds ops by name declares ``context: Context | None = context_field()``: not an option, it
is set by ``PassManager(..., context=...)`` (``None``: the default context).

>>> @register_pass
... class Hello(ModulePass):
...     \"\"\"Does nothing, politely.\"\"\"
...     name = "test-hello"
...     times: int = 1
...     words: tuple[str, ...] = ()
...     def apply(self, module):
...         pass
>>> passes = parse_pipeline("builtin.module(test-hello{times=3 words=a,b})")
>>> passes
[Hello(times=3, words=('a', 'b'))]
>>> pipeline_to_string(passes)
'test-hello{times=3 words=a,b}'
>>> del PASS_REGISTRY["test-hello"]
"""
from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from .core import Operation, did_you_mean


@dataclass(frozen=True)
class ModulePass:
    """Base of passes: ``name`` is the kebab-case name, fields are the options."""

    name: ClassVar[str] = ""

    def __post_init__(self):
        for opt in self.options():
            problem = opt.check(getattr(self, opt.field))
            if problem:
                raise ValueError(f"pass '{self.name}': option '{opt.key}' {problem}")

    def apply(self, module: Operation) -> None:
        """Transform ``module`` in place; raise ``PassFailure`` (or any IRError) to fail."""
        raise NotImplementedError(f"pass '{self.name}' does not implement apply")

    @classmethod
    def summary(cls) -> str:
        """The first line of the pass's docstring."""
        doc = cls.__doc__ or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @classmethod
    def options(cls) -> list["PassOption"]:
        """The options of this pass, in field order."""
        hints = typing.get_type_hints(cls)
        return [PassOption(f.name.replace("_", "-"), f.name, hints[f.name], f.default,
                           f.metadata.get("help", ""), f.metadata.get("minimum"),
                           f.metadata.get("maximum"), f.metadata.get("power_of_two", False))
                for f in dataclasses.fields(cls) if f.init and not f.metadata.get("context")]

    def with_context(self, context) -> "ModulePass":
        """This pass, finding ops through ``context`` (a ``lowering.ir.context.Context``) if it
        has a ``context_field``; else this pass itself."""
        fields = {f.name for f in dataclasses.fields(self) if f.metadata.get("context")}
        return dataclasses.replace(self, **{name: context for name in fields}) if fields else self

    def pipeline_element(self) -> str:
        """This pass in pipeline text, with the options that differ from their defaults."""
        parts = [f"{opt.key}={format_option_value(getattr(self, opt.field), opt.type)}"
                 for opt in self.options() if getattr(self, opt.field) != opt.default]
        return self.name + ("{" + " ".join(parts) + "}" if parts else "")


@dataclass(frozen=True)
class PassOption:
    """One option of a pass: its text ``key``, dataclass ``field``, type, default and help."""

    key: str
    field: str
    type: Any
    default: Any
    help: str = ""
    minimum: int | float | None = None
    maximum: int | float | None = None
    power_of_two: bool = False

    def type_name(self) -> str:
        return _type_name(self.type)

    def range_text(self) -> str:
        """The values allowed beyond the type, for help texts ("" if any value of the type).

        >>> PassOption("block-size", "block_size", int, 256, minimum=1, maximum=1024).range_text()
        'from 1 to 1024'
        """
        parts = []
        if self.minimum is not None and self.maximum is not None:
            parts.append(f"from {self.minimum} to {self.maximum}")
        elif self.minimum is not None:
            parts.append(f"at least {self.minimum}")
        elif self.maximum is not None:
            parts.append(f"at most {self.maximum}")
        if self.power_of_two:
            parts.append("a power of two")
        return ", ".join(parts)

    def check(self, value) -> str:
        """What is wrong with ``value`` for this option ("" if nothing): its type and range.

        >>> PassOption("max-iterations", "max_iterations", int, 10, minimum=1).check(0)
        'must be at least 1, got 0'
        """
        if not _has_type(value, self.type):
            return f"must be {_article(self.type_name())}, got {value!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return ""
        if self.minimum is not None and value < self.minimum:
            return f"must be at least {self.minimum}, got {value}"
        if self.maximum is not None and value > self.maximum:
            return f"must be at most {self.maximum}, got {value}"
        if self.power_of_two and (value < 1 or int(value) & (int(value) - 1)):
            return f"must be a power of two, got {value}"
        return ""


def option(default, help: str = "", minimum=None, maximum=None, power_of_two: bool = False):
    """A pass option with a help text shown by ``lowering-opt --list-passes`` and the range its
    values must be in (checked when the pass is made, from pipeline text or from Python).

    >>> option(3, "how many", minimum=1).default
    3
    """
    return dataclasses.field(default=default, metadata={
        "help": help, "minimum": minimum, "maximum": maximum, "power_of_two": power_of_two})


def context_field():
    """The field of a pass that finds ops by name, as in ``context: Context | None =
    context_field()``: the ``Context`` to ask (``None``: the default context). Not an option:
    pipeline text does not set it, ``PassManager(..., context=...)`` does.
    """
    return dataclasses.field(default=None, compare=False, repr=False, metadata={"context": True})


class PassFailure(Exception):
    """Raised by a pass that cannot do its job on this input; ``op`` is where (if known)."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.message = message
        self.op = op


# ---------------------------------------------------------------------------------------------
# The registry

PASS_REGISTRY: dict[str, type[ModulePass]] = {}

_KEBAB = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: register a pass under its ``name`` (making it a frozen dataclass)."""
    if not (isinstance(cls, type) and issubclass(cls, ModulePass)):
        raise TypeError(f"{cls!r} is not a subclass of ModulePass")
    if "__dataclass_fields__" not in cls.__dict__:
        cls = dataclass(frozen=True)(cls)
    elif not cls.__dataclass_params__.frozen:
        raise TypeError(f"pass {cls.__name__} must be a frozen dataclass")
    if not _KEBAB.match(cls.name or ""):
        raise ValueError(f"pass {cls.__name__}: name {cls.name!r} is not kebab-case")
    old = PASS_REGISTRY.get(cls.name)
    if old is not None and old.__qualname__ != cls.__qualname__:
        raise ValueError(f"pass name '{cls.name}' is taken by {old.__module__}.{old.__qualname__}")
    for opt in cls.options():
        if opt.default is dataclasses.MISSING:
            raise TypeError(f"pass '{cls.name}': option '{opt.key}' needs a default value")
        _type_name(opt.type)  # rejects option types the pipeline syntax cannot spell
    PASS_REGISTRY[cls.name] = cls
    return cls


def lookup_pass(name: str) -> type[ModulePass]:
    """The pass class registered as ``name``; a KeyError names the nearest known passes."""
    try:
        return PASS_REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown pass '{name}'{did_you_mean(name, PASS_REGISTRY)}") from None


# ---------------------------------------------------------------------------------------------
# Pipeline text


class PipelineError(ValueError):
    """A malformed pipeline: the message, the pipeline text and the 0-based column at fault.

    >>> print(PipelineError("unknown pass 'x'", "cse,x", 4))
    invalid pass pipeline at column 5: unknown pass 'x'
      cse,x
          ^
    """

    def __init__(self, message: str, text: str, column: int):
        super().__init__(message)
        self.message = message
        self.text = text
        self.column = column

    def __str__(self) -> str:
        return (f"invalid pass pipeline at column {self.column + 1}: {self.message}\n"
                f"  {self.text}\n  {' ' * self.column}^")


def parse_pipeline(text: str) -> list[ModulePass]:
    """The passes of a pipeline in MLIR syntax, e.g. ``"canonicalize,cse"``.

    Errors name the unknown pass or option, the nearest known names and the column:

    >>> parse_pipeline("builtin.module(func.func())")
    []
    >>> parse_pipeline("no-such-pass")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    lowering.ir.passes.PipelineError: invalid pass pipeline at column 1: unknown pass ...
    """
    return _PipelineParser(text).pipeline(closing=None)


def pipeline_to_string(passes) -> str:
    """Pipeline text for ``passes``; ``parse_pipeline`` reads it back.

    >>> @dataclass(frozen=True)
    ... class Scale(ModulePass):
    ...     name = "scale"
    ...     factor: float = 1.0
    >>> pipeline_to_string([Scale(), Scale(factor=2.5)])
    'scale,scale{factor=2.5}'
    """
    return ",".join(p.pipeline_element() for p in passes)


_NAME = re.compile(r"[A-Za-z_][\w.\-]*")  # a pass, or an op anchor such as func.func
_KEY = re.compile(r"[A-Za-z_][\w\-]*")


class _PipelineParser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, message: str, column: int | None = None) -> PipelineError:
        return PipelineError(message, self.text, self.pos if column is None else column)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def pipeline(self, closing: str | None) -> list[ModulePass]:
        passes: list[ModulePass] = []
        self.skip_space()
        if self.peek() == (closing or ""):  # an empty pipeline
            return passes
        while True:
            passes.extend(self.element())
            self.skip_space()
            ch = self.peek()
            if ch == ",":
                self.pos += 1
                continue
            if ch == (closing or ""):
                return passes
            want = f"',' or '{closing}'" if closing else "',' or the end"
            raise self.error(f"expected {want}, got " + (f"'{ch}'" if ch else "the end"))

    def element(self) -> list[ModulePass]:
        self.skip_space()
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise self.error(f"expected a pass name, got '{self.peek()}'" if self.peek()
                             else "expected a pass name, got the end")
        name, start = match.group(), self.pos
        self.pos = match.end()
        self.skip_space()
        if self.peek() == "(":  # an op anchor such as builtin.module(...): flattened
            self.pos += 1
            inner = self.pipeline(closing=")")
            self.pos += 1
            return inner
        if name not in PASS_REGISTRY:
            raise self.error(f"unknown pass '{name}'{did_you_mean(name, PASS_REGISTRY)}", start)
        cls = PASS_REGISTRY[name]
        values = self.options(cls) if self.peek() == "{" else {}
        try:
            return [cls(**values)]
        except ValueError as exc:  # an option out of its range
            raise self.error(str(exc), start) from None

    def options(self, cls: type[ModulePass]) -> dict[str, Any]:
        by_key = {opt.key: opt for opt in cls.options()}
        values: dict[str, Any] = {}
        self.pos += 1  # '{'
        while True:
            self.skip_space()
            if self.peek() == "}":
                self.pos += 1
                return values
            if not self.peek():
                raise self.error(f"options of pass '{cls.name}' are not closed with '}}'")
            key_start = self.pos
            match = _KEY.match(self.text, self.pos)
            if match is None:
                raise self.error(f"expected an option name, got '{self.peek()}'")
            key = match.group().replace("_", "-")
            self.pos = match.end()
            opt = by_key.get(key)
            if opt is None:
                known = ", ".join(by_key) or "none"
                raise self.error(f"unknown option '{match.group()}' of pass '{cls.name}'"
                                 f"{did_you_mean(key, by_key)} (its options: {known})", key_start)
            if self.peek() == "=":
                self.pos += 1
                value_start = self.pos
                raw = self.raw_value()
                try:
                    values[opt.field] = parse_option_value(raw, opt.type)
                except ValueError as exc:
                    raise self.error(f"option '{key}' of pass '{cls.name}': {exc}",
                                     value_start) from None
                problem = opt.check(values[opt.field])
                if problem:
                    raise self.error(f"option '{key}' of pass '{cls.name}' {problem}",
                                     value_start)
            elif _strip_optional(opt.type) is bool:
                values[opt.field] = True  # a bare flag: {explain}
            else:
                raise self.error(f"option '{key}' of pass '{cls.name}' needs a value "
                                 f"({opt.type_name()})")

    def raw_value(self) -> str:
        """The option value's text: up to a space or '}' outside quotes and braces."""
        start, depth = self.pos, 0
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == '"':
                end = self.text.find('"', self.pos + 1)
                if end < 0:
                    raise self.error("unterminated string")
                self.pos = end + 1
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                if depth == 0:
                    break
                depth -= 1
            elif ch.isspace() and depth == 0:
                break
            self.pos += 1
        return self.text[start:self.pos]


# ---------------------------------------------------------------------------------------------
# Option values


def parse_option_value(raw: str, kind) -> Any:
    """Convert option text to a value of the option's type; ValueError says what was expected.

    >>> parse_option_value("true", bool), parse_option_value("1,2", tuple[int, ...])
    (True, (1, 2))
    """
    if _is_optional(kind):
        if raw == "none":
            return None
        kind = _strip_optional(kind)
    origin = typing.get_origin(kind)
    if origin in (tuple, list):
        (element, *_rest) = typing.get_args(kind) or (str,)
        items = _split_list(raw)
        return tuple(parse_option_value(item, element) for item in items)
    text = _unquote(raw)
    if origin is Literal:
        choices = typing.get_args(kind)
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(map(str, choices))}, got '{text}'")
        return text
    if kind is bool:
        if text.lower() in ("true", "1", "on", "yes"):
            return True
        if text.lower() in ("false", "0", "off", "no"):
            return False
        raise ValueError(f"expected true or false, got '{text}'")
    if kind is int:
        try:
            return int(text, 0)
        except ValueError:
            raise ValueError(f"expected an integer, got '{text}'") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got '{text}'") from None
    if kind is str:
        return text
    raise ValueError(f"options of type {kind!r} are not supported")


def format_option_value(value, kind) -> str:
    """Option text for ``value`` (the inverse of ``parse_option_value``).

    >>> format_option_value(("a b", "c"), tuple[str, ...]), format_option_value(False, bool)
    ('"a b",c', 'false')
    """
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(format_option_value(v, None) for v in value)
    text = str(value)
    if not text or re.search(r'[\s{},"]', text):
        return "{" + text + "}" if '"' in text else f'"{text}"'
    return text


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and ((raw[0] == '"' and raw[-1] == '"') or (raw[0] == "{" and raw[-1] == "}")):
        return raw[1:-1]
    return raw


def _split_list(raw: str) -> list[str]:
    text = raw[1:-1] if raw.startswith("{") and raw.endswith("}") else raw
    items, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "{":
            depth += 1
        elif not quoted and ch == "}":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [] if items == [""] else items


def _is_optional(kind) -> bool:
    return (typing.get_origin(kind) in (typing.Union, _UnionType)
            and type(None) in typing.get_args(kind))


def _strip_optional(kind):
    if _is_optional(kind):
        rest = [a for a in typing.get_args(kind) if a is not type(None)]
        return rest[0] if len(rest) == 1 else kind
    return kind


_UnionType = type(int | None)


def _has_type(value, kind) -> bool:
    """Whether ``value`` is of the option type ``kind`` (an int is a float too, not a bool)."""
    if _is_optional(kind):
        if value is None:
            return True
        kind = _strip_optional(kind)
    origin = typing.get_origin(kind)
    if origin in (tuple, list):
        (element, *_rest) = typing.get_args(kind) or (str,)
        return isinstance(value, (tuple, list)) and all(_has_type(v, element) for v in value)
    if origin is Literal:
        return value in typing.get_args(kind)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _article(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name if " | " not in name else f"one of {name}"


def _type_name(kind) -> str:
    if _is_optional(kind):
        return _type_name(_strip_optional(kind)) + " or none"
    origin = typing.get_origin(kind)
    if origin in (tuple, list):
        args = typing.get_args(kind)
        return f"list of {_type_name(args[0] if args else str)}"
    if origin is Literal:
        return " | ".join(map(str, typing.get_args(kind)))
    names = {bool: "bool", int: "int", float: "float", str: "string"}
    if kind not in names:
        raise TypeError(f"option type {kind!r} is not supported; use bool, int, float, str, "
                        f"Literal[...], X | None or tuple[X, ...]")
    return names[kind]
