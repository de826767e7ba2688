"""Device memory of the stand-in driver: allocations at 256-byte aligned addresses, and every
access checked against the live allocation it falls in.

>>> memory = DeviceMemory()
>>> a = memory.allocate(16, owner="ctx")
>>> memory.bytes(a + 8, 8, "ctx").size
8
>>> memory.bytes(a + 12, 8, "ctx")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
    ...
InvalidPointer: bytes 0x7f0000000000+12..20 fall outside the allocation of 16 bytes at 0x7f0000000000
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

_FIRST_ADDRESS = 0x7F00_0000_0000
_ALIGNMENT = 256


class InvalidPointer(ValueError):
    """A device address outside every live allocation, or a range crossing an allocation's end."""


@dataclass
class Allocation:
    address: int
    data: np.ndarray  # uint8
    owner: object      # the context it was allocated in


class DeviceMemory:
    """Every live allocation of the device, by address."""

    def __init__(self):
        self._starts: list[int] = []
        self._allocations: dict[int, Allocation] = {}
        self._next = _FIRST_ADDRESS

    def allocate(self, nbytes: int, owner) -> int:
        if nbytes <= 0:
            raise ValueError(f"cuMemAlloc failed: invalid argument (size {nbytes})")
        address = self._next
        self._next += -(-nbytes // _ALIGNMENT) * _ALIGNMENT + _ALIGNMENT  # a gap between blocks
        # Fresh device memory is not zeroed: garbage shows a read before the first write.
        data = np.full(nbytes, 0xFF, np.uint8)
        self._allocations[address] = Allocation(address, data, owner)
        bisect.insort(self._starts, address)
        return address

    def free(self, address: int) -> None:
        if address not in self._allocations:
            raise InvalidPointer(f"cuMemFree failed: 0x{address:x} is not the start of a live "
                                 f"allocation (freed twice?)")
        del self._allocations[address]
        self._starts.remove(address)

    def find(self, address: int) -> Allocation:
        """The live allocation ``address`` falls in."""
        index = bisect.bisect_right(self._starts, address) - 1
        if index >= 0:
            allocation = self._allocations[self._starts[index]]
            if address < allocation.address + allocation.data.size:
                return allocation
        raise InvalidPointer(f"0x{address:x} is in no live device allocation")

    def bytes(self, address: int, nbytes: int, context) -> np.ndarray:
        """The ``nbytes`` bytes at ``address`` (a view), checked to lie in one live allocation
        (of ``context``, unless it is None)."""
        allocation = self.find(address)
        start = address - allocation.address
        if start + nbytes > allocation.data.size:
            raise InvalidPointer(f"bytes 0x{allocation.address:x}+{start}..{start + nbytes} fall "
                                 f"outside the allocation of {allocation.data.size} bytes at "
                                 f"0x{allocation.address:x}")
        if context is not None and allocation.owner is not context:
            raise InvalidPointer(f"0x{address:x} belongs to another context than the current one")
        return allocation.data[start:start + nbytes]

    def strided(self, address: int, shape, strides, dtype, context) -> np.ndarray:
        """A NumPy view of a buffer argument (strides in elements), every element of it checked
        to lie in one live allocation of ``context``."""
        dtype = np.dtype(dtype)
        shape = tuple(int(n) for n in shape)
        if any(n == 0 for n in shape):
            return np.empty(shape, dtype)  # nothing is accessed; any pointer will do
        low = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0) * dtype.itemsize
        high = (sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0) + 1) * dtype.itemsize
        self.bytes(address + low, high - low, context)  # the checks
        allocation = self.find(address)
        return np.ndarray(shape, dtype, buffer=allocation.data,
                          offset=address - allocation.address,
                          strides=tuple(int(s) * dtype.itemsize for s in strides))

    @property
    def live(self) -> int:
        """How many allocations are live."""
        return len(self._allocations)
