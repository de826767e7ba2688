"""Attributes: frozen, hashable compile-time values attached to operations.

>>> from lowering.ir.types import F32
>>> str(IntAttr(3)), str(FloatAttr(0.5, F32)), str(ArrayAttr((IntAttr(0), IntAttr(1))))
('3 : i64', '5.000000e-01 : f32', '[0 : i64, 1 : i64]')
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import IRError
from .types import F64, I1, I64, ScalarType, TensorType, Type, scalar_type_of


class Attribute:
    """Base of attribute values. ``value`` gives the plain Python value."""

    __slots__ = ()

    @property
    def value(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class IntAttr(Attribute):
    data: int
    type: ScalarType = I64

    def __post_init__(self):
        object.__setattr__(self, "data", int(self.data))

    def __str__(self) -> str:
        if self.type == I1:
            return "true" if self.data else "false"
        return f"{self.data} : {self.type}"

    @property
    def value(self) -> int:
        return self.data


def BoolAttr(flag: bool) -> IntAttr:
    """A boolean is an ``i1`` integer attribute printed ``true``/``false``."""
    return IntAttr(1 if flag else 0, I1)


def format_float(x: float) -> str:
    """MLIR's float literal: scientific, exact for f32, hex-free; inf and nan spelled out."""
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.6e}"
    return text if float(text) == x else repr(float(x))


@dataclass(frozen=True)
class FloatAttr(Attribute):
    data: float
    type: ScalarType = F64

    def __post_init__(self):
        object.__setattr__(self, "data", float(self.data))

    def __str__(self) -> str:
        return f"{format_float(self.data)} : {self.type}"

    def __eq__(self, other):  # nan equals nan so that round trips compare equal
        return (isinstance(other, FloatAttr) and self.type == other.type
                and (self.data == other.data or (np.isnan(self.data) and np.isnan(other.data))))

    def __hash__(self):
        return hash((FloatAttr, "nan" if np.isnan(self.data) else self.data, self.type))

    @property
    def value(self) -> float:
        return self.data


@dataclass(frozen=True)
class ComplexAttr(Attribute):
    """A complex number of a ``complex<f32>`` or ``complex<f64>`` type, printed as MLIR's dense
    complex elements are: ``(1.000000e+00, -2.000000e+00) : complex<f64>``.

    >>> from lowering.ir.types import C64
    >>> str(ComplexAttr(1 - 2j, C64)), ComplexAttr(1 - 2j, C64).value
    ('(1.000000e+00, -2.000000e+00) : complex<f32>', (1-2j))
    """

    data: complex
    type: ScalarType

    def __post_init__(self):
        object.__setattr__(self, "data", complex(self.data))

    def __str__(self) -> str:
        return f"{format_complex(self.data)} : {self.type}"

    def _key(self) -> tuple:
        return tuple("nan" if np.isnan(p) else p for p in (self.data.real, self.data.imag))

    def __eq__(self, other):  # nan parts equal nan parts, so that round trips compare equal
        return isinstance(other, ComplexAttr) and self.type == other.type \
            and self._key() == other._key()

    def __hash__(self):
        return hash((ComplexAttr, self._key(), self.type))

    @property
    def value(self) -> complex:
        return self.data


def format_complex(z: complex) -> str:
    """``(real, imag)``, each part a float literal."""
    return f"({format_float(z.real)}, {format_float(z.imag)})"


@dataclass(frozen=True)
class StringAttr(Attribute):
    data: str

    def __str__(self) -> str:
        return json.dumps(self.data)

    @property
    def value(self) -> str:
        return self.data


@dataclass(frozen=True)
class UnitAttr(Attribute):
    """A present-or-absent flag; prints as ``unit``."""

    def __str__(self) -> str:
        return "unit"

    @property
    def value(self) -> bool:
        return True


@dataclass(frozen=True)
class TypeAttr(Attribute):
    data: Type

    def __str__(self) -> str:
        return str(self.data)

    @property
    def value(self) -> Type:
        return self.data


@dataclass(frozen=True)
class ArrayAttr(Attribute):
    data: tuple[Attribute, ...]

    def __post_init__(self):
        object.__setattr__(self, "data", tuple(self.data))

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.data)) + "]"

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)

    @property
    def value(self) -> tuple:
        return tuple(a.value for a in self.data)


@dataclass(frozen=True)
class DictAttr(Attribute):
    data: tuple[tuple[str, Attribute], ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k} = {v}" for k, v in self.data) + "}"

    @property
    def value(self) -> dict:
        return {k: v.value for k, v in self.data}


@dataclass(frozen=True)
class SymbolRefAttr(Attribute):
    data: str

    def __str__(self) -> str:
        return "@" + (self.data if self.data.replace("_", "a").replace(".", "a").isalnum()
                      else json.dumps(self.data))

    @property
    def value(self) -> str:
        return self.data


# The most elements a constant is given memory for: a splat (one value everywhere) of any size is
# kept as one value, but code that needs every element (the interpreter, a backend's global data)
# refuses more than this with an error naming the op, rather than allocating gigabytes.
MAX_DENSE_ELEMENTS = 1 << 26


@dataclass(frozen=True, eq=False)
class DenseAttr(Attribute):
    """A constant array with its tensor type: ``dense<[1.0, 2.0]> : tensor<2xf32>``.

    Stored as read-only NumPy data; equality and hashing look at the bytes. A splat (every
    element the same bits) is stored as one value broadcast to the shape, so
    ``dense<1> : tensor<4294967296xi64>`` costs eight bytes; ``array`` is then a read-only
    broadcast view and ``elements(op)`` gives contiguous data, within ``MAX_DENSE_ELEMENTS``.

    >>> from lowering.ir.types import I64
    >>> big = DenseAttr.splat(1, TensorType((1 << 32,), I64))
    >>> str(big), big.is_splat, big.array.shape
    ('dense<1> : tensor<4294967296xi64>', True, (4294967296,))
    """

    array: np.ndarray
    type: TensorType

    def __post_init__(self):
        arr = np.asarray(self.array)
        if _is_splat_view(arr) or (1 < arr.size <= MAX_DENSE_ELEMENTS and _is_splat(arr)):
            one = np.array(arr[(0,) * arr.ndim], dtype=self.type.dtype)
            arr = np.broadcast_to(one, arr.shape)  # read-only: one value, any size
        else:
            arr = np.array(arr, dtype=self.type.dtype, copy=True)
            arr.setflags(write=False)
        object.__setattr__(self, "array", arr)

    @staticmethod
    def from_array(array, shape=None) -> "DenseAttr":
        """A dense attribute holding ``array``; the type uses its exact shape unless one is given."""
        arr = np.asarray(array)
        return DenseAttr(arr, TensorType(tuple(arr.shape) if shape is None else shape,
                                         scalar_type_of(arr.dtype)))

    @staticmethod
    def splat(value, type: TensorType) -> "DenseAttr":
        """``value`` everywhere in the static shape of ``type``, without making the elements."""
        return DenseAttr(np.broadcast_to(np.array(value, dtype=type.dtype), type.shape), type)

    @property
    def is_splat(self) -> bool:
        """Whether the constant has elements and all of them have the same bits."""
        return self.array.size > 0 and (_is_splat_view(self.array) or _is_splat(self.array))

    def elements(self, op=None) -> np.ndarray:
        """Every element, C-contiguous and read-only; an ``IRError`` (naming ``op``) when there
        are more than ``MAX_DENSE_ELEMENTS``."""
        if self.array.size > MAX_DENSE_ELEMENTS:
            raise IRError(f"the constant {self.type} has {self.array.size} elements, more than "
                          f"the {MAX_DENSE_ELEMENTS} a constant can be given memory for", op)
        arr = self.array
        if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
            arr = np.array(arr, order="C")
            arr.setflags(write=False)
        return arr

    def _content(self) -> tuple:
        arr = self.array
        if _is_splat_view(arr):
            return ("splat", arr.shape, arr[(0,) * arr.ndim].tobytes())
        return ("dense", arr.shape, arr.tobytes())

    def __eq__(self, other):
        return (isinstance(other, DenseAttr) and self.type == other.type
                and self._content() == other._content())

    def __hash__(self):
        return hash((self.type, self._content()))

    def __str__(self) -> str:
        return f"dense<{_dense_literal(self.array)}> : {self.type}"

    @property
    def value(self) -> np.ndarray:
        return self.array


def _dense_literal(arr: np.ndarray) -> str:
    def scalar(x) -> str:
        if arr.dtype == np.bool_:
            return "true" if x else "false"
        if arr.dtype.kind == "f":
            return format_float(float(x))
        if arr.dtype.kind == "c":
            return format_complex(complex(x))
        return str(int(x))

    def rec(a) -> str:
        if a.ndim == 0:
            return scalar(a[()])
        return "[" + ", ".join(rec(sub) for sub in a) + "]"

    if arr.size > 0 and arr.ndim > 0 and (_is_splat_view(arr) or _is_splat(arr)):
        return scalar(arr[(0,) * arr.ndim])  # a splat, as MLIR prints it
    return rec(arr)


def _is_splat_view(arr: np.ndarray) -> bool:
    """A broadcast view of one value over more than one element (every stride 0)."""
    return arr.size > 1 and not any(arr.strides)


def _is_splat(arr: np.ndarray) -> bool:
    """All elements bitwise equal (so 0.0 and -0.0, or two different NaNs, are not a splat)."""
    if _is_splat_view(arr):
        return True
    flat = np.ascontiguousarray(arr).reshape(-1)
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    return bool((raw == raw[0]).all())


def to_attribute(value) -> Attribute:
    """Wrap a plain Python value: ``3`` → IntAttr, ``(0, 1)`` → ArrayAttr, ``"x"`` → StringAttr."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return BoolAttr(bool(value))
    if isinstance(value, (int, np.integer)):
        return IntAttr(int(value))
    if isinstance(value, (float, np.floating)):
        return FloatAttr(float(value))
    if isinstance(value, (complex, np.complexfloating)):
        return ComplexAttr(complex(value), scalar_type_of(np.complex128))
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, Type):
        return TypeAttr(value)
    if isinstance(value, (tuple, list)):
        return ArrayAttr(tuple(to_attribute(v) for v in value))
    if isinstance(value, np.ndarray):
        return DenseAttr.from_array(value)
    if value is None:
        return UnitAttr()
    raise TypeError(f"cannot make an attribute from {value!r}")
