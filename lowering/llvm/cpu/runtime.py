"""The process symbols compiled CPU code calls, registered for the JIT.

Generated code calls the C library (``aligned_alloc``, ``free``, ``memcpy``/``memset`` that LLVM
may substitute for loops, ``fmod``/``fmodf`` for float remainders, the libm functions the vector
math library lacks), the thread pool (``thread_pool``, itself over pthreads) and the BLAS NumPy
ships.
``register_runtime_symbols`` looks each one up with ctypes in the running process and registers
its address with ``jit.register_symbol``, so object code (also object code loaded from the disk
cache) links the same way on every machine. Call it before loading compiled code; translating a
module calls it too.

>>> register_runtime_symbols()
>>> "pthread_create" in registered_symbols()
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

from .blas import register_blas_symbols
from .interrupts import INTERRUPTS_FUNCTION, install_interrupts
from ..jit import register_symbol
from .math_calls import LIBM_NAMES
from .python_calls import register_python_callbacks, registered_callbacks
from .thread_pool import POOL_FUNCTION, install_thread_pool

C_SYMBOLS = ("aligned_alloc", "free", "malloc", "memcpy", "memmove", "memset", "pthread_create",
             "pthread_join", "pthread_detach", "pthread_mutex_init", "pthread_mutex_lock",
             "pthread_mutex_unlock", "pthread_cond_init", "pthread_cond_wait",
             "pthread_cond_broadcast", "getpid", "sched_yield", "madvise", "fmod", "fmodf")
LIBM_SYMBOLS = tuple(sorted({name + suffix for name in LIBM_NAMES.values()
                             for suffix in ("", "f")}))

_REGISTERED: dict[str, int] = {}


def _libraries() -> list[ctypes.CDLL]:
    libs = [ctypes.CDLL(None)]
    for name in ("m", "pthread", "c"):
        path = ctypes.util.find_library(name)
        if path:
            try:
                libs.append(ctypes.CDLL(path))
            except OSError:
                continue
    return libs


def _address(libraries, name: str) -> int | None:
    for lib in libraries:
        try:
            return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        except AttributeError:
            continue
    return None


@functools.cache
def register_runtime_symbols() -> None:
    """Register every symbol compiled code may call (once per process)."""
    libraries = _libraries()
    missing = []
    for name in C_SYMBOLS + LIBM_SYMBOLS:
        address = _address(libraries, name)
        if address is None:
            missing.append(name)
            continue
        register_symbol(name, address)
        _REGISTERED[name] = address
    essential = {"aligned_alloc", "free", "pthread_create", "pthread_mutex_lock",
                 "pthread_cond_wait"} & set(missing)
    if essential:
        raise RuntimeError(f"the C library of this process lacks {', '.join(sorted(essential))}, "
                           f"which compiled code needs")
    register_blas_symbols()
    _REGISTERED[POOL_FUNCTION] = install_thread_pool()
    _REGISTERED[INTERRUPTS_FUNCTION] = install_interrupts()
    register_python_callbacks()
    _REGISTERED.update(registered_callbacks())


def registered_symbols() -> dict[str, int]:
    """The process symbols registered so far, with their addresses."""
    return dict(_REGISTERED)


def default_num_threads() -> int:
    """The cores this process may run on (its CPU affinity), or ``os.cpu_count()``.

    >>> default_num_threads() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
