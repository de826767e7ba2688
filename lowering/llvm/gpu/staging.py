"""Page-locked staging buffers for copies between host and device.

A GPU copies asynchronously, overlapping kernels and the host, only from and to page-locked
(pinned) host memory; a copy from a pageable NumPy array is staged by the driver and waits.
So every copy of a context goes through a buffer of this pool: the host fills it (gathering
any layout) and queues ``memcpy_htod_async`` on the stream, and the call goes on without
waiting; the way back queues ``memcpy_dtoh_async`` into one and waits once.

Buffers are kept by size (powers of two, at least ``MIN_BYTES``) and reused across calls;
each carries an event recorded on the stream after its last copy, and is written again only
once that event has passed, so a buffer is never refilled under a copy still queued. The
pool is the context's: ``close()`` frees every buffer with it.

>>> from lowering.llvm.gpu.staging import staging_size
>>> staging_size(1), staging_size(5000), staging_size(1 << 20)
(4096, 8192, 1048576)
"""
from __future__ import annotations

import threading

import numpy as np

MIN_BYTES = 4096


def staging_size(nbytes: int) -> int:
    """The size of the staging buffer serving a copy of ``nbytes``: the next power of two,
    at least ``MIN_BYTES`` (so nearby sizes share buffers)."""
    return max(MIN_BYTES, 1 << max(int(nbytes) - 1, 0).bit_length())


class StagingBuffer:
    """One page-locked buffer (``memory``, uint8) and the event of its last queued copy."""

    __slots__ = ("memory", "event", "pending")

    def __init__(self, memory: np.ndarray, event):
        self.memory = memory
        self.event = event
        self.pending = False  # a copy using it may still be queued

    def view(self, shape, dtype) -> np.ndarray:
        """The first bytes of the buffer as a C-contiguous array of ``shape`` and ``dtype``."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        return self.memory[:count * dtype.itemsize].view(dtype).reshape(shape)


class StagingPool:
    """The staging buffers of one context (see the module docstring). ``drv`` is
    ``pycuda.driver``; every method runs with the context current."""

    def __init__(self, drv):
        self._drv = drv
        self._free: dict[int, list[StagingBuffer]] = {}
        self._lock = threading.Lock()
        self.allocated = 0  # buffers made (how often the pool could not reuse one)

    def take(self, nbytes: int) -> StagingBuffer:
        """A buffer of at least ``nbytes``, its previous copy finished."""
        size = staging_size(nbytes)
        with self._lock:
            held = self._free.get(size)
            buffer = held.pop() if held else None
        if buffer is None:
            drv = self._drv
            memory = drv.pagelocked_empty((size,), np.uint8)
            event = drv.Event(drv.event_flags.DISABLE_TIMING)
            buffer = StagingBuffer(memory, event)
            self.allocated += 1
        elif buffer.pending:
            buffer.event.synchronize()  # the copy queued from it last time has run
            buffer.pending = False
        return buffer

    def give_back(self, buffer: StagingBuffer, stream) -> None:
        """Return ``buffer`` after queueing a copy on ``stream``: an event recorded there
        marks when it may be written again."""
        buffer.event.record(stream)
        buffer.pending = True
        with self._lock:
            self._free.setdefault(len(buffer.memory), []).append(buffer)

    @property
    def held(self) -> int:
        """How many buffers the pool keeps."""
        return sum(len(v) for v in self._free.values())

    def close(self) -> None:
        """Free every buffer (the context's end; its stream has been waited for)."""
        with self._lock:
            buffers = [b for held in self._free.values() for b in held]
            self._free.clear()
        for buffer in buffers:
            allocation = buffer.memory.base
            while allocation is not None and not hasattr(allocation, "free"):
                allocation = getattr(allocation, "base", None)
            if allocation is not None:
                allocation.free()
