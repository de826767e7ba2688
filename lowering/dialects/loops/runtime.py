"""Run-time support for the loops dialect's interpreter rules.

At run time a buffer is a NumPy array (a view shares memory with the buffer it views), an
``index`` is a ``numpy.int64`` and any other scalar a NumPy scalar of its dtype. Before a rule uses
an array it checks that the array fits the buffer type (dtype, static sizes, static strides), so a
wrong layout produced by a pass is caught where it happens, not as a wrong number later.

Fresh allocations are filled with a poison pattern (NaN for floats, the largest value for
integers, ``True`` for i1) and so are deallocated ones, so reading memory that nobody wrote, or
reading after ``loops.dealloc``, shows up in the results.

>>> import numpy as np
>>> from lowering.ir.types import F32
>>> from .types import BufferType
>>> element_strides(np.zeros((2, 3), np.float32))
(3, 1)
>>> layout_problem(np.zeros((2, 3), np.float32).T, BufferType((3, 2), F32))
'strides (1, 3) do not match the type (2, 1)'
"""
from __future__ import annotations

import builtins
import weakref

import numpy as np

from lowering.ir.core import Operation
from lowering.ir.interpreter import Interpreter, InterpreterError

from .types import BufferType, contiguous_strides


class BufferIndexError(InterpreterError, IndexError):
    """An out-of-bounds access; the message names the op and its location."""


def index_error(op: Operation, message: str) -> BufferIndexError:
    """A BufferIndexError for ``op``, naming it and its location."""
    return BufferIndexError(f"{op.name} at {op.location.short()}: {message}", op)


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """The array's strides counted in elements."""
    size = array.itemsize
    return tuple(s // size for s in array.strides)


def layout_problem(array, type: BufferType) -> str | None:
    """Why ``array`` cannot be a run-time value of ``type``, or None when it can."""
    if not isinstance(array, np.ndarray):
        return f"expected an array for {type}, got {builtins.type(array).__name__}"
    if array.dtype != type.dtype:
        return f"dtype {array.dtype} does not match the element type {type.element}"
    if not type.accepts_shape(array.shape):
        return f"shape {array.shape} does not fit {type}"
    if array.size == 0 or any(s % array.itemsize for s in array.strides):
        return None if array.size == 0 else "strides are not a multiple of the element size"
    want = contiguous_strides(array.shape) if type.strides is None else type.strides
    got = element_strides(array)
    for dim, g, w in zip(array.shape, got, want):
        if dim != 1 and w is not None and g != w:
            shown = ", ".join("?" if x is None else str(x) for x in want)
            return f"strides {got} do not match the type ({shown})"
    return None


def as_buffer(value, type: BufferType, what: str) -> np.ndarray:
    """``value`` checked to be a run-time buffer of ``type`` (a ValueError says why not)."""
    problem = layout_problem(value, type)
    if problem is not None:
        raise ValueError(f"{what}: {problem}")
    return value


def as_index(value) -> int:
    """A run-time ``index`` (or any integer) as a Python int."""
    return int(value)


def poison(array: np.ndarray) -> None:
    """Overwrite ``array`` with the pattern that marks memory nobody wrote."""
    if array.dtype.kind in "fc":
        array.fill(np.nan)
    elif array.dtype.kind == "b":
        array.fill(True)
    else:
        array.fill(np.iinfo(array.dtype).max)


# Each interpreter's live allocations made by loops.alloc, so that loops.dealloc can tell a double
# free, or the free of a view or of memory the caller owns, from a correct one.
_ALLOCATIONS: "weakref.WeakKeyDictionary[Interpreter, dict[int, np.ndarray]]" = \
    weakref.WeakKeyDictionary()


def live_allocations(interp: Interpreter) -> dict[int, np.ndarray]:
    """The allocations of ``interp`` not yet deallocated, by ``id`` of their array."""
    return _ALLOCATIONS.setdefault(interp, {})
