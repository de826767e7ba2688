"""Which implementations can run here, their versions, and how ``lowering`` executes.

``lowering`` and NumPy always take part; numexpr, Numba, PyTensor and JAX take part when they can
be imported. A missing one is skipped and the report says so.

>>> LABELS["pytensor"]
'PyTensor'
>>> available = detect_peers(["numpy", "no_such_library"])
>>> "version" in available["numpy"], available["no_such_library"]["missing"].startswith("No module")
(True, True)
"""
from __future__ import annotations

import importlib
import importlib.metadata

IMPLEMENTATIONS = ("lowering", "numpy", "numexpr", "numba", "pytensor", "jax")
LABELS = {"lowering": "lowering", "numpy": "NumPy", "numexpr": "numexpr", "numba": "Numba",
          "pytensor": "PyTensor", "jax": "JAX"}
# The distribution whose version is reported for each import name.
_DISTRIBUTIONS = {"jax": ("jax", "jaxlib"), "lowering": ("lowering", "llvmlite")}


def detect_peers(names=IMPLEMENTATIONS) -> dict[str, dict[str, str]]:
    """For each name: ``{"version": ...}`` when it imports, else ``{"missing": reason}``."""
    found = {}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # any import failure means: not available here
            found[name] = {"missing": f"{exc}".splitlines()[0] or type(exc).__name__}
            continue
        found[name] = {"version": _version(name)}
    return found


def _version(name: str) -> str:
    parts = []
    for dist in _DISTRIBUTIONS.get(name, (name,)):
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            module = importlib.import_module(name)
            parts.append(f"{dist} {getattr(module, '__version__', '(unknown version)')}")
    return ", ".join(parts)


def lowering_execution(function) -> str:
    """How a ``lowering`` Function runs: its mode and executor (``"FAST_RUN on interpreter"``),
    and the graph optimizations its mode names that do not exist yet.

    The executor is the Function's ``executor_name``; were that attribute missing, a function
    whose ``ir("llvm")`` exists is taken to be compiled code.
    """
    mode = getattr(getattr(function, "mode", None), "name", "?")
    executor = getattr(function, "executor_name", None)
    if executor is None:
        try:
            function.ir("llvm")
            executor = "compiled code"
        except Exception:
            executor = "interpreter"
    text = f"{mode} on {executor}"
    missing = getattr(function, "missing_optimizations", ())
    if missing:
        text += f"; optimizations not available yet: {', '.join(missing)}"
    return text


def pytensor_linker(function) -> str:
    """The linker a PyTensor function was compiled with (``"numba"``, ``"cvm"``, ...)."""
    linker = type(function.maker.linker).__name__
    return linker.removesuffix("Linker").lower() or linker
