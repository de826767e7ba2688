"""``ptxas``, NVIDIA's PTX assembler: checks generated PTX and turns it into a cubin.

The GPU backend emits PTX text and the CUDA driver compiles it when a module is loaded; ptxas
runs the same assembler offline, so a kernel the driver would reject is caught without a GPU
(CI has ptxas, no GPU). It is found on ``PATH``, else in ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin``
or ``/usr/local/cuda/bin``.

A failure raises :class:`PtxasError` with ptxas's message and the PTX line it points at::

    >>> if ptxas_available():
    ...     try:
    ...         assemble_ptx(".version 7.8\\n.target sm_90\\n.address_size 64\\nbogus;\\n", "sm_90")
    ...     except PtxasError as error:
    ...         print(error.line, error.source_line)
    4 bogus;
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

_PTXAS_DIRS = ("CUDA_HOME", "CUDA_PATH")
_DEFAULT_CUDA_BIN = "/usr/local/cuda/bin"
# ptxas /tmp/x/kernel.ptx, line 12; error   : Unknown symbol 'foo'
_LOCATED_MESSAGE = re.compile(r"^ptxas[^,\n]*, line (\d+); (error|fatal)\s*:\s*(.*)$", re.M)


class PtxasError(RuntimeError):
    """ptxas rejected a PTX module (or is missing). ``line`` is the 1-based PTX line of the first
    error, and ``source_line`` its text, where ptxas names one (else None)."""

    def __init__(self, message: str, line: int | None = None, source_line: str | None = None):
        super().__init__(message)
        self.line = line
        self.source_line = source_line


def find_ptxas() -> str | None:
    """The path of the ``ptxas`` executable, or None when none is installed.

    >>> path = find_ptxas()
    >>> path is None or os.path.basename(path).startswith("ptxas")
    True
    """
    found = shutil.which("ptxas")
    if found:
        return found
    directories = [os.path.join(os.environ[v], "bin") for v in _PTXAS_DIRS if os.environ.get(v)]
    for directory in [*directories, _DEFAULT_CUDA_BIN]:
        candidate = os.path.join(directory, "ptxas")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def ptxas_available() -> bool:
    """Whether ``ptxas`` can be run here.

    >>> isinstance(ptxas_available(), bool)
    True
    """
    return find_ptxas() is not None


@functools.cache
def ptxas_version() -> tuple[int, int] | None:
    """The CUDA release of the ptxas found (``(13, 0)``), or None without ptxas.

    >>> version = ptxas_version()
    >>> version is None or version >= (10, 0)
    True
    """
    path = find_ptxas()
    if path is None:
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"release (\d+)\.(\d+)", out.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _error_from_output(output: str, ptx: str, arch: str) -> PtxasError:
    lines = ptx.splitlines()
    match = _LOCATED_MESSAGE.search(output)
    message = output.strip() or "ptxas failed without a message"
    if match is None:
        return PtxasError(f"ptxas -arch={arch} rejected the PTX: {message}")
    line = int(match.group(1))
    source = lines[line - 1].strip() if 0 < line <= len(lines) else None
    where = f"\n  PTX line {line}: {source}" if source is not None else ""
    return PtxasError(f"ptxas -arch={arch} rejected the PTX: {match.group(3).strip()}{where}"
                      f"\n{message}", line, source)


def _run_ptxas(ptx: str, arch: str, options: tuple[str, ...], keep_cubin: bool):
    """Run ptxas on ``ptx``: its output text and the cubin (None unless ``keep_cubin``)."""
    path = find_ptxas()
    if path is None:
        raise PtxasError("ptxas was not found: install the CUDA toolkit (it provides ptxas) and "
                         "put its bin directory on PATH, or set CUDA_HOME")
    with tempfile.TemporaryDirectory(prefix="lowering-ptxas-") as directory:
        source = os.path.join(directory, "kernels.ptx")
        target = os.path.join(directory, "kernels.cubin") if keep_cubin else os.devnull
        with open(source, "w", encoding="utf-8") as f:
            f.write(ptx)
        done = subprocess.run([path, f"-arch={arch}", *options, source, "-o", target],
                              capture_output=True, text=True, check=False)
        output = done.stdout + done.stderr
        if done.returncode != 0:
            raise _error_from_output(output, ptx, arch)
        if not keep_cubin:
            return output, None
        with open(target, "rb") as f:
            return output, f.read()


def assemble_ptx(ptx: str, arch: str, options: tuple[str, ...] = ()) -> bytes:
    """Assemble PTX text for GPU ``arch`` (``"sm_90"``) and return the cubin.

    ``options`` are more ptxas flags (``("-O0",)``, ``("--warn-on-spills",)``). Raises
    :class:`PtxasError` when ptxas is missing or rejects the code.
    """
    return _run_ptxas(ptx, arch, options, keep_cubin=True)[1]


@dataclass(frozen=True)
class KernelResources:
    """What ptxas allocated for one kernel: ``registers`` per thread, ``shared_bytes`` of
    static shared memory, ``spill_bytes`` stored to local memory (0 when none)."""

    registers: int
    shared_bytes: int
    spill_bytes: int


# ptxas info    : Compiling entry function 'k' for 'sm_90'
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_SPILLS = re.compile(r"(\d+) bytes spill stores")
_REGISTERS = re.compile(r"Used (\d+) registers")
_SHARED = re.compile(r"(\d+) bytes smem")


def kernel_resources(ptx: str, arch: str) -> dict[str, KernelResources]:
    """Kernel name -> the resources ptxas allocates for it on ``arch`` (``ptxas -v``).

    >>> ptx = (".version 7.8\\n.target sm_90\\n.address_size 64\\n"
    ...        ".visible .entry k()\\n{\\nret;\\n}\\n")
    >>> not ptxas_available() or kernel_resources(ptx, "sm_90")["k"].spill_bytes == 0
    True
    """
    output, _ = _run_ptxas(ptx, arch, ("-v",), keep_cubin=False)
    found: dict[str, KernelResources] = {}
    name, spills = None, 0
    for line in output.splitlines():
        entry = _ENTRY.search(line)
        if entry:
            name, spills = entry.group(1), 0
            continue
        spill = _SPILLS.search(line)
        if spill and name is not None:
            spills = int(spill.group(1))
        registers = _REGISTERS.search(line)
        if registers and name is not None:
            shared = _SHARED.search(line)
            found[name] = KernelResources(int(registers.group(1)),
                                          int(shared.group(1)) if shared else 0, spills)
            name = None
    return found
