"""What the Python side and the native wrapper of a compiled function agree on.

The wrapper (``cpu.wrapper_ir``) returns the list of outputs, or an ``int``: the entry's error
code (an ``i32``, never 0), ``NORMALIZE_CODE + i`` when argument ``i`` is not in a form it reads
directly, or ``ARGCOUNT_CODE`` for a wrong number of arguments. Its context, the pointer array
behind its ``self`` capsule, holds ``CONTEXT_FIELDS`` and then the dtype objects of the arguments
and of the outputs. ``ArrayLayout`` says where NumPy's array object keeps what it reads.

This module has no dependencies, so the executor can be imported without the code generator.

>>> NORMALIZE_CODE > 2**31 and ARGCOUNT_CODE > NORMALIZE_CODE
True
"""
from __future__ import annotations

from dataclasses import dataclass

WRAPPER_NAME = "lowering_python_call"

# Returned ints >= NORMALIZE_CODE are not entry codes (those are i32).
NORMALIZE_CODE = 1 << 40
ARGCOUNT_CODE = 1 << 41

CONTEXT_FIELDS = ("entry", "ndarray_type", "new_from_descr", "set_base_object")


@dataclass(frozen=True)
class ArrayLayout:
    """Byte offsets of the fields of NumPy's array object the wrapper reads: the type pointer
    (``ob_type``), ``data``, ``nd`` (a C int), ``dimensions`` and ``strides`` (``npy_intp``
    arrays) and ``descr`` (the dtype object)."""

    ob_type: int
    data: int
    nd: int
    dimensions: int
    strides: int
    descr: int
