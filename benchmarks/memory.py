"""Watching this process's memory while a workload runs, so that an implementation that leaks
is reported (and stopped before the machine runs out of memory) instead of killing the run.

>>> resident_bytes() > 0
True
>>> guard = MemoryGuard()
>>> guard.check(calls=1)
>>> guard.calls, guard.growth_per_call() < 1e9
(1, True)
"""
from __future__ import annotations

import os


class MemoryGrowthError(RuntimeError):
    """The process grew past what the guard allows while a workload ran."""


def resident_bytes() -> int:
    """This process's resident memory now (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def available_bytes() -> int:
    """Memory the system can still give (``MemAvailable``; 0 where it is unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class MemoryGuard:
    """Allows the process to grow by ``fraction`` of the memory available when it is made, and
    by ``cap`` bytes at most (no workload here needs more; other processes share the machine).

    ``check(calls)`` counts ``calls`` more calls and raises ``MemoryGrowthError`` (saying how
    much each call grew the process) beyond the limit; ``growth_per_call()`` is the growth so far
    divided by the calls counted. Where the system does not say how much memory it has, nothing
    is checked.
    """

    def __init__(self, fraction: float = 0.25, cap: float = 4 * 2**30):
        self.start = resident_bytes()
        self.calls = 0
        available = available_bytes()
        self.limit = (self.start + min(fraction * available, cap)
                      if available and self.start else None)

    def growth_per_call(self) -> float:
        return (resident_bytes() - self.start) / max(self.calls, 1) if self.start else 0.0

    def check(self, calls: int) -> None:
        self.calls += calls
        if self.limit is None:
            return
        now = resident_bytes()
        if now > self.limit:
            grown = now - self.start
            raise MemoryGrowthError(
                f"memory grew by {grown / 2**20:.0f} MiB over {self.calls:,} calls "
                f"({grown / self.calls / 2**10:.0f} KiB per call); stopped before the machine "
                f"runs out of memory")
