"""The portable call path of compiled functions: the native ABI driven from Python with ctypes.

Used where the native wrapper (``cpu.native_call``) is unavailable; it follows the same protocol,
so the executor does not care which one runs: ``CtypesCall(...)(*arrays)`` returns the list of
output arrays, or an ``int`` (the entry's error code, or ``NORMALIZE_CODE + i`` when argument
``i`` must first go through ``native_form``).

Everything that does not change between calls is made once: one descriptor per argument and
result (a ctypes structure), the ``packed`` pointer array, the entry as a ``CFUNCTYPE`` with its
argument types set. A call writes each argument's data pointer, sizes and strides (bytes →
elements) into its descriptor, makes the native call, and wraps each output as an array whose
base frees the memory with the C library's ``free`` when the last array using it dies. A lock
serializes calls, since the descriptors are shared (ctypes releases the GIL during the call).

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering import function
>>> from lowering.compile.cpu.executor import CpuExecutor
>>> x = T.dvector("x")
>>> executor = CpuExecutor(function([x], x * 2).ir_module("optimized"), call_path="ctypes")
>>> executor.call_path, executor([np.array([1.0, 2.5])])
('ctypes', [array([2., 5.])])
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from lowering.llvm.cpu.abi import descriptor_struct

from .call_protocol import ARGCOUNT_CODE, NORMALIZE_CODE

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None


class _Memory(ctypes.c_char * (1 << 40)):
    """Memory the compiled code allocated, seen as a (nominally huge) byte array that arrays
    can use as their buffer; freed when the last array over it dies. (A ctypes array made with
    ``from_address`` is the cheapest buffer object Python offers.)"""

    def __del__(self):
        _free(ctypes.addressof(self))


class CtypesCall:
    """Calls the entry at ``entry_address`` with inputs and outputs of ``(dtype, rank)``;
    ``keep`` is kept alive with it (the library holding the entry)."""

    def __init__(self, entry_address: int, input_dtypes, output_dtypes, keep=()):
        self.keep = keep
        self.input_dtypes = tuple(input_dtypes)
        self.output_dtypes = tuple(output_dtypes)
        self._inputs = [descriptor_struct(rank)() for _, rank in self.input_dtypes]
        self._outputs = [descriptor_struct(rank)() for _, rank in self.output_dtypes]
        everything = [*self._inputs, *self._outputs]
        self._packed = (ctypes.c_void_p * max(1, len(everything)))(
            *(ctypes.addressof(d) for d in everything))
        self._entry = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(entry_address)
        self._lock = threading.Lock()

    def __call__(self, *args):
        if len(args) != len(self._inputs):
            return ARGCOUNT_CODE
        with self._lock:
            for i, (array, desc, (dtype, rank)) in enumerate(zip(args, self._inputs,
                                                                  self.input_dtypes)):
                if not self._fill(array, desc, dtype, rank):
                    return NORMALIZE_CODE + i
            code = self._entry(ctypes.addressof(self._packed))
            if code:
                return int(code)
            return [self._wrap(desc, dtype, rank)
                    for desc, (dtype, rank) in zip(self._outputs, self.output_dtypes)]

    @staticmethod
    def _fill(array, desc, dtype: np.dtype, rank: int) -> bool:
        if type(array) is not np.ndarray or array.dtype is not dtype or array.ndim != rank:
            return False
        size = dtype.itemsize
        address = array.__array_interface__["data"][0]
        strides = array.strides
        if address % size or any(s % size for s in strides):
            return False
        desc.data = address
        if rank:
            desc.shape[:] = array.shape
            desc.strides[:] = [s // size for s in strides]
        return True

    @staticmethod
    def _wrap(desc, dtype: np.dtype, rank: int) -> np.ndarray:
        size = dtype.itemsize
        shape = tuple(desc.shape) if rank else ()
        strides = tuple(s * size for s in desc.strides) if rank else ()
        owner = _Memory.from_address(desc.data)
        desc.data = None
        return np.ndarray(shape, dtype, owner, 0, strides)
