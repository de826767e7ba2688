"""Page-locked host memory of the stand-in driver: the address ranges allocated with
``cuMemHostAlloc`` (``pagelocked_empty``, ``mem_host_alloc``) or registered with
``cuMemHostRegister`` (``register_host_memory``), so that an asynchronous copy can be refused
when its host buffer is pageable, as a GPU cannot overlap such a copy with anything.

>>> ranges = PinnedRanges()
>>> ranges.add(0x1000, 64, "alloc")
>>> ranges.covers(0x1010, 16), ranges.covers(0x1030, 32)
(True, False)
>>> ranges.remove(0x1000); ranges.covers(0x1010, 16)
False
"""
from __future__ import annotations


class PinnedRanges:
    """The live page-locked ranges, by start address: ``(start, nbytes, kind)``."""

    def __init__(self):
        self._ranges: dict[int, tuple[int, str]] = {}

    def add(self, start: int, nbytes: int, kind: str) -> None:
        if self.covers(start, max(nbytes, 1)):
            raise ValueError(f"0x{start:x}: host memory is page-locked already")
        self._ranges[start] = (nbytes, kind)

    def remove(self, start: int) -> None:
        if start not in self._ranges:
            raise ValueError(f"0x{start:x} is not the start of page-locked host memory (freed "
                             f"or unregistered twice?)")
        del self._ranges[start]

    def covers(self, start: int, nbytes: int) -> bool:
        """Whether ``[start, start + nbytes)`` lies in one live page-locked range."""
        return any(begin <= start and start + nbytes <= begin + size
                   for begin, (size, _) in self._ranges.items())

    @property
    def live(self) -> int:
        """How many ranges are page-locked."""
        return len(self._ranges)
