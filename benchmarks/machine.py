"""The machine the figures come from: CPU model, cores, vector extensions, memory copy bandwidth.

>>> info = describe_machine()
>>> sorted(info) == ["avx512", "cores", "cpu", "python", "system"]
True
>>> copy_bandwidth(1 << 16, repeats=2) > 0
True
"""
from __future__ import annotations

import os
import platform
import time

import numpy as np


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields in /proc/cpuinfo (empty where there is no such file)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def describe_machine() -> dict[str, str]:
    """CPU model, usable cores, AVX-512 support, OS and Python, as text."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    avx512 = sorted(f for f in flags if f.startswith("avx512"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": info.get("model name") or platform.processor() or platform.machine(),
        "cores": str(cores),
        "avx512": ("yes (" + ", ".join(avx512) + ")") if avx512 else
                  ("no" if flags else "unknown"),
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
    }


def copy_bandwidth(elements: int, repeats: int = 5) -> float:
    """Bytes per second of ``numpy.copyto`` between two float32 arrays of ``elements`` items,
    counting the bytes read and the bytes written (as STREAM's copy does); best of ``repeats``."""
    src = np.ones(elements, dtype=np.float32)
    dst = np.zeros_like(src)
    np.copyto(dst, src)  # touch every page before timing
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best
