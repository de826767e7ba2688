"""The CUDA runtime of the GPU backend: PyCUDA's driver API, and nothing else.

What the host side of a compiled GPU function needs from a real device:

- **contexts by name**: ``get_context(name)`` gives the ``CudaContext`` of a context name, made
  once and kept for the process. ``None``, ``"cuda"`` and ``"gpu"`` are the default device (the
  ``device`` flag: ``cuda1`` means device 1), ``"cudaN"``/``"gpuN"`` device N, and a name of the
  ``contexts`` flag (``contexts=dev0->cuda0;dev1->cuda1``) the device it maps to. Names that map
  to one device share its context. A context already current on that device (``import
  pycuda.autoinit`` in the user's program) is used as it is, so arrays the program made work
  without copies; otherwise the device's primary context is retained;
- a **memory pool** per context (``pycuda.tools.DeviceMemoryPool``): device arrays are
  ``pycuda.gpuarray.GPUArray`` objects whose memory comes from it, freed back to it;
- **modules and kernels**: ``CudaContext.load_module(ptx, formats)`` loads PTX text
  (``module_from_buffer``) once per text and prepares each kernel with its parameter format
  (``Function.prepare``, the kernel ABI of ``lowering.llvm.gpu.to_ptx.kernel_param_format``);
- **launches on a stream**, asynchronous: every launch and copy of a context goes to its one
  stream, in order; ``sync()`` (or ``CudaContext.synchronize()``) waits for them. With
  ``CUDA_LAUNCH_BLOCKING=1`` in the environment or the flag ``gpuarray.sync``, every launch is
  followed by a wait, so an error shows at the launch that caused it and timings are those of
  each launch;
- **events** (``CudaContext.event_pair()``) to time work on the stream.

Without PyCUDA, without a driver or without a device, ``require_cuda()`` (and everything that
needs a context) raises ``CudaUnavailableError`` saying what is missing and how to get it.

>>> isinstance(cuda_available(), bool)
True
>>> device_ordinal("cuda2"), device_ordinal("gpu1")
(2, 1)
"""
from __future__ import annotations

import atexit
import hashlib
import os
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

INSTALL_HINT = ("install it with: pip install 'lowering[cuda]' (this builds PyCUDA from source "
                "and needs the CUDA toolkit: nvcc on PATH and the CUDA headers)")
ALTERNATIVES = ("run on the CPU with device=cpu, or run the GPU kernels in the reference "
                "interpreter with the flag gpuarray.simulate=True")


class CudaUnavailableError(RuntimeError):
    """GPU execution was asked for but cannot happen here; the message says what is missing
    (PyCUDA, the CUDA driver, a device) and how to get it."""


def _driver():
    """``pycuda.driver``, initialized; a CudaUnavailableError says why it cannot be had."""
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        raise CudaUnavailableError(
            f"GPU execution needs PyCUDA, which is not installed ({exc}); {INSTALL_HINT}; "
            f"or {ALTERNATIVES}") from None
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as exc:  # noqa: BLE001 - pycuda._driver.Error and its kinds
        raise CudaUnavailableError(
            f"PyCUDA is installed but the CUDA driver could not start: {exc} (is the NVIDIA "
            f"driver installed and a GPU visible, e.g. CUDA_VISIBLE_DEVICES?); "
            f"or {ALTERNATIVES}") from None
    if count == 0:
        raise CudaUnavailableError(f"PyCUDA and the CUDA driver are installed, but the driver "
                                   f"sees no CUDA device; {ALTERNATIVES}")
    return drv


def require_cuda():
    """``pycuda.driver`` ready to use, or CudaUnavailableError naming what is missing."""
    return _driver()


def cuda_available() -> bool:
    """Whether PyCUDA, a CUDA driver and at least one device are present (no context is made)."""
    try:
        _driver()
    except CudaUnavailableError:
        return False
    return True


def launch_blocking() -> bool:
    """Whether every launch waits for the device: ``CUDA_LAUNCH_BLOCKING=1`` in the environment
    (the driver's own switch, read here too so that the host runtime waits as well) or the flag
    ``gpuarray.sync``.

    >>> from lowering.config import config
    >>> with config.change_flags({"gpuarray.sync": True}):
    ...     launch_blocking()
    True
    """
    from lowering.config import config
    return os.environ.get("CUDA_LAUNCH_BLOCKING", "0") == "1" or bool(config.gpuarray.sync)


_DEVICE_NAME = re.compile(r"(?:cuda|gpu)(\d*)")


def device_ordinal(name: str | None) -> int:
    """The device number a context name stands for (see the module docstring).

    >>> from lowering.config import config
    >>> with config.change_flags(contexts="dev0->cuda3"):
    ...     device_ordinal("dev0"), device_ordinal(None)
    (3, 0)
    """
    from lowering.config import config
    if name is None or name in ("cuda", "gpu"):
        match = _DEVICE_NAME.fullmatch(config.device)
        return int(match.group(1)) if match and match.group(1) else 0
    contexts = config.context_devices()
    if name in contexts:
        return device_ordinal(contexts[name])
    match = _DEVICE_NAME.fullmatch(name)
    if match:
        return int(match.group(1) or 0)
    known = ", ".join(contexts) or "none defined; set the flag, e.g. contexts=dev0->cuda0"
    raise ValueError(f"unknown GPU context {name!r}: a context is 'cuda', 'cudaN' or a name of the "
                     f"contexts flag ({known})")


# ---------------------------------------------------------------------------------------------
# Kernels and modules


@dataclass
class CudaKernel:
    """A prepared kernel: ``launch(grid, block, args, stream)`` with ``args`` packed by
    ``format`` (PyCUDA's prepared-call format)."""

    name: str
    function: object  # pycuda.driver.Function, prepared
    format: str

    def launch(self, grid, block, args, stream) -> None:
        self.function.prepared_async_call(tuple(grid), tuple(block), stream, *args)


@dataclass
class CudaModule:
    """A loaded PTX module and its prepared kernels by name."""

    module: object  # pycuda.driver.Module
    kernels: dict[str, CudaKernel] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Contexts


class CudaContext:
    """One device's context with its memory pool, stream and loaded modules.

    Made by ``get_context``; every call that touches the device runs inside ``activate()``.
    """

    def __init__(self, ordinal: int):
        drv = _driver()
        import pycuda.gpuarray as gpuarray
        import pycuda.tools as tools
        self._drv = drv
        self._gpuarray = gpuarray
        self.ordinal = ordinal
        if ordinal >= drv.Device.count():
            raise CudaUnavailableError(f"GPU context for device {ordinal} asked for, but the "
                                       f"driver sees {drv.Device.count()} device(s)")
        self.device = drv.Device(ordinal)
        self.name = self.device.name()
        current = _current_context(drv)
        if current is not None and current.get_device() == self.device:
            self.context, self._owned = current, False
        else:
            self.context, self._owned = self.device.retain_primary_context(), True
            self.context.push()
            # Stays current on this thread (as pycuda.autoprimaryctx does), so that the user's
            # GPUArray operations find it; other threads push it for each use.
            _PUSHED.append(self)
        self._thread = threading.get_ident()
        self.pool = tools.DeviceMemoryPool()
        self.stream = drv.Stream()
        self.modules: dict[str, CudaModule] = {}
        self.compute_capability = self.device.compute_capability()

    @contextmanager
    def activate(self):
        """Make this context current for the block (pushing and popping it when needed)."""
        if threading.get_ident() == self._thread and _current_context(self._drv) == self.context:
            yield self
            return
        self.context.push()
        try:
            yield self
        finally:
            self._drv.Context.pop()

    # -- memory -------------------------------------------------------------------------------

    def empty(self, shape, dtype) -> object:
        """A fresh contiguous ``GPUArray`` from the pool (uninitialized)."""
        return self._gpuarray.GPUArray(tuple(int(n) for n in shape), np.dtype(dtype),
                                       allocator=self.pool.allocate)

    def view(self, array, shape, strides_bytes, offset_bytes: int) -> object:
        """A ``GPUArray`` over ``array``'s memory starting ``offset_bytes`` after its first
        element, with ``shape`` and ``strides_bytes`` (no copy; keeps ``array`` alive)."""
        base = array.base if array.base is not None else array
        pointer = (int(array.gpudata) if array.gpudata is not None else 0) + int(offset_bytes)
        return self._gpuarray.GPUArray(tuple(int(n) for n in shape), array.dtype,
                                       allocator=self.pool.allocate, base=base, gpudata=pointer,
                                       strides=tuple(int(s) for s in strides_bytes))

    @staticmethod
    def pointer(array) -> int:
        """The device address of ``array``'s first element (0 for an empty array)."""
        return int(array.gpudata) if array.gpudata is not None else 0

    def free(self, array) -> None:
        """Give ``array``'s memory back to the pool now. Launches already queued on the stream
        that use it still run first: the stream orders the memory's next use after them."""
        data = array.gpudata
        if data is not None and hasattr(data, "free"):
            data.free()

    # -- copies (on the stream, in order with the launches) -----------------------------------

    def to_device(self, host: np.ndarray) -> object:
        """A fresh contiguous device copy of ``host`` (any layout)."""
        host = np.ascontiguousarray(host)
        array = self.empty(host.shape, host.dtype)
        if host.size:
            self._drv.memcpy_htod_async(array.gpudata, host, self.stream)
        return array

    def to_host(self, array) -> np.ndarray:
        """A fresh contiguous host copy of the device ``array`` (any strides, broadcast and
        reversed ones included); waits for the stream (the host reads it next)."""
        shape, strides, itemsize = array.shape, array.strides, array.dtype.itemsize
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            self.stream.synchronize()
            return np.empty(shape, array.dtype)
        if _c_contiguous(shape, strides, itemsize):
            host = np.empty(shape, array.dtype)
            self._drv.memcpy_dtoh_async(host, self.pointer(array), self.stream)
            self.stream.synchronize()
            return host
        # Copy the bytes the view spans, then gather on the host.
        low = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
        high = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0) + itemsize
        span = np.empty(high - low, np.uint8)
        self._drv.memcpy_dtoh_async(span, self.pointer(array) + low, self.stream)
        self.stream.synchronize()
        view = np.lib.stride_tricks.as_strided(span[-low:].view(array.dtype)[:1], shape, strides)
        return np.array(view, order="C")

    def copy(self, source, target) -> None:
        """Copy between two contiguous arrays of equal size, either on the host or the device."""
        drv, stream = self._drv, self.stream
        source_on_host = isinstance(source, np.ndarray)
        target_on_host = isinstance(target, np.ndarray)
        nbytes = source.nbytes
        if nbytes == 0:
            return
        if source_on_host and target_on_host:
            self.stream.synchronize()
            np.copyto(target, source)
        elif source_on_host:
            drv.memcpy_htod_async(target.gpudata, np.ascontiguousarray(source), stream)
        elif target_on_host:
            drv.memcpy_dtoh_async(target, source.gpudata, stream)
            stream.synchronize()
        else:
            drv.memcpy_dtod_async(target.gpudata, source.gpudata, nbytes, stream)

    def fill(self, array, value) -> None:
        """Set every element of the contiguous device ``array`` to ``value``."""
        if array.size:
            array.fill(array.dtype.type(value), stream=self.stream)

    # -- kernels ------------------------------------------------------------------------------

    def load_module(self, ptx: str, formats: dict[str, str]) -> CudaModule:
        """The module of ``ptx`` (loaded once per text) with the kernels of ``formats``
        (name → prepared-call format) prepared."""
        key = hashlib.sha256(ptx.encode()).hexdigest()
        loaded = self.modules.get(key)
        if loaded is None:
            module = self._drv.module_from_buffer(ptx.encode())
            loaded = self.modules[key] = CudaModule(module)
        for name, fmt in formats.items():
            if name not in loaded.kernels:
                function = loaded.module.get_function(name)
                function.prepare(fmt)
                loaded.kernels[name] = CudaKernel(name, function, fmt)
        return loaded

    def launch(self, kernel: CudaKernel, grid, block, args) -> None:
        """Queue ``kernel`` on the stream; with ``launch_blocking()`` wait for it."""
        kernel.launch(grid, block, args, self.stream)
        if launch_blocking():
            self.stream.synchronize()

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done."""
        self.stream.synchronize()

    def event_pair(self):
        """Two fresh events (start, end) for timing work queued on the stream:
        ``start.record(stream)``, ..., ``end.record(stream)``, later ``end.synchronize()`` and
        ``end.time_since(start)`` milliseconds."""
        return self._drv.Event(), self._drv.Event()

    def close(self) -> None:
        """Free the pool's memory and let the context go (at exit)."""
        try:
            with self.activate():
                self.stream.synchronize()
                self.modules.clear()
                self.pool.stop_holding()
        except Exception:  # noqa: BLE001 - at exit the driver may be gone already
            pass

    def __repr__(self):
        return f"<CudaContext device {self.ordinal}: {self.name}>"


def _c_contiguous(shape, strides, itemsize: int) -> bool:
    """Whether ``strides`` (bytes) lay ``shape`` out in C order (size-1 axes ignored).

    >>> _c_contiguous((2, 3), (12, 4), 4), _c_contiguous((2, 3), (4, 8), 4)
    (True, False)
    """
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _current_context(drv):
    try:
        return drv.Context.get_current()
    except Exception:  # noqa: BLE001 - no context on this thread
        return None


_CONTEXTS: dict[int, CudaContext] = {}
_PUSHED: list[CudaContext] = []
_LOCK = threading.Lock()


def get_context(name: str | None = None) -> CudaContext:
    """The context of ``name`` (see the module docstring), made on first use and kept."""
    ordinal = device_ordinal(name)
    with _LOCK:
        context = _CONTEXTS.get(ordinal)
        if context is None:
            context = _CONTEXTS[ordinal] = CudaContext(ordinal)
            _announce(context)
        return context


def sync(name: str | None = None) -> None:
    """Wait until the work queued on a context's stream is done: the context of ``name``, or
    with None every context made so far (what ``gpu.sync`` and benchmarks need)."""
    contexts = [get_context(name)] if name is not None else list(_CONTEXTS.values())
    for context in contexts:
        with context.activate():
            context.synchronize()


def _announce(context: CudaContext) -> None:
    from lowering.config import config
    if config.print_active_device:
        print(f"Using device cuda{context.ordinal}: {context.name}")


def _close_all() -> None:
    for context in list(_CONTEXTS.values()):
        context.close()
    while _PUSHED:
        context = _PUSHED.pop()
        try:
            context._drv.Context.pop()
        except Exception:  # noqa: BLE001 - the driver may be shutting down
            pass
    _CONTEXTS.clear()


atexit.register(_close_all)
