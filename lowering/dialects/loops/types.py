"""The buffer type of the loops dialect: a strided view of memory.

A buffer has a shape (``None`` is a run-time size, printed ``?``), an element type, a layout
(strides in elements and an offset in elements from the start of its allocation, either of which
may be ``?``) and a memory space. ``strides=None`` is the contiguous row-major layout, and strides
that spell out that layout are normalized to ``None`` so equal layouts give equal types.

>>> from lowering.ir.types import F32
>>> str(BufferType((None, 784), F32))
'!loops.buffer<?x784xf32>'
>>> t = BufferType((None, None), F32, strides=(None, 1), offset=None, memory_space="device")
>>> str(t)
'!loops.buffer<?x?xf32, strides=[?, 1], offset=?, space="device">'
>>> parse_buffer_type(str(t)) == t
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

import numpy as np

from lowering.ir.parser import parse_type
from lowering.ir.types import ScalarType, Type, register_type_parser

KEYWORD = "!loops.buffer"
MEMORY_SPACES = ("host", "device", "shared")


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def contiguous_strides(shape) -> tuple[int | None, ...]:
    """Row-major strides (in elements) of ``shape``; a stride is ``None`` when a later dim is.

    >>> contiguous_strides((None, 3, 4))
    (12, 4, 1)
    >>> contiguous_strides((2, None, 4))
    (None, 4, 1)
    """
    strides: list[int | None] = []
    running: int | None = 1
    for dim in reversed(tuple(shape)):
        strides.append(running)
        running = None if running is None or dim is None else running * dim
    return tuple(reversed(strides))


def _is_contiguous(shape, strides) -> bool:
    # A size-1 dimension is never stepped along, so its stride does not matter.
    for dim, stride, want in zip(shape, strides, contiguous_strides(shape)):
        if dim == 1:
            continue
        if stride is None or want is None or stride != want:
            return False
    return True


@dataclass(frozen=True)
class BufferType(Type):
    """A strided buffer: ``!loops.buffer<?x4xf32, strides=[?, 1], offset=?, space="device">``.

    ``strides`` and ``offset`` count elements, not bytes; ``None`` entries are run-time values.
    """

    shape: tuple[int | None, ...]
    element: ScalarType
    strides: tuple[int | None, ...] | None = None
    offset: int | None = 0
    memory_space: str = "host"

    def __post_init__(self):
        shape = tuple(self.shape)
        for dim in shape:
            if dim is not None and (not _is_int(dim) or dim < 0):
                raise ValueError(f"bad buffer dimension {dim!r} in {shape}")
        object.__setattr__(self, "shape", tuple(None if d is None else int(d) for d in shape))
        if not isinstance(self.element, ScalarType):
            raise ValueError(f"buffer element type must be a scalar type, got {self.element!r}")
        strides = self.strides
        if strides is not None:
            strides = tuple(strides)
            if len(strides) != len(self.shape):
                raise ValueError(f"buffer has {len(self.shape)} dimensions but {len(strides)} "
                                 f"strides {strides}")
            for s in strides:
                if s is not None and not _is_int(s):
                    raise ValueError(f"bad buffer stride {s!r} in {strides}")
            strides = tuple(None if s is None else int(s) for s in strides)
            if _is_contiguous(self.shape, strides):
                strides = None
        object.__setattr__(self, "strides", strides)
        if self.offset is not None and (not _is_int(self.offset) or self.offset < 0):
            raise ValueError(f"buffer offset must be a non-negative integer or None (?), "
                             f"got {self.offset!r}")
        if self.offset is not None:
            object.__setattr__(self, "offset", int(self.offset))
        if self.memory_space not in MEMORY_SPACES:
            raise ValueError(f"unknown memory space {self.memory_space!r}; "
                             f"known: {', '.join(MEMORY_SPACES)}")

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        parts = [f"{dims}{self.element}"]
        if self.strides is not None:
            parts.append("strides=[" + ", ".join(_dim_text(s) for s in self.strides) + "]")
        if self.offset != 0:
            parts.append(f"offset={_dim_text(self.offset)}")
        if self.memory_space != "host":
            parts.append(f"space={json.dumps(self.memory_space)}")
        return f"{KEYWORD}<{', '.join(parts)}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements."""
        return self.element.dtype

    @property
    def is_contiguous(self) -> bool:
        """Whether the layout is row-major without gaps (the offset may be anything)."""
        return self.strides is None

    @property
    def layout_strides(self) -> tuple[int | None, ...]:
        """The strides in elements, computed from the shape for the contiguous layout.

        >>> from lowering.ir.types import F32
        >>> BufferType((None, 3), F32).layout_strides
        (3, 1)
        """
        return contiguous_strides(self.shape) if self.strides is None else self.strides

    @property
    def dynamic_dims(self) -> tuple[int, ...]:
        """The axes whose size is known only at run time."""
        return tuple(i for i, d in enumerate(self.shape) if d is None)

    def with_shape(self, shape) -> "BufferType":
        return replace(self, shape=tuple(shape))

    def with_layout(self, strides, offset) -> "BufferType":
        return replace(self, strides=strides, offset=offset)

    def accepts_shape(self, shape) -> bool:
        """Whether a concrete array shape fits this type."""
        return len(shape) == self.rank and all(d is None or d == s
                                               for d, s in zip(self.shape, shape))


def _dim_text(x: int | None) -> str:
    return "?" if x is None else str(x)


# ---------------------------------------------------------------------------------------------
# Parsing, with the IR parser's helpers. After the keyword:
#
#   body   ::= `<` dims element (`,` item)* `>`        dims ::= ((`?` | integer) `x`)*
#   item   ::= `strides` `=` `[` (value (`,` value)*)? `]` | `offset` `=` value | `space` `=` string
#   value  ::= `?` | integer


def _dynamic_or_int(parser) -> int | None:
    return None if parser.accept("?") else parser.parse_integer()


def _parse_after_keyword(parser) -> BufferType:
    """Read ``<...>`` of a buffer type (the IR parser has read the keyword)."""
    parser.expect("<", f"after '{KEYWORD}'")
    shape = parser.parse_dims()
    at = parser.position()
    element = parser.parse_type()
    if not isinstance(element, ScalarType):
        parser.error(f"a buffer's element type must be a scalar type, not {element}", at)
    fields: dict = {}
    while parser.accept(","):
        at = parser.position()
        key = parser.parse_keyword() if parser.peek_kind() == "ident" else None
        if key not in ("strides", "offset", "space"):
            parser.error("expected 'strides', 'offset' or 'space' in a buffer type", at)
        if key in fields:
            parser.error(f"'{key}' given twice in a buffer type", at)
        parser.expect("=", f"after '{key}'")
        at = parser.position()
        if key == "strides":
            fields[key] = tuple(parser.parse_comma_list(lambda: _dynamic_or_int(parser), "[", "]"))
            if len(fields[key]) != len(shape):
                parser.error(f"expected {len(shape)} strides, one per dimension", at)
        elif key == "offset":
            fields[key] = _dynamic_or_int(parser)
        else:
            fields[key] = parser.parse_string()
            if fields[key] not in MEMORY_SPACES:
                parser.error(f"unknown memory space '{fields[key]}' (known: "
                             f"{', '.join(MEMORY_SPACES)})", at)
    parser.expect(">", "to end the buffer type")
    return BufferType(tuple(shape), element, fields.get("strides"), fields.get("offset", 0),
                      fields.get("space", "host"))


def parse_buffer_type(text: str) -> BufferType:
    """Parse the text of a buffer type (a ParseError names the line and column when malformed).

    >>> parse_buffer_type("!loops.buffer<2x?xi64, strides=[-1, 2]>").strides
    (-1, 2)
    """
    t = parse_type(text)
    if not isinstance(t, BufferType):
        raise ValueError(f"expected a buffer type, got {t}")
    return t


register_type_parser(KEYWORD, _parse_after_keyword)
