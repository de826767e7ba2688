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


@dataclass(frozen=True, eq=False)
class DenseAttr(Attribute):
    """A constant array with its tensor type: ``dense<[1.0, 2.0]> : tensor<2xf32>``.

    Stored as read-only NumPy data; equality and hashing look at the bytes.
    """

    array: np.ndarray
    type: TensorType

    def __post_init__(self):
        arr = np.array(self.array, dtype=self.type.dtype, copy=True)
        arr.setflags(write=False)
        object.__setattr__(self, "array", arr)

    @staticmethod
    def from_array(array, shape=None) -> "DenseAttr":
        """A dense attribute holding ``array``; the type uses its exact shape unless one is given."""
        arr = np.asarray(array)
        return DenseAttr(arr, TensorType(tuple(arr.shape) if shape is None else shape,
                                         scalar_type_of(arr.dtype)))

    def __eq__(self, other):
        return (isinstance(other, DenseAttr) and self.type == other.type
                and self.array.shape == other.array.shape
                and self.array.tobytes() == other.array.tobytes())

    def __hash__(self):
        return hash((self.type, self.array.shape, self.array.tobytes()))

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
        return str(int(x))

    def rec(a) -> str:
        if a.ndim == 0:
            return scalar(a[()])
        return "[" + ", ".join(rec(sub) for sub in a) + "]"

    if arr.size > 0 and arr.ndim > 0 and _is_splat(arr):
        return scalar(arr.flat[0])  # a splat, as MLIR prints it
    return rec(arr)


def _is_splat(arr: np.ndarray) -> bool:
    """All elements bitwise equal (so 0.0 and -0.0, or two different NaNs, are not a splat)."""
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
