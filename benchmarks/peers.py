"""Which implementations can run here, their versions, and how ``lowering`` executes.

``lowering`` and NumPy always take part; numexpr, Numba, PyTensor and JAX take part when they can
be imported. PyTensor takes part twice: in its default mode (``pytensor``) and with its C backend
(``pytensor_c``), which also needs a C++ compiler in ``pytensor.config.cxx``. A missing one is
skipped and the report says why.

>>> LABELS["pytensor"], LABELS["pytensor_c"]
('PyTensor', 'PyTensor C backend')
>>> available = detect_peers(["numpy", "no_such_library"])
>>> "version" in available["numpy"], available["no_such_library"]["missing"].startswith("No module")
(True, True)
"""
from __future__ import annotations

import importlib
import importlib.metadata

IMPLEMENTATIONS = ("lowering", "numpy", "numexpr", "numba", "pytensor", "pytensor_c", "jax")
LABELS = {"lowering": "lowering", "numpy": "NumPy", "numexpr": "numexpr", "numba": "Numba",
          "pytensor": "PyTensor", "pytensor_c": "PyTensor C backend", "jax": "JAX"}
# The distribution whose version is reported for each import name.
_DISTRIBUTIONS = {"jax": ("jax", "jaxlib"), "lowering": ("lowering", "llvmlite")}


def detect_peers(names=IMPLEMENTATIONS) -> dict[str, dict[str, str]]:
    """For each name: ``{"version": ...}`` when it imports, else ``{"missing": reason}``."""
    found = {}
    for name in names:
        if name == "pytensor_c":
            found[name] = _pytensor_c_backend()
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # any import failure means: not available here
            found[name] = {"missing": f"{exc}".splitlines()[0] or type(exc).__name__}
            continue
        found[name] = {"version": _version(name)}
    return found


def _pytensor_c_backend() -> dict[str, str]:
    """PyTensor's C backend is there when PyTensor imports and names a C++ compiler."""
    found = detect_peers(["pytensor"])["pytensor"]
    if "version" not in found:
        return found
    import pytensor
    cxx = pytensor.config.cxx
    if not cxx:
        return {"missing": "PyTensor found no C++ compiler (pytensor.config.cxx is empty)"}
    return {"version": f"{found['version']}, C++ compiler {cxx}"}


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


def pytensor_c_thunks(function) -> str:
    """How many of a PyTensor function's ops run C code (``"10 of 11 ops in C"``); the others
    run their Python ``perform``."""
    try:
        thunks = function.vm.thunks
    except AttributeError:
        return "ops in C not known"
    in_c = sum(getattr(thunk, "cthunk", None) is not None for thunk in thunks)
    return f"{in_c} of {len(thunks)} ops in C"


def pytensor_linker(function) -> str:
    """The linker a PyTensor function was compiled with (``"numba"``, ``"cvm"``, ...): a
    ``VMLinker`` whose loop runs in C is the ``cvm`` linker."""
    linker = function.maker.linker
    if type(linker).__name__ == "VMLinker" and getattr(linker, "use_cloop", False):
        return "cvm"
    name = type(linker).__name__
    return name.removesuffix("Linker").lower() or name
