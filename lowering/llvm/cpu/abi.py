"""The native ABI from Python: buffer descriptors for NumPy arrays, and arrays for results.

A compiled function's entry ``i32 <name>_entry(i8** packed)`` reads one descriptor per input
and fills one per output (see ``cpu.entry``)::

    struct { void *data; int64_t shape[rank]; int64_t strides[rank]; }   // strides in elements
    struct { void *data; }                                                // rank 0

``pack`` builds the descriptors and the ``packed`` array for some inputs, ``unpack`` turns the
filled output descriptors into NumPy arrays that own the memory the compiled code allocated (it
is released with the C library's ``free`` when the last array using it is gone), and
``EntryPoint`` (or ``call_entry`` for a single call) does both around one native call.

>>> import numpy as np
>>> from lowering.ir.types import F32
>>> from lowering.dialects.loops import BufferType
>>> from lowering.llvm.cpu.to_llvm import ArgInfo
>>> packed = pack([np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2]],
...               [ArgInfo(BufferType((None, None), F32, strides=(None, None)))], [])
>>> d = packed.inputs[0]
>>> list(d.shape), list(d.strides)
([2, 2], [3, 2])
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None


@functools.cache
def descriptor_struct(rank: int) -> type[ctypes.Structure]:
    """The ctypes structure of a rank-``rank`` descriptor.

    >>> ctypes.sizeof(descriptor_struct(2)), ctypes.sizeof(descriptor_struct(0))
    (40, 8)
    """
    fields = [("data", ctypes.c_void_p)]
    if rank:
        fields += [("shape", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"Descriptor{rank}", (ctypes.Structure,), {"_fields_": fields})


@dataclass(frozen=True)
class Slot:
    """What one descriptor holds: its rank and the NumPy dtype of its elements."""

    rank: int
    dtype: np.dtype

    @staticmethod
    def of(info) -> "Slot":
        """From an ``ArgInfo`` (anything with ``rank`` and ``dtype``)."""
        return info if isinstance(info, Slot) else Slot(info.rank, np.dtype(info.dtype))


@dataclass
class PackedCall:
    """The descriptors of one call and the ``packed`` pointer array the entry takes; holds the
    input arrays so that their memory lives as long as the call needs it."""

    inputs: list
    outputs: list
    output_slots: list
    pointers: ctypes.Array
    keep_alive: list

    @property
    def address(self) -> int:
        """The value of the entry's ``i8** packed`` argument."""
        return ctypes.addressof(self.pointers)


def _as_array(value, slot: Slot) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype != slot.dtype:
        raise TypeError(f"expected an array of dtype {slot.dtype}, got {array.dtype}")
    if array.ndim != slot.rank:
        raise TypeError(f"expected an array of rank {slot.rank}, got shape {array.shape}")
    if any(s % array.itemsize for s in array.strides):
        raise ValueError(f"strides {array.strides} are not a multiple of the item size "
                         f"{array.itemsize}; copy the array first")
    return array


def pack(inputs: Sequence, input_info: Sequence, output_info: Sequence) -> PackedCall:
    """Descriptors for ``inputs`` (NumPy arrays or scalars matching ``input_info``: ArgInfos or
    Slots) and empty ones for the outputs, with the pointer array to pass to an entry."""
    if len(inputs) != len(input_info):
        raise TypeError(f"expected {len(input_info)} inputs, got {len(inputs)}")
    keep, descriptors = [], []
    for index, (value, info) in enumerate(zip(inputs, input_info)):
        slot = Slot.of(info)
        try:
            array = _as_array(value, slot)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"input {index}: {exc}") from None
        keep.append(array)
        d = descriptor_struct(slot.rank)()
        d.data = array.ctypes.data
        if slot.rank:
            d.shape[:] = array.shape
            d.strides[:] = [s // array.itemsize for s in array.strides]
        descriptors.append(d)
    output_slots = [Slot.of(info) for info in output_info]
    outputs = [descriptor_struct(slot.rank)() for slot in output_slots]
    pointers = (ctypes.c_void_p * (len(descriptors) + len(outputs)))(
        *(ctypes.addressof(d) for d in [*descriptors, *outputs]))
    return PackedCall(descriptors, outputs, output_slots, pointers, keep)


class _Allocation:
    """Memory from the compiled code's allocator, freed with ``free`` when no array uses it."""

    def __init__(self, address: int, nbytes: int):
        self.address = address
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                    "data": (address, False), "version": 3}

    def __del__(self):
        _free(self.address)


def _extent(shape, strides, itemsize: int) -> tuple[int, int]:
    """The lowest and one-past-highest byte offsets a strided array touches."""
    if any(n == 0 for n in shape):
        return 0, 0
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return low * itemsize, (high + 1) * itemsize


def unpack(packed: PackedCall) -> list[np.ndarray]:
    """The outputs of a successful call as arrays owning their memory (call once per call)."""
    arrays = []
    for d, slot in zip(packed.outputs, packed.output_slots):
        dtype = slot.dtype
        shape = tuple(d.shape) if slot.rank else ()
        strides = tuple(d.strides) if slot.rank else ()
        low, high = _extent(shape, strides, dtype.itemsize)
        if low < 0:
            raise ValueError("an output descriptor points into the middle of its allocation")
        owner = _Allocation(d.data, max(high, dtype.itemsize))
        arrays.append(np.ndarray(shape, dtype=dtype, buffer=np.asarray(owner),
                                 strides=tuple(s * dtype.itemsize for s in strides)))
        d.data = None
    return arrays


_ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


class EntryPoint:
    """A compiled entry point with its signature (a ``FunctionSignature``):
    ``entry(*inputs)`` returns ``(0, outputs)`` on success, or ``(code, [])`` when a check
    failed (look the code up in ``LoweredModule.errors``); the compiled code has then freed
    what it allocated."""

    def __init__(self, address: int, signature):
        self.signature = signature
        self._function = _ENTRY_TYPE(address)
        self._inputs = [Slot.of(info) for info in signature.inputs]
        self._outputs = [Slot.of(info) for info in signature.outputs]

    def __call__(self, *inputs) -> tuple[int, list[np.ndarray]]:
        packed = pack(inputs, self._inputs, self._outputs)
        code = self._function(packed.address)
        if code != 0:
            return code, []
        return 0, unpack(packed)


def call_entry(address: int, signature, inputs: Sequence) -> tuple[int, list[np.ndarray]]:
    """Call the entry at ``address`` (of a ``FunctionSignature``) on ``inputs`` once."""
    return EntryPoint(address, signature)(*inputs)
