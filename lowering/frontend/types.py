"""Theano's view of a tensor type: a dtype name and a broadcastable pattern.

The IR's ``TensorType`` (``tensor<?x1xf32>``) is the truth; this class is how users see and spell
it (``T.TensorType('float32', (False, True))``), prints it as Theano does, makes input variables
when called, and checks run-time values against it (``filter``).

>>> t = TensorType("float32", (False, True))
>>> str(t), str(TensorType("float64", (False,))), str(TensorType("int8", (False,) * 3))
('TensorType(float32, col)', 'TensorType(float64, vector)', 'TensorType(int8, 3D)')
>>> str(t.ir_type)
'tensor<?x1xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.config import config
from lowering.ir.types import TensorType as IRTensorType
from lowering.ir.types import scalar_type_of

#: Every dtype a tensor may have.
DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128")

_NAMED_PATTERNS = {(): "scalar", (False,): "vector", (False, True): "col", (True, False): "row",
                   (False, False): "matrix"}


def canonical_dtype(dtype) -> str:
    """A dtype name from a name, NumPy dtype or ``'floatX'``; an error names the allowed ones.

    >>> canonical_dtype(np.float32), canonical_dtype("int64")
    ('float32', 'int64')
    """
    if isinstance(dtype, str) and dtype == "floatX":
        return config.floatX
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise TypeError(f"unsupported dtype {dtype!r}; supported: {', '.join(DTYPES)}")
    return name


# The shared instances of TensorType.interned: a few per dtype and rank a program uses.
_INTERNED: dict = {}


class TensorType:
    """The type of a tensor variable: ``dtype`` and ``broadcastable`` (one flag per dimension).

    ``shape`` may also give static sizes (``None`` where unknown). Types compare by dtype and
    broadcastable pattern, as Theano's do. Calling a type makes a new input variable.

    >>> x = TensorType("float64", (False, False))("x")
    >>> x.name, str(x.type)
    ('x', 'TensorType(float64, matrix)')
    """

    def __init__(self, dtype, broadcastable=None, name: str | None = None, shape=None):
        self.dtype = canonical_dtype(dtype)
        if shape is None and broadcastable is None:
            raise TypeError("TensorType needs a broadcastable pattern or a shape")
        if shape is not None:
            shape = tuple(None if d is None else int(d) for d in shape)
            if any(d is not None and d < 0 for d in shape):
                raise ValueError(f"negative size in shape {shape}")
            pattern = tuple(d == 1 for d in shape)
            if broadcastable is not None and tuple(map(bool, broadcastable)) != pattern:
                raise ValueError(f"broadcastable {tuple(broadcastable)} disagrees with shape {shape}")
        else:
            pattern = tuple(bool(b) for b in broadcastable)
            shape = tuple(1 if b else None for b in pattern)
        self.broadcastable = pattern
        self.shape = shape
        self.name = name

    # -- conversions ----------------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.broadcastable)

    @property
    def ir_type(self) -> IRTensorType:
        """The IR type: ``?`` for unknown sizes, ``1`` for broadcastable dims."""
        return IRTensorType(self.shape, scalar_type_of(self.dtype))

    @staticmethod
    def from_ir(ir_type: IRTensorType) -> "TensorType":
        """The Theano view of an IR tensor type (static sizes are kept in ``shape``). Types
        without static sizes are shared instances, as Theano's are: ``T.dscalar("x").type is
        T.dscalar``.

        >>> ir_type = IRTensorType((None, 1), scalar_type_of("float64"))
        >>> TensorType.from_ir(ir_type) is TensorType.interned("float64", (False, True))
        True
        """
        if not isinstance(ir_type, IRTensorType):
            raise TypeError(f"not a tensor type: {ir_type}")
        if all(d is None or d == 1 for d in ir_type.shape):
            return TensorType.interned(ir_type.dtype.name, tuple(d == 1 for d in ir_type.shape))
        return TensorType(ir_type.dtype.name, shape=ir_type.shape)

    @staticmethod
    def interned(dtype, broadcastable) -> "TensorType":
        """The one instance of the type ``(dtype, broadcastable)`` that variables of that type
        return from ``.type`` (and that ``T.dmatrix`` and the other typed constructors are)."""
        key = (canonical_dtype(dtype), tuple(bool(b) for b in broadcastable))
        found = _INTERNED.get(key)
        if found is None:
            found = _INTERNED[key] = TensorType(*key)
        return found

    def __call__(self, name: str | None = None):
        """A new input variable of this type."""
        from .variable import new_input
        return new_input(self, name)

    make_variable = __call__

    # -- values ---------------------------------------------------------------------------------

    def filter(self, data, strict: bool = False, allow_downcast: bool | None = None) -> np.ndarray:
        """``data`` as an array of this type, or a TypeError saying why it does not fit (the rules
        of ``function()`` inputs: ``lowering.compile.values.filter_value``).

        >>> TensorType("float32", (False,)).filter([1.5, 2.0]).dtype
        dtype('float32')
        >>> TensorType("int32", (False,)).filter(np.array([1.5]))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        lowering.compile.values.InputTypeError: TensorType(int32, vector) expects int32 data ...
        """
        from lowering.compile.values import filter_value
        return filter_value(data, self.ir_type, str(self), strict=strict,
                            allow_downcast=allow_downcast, floatx=config.floatX)

    def value_zeros(self, shape) -> np.ndarray:
        """Zeros of this dtype with the given shape."""
        return np.zeros(shape, dtype=self.dtype)

    # -- comparison and printing ----------------------------------------------------------------

    def __eq__(self, other):
        return (isinstance(other, TensorType) and self.dtype == other.dtype
                and self.broadcastable == other.broadcastable)

    def __hash__(self):
        return hash((TensorType, self.dtype, self.broadcastable))

    def __str__(self):
        if self.name:
            return self.name
        pattern = _NAMED_PATTERNS.get(self.broadcastable)
        if pattern is None:
            pattern = str(self.broadcastable) if any(self.broadcastable) else f"{self.ndim}D"
        return f"TensorType({self.dtype}, {pattern})"

    __repr__ = __str__

