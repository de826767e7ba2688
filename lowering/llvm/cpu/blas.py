"""The BLAS NumPy ships, found at run time and made callable from compiled code.

NumPy's wheels bundle OpenBLAS (``numpy.libs/libscipy_openblas64_-*.so`` on Linux, with symbols
such as ``scipy_cblas_sgemm64_`` taking 64-bit integers); other builds link a system BLAS
(``cblas_sgemm``, usually with 32-bit integers). ``find_blas`` looks in NumPy's library folders
(``numpy.libs``, ``numpy/.libs``, ``numpy/.dylibs``, the folder ``numpy.show_config`` names) for
an OpenBLAS or CBLAS shared library, loads it with ctypes (the library NumPy already loaded, so
nothing new enters the process) and reads its integer width from ``openblas_get_config`` (or
the ``64_`` symbol suffix).

``loops.call @cblas_sgemm(...)`` is lowered to a call of the library's own symbol
(``scipy_cblas_sgemm64_``), which ``register_blas_symbols`` makes visible to JIT-compiled code;
CBLAS's enumerations (order, transpose) are C ``int``, the sizes are the library's integers.
Without a BLAS, ``blas_available()`` is False and lowering a BLAS call is an error that says so,
so the bufferization pass can choose generated loops instead.

>>> info = find_blas()
>>> info is None or info.int_bits in (32, 64)
True
"""
from __future__ import annotations

import ctypes
import fnmatch
import functools
import os
from dataclasses import dataclass, field

from ..jit import register_symbol

# CBLAS routines the loops dialect may call, with the number of leading enumeration parameters
# (order, transpose flags: C ``int``); the other integer parameters are the library's integers.
CBLAS_ENUM_PARAMS = {
    "cblas_sgemm": 3, "cblas_dgemm": 3,
    "cblas_sgemv": 2, "cblas_dgemv": 2,
    "cblas_sdot": 0, "cblas_ddot": 0,
    # complex: alpha, beta and the dot product's result are passed by address
    "cblas_cgemm": 3, "cblas_zgemm": 3,
    "cblas_cgemv": 2, "cblas_zgemv": 2,
    "cblas_cdotu_sub": 0, "cblas_zdotu_sub": 0,
}


@dataclass(frozen=True)
class BlasLibrary:
    """A loaded BLAS: its file, integer width, and the symbol and address of each routine."""

    path: str
    int_bits: int
    config: str
    routines: dict[str, tuple[str, int]] = field(default_factory=dict)

    def symbol(self, routine: str) -> str:
        """The library's symbol for CBLAS ``routine`` (``cblas_sgemm``)."""
        if routine not in self.routines:
            raise KeyError(f"the BLAS at {self.path} has no {routine}")
        return self.routines[routine][0]

    def key(self) -> str:
        """What compiled code calling this library depends on (for cache keys)."""
        return f"{os.path.basename(self.path)}|{self.int_bits}|{self.config}"


def _numpy_library_dirs() -> list[str]:
    """The folders of NumPy's wheels that hold its bundled libraries."""
    import numpy
    base = os.path.dirname(os.path.abspath(numpy.__file__))
    dirs = [os.path.join(os.path.dirname(base), "numpy.libs"), os.path.join(base, ".libs"),
            os.path.join(base, ".dylibs"), os.path.join(base, "_core")]
    return [d for d in dirs if os.path.isdir(d)]


def _configured_library_dirs() -> list[str]:
    """The BLAS folder ``numpy.show_config`` names (slow to ask: looked at only when the
    wheels' folders have no BLAS)."""
    import numpy
    try:
        config = numpy.show_config(mode="dicts")
        blas = config.get("Build Dependencies", {}).get("blas", {})
        folder = blas.get("lib directory")
    except Exception:  # an old NumPy without show_config(mode=...)
        return []
    return [folder] if folder and os.path.isdir(folder) else []


_PATTERNS = ("*openblas*.so*", "*openblas*.dylib", "*openblas*.dll", "*cblas*.so*", "*blas*.so*")


def _candidate_files(folders) -> list[str]:
    """The BLAS-like libraries in ``folders``, in the order of ``_PATTERNS`` (each folder is
    listed once: NumPy's ``_core`` holds many files, and this runs on the first compile)."""
    files = []
    for folder in folders:
        try:
            names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
        except OSError:
            continue
        for pattern in _PATTERNS:
            for name in fnmatch.filter(names, pattern):
                path = os.path.join(folder, name)
                if path not in files:
                    files.append(path)
    return files


def _lookup(lib: ctypes.CDLL, names) -> tuple[str, int] | None:
    for name in names:
        try:
            return name, ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        except AttributeError:
            continue
    return None


def _config(lib: ctypes.CDLL) -> str:
    found = _lookup(lib, ("scipy_openblas_get_config64_", "openblas_get_config64_",
                          "scipy_openblas_get_config", "openblas_get_config"))
    if found is None:
        return ""
    get_config = ctypes.CFUNCTYPE(ctypes.c_char_p)(found[1])
    return (get_config() or b"").decode(errors="replace")


def _load(path: str) -> BlasLibrary | None:
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    routines = {}
    suffix64 = None
    for routine in CBLAS_ENUM_PARAMS:
        found = _lookup(lib, (f"scipy_{routine}64_", f"{routine}64_", f"scipy_{routine}",
                              routine))
        if found is None:
            return None
        routines[routine] = found
        suffix64 = found[0].endswith("64_")
    config = _config(lib)
    int_bits = 64 if suffix64 or "USE64BITINT" in config else 32
    return BlasLibrary(path, int_bits, config, routines)


@functools.cache
def find_blas() -> BlasLibrary | None:
    """The BLAS NumPy ships, loaded, or None when there is none with every routine needed."""
    for folders in (_numpy_library_dirs, _configured_library_dirs):
        for path in _candidate_files(folders()):
            found = _load(path)
            if found is not None:
                return found
    return None


def blas_available() -> bool:
    """Whether ``loops.call`` to CBLAS routines can be compiled on this machine.

    >>> isinstance(blas_available(), bool)
    True
    """
    return find_blas() is not None


@functools.cache
def register_blas_symbols() -> bool:
    """Make the BLAS routines visible to JIT-compiled code; False when there is no BLAS."""
    found = find_blas()
    if found is None:
        return False
    for symbol, address in found.routines.values():
        register_symbol(symbol, address)
    return True
