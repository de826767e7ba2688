"""``pycuda.tools`` of the stand-in: the device memory pool."""
from __future__ import annotations

from . import driver


class PooledDeviceAllocation:
    def __init__(self, pool: "DeviceMemoryPool", allocation, nbytes: int):
        self._pool = pool
        self._allocation = allocation
        self.nbytes = nbytes

    def free(self) -> None:
        if self._allocation is not None:
            self._pool._give_back(self._allocation)
            self._allocation = None

    def __int__(self):
        if self._allocation is None:
            raise driver.LogicError("the pooled allocation was freed")
        return int(self._allocation)

    __index__ = __int__


class DeviceMemoryPool:
    """Blocks by size, kept when freed and handed out again; memory of the context current at
    each allocation (the pool keeps no context of its own, as PyCUDA's)."""

    def __init__(self):
        self._held: dict[int, list] = {}
        self.active_blocks = 0

    @property
    def held_blocks(self) -> int:
        return sum(len(v) for v in self._held.values())

    def allocate(self, nbytes: int) -> PooledDeviceAllocation:
        size = max(int(nbytes), 1)
        size = 1 << (size - 1).bit_length()
        current = driver._current("cuMemAlloc")
        for i, block in enumerate(self._held.get(size, [])):
            if block._context is current:
                self._held[size].pop(i)
                break
        else:
            block = driver.mem_alloc(size)
        self.active_blocks += 1
        return PooledDeviceAllocation(self, block, int(nbytes))

    def _give_back(self, block) -> None:
        self.active_blocks -= 1
        self._held.setdefault(block.nbytes, []).append(block)

    def free_held(self) -> None:
        for blocks in self._held.values():
            for block in blocks:
                block.free()
        self._held.clear()

    def stop_holding(self) -> None:
        self.free_held()


def make_default_context():
    driver.init()
    return driver.Device(0).make_context()


def clear_context_caches() -> None:
    pass
