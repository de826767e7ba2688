"""The devices a GPU function's host program runs against: a real GPU, or the interpreter.

``Device`` is what ``gpu.host`` asks of a device: allocate and free device arrays, make views of
them (descriptor arithmetic only), copy between host and device, fill, launch a kernel, wait.
Two implementations:

- ``CudaDevice``: a context of ``lowering.llvm.gpu.cuda_runtime`` (PyCUDA): device arrays are
  ``pycuda.gpuarray.GPUArray`` with memory from the context's pool, kernels are the loaded PTX,
  launches are queued on the context's stream (asynchronous);
- ``InterpretedDevice`` (the flag ``gpuarray.simulate``): device arrays are
  ``gpu.arrays.SimulatedGpuArray`` (NumPy memory standing in for device memory), and a launch
  runs the ``gpu.func`` in the reference interpreter, thread by thread
  (``lowering.dialects.gpu.run_kernel``). Every step of the device path runs as on a GPU, in CI.

Both count what they do in ``counters`` (``DeviceCounters``): transfers each way and their
bytes, device-to-device copies, launches, waits, allocations and frees, so that tests and
profiles can tell, e.g., that a training step moves no weights between host and device.

>>> import numpy as np
>>> device = InterpretedDevice("cuda")
>>> d = device.to_device(np.arange(4, dtype=np.float32))
>>> device.to_host(device.view(d, (2,), (2,), 1))
array([1., 3.], dtype=float32)
>>> device.counters.to_device, device.counters.bytes_to_host
(1, 8)
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, fields

import numpy as np

from .arrays import SimulatedDevicePointer, SimulatedGpuArray, to_host_array


@dataclass
class DeviceCounters:
    """What a device did since it was made (or since ``reset()``)."""

    to_device: int = 0          # host -> device copies
    to_host: int = 0            # device -> host copies
    device_copies: int = 0      # device -> device copies
    bytes_to_device: int = 0
    bytes_to_host: int = 0
    launches: int = 0           # kernels launched
    syncs: int = 0              # waits for the device
    allocations: int = 0        # device arrays allocated
    frees: int = 0              # device arrays freed explicitly (loops.dealloc)

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)

    def snapshot(self) -> dict[str, int]:
        """The counters as a dict (to compare before and after a call).

        >>> DeviceCounters(launches=2).snapshot()["launches"]
        2
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def since(self, before: dict[str, int]) -> dict[str, int]:
        """How much each counter grew since ``before`` (a ``snapshot()``)."""
        return {name: value - before[name] for name, value in self.snapshot().items()}


class Device:
    """The interface ``gpu.host`` runs against (see the module docstring). ``context`` is the
    GPU context's name; ``kind`` says which device it is (``"cuda"`` or ``"interpreted"``)."""

    kind = ""

    def __init__(self, context: str):
        self.context = context
        self.counters = DeviceCounters()

    # Arrays -----------------------------------------------------------------------------------

    def owns(self, value) -> bool:
        """Whether ``value`` is an array in this device's memory."""
        raise NotImplementedError

    def empty(self, shape, dtype):
        """A fresh contiguous device array (contents undefined)."""
        raise NotImplementedError

    def free(self, array) -> None:
        """Release a device array made by ``empty`` or ``to_device`` (``loops.dealloc``)."""
        raise NotImplementedError

    def view(self, array, shape, strides, offset: int):
        """A view of ``array``'s memory: ``shape``, ``strides`` in elements, starting ``offset``
        elements after ``array``'s first element. No data moves."""
        raise NotImplementedError

    # Copies -----------------------------------------------------------------------------------

    def to_device(self, host: np.ndarray):
        """A fresh contiguous device copy of the host array (any layout)."""
        raise NotImplementedError

    def to_host(self, array) -> np.ndarray:
        """A fresh host copy of the device array, once everything before it finished."""
        raise NotImplementedError

    def copy(self, source, target) -> None:
        """Copy between two contiguous arrays of one shape, each host or device (gpu.memcpy)."""
        raise NotImplementedError

    def fill(self, array, value) -> None:
        """Set every element of a contiguous device array (loops.fill on device memory)."""
        raise NotImplementedError

    # Kernels ----------------------------------------------------------------------------------

    def load(self, program) -> None:
        """Get the kernels of ``program`` (a ``gpu.build.GpuProgram``) ready to launch."""
        raise NotImplementedError

    def launch(self, kernel: str, grid, block, args, where: str = "") -> None:
        """Launch ``kernel`` (``"module::name"``) with device arrays and NumPy scalars;
        ``where`` is the program's op and line it runs for, named by errors."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait until all launched work is done."""
        raise NotImplementedError

    # Timing (profiles) ------------------------------------------------------------------------

    def start_timer(self):
        """A token marking now on the device's timeline (``stop_timer`` ends the interval)."""
        return time.perf_counter()

    def stop_timer(self, token):
        """End an interval started by ``start_timer``: a function giving its seconds, to call
        once the device has finished it (after ``synchronize``)."""
        seconds = time.perf_counter() - token
        return lambda: seconds

    def current(self):
        """A context manager under which the program's own driver calls (a custom op's
        PyCUDA kernels) find this device's context current."""
        return contextlib.nullcontext(self)

    # Arguments from the user's side -----------------------------------------------------------

    def adopt(self, value):
        """``value`` as an array of this device: itself if it already is one, else a copy made
        through the host (a host array, or another device's array), counted as a transfer."""
        if self.owns(value):
            return value
        host = to_host_array(value)
        return self.to_device(host)

    def __repr__(self):
        return f"<{type(self).__name__} {self.context!r}>"


def _blocking() -> bool:
    from lowering.llvm.gpu.cuda_runtime import launch_blocking
    return launch_blocking()


# ---------------------------------------------------------------------------------------------
# The interpreted device


class InterpretedDevice(Device):
    """Device memory is NumPy memory (``SimulatedGpuArray``); kernels run in the interpreter.

    Launches finish before ``launch`` returns, so there is never anything to wait for; waits are
    still counted where a real device would wait (``gpu.sync``, and after every launch with
    ``CUDA_LAUNCH_BLOCKING=1`` or ``gpuarray.sync``), so tests see the same schedule.
    """

    kind = "interpreted"

    def __init__(self, context: str):
        super().__init__(context)
        self._kernels: dict[str, object] = {}

    def owns(self, value) -> bool:
        return isinstance(value, SimulatedGpuArray)

    def empty(self, shape, dtype):
        self.counters.allocations += 1
        return SimulatedGpuArray(tuple(int(n) for n in shape), np.dtype(dtype))

    def free(self, array) -> None:
        self.counters.frees += 1
        # Freed memory holds garbage on a GPU: poison it, so a read after the free shows.
        data = array.device_ndarray
        if data.dtype.kind in "fc" and data.size:
            data.fill(np.nan)

    def view(self, array, shape, strides, offset: int):
        itemsize = array.dtype.itemsize
        pointer = array.gpudata
        if not isinstance(pointer, SimulatedDevicePointer):
            raise TypeError(f"expected a simulated device array, got {type(array).__name__}")
        start = pointer.offset + int(offset) * itemsize
        return SimulatedGpuArray(tuple(int(n) for n in shape), array.dtype, base=array,
                                 gpudata=SimulatedDevicePointer(pointer.memory, start),
                                 strides=tuple(int(s) * itemsize for s in strides))

    def to_device(self, host: np.ndarray):
        host = np.asarray(host)
        self.counters.to_device += 1
        self.counters.bytes_to_device += host.nbytes
        array = self.empty(host.shape, host.dtype)
        array.device_ndarray[...] = host
        return array

    def to_host(self, array) -> np.ndarray:
        self.counters.to_host += 1
        self.counters.bytes_to_host += array.nbytes
        return np.array(array.device_ndarray, copy=True, order="C")

    def copy(self, source, target) -> None:
        source_data = source if isinstance(source, np.ndarray) else source.device_ndarray
        target_data = target if isinstance(target, np.ndarray) else target.device_ndarray
        if source_data.shape != target_data.shape:
            raise ValueError(f"gpu.memcpy: source shape {source_data.shape} differs from target "
                             f"shape {target_data.shape}")
        _count_copy(self.counters, source, target)
        np.copyto(target_data, source_data)

    def fill(self, array, value) -> None:
        array.device_ndarray[...] = value

    def load(self, program) -> None:
        for module in program.gpu_modules:
            for kernel in module.kernels:
                self._kernels[f"{module.sym_name}::{kernel.sym_name}"] = kernel

    def launch(self, kernel: str, grid, block, args, where: str = "") -> None:
        from lowering.dialects.gpu import run_kernel
        self.counters.launches += 1
        values = [a.device_ndarray if isinstance(a, SimulatedGpuArray) else a for a in args]
        run_kernel(self._kernels[kernel], tuple(grid), tuple(block), values)
        if _blocking():
            self.synchronize()

    def synchronize(self) -> None:
        self.counters.syncs += 1


def _count_copy(counters: DeviceCounters, source, target) -> None:
    source_on_host = isinstance(source, np.ndarray)
    target_on_host = isinstance(target, np.ndarray)
    if source_on_host and not target_on_host:
        counters.to_device += 1
        counters.bytes_to_device += source.nbytes
    elif target_on_host and not source_on_host:
        counters.to_host += 1
        counters.bytes_to_host += source.nbytes
    elif not source_on_host:
        counters.device_copies += 1


# ---------------------------------------------------------------------------------------------
# A real GPU


class CudaDevice(Device):
    """A GPU through PyCUDA (``lowering.llvm.gpu.cuda_runtime.CudaContext``)."""

    kind = "cuda"

    def __init__(self, context: str):
        from lowering.llvm.gpu.cuda_runtime import get_context
        super().__init__(context)
        self.cuda = get_context(context)
        import pycuda.gpuarray as gpuarray
        self._array_type = gpuarray.GPUArray
        self._kernels: dict[str, object] = {}
        self._formats: dict[str, tuple] = {}

    @property
    def arch(self) -> str:
        """The architecture PTX is generated for (the GPU's own)."""
        from lowering.llvm.gpu.target import arch_for_capability
        return arch_for_capability(*self.cuda.compute_capability)

    def owns(self, value) -> bool:
        return isinstance(value, self._array_type)

    def empty(self, shape, dtype):
        self.counters.allocations += 1
        with self.cuda.activate():
            return self.cuda.empty(shape, dtype)

    def free(self, array) -> None:
        self.counters.frees += 1
        with self.cuda.activate():
            self.cuda.free(array)

    def view(self, array, shape, strides, offset: int):
        itemsize = array.dtype.itemsize
        with self.cuda.activate():
            return self.cuda.view(array, shape, [int(s) * itemsize for s in strides],
                                  int(offset) * itemsize)

    def to_device(self, host: np.ndarray):
        host = np.asarray(host)
        self.counters.to_device += 1
        self.counters.bytes_to_device += host.nbytes
        self.counters.allocations += 1
        with self.cuda.activate():
            return self.cuda.to_device(host)

    def to_host(self, array) -> np.ndarray:
        self.counters.to_host += 1
        self.counters.bytes_to_host += array.nbytes
        self.counters.syncs += 1
        with self.cuda.activate():
            return self.cuda.to_host(array)

    def copy(self, source, target) -> None:
        _count_copy(self.counters, source, target)
        with self.cuda.activate():
            self.cuda.copy(source, target)

    def fill(self, array, value) -> None:
        with self.cuda.activate():
            self.cuda.fill(array, value)

    def load(self, program) -> None:
        modules = program.ptx_modules(self.arch)
        for module in program.gpu_modules:
            ptx = modules[module.sym_name]
            with self.cuda.activate():
                loaded = self.cuda.load_module(ptx.ptx, dict(ptx.kernels), ptx.max_threads)
            for kernel in module.kernels:
                key = f"{module.sym_name}::{kernel.sym_name}"
                self._kernels[key] = loaded.kernels[kernel.sym_name]
                self._formats[key] = kernel_arguments(kernel)

    def launch(self, kernel: str, grid, block, args, where: str = "") -> None:
        self.counters.launches += 1
        packed = pack_kernel_arguments(self._formats[kernel], args, self.cuda.pointer)
        with self.cuda.activate():
            self.cuda.launch(self._kernels[kernel], grid, block, packed, where)
        if _blocking():
            self.counters.syncs += 1

    def synchronize(self) -> None:
        self.counters.syncs += 1
        with self.cuda.activate():
            self.cuda.synchronize()

    def current(self):
        return self.cuda.activate()

    def start_timer(self):
        with self.cuda.activate():
            start, end = self.cuda.event_pair()
            start.record(self.cuda.stream)
        return start, end

    def stop_timer(self, token):
        start, end = token
        with self.cuda.activate():
            end.record(self.cuda.stream)

        def seconds() -> float:
            with self.cuda.activate():
                end.synchronize()
                return end.time_since(start) * 1e-3
        return seconds


# ---------------------------------------------------------------------------------------------
# The kernel ABI on the host side


def kernel_arguments(kernel) -> tuple:
    """How each argument of a ``gpu.func`` is passed: ``("buffer", rank)`` for a device buffer
    (pointer, sizes, strides in elements), ``("scalar", numpy type)`` for a scalar (f16 as its
    16 bits, i1 as a byte), as ``lowering.llvm.gpu.to_ptx.kernel_param_format`` lays them out.

    >>> from lowering.ir.types import F32, INDEX
    >>> from lowering.dialects.loops import BufferType
    >>> from lowering.dialects.gpu import GpuFuncOp
    >>> k = GpuFuncOp.build("k", [BufferType((None,), F32, memory_space="device"), INDEX])
    >>> kernel_arguments(k)
    (('buffer', 1), ('scalar', <class 'numpy.int64'>))
    """
    from lowering.dialects.loops import BufferType
    found = []
    for t in kernel.function_type.inputs:
        if isinstance(t, BufferType):
            found.append(("buffer", t.rank))
        elif t.name == "index":
            found.append(("scalar", np.int64))
        elif t.name == "i1":
            found.append(("scalar", np.int8))
        elif t.name == "f16":
            found.append(("scalar", np.float16))
        else:
            found.append(("scalar", t.dtype.type))
    return tuple(found)


def pack_kernel_arguments(layout: tuple, args, pointer) -> list:
    """The flat parameter list of a prepared call: for each buffer its device pointer
    (``pointer(array)``), sizes and strides in elements; each scalar converted to its type.

    >>> a = np.zeros((2, 3), np.float32)[:, ::2]
    >>> pack_kernel_arguments((("buffer", 2), ("scalar", np.float16)), [a, 1.0],
    ...                       lambda x: 4096)
    [4096, 2, 2, 3, 2, 15360]
    """
    packed: list = []
    for (kind, detail), value in zip(layout, args):
        if kind == "buffer":
            itemsize = value.dtype.itemsize
            packed.append(pointer(value))
            packed.extend(int(n) for n in value.shape)
            packed.extend(int(s) // itemsize for s in value.strides)
        elif detail is np.float16:
            packed.append(int(np.float16(value).view(np.uint16)))
        elif detail is np.int8:
            packed.append(int(bool(value)) if isinstance(value, (bool, np.bool_)) else int(value))
        elif np.issubdtype(detail, np.floating):
            packed.append(float(detail(value)))
        else:
            packed.append(int(value))
    return packed


# ---------------------------------------------------------------------------------------------
# One device per context and kind


_DEVICES: dict[tuple[str, str], Device] = {}


def simulated() -> bool:
    """Whether GPU work runs on the interpreted device (the flag ``gpuarray.simulate``)."""
    from lowering.config import config
    return bool(config.gpuarray.simulate)


def gpu_missing() -> str | None:
    """None when GPU work can run here (``gpuarray.simulate``, or PyCUDA with a driver and a
    device), else what is missing and how to get it.

    >>> from lowering.config import config
    >>> with config.change_flags({"gpuarray.simulate": True}):
    ...     gpu_missing() is None
    True
    """
    from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError, require_cuda
    if simulated():
        return None
    try:
        require_cuda()
    except CudaUnavailableError as exc:
        return str(exc)
    return None


def device_for(context: str = "cuda") -> Device:
    """The device of a GPU context name, made once per context: the ``InterpretedDevice`` with
    ``gpuarray.simulate``, else the ``CudaDevice`` (a CudaUnavailableError says what is missing
    when there is no GPU to use).

    >>> from lowering.config import config
    >>> with config.change_flags({"gpuarray.simulate": True}):
    ...     device_for("cuda") is device_for("cuda"), device_for("cuda").kind
    (True, 'interpreted')
    """
    kind = "interpreted" if simulated() else "cuda"
    device = _DEVICES.get((kind, context))
    if device is None:
        device = InterpretedDevice(context) if kind == "interpreted" else CudaDevice(context)
        device = _DEVICES.setdefault((kind, context), device)
    return device
