"""Run-time values entering a compiled function: Theano's rules for accepting and casting them.

A value given for an input (or stored with ``set_value``) must fit the variable's tensor type. The
rules are Theano's ``TensorType.filter``:

- an array of exactly the type's dtype is taken as it is;
- ``strict=True`` accepts nothing else;
- ``allow_downcast=True`` casts anything to the dtype;
- otherwise an array is accepted when its dtype upcasts safely to the type's dtype (int8 data for a
  float32 input), a Python ``float`` is accepted for a ``floatX`` variable, and any other value
  (Python numbers, lists) is accepted when converting it loses nothing (``1`` for a float64 input,
  but not ``0.1`` for a float32 one);
- then the rank must match and every static dimension of the type must match the value's shape.

>>> from lowering.ir.types import F32, F64, I64, TensorType
>>> filter_value(1, TensorType((), F64), "input 'inc'")
array(1.)
>>> filter_value(np.arange(3, dtype="int8"), TensorType((None,), F32), "input 'x'").dtype
dtype('float32')
>>> filter_value(2.5, TensorType((), I64), "input 'n'")
Traceback (most recent call last):
...
lowering.compile.values.InputTypeError: input 'n' (tensor<i64>) cannot store 2.5 exactly: as int64 it would be 2. Convert it with numpy.asarray(data, 'int64') or pass allow_input_downcast=True to function().
"""
from __future__ import annotations

import numpy as np

from lowering.ir.types import TensorType


class InputTypeError(TypeError):
    """A value does not fit the type of the variable it is given for (names the variable)."""


def filter_value(data, ttype: TensorType, what: str, *, strict: bool = False,
                 allow_downcast: bool | None = None, floatx: str | None = None) -> np.ndarray:
    """``data`` as an ndarray of ``ttype``'s dtype, or an InputTypeError naming ``what``.

    ``floatx`` is the dtype a Python ``float`` may be cast to without ``allow_downcast``.
    The result may be ``data`` itself (no copy) when it already fits.

    >>> from lowering.ir.types import F32, TensorType
    >>> filter_value(np.zeros(2, "float64"), TensorType((None,), F32), "input 'x'")
    Traceback (most recent call last):
    ...
    lowering.compile.values.InputTypeError: input 'x' expects float32 data (tensor<?xf32>), got float64; casting would lose precision. Cast the data with .astype('float32') or pass allow_input_downcast=True to function().
    """
    dtype = ttype.dtype
    data = host_view(data)
    if type(data) is np.ndarray and data.dtype == dtype:
        array = data
    elif strict:
        got = data.dtype if isinstance(data, np.ndarray) else type(data).__name__
        raise InputTypeError(f"{what} expects {dtype} data ({ttype}) and is strict, got {got}")
    elif allow_downcast:
        array = _asarray(data, dtype, what)
    elif isinstance(data, np.ndarray):
        if np.result_type(dtype, data.dtype) != dtype:
            raise InputTypeError(
                f"{what} expects {dtype} data ({ttype}), got {data.dtype}; casting would lose "
                f"precision. Cast the data with .astype('{dtype}') or pass "
                f"allow_input_downcast=True to function().")
        array = data.astype(dtype)
    elif allow_downcast is None and type(data) is float and floatx is not None and \
            np.dtype(floatx) == dtype:
        array = np.asarray(data, dtype)  # Python float literals may go to floatX
    else:
        array = _asarray(data, dtype, what)
        original = _asarray(data, None, what)
        if not _same_values(original, array):
            text = str(data)
            text = text if len(text) <= 80 else text[:75] + "(...)"
            raise InputTypeError(
                f"{what} ({ttype}) cannot store {text} exactly: as {dtype} it would be {array}. "
                f"Convert it with numpy.asarray(data, '{dtype}') or pass allow_input_downcast=True "
                f"to function().")
    if array.ndim != ttype.rank:
        raise InputTypeError(f"{what} expects a rank-{ttype.rank} array ({ttype}), got rank "
                             f"{array.ndim} with shape {array.shape}")
    for axis, (want, got) in enumerate(zip(ttype.shape, array.shape)):
        if want is not None and want != got:
            raise InputTypeError(f"{what} expects size {want} on axis {axis} ({ttype}), got "
                                 f"shape {array.shape}")
    return array


def host_view(data):
    """``data`` as an ndarray over its own memory when it exports host memory through
    ``__array_interface__`` or DLPack on the CPU (``kDLCPU``): no copy; anything else as it is.

    >>> host_view(np.arange(3)[::-1].__dlpack__())  # a capsule is not an array
    <capsule object "dltensor" at ...>
    >>> class Host:
    ...     def __init__(self, a): self.a = a
    ...     def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
    ...     def __dlpack_device__(self): return self.a.__dlpack_device__()
    >>> a = np.arange(3.0)
    >>> np.shares_memory(host_view(Host(a)), a)
    True
    """
    if type(data) is np.ndarray:
        return data
    kind = type(data)
    if hasattr(kind, "__array_interface__"):
        return np.asarray(data)
    if hasattr(kind, "__dlpack__") and hasattr(kind, "__dlpack_device__"):
        if data.__dlpack_device__()[0] == 1:  # kDLCPU
            return np.from_dlpack(data)
    return data


def _asarray(data, dtype, what) -> np.ndarray:
    try:
        return np.asarray(data, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"{what}: cannot convert {type(data).__name__} to an array: {exc}") \
            from None


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether converting ``a`` to ``b`` kept every value (NaN equals NaN)."""
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        equal = a == b
    if isinstance(equal, np.ndarray) and a.dtype.kind in "fc" and b.dtype.kind in "fc":
        equal = equal | (np.isnan(a) & np.isnan(b))
    return bool(np.all(equal))
