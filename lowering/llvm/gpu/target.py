"""The NVPTX target: GPU architectures, the PTX ISA version for each, and LLVM's target machine.

An architecture is a name like ``sm_90`` (compute capability 9.0), ``sm_90a`` (with the
architecture-specific features of exactly that GPU) or ``sm_100f`` (a family). PTX is generated
with the oldest PTX ISA version that the architecture allows (``PTX_ISA``, the minimum LLVM
itself picks): the CUDA driver compiles PTX when it loads it and accepts an ISA version up to
the one of its own CUDA release, so the oldest version runs on the most drivers. ptxas of
CUDA 13 assembles ``sm_75`` and newer.

``default_arch()`` is the architecture of the GPU in use (asked through PyCUDA), or the flag
``gpuarray.arch`` where no GPU can be asked (no PyCUDA, no driver, no device: CI).

>>> ptx_isa("sm_90"), ptx_isa("sm_120")
((7, 8), (8, 7))
>>> arch_for_capability(9, 0), arch_for_capability(8, 9), arch_for_capability(12, 2)
('sm_90', 'sm_89', 'sm_121')
"""
from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"

# Architecture -> the oldest PTX ISA version (major, minor) with which it can be targeted.
PTX_ISA: dict[str, tuple[int, int]] = {
    "sm_75": (6, 3), "sm_80": (7, 0), "sm_86": (7, 1), "sm_87": (7, 4), "sm_88": (9, 0),
    "sm_89": (7, 8), "sm_90": (7, 8), "sm_90a": (8, 0),
    "sm_100": (8, 6), "sm_100a": (8, 6), "sm_100f": (8, 8),
    "sm_103": (8, 8), "sm_103a": (8, 8), "sm_103f": (8, 8),
    "sm_110": (9, 0), "sm_110a": (9, 0), "sm_110f": (9, 0),
    "sm_120": (8, 7), "sm_120a": (8, 7), "sm_120f": (8, 8),
    "sm_121": (8, 8), "sm_121a": (8, 8), "sm_121f": (8, 8),
}
_ARCH = re.compile(r"sm_(\d+)([af]?)")


class UnknownArchError(ValueError):
    """A GPU architecture this backend does not generate code for."""


def check_arch(arch: str) -> str:
    """``arch`` if code can be generated for it, else an UnknownArchError listing those known.

    >>> check_arch("sm_90")
    'sm_90'
    >>> check_arch("sm_52")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    lowering.llvm.gpu.target.UnknownArchError: unknown GPU architecture 'sm_52'; ...
    """
    if arch not in PTX_ISA:
        raise UnknownArchError(f"unknown GPU architecture {arch!r}; known: "
                               f"{', '.join(PTX_ISA)}")
    return arch


def arch_number(arch: str) -> int:
    """The compute capability of ``arch`` as one number (``sm_90a`` -> 90).

    >>> arch_number("sm_90a"), arch_number("sm_120")
    (90, 120)
    """
    match = _ARCH.fullmatch(arch)
    if match is None:
        raise UnknownArchError(f"malformed GPU architecture {arch!r} (expected sm_XY, e.g. sm_90)")
    return int(match.group(1))


def ptx_isa(arch: str) -> tuple[int, int]:
    """The PTX ISA version (major, minor) that code for ``arch`` declares (``.version``)."""
    return PTX_ISA[check_arch(arch)]


def arch_for_capability(major: int, minor: int) -> str:
    """The newest generic architecture (no ``a``/``f`` suffix) a GPU of compute capability
    ``major.minor`` runs: its own when it is known, else the newest known one below it (PTX
    for an older architecture is compiled by the driver for a newer GPU)."""
    wanted = major * 10 + minor
    generic = [a for a in PTX_ISA if _ARCH.fullmatch(a).group(2) == ""]
    fitting = [a for a in generic if arch_number(a) <= wanted]
    if not fitting:
        raise UnknownArchError(f"GPUs of compute capability {major}.{minor} are older than "
                               f"every architecture known ({', '.join(generic)})")
    return max(fitting, key=arch_number)


def device_arch(context: str | None = None) -> str | None:
    """The architecture of the GPU of ``context`` (None: the default device), asked through
    PyCUDA; None when there is no PyCUDA, no driver or no device."""
    try:
        from .cuda_runtime import CudaUnavailableError, device_ordinal, require_cuda
    except ImportError:
        return None
    try:
        driver = require_cuda()
        major, minor = driver.Device(device_ordinal(context)).compute_capability()
    except (CudaUnavailableError, ValueError):
        return None
    except Exception:  # noqa: BLE001 - pycuda._driver.Error: an invalid device and the like
        return None
    return arch_for_capability(major, minor)


def default_arch(context: str | None = None) -> str:
    """The architecture to generate code for: the GPU's own when one can be asked, else the
    flag ``gpuarray.arch``.

    >>> from lowering.config import config
    >>> with config.change_flags({"gpuarray.arch": "sm_80"}):
    ...     default_arch() in ("sm_80", device_arch())
    True
    """
    found = device_arch(context)
    if found is not None:
        return found
    from lowering.config import config
    return check_arch(config.gpuarray.arch)


@functools.cache
def _initialize() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.cache
def nvptx_target_machine(arch: str, opt: int = 3):
    """LLVM's NVPTX target machine for ``arch``, declaring its PTX ISA version (shared; never
    hand it to an execution engine)."""
    _initialize()
    major, minor = ptx_isa(arch)
    target = llvm.Target.from_triple(NVPTX_TRIPLE)
    return target.create_target_machine(cpu=arch, features=f"+ptx{major}{minor}", opt=opt)
