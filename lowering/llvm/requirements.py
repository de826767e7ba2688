"""The llvmlite versions and hosts the compiler supports, checked when ``lowering`` is imported.

The range is the one tested (``pyproject.toml`` declares the same); its lower bound is what the
current Numba and PyTensor releases pin, so the compiler installs beside them.

>>> check_llvmlite("0.47.0", "x86_64-unknown-linux-gnu")
>>> check_llvmlite("0.42.0", "x86_64-unknown-linux-gnu")
Traceback (most recent call last):
    ...
lowering.llvm.requirements.UnsupportedLLVMError: llvmlite 0.42.0 is installed; lowering needs llvmlite >=0.47,<0.51 (pip install 'llvmlite>=0.47,<0.51')
"""
from __future__ import annotations

import re

LLVMLITE_LOWEST = (0, 47)      # the oldest tested; Numba 0.65 and PyTensor 3.0.7 pin < 0.48
LLVMLITE_BEYOND = (0, 51)      # the first untested release
LLVMLITE_RANGE = (f">={LLVMLITE_LOWEST[0]}.{LLVMLITE_LOWEST[1]},"
                  f"<{LLVMLITE_BEYOND[0]}.{LLVMLITE_BEYOND[1]}")
HOST_ARCHITECTURES = ("x86_64",)   # what the CPU back end generates code for


class UnsupportedLLVMError(ImportError):
    """The installed llvmlite, or the host, is one the compiler does not support."""


def release(version: str) -> tuple[int, int]:
    """The (major, minor) release of a version string.

    >>> release("0.50.0rc1")
    (0, 50)
    """
    found = re.match(r"(\d+)\.(\d+)", version)
    if not found:
        raise UnsupportedLLVMError(f"cannot read the llvmlite version '{version}'")
    return int(found[1]), int(found[2])


def check_llvmlite(version: str | None = None, triple: str | None = None) -> None:
    """Raise ``UnsupportedLLVMError`` naming the version found and the range required if
    llvmlite ``version`` (default: the installed one) is outside the supported range, or naming
    the host if ``triple`` (default: this process's) is not one the CPU back end targets."""
    if version is None:
        import llvmlite
        version = llvmlite.__version__
    if not LLVMLITE_LOWEST <= release(version) < LLVMLITE_BEYOND:
        raise UnsupportedLLVMError(
            f"llvmlite {version} is installed; lowering needs llvmlite {LLVMLITE_RANGE} "
            f"(pip install 'llvmlite{LLVMLITE_RANGE}')")
    if triple is None:
        import llvmlite.binding as llvm
        triple = llvm.get_process_triple()
    if triple.split("-")[0] not in HOST_ARCHITECTURES:
        raise UnsupportedLLVMError(
            f"this host is {triple}; lowering compiles for {', '.join(HOST_ARCHITECTURES)} "
            f"hosts only (llvmlite {version} is supported)")
