"""Types: frozen, hashable values.

Builtin types are the scalar element types (``f32``, ``i64``, ``index``, ...), ranked tensors
(``tensor<?x784xf32>``, and sparse ones ``tensor<?x?xf64, #csr>`` whose ``encoding`` gives the
storage format, as MLIR's sparse_tensor encoding attribute does) and function types. Dialects add their own types by subclassing ``Type``
and registering a parser for their keyword (see ``register_type_parser``).

>>> t = TensorType((None, 784), F32)
>>> str(t), t.rank, t.broadcastable
('tensor<?x784xf32>', 2, (False, False))
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np


class Type:
    """Base of every IR type. Subclasses are frozen dataclasses and print themselves with str()."""

    __slots__ = ()


@dataclass(frozen=True)
class ScalarType(Type):
    """An element type: a float, a signed or unsigned integer, i1 (bool), index, or a complex
    number of two floats (``complex<f32>``, ``complex<f64>``, as MLIR spells them).

    >>> C64.dtype, C64.is_complex, C64.is_float, str(C64.real_part)
    (dtype('complex64'), True, False, 'f32')
    """

    name: str

    _DTYPES: ClassVar[dict[str, str]] = {
        "f16": "float16", "f32": "float32", "f64": "float64",
        "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
        "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
        "index": "int64",
        "complex<f32>": "complex64", "complex<f64>": "complex128",
    }

    def __post_init__(self):
        if self.name not in self._DTYPES:
            raise ValueError(f"unknown scalar type {self.name!r}")

    def __str__(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype holding values of this type."""
        return np.dtype(self._DTYPES[self.name])

    @property
    def is_float(self) -> bool:
        """A real float (complex types are not)."""
        return self.name.startswith("f")

    @property
    def is_complex(self) -> bool:
        return self.name.startswith("complex")

    @property
    def is_int(self) -> bool:
        return not self.is_float and not self.is_complex and self.name != "i1"

    @property
    def real_part(self) -> "ScalarType":
        """The float type of a complex type's two parts (a real type is its own)."""
        return ScalarType(self.name[8:-1]) if self.is_complex else self

    @property
    def is_signed(self) -> bool:
        return self.name.startswith("i") and self.name != "i1" or self.name == "index"

    @property
    def is_bool(self) -> bool:
        return self.name == "i1"

    @property
    def bits(self) -> int:
        if self.is_complex:
            return 2 * self.real_part.bits
        return 64 if self.name == "index" else int(self.name.lstrip("uif"))


F16, F32, F64 = ScalarType("f16"), ScalarType("f32"), ScalarType("f64")
I1, I8, I16, I32, I64 = (ScalarType(n) for n in ("i1", "i8", "i16", "i32", "i64"))
UI8, UI16, UI32, UI64 = (ScalarType(n) for n in ("ui8", "ui16", "ui32", "ui64"))
INDEX = ScalarType("index")
C64, C128 = ScalarType("complex<f32>"), ScalarType("complex<f64>")

# The types written as one word; the complex types are ``complex<...>`` (``COMPLEX_TYPES``).
SCALAR_TYPES = {t.name: t for t in (F16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64, INDEX)}
COMPLEX_TYPES = {t.name: t for t in (C64, C128)}
_BY_DTYPE = {t.dtype: t for t in [*SCALAR_TYPES.values(), *COMPLEX_TYPES.values()]
             if t.name != "index"}


def complex_type_of(real: ScalarType) -> ScalarType:
    """The complex type whose parts are ``real`` (f32 or f64).

    >>> str(complex_type_of(F64))
    'complex<f64>'
    """
    if real not in (F32, F64):
        raise TypeError(f"complex numbers have f32 or f64 parts, not {real}")
    return ScalarType(f"complex<{real}>")


def scalar_type_of(dtype) -> ScalarType:
    """The element type for a NumPy dtype or dtype name.

    >>> scalar_type_of("float32")
    ScalarType(name='f32')
    """
    try:
        return _BY_DTYPE[np.dtype(dtype)]
    except (KeyError, TypeError) as exc:
        raise TypeError(f"unsupported dtype {dtype!r}; supported: "
                        f"{', '.join(sorted(str(d) for d in _BY_DTYPE))}") from exc


@dataclass(frozen=True)
class SparseEncoding:
    """How a sparse matrix stores its entries, as MLIR's ``#sparse_tensor.encoding``: the
    dimension each storage level walks (``order``) and each level's format. Both encodings are
    one dense level over the outer dimension and one compressed level over the inner one:
    ``csr`` walks rows then the columns present in each row, ``csc`` columns then rows. A
    compressed level keeps ``positions`` (where each outer entry's run starts, one more than
    the outer size) and ``coordinates`` (the inner index of each stored value).

    >>> CSR.order, CSR.levels, str(CSC), CSR.transposed() == CSC
    ((0, 1), ('dense', 'compressed'), '#csc', True)
    """

    name: str

    _ORDERS: ClassVar[dict[str, tuple[int, int]]] = {"csr": (0, 1), "csc": (1, 0)}

    def __post_init__(self):
        if self.name not in self._ORDERS:
            raise ValueError(f"unknown sparse encoding #{self.name}; known: "
                             f"{', '.join('#' + n for n in self._ORDERS)}")

    def __str__(self) -> str:
        return "#" + self.name

    @property
    def order(self) -> tuple[int, int]:
        """The dimension of each level: ``(outer, inner)``."""
        return self._ORDERS[self.name]

    @property
    def levels(self) -> tuple[str, str]:
        return ("dense", "compressed")

    @property
    def outer(self) -> int:
        """The dimension the positions run over (rows for CSR, columns for CSC)."""
        return self.order[0]

    def transposed(self) -> "SparseEncoding":
        """The encoding of the transpose stored in the same arrays (CSR <-> CSC)."""
        return CSC if self.name == "csr" else CSR


CSR, CSC = SparseEncoding("csr"), SparseEncoding("csc")
SPARSE_ENCODINGS = {e.name: e for e in (CSR, CSC)}


@dataclass(frozen=True)
class TensorType(Type):
    """A ranked tensor: ``None`` is a run-time dimension (``?``), ``1`` a broadcastable one.

    ``encoding`` (None for a dense tensor) makes it a sparse tensor stored in that format.

    >>> str(TensorType((None, 5), F64, CSR)), TensorType((3,), F32).is_sparse
    ('tensor<?x5xf64, #csr>', False)
    """

    shape: tuple[int | None, ...]
    element: ScalarType
    encoding: SparseEncoding | None = None

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(self.shape))
        for dim in self.shape:
            if dim is not None and (not isinstance(dim, (int, np.integer)) or dim < 0):
                raise ValueError(f"bad tensor dimension {dim!r} in {self.shape}")
        if self.encoding is not None and len(self.shape) != 2:
            raise ValueError(f"a sparse tensor ({self.encoding}) must have rank 2, got shape "
                             f"{self.shape}")

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        if self.encoding is not None:
            return f"tensor<{dims}{self.element}, {self.encoding}>"
        return f"tensor<{dims}{self.element}>"

    @property
    def is_sparse(self) -> bool:
        return self.encoding is not None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.element.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return tuple(d == 1 for d in self.shape)

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.element)

    def with_element(self, element: ScalarType) -> "TensorType":
        return TensorType(self.shape, element)

    def accepts_shape(self, shape) -> bool:
        """Whether a concrete array shape fits this type."""
        return len(shape) == self.rank and all(d is None or d == s for d, s in zip(self.shape, shape))


@dataclass(frozen=True)
class FunctionType(Type):
    """``(inputs) -> results``, the type of a ``func.func``."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.results))
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            return f"({ins}) -> {outs}"
        return f"({ins}) -> ({outs})"


# Dialect types: a dialect registers the keyword its types print with (``!loops.buffer<...>`` or a
# bare keyword such as ``buffer``) and a function parsing the body between ``<`` and ``>``.
TYPE_PARSERS: dict[str, Callable] = {}


def register_type_parser(keyword: str, parse: Callable) -> None:
    """Teach the IR parser a dialect type: ``parse(parser)`` reads the type after its keyword."""
    TYPE_PARSERS[keyword] = parse
