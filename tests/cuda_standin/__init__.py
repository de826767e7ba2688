"""A strict stand-in for PyCUDA's driver API, to run the GPU runtime's real CUDA path without a
GPU (test-only: never installed).

``with install() as standin:`` puts the stand-in's ``pycuda`` package (``site/pycuda``:
``driver``, ``gpuarray``, ``tools``, ``compiler``, ``autoinit``, ``autoprimaryctx``) first on
``sys.path`` for the block, with fresh driver state, and resets ``lowering``'s CUDA runtime
around it, so ``CudaDevice`` and ``lowering.llvm.gpu.cuda_runtime`` run on it as on PyCUDA.
It is strict where a GPU is:

- **contexts per thread**: each thread has its own stack (``push``/``pop``); every call that
  needs a context (allocations, copies, memsets, streams, events, module loads, launches)
  raises ``LogicError`` "invalid device context" without one, or when the object belongs to
  another context than the current one;
- **memory**: each device pointer is checked against the live allocations (``memory``): a copy,
  memset or kernel argument that reaches past the end of its allocation or into freed memory is
  refused, and so is a kernel argument in another context's memory (copies and memsets reach
  any context's memory, as with unified addressing);
- **launch limits**: block <= 1,024 threads (x, y <= 1,024, z <= 64), grid x < 2**31, y, z <=
  65,535, the kernel's ``.maxntid``, registers x threads <= 65,536 with the register count
  ``ptxas -v`` reports for the kernel (``MAX_THREADS_PER_BLOCK`` and ``NUM_REGS`` read the
  same), static plus dynamic shared memory <= 48 KiB;
- **arguments**: every launch's buffer is packed from the prepared format as PyCUDA packs it,
  decoded with the kernel's ``.param`` list from the PTX, checked against the ``gpu.func``'s
  argument types, and the kernel then runs in the gpu dialect's interpreter on the decoded
  arguments (buffers are views of device memory), so results can be checked against NumPy;
- **faults are asynchronous**: a kernel that fails in the interpreter marks its context as
  faulted; the launch returns, and the next wait (stream, event or context synchronize, or a
  copy) raises ``LaunchError``, and so does every later call in that context, as on a GPU;
- ``GPUArray.fill`` (which compiles CUDA C with ``SourceModule`` in PyCUDA) and
  ``SourceModule`` itself are refused: the stand-in compiles no CUDA C.

The PTX a launch runs is matched to the ``gpu.module`` it was translated from (``install``
records every translation); the driver never sees anything but the PTX text.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")


@dataclass
class Spec:
    """The stand-in device: an sm_90 GPU's limits."""

    devices: int = 2
    capability: tuple = (9, 0)
    max_threads: int = 1024
    registers: int = 65536
    shared_bytes: int = 48 * 1024
    driver_version: int = 13000
    toolkit_version: tuple = (13, 0, 0)
    import_error: str | None = None  # what ``import pycuda.driver`` raises (a user's machine)
    init_error: str | None = None    # what ``init()`` raises

    def max_threads_for(self, registers: int, maxntid: int | None) -> int:
        """``MAX_THREADS_PER_BLOCK`` of a kernel: registers are allocated per warp, per thread
        in units of 8."""
        limit = self.max_threads if maxntid is None else min(self.max_threads, maxntid)
        if registers:
            per_thread = -(-registers // 8) * 8
            limit = min(limit, self.registers // (per_thread * 32) * 32)
        return limit


SPEC = Spec()
_SOURCES: dict[str, object] = {}
_RESOURCES: dict[tuple[str, str], dict] = {}
EXIT_HANDLERS: list = []


def kernel_source(ptx: str):
    """The ``gpu.module`` the PTX text was translated from (None: unknown)."""
    return _SOURCES.get(ptx)


def ptx_resources(ptx: str, arch: str) -> dict:
    """``ptxas -v``'s registers and shared memory per kernel (empty without ptxas)."""
    from lowering.llvm.gpu.ptxas import kernel_resources, ptxas_available
    key = (ptx, arch)
    if key not in _RESOURCES:
        _RESOURCES[key] = kernel_resources(ptx, arch) if ptxas_available() else {}
    return _RESOURCES[key]


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _scalar(value: int | float, t, kind: str):
    if t.is_bool:
        return bool(value)
    if t.is_float:
        if t.bits == 16:
            return np.uint16(value).view(np.float16)
        return t.dtype.type(value)
    if t.name == "index" or t.is_signed:
        return t.dtype.type(_signed(int(value), t.bits if t.name != "index" else 64))
    return t.dtype.type(value)


_PARAM_BITS = {"index": 64}


def _expected_bits(t) -> int:
    if t.is_bool:
        return 8
    return _PARAM_BITS.get(t.name, t.bits)


def run_launch(gpu_module, name: str, entry, params: list, grid, block, context):
    """Run kernel ``name`` of ``gpu_module`` in the interpreter on the decoded ``params``;
    a fault's message, or None."""
    from lowering.dialects.gpu import run_kernel
    from lowering.dialects.loops import BufferType
    from cuda_standin.memory import InvalidPointer
    from pycuda.driver import MEMORY, LogicError
    kernel = next((k for k in gpu_module.kernels if k.sym_name == name), None)
    if kernel is None:
        raise LogicError(f"cuLaunchKernel: {name} is not a kernel of its module's source")
    values, position = [], 0
    for index, t in enumerate(kernel.function_type.inputs):
        if isinstance(t, BufferType):
            count = 1 + 2 * t.rank
            kinds = entry.params[position:position + count]
            if any(int(k[1:]) != 64 for k in kinds):
                raise LogicError(f"{name}: argument {index} (a buffer) has .param types {kinds}")
            pointer, *rest = params[position:position + count]
            sizes = [_signed(v, 64) for v in rest[:t.rank]]
            strides = [_signed(v, 64) for v in rest[t.rank:]]
            try:
                values.append(MEMORY.strided(pointer, sizes, strides, t.element.dtype, context))
            except InvalidPointer as exc:
                return f"an illegal memory access was encountered ({name}, argument {index}: {exc})"
            position += count
        else:
            kind = entry.params[position]
            if int(kind[1:]) != _expected_bits(t):
                raise LogicError(f"{name}: argument {index} ({t}) is passed as .{kind}")
            values.append(_scalar(params[position], t, kind))
            position += 1
    if position != len(entry.params):
        raise LogicError(f"{name}: the PTX declares {len(entry.params)} parameters, the "
                         f"gpu.func's arguments take {position}")
    try:
        run_kernel(kernel, grid, block, values)
    except Exception as exc:  # noqa: BLE001 - any failure inside the kernel is a device fault
        return f"an illegal memory access was encountered ({name}: {exc})"
    return None


def at_exit(handler) -> None:
    """What the stand-in's modules register to run at the program's exit (``simulate_exit``)."""
    EXIT_HANDLERS.append(handler)


def _reset_runtime() -> None:
    from lowering.compile.gpu import device
    from lowering.llvm.gpu import cuda_runtime
    cuda_runtime._CONTEXTS.clear()
    cuda_runtime._PUSHED.clear()
    for key in [k for k in device._DEVICES if k[0] == "cuda"]:
        del device._DEVICES[key]


class StandIn:
    """What ``install()`` yields: the driver module, and the program's exit."""

    @property
    def driver(self):
        import pycuda.driver
        return pycuda.driver

    def simulate_exit(self) -> None:
        """What happens when the program ends: the runtime's exit handler (registered when
        ``lowering`` was imported: after the user's ``import pycuda.autoinit`` in a program that
        imports that first, so it runs first), then the stand-in modules' handlers, last first."""
        from lowering.llvm.gpu import cuda_runtime
        cuda_runtime._close_all()
        while EXIT_HANDLERS:
            EXIT_HANDLERS.pop()()


@contextmanager
def install(**spec):
    """The stand-in as ``pycuda`` for the block (see the module docstring); ``spec`` changes
    fields of ``SPEC`` for the block (``import_error=...`` models a machine whose PyCUDA does
    not load)."""
    from lowering.compile.gpu import build
    saved_spec = {name: getattr(SPEC, name) for name in spec}
    for name, value in spec.items():
        setattr(SPEC, name, value)
    saved = {name: module for name, module in sys.modules.items()
             if name == "pycuda" or name.startswith("pycuda.")}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, SITE)
    original = build.translate_cached

    def translate_recorded(gpu_module, arch, fast_math, max_threads=None):
        ptx = original(gpu_module, arch, fast_math, max_threads)
        _SOURCES[ptx.ptx] = gpu_module.clone()
        return ptx

    build.translate_cached = translate_recorded
    for program in list(build._built.values()):  # PTX made before the stand-in came
        modules = {m.sym_name: m for m in program.gpu_modules}
        for translated in program._ptx.values():
            for name, ptx in translated.items():
                _SOURCES.setdefault(ptx.ptx, modules[name].clone())
    _reset_runtime()
    EXIT_HANDLERS.clear()
    try:
        yield StandIn()
    finally:
        build.translate_cached = original
        for name, value in saved_spec.items():
            setattr(SPEC, name, value)
        _reset_runtime()
        EXIT_HANDLERS.clear()
        sys.path.remove(SITE)
        for name in [n for n in sys.modules if n == "pycuda" or n.startswith("pycuda.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def real_gpu() -> bool:
    """Whether PyCUDA, a driver and a GPU are here (the real path, tests marked ``gpu``)."""
    from lowering.llvm.gpu.cuda_runtime import cuda_available
    return cuda_available()


def driver_params() -> list:
    """Parameters of a fixture that runs a test on the stand-in, and on the real GPU when
    there is one (``@pytest.fixture(params=driver_params())``, then ``use_driver(param)``)."""
    import pytest
    return ["stand-in", pytest.param("gpu", marks=[
        pytest.mark.gpu,
        pytest.mark.skipif(not real_gpu(), reason="needs PyCUDA, a CUDA driver and an NVIDIA GPU")])]


@contextmanager
def use_driver(name: str):
    """The stand-in installed (``"stand-in"``; yields it), or the real PyCUDA (``"gpu"``; yields
    None)."""
    if name == "gpu":
        yield None
        return
    with install() as standin:
        yield standin
