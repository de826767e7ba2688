"""The CUDA runtime of the GPU backend: PyCUDA's driver API, and nothing else.

What the host side of a compiled GPU function needs from a real device:

- **contexts by name**: ``get_context(name)`` gives the ``CudaContext`` of a context name, made
  once and kept for the process. ``None``, ``"cuda"`` and ``"gpu"`` are the default device (the
  ``device`` flag: ``cuda1`` means device 1), ``"cudaN"``/``"gpuN"`` device N, and a name of the
  ``contexts`` flag (``contexts=dev0->cuda0;dev1->cuda1``) the device it maps to. Names that map
  to one device share its context. A context already current on that device (``import
  pycuda.autoinit`` in the user's program) is used as it is, so arrays the program made work
  without copies; otherwise the device's primary context is retained (``pycuda.autoprimaryctx``
  shares it). Every call pushes the context where it is not current and pops it after: no call
  leaves a context pushed on any thread, and none pops one it did not push;
- a **memory pool** per context (``pycuda.tools.DeviceMemoryPool``): device arrays are
  ``pycuda.gpuarray.GPUArray`` objects whose memory comes from it, freed back to it;
- **modules and kernels**: ``CudaContext.load_module(ptx, formats)`` loads PTX text
  (``module_from_buffer``) once per text and prepares each kernel with its parameter format
  (``Function.prepare``, the kernel ABI of ``lowering.llvm.gpu.to_ptx.kernel_param_format``),
  checking its ``MAX_THREADS_PER_BLOCK`` against the blocks it is launched with;
- **fills** with the driver's memsets (``memset_plan``), no kernel compiled at run time;
- **launches on a stream**, asynchronous: every launch and copy of a context goes to its one
  stream, in order; copies go through page-locked staging buffers (``staging.StagingPool``,
  reused by size), so they are asynchronous too; ``sync()`` (or ``CudaContext.synchronize()``) waits for them. With
  ``CUDA_LAUNCH_BLOCKING=1`` in the environment or the flag ``gpuarray.sync``, every launch is
  followed by a wait, so an error shows at the launch that caused it and timings are those of
  each launch;
- **events** (``CudaContext.event_pair()``) to time work on the stream.

Without PyCUDA, without a driver or without a device, ``require_cuda()`` (and everything that
needs a context) raises ``CudaUnavailableError`` saying what is missing and how to get it. A
driver error in a context's work is a ``CudaError`` naming the last kernel launched there.

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

from .staging import StagingPool

INSTALL_HINT = ("install it with: pip install 'lowering[cuda]' (this builds PyCUDA from source "
                "and needs the CUDA toolkit: nvcc on PATH and the CUDA headers)")
ALTERNATIVES = ("run on the CPU with device=cpu, or run the GPU kernels in the reference "
                "interpreter with the flag gpuarray.simulate=True")


class CudaUnavailableError(RuntimeError):
    """GPU execution was asked for but cannot happen here; the message says what is missing
    (PyCUDA, the CUDA driver, a device) and how to get it."""


class CudaError(RuntimeError):
    """The CUDA driver reported an error in a context's work; the message names the last kernel
    launched there (and the program's line that launched it), since a kernel's fault shows at
    the next wait, and says how to find the kernel that failed. ``__cause__`` is PyCUDA's
    error."""


def _driver():
    """``pycuda.driver``, initialized; a CudaUnavailableError says why it cannot be had."""
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        raise CudaUnavailableError(import_failure(exc)) from None
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as exc:  # noqa: BLE001 - pycuda._driver.Error and its kinds
        raise CudaUnavailableError(init_failure(exc, drv)) from None
    if count == 0:
        raise CudaUnavailableError(f"PyCUDA and the CUDA driver are installed, but the driver "
                                   f"sees no CUDA device; {ALTERNATIVES}")
    return drv


# A driver API symbol PyCUDA links -> the CUDA release that introduced it.
_SYMBOL_RELEASES = {"cuCtxCreate_v4": "12.5"}


def import_failure(exc: ImportError) -> str:
    """Why ``import pycuda.driver`` failed, in words: PyCUDA missing, the driver library
    (``libcuda.so``) not loadable, or a driver older than the CUDA toolkit PyCUDA was built
    with (a missing ``cu*`` symbol), with the versions that are known.

    >>> import_failure(ImportError("No module named 'pycuda'", name="pycuda"))[:50]
    'GPU execution needs PyCUDA, which is not installed'
    >>> print(import_failure(ImportError("libcuda.so.1: cannot open shared object file: "
    ...                                  "No such file or directory"))[:78])
    PyCUDA is installed, but the CUDA driver library (libcuda.so) cannot be loaded
    """
    message = str(exc)
    if (exc.name or "").split(".")[0] == "pycuda" or \
            re.search(r"No module named '?pycuda\b", message):
        return (f"GPU execution needs PyCUDA, which is not installed ({message}); "
                f"{INSTALL_HINT}; or {ALTERNATIVES}")
    symbol = re.search(r"undefined symbol: (cu\w+)", message)
    if symbol:
        needs = _SYMBOL_RELEASES.get(symbol.group(1))
        built = f"CUDA {needs} or newer" if needs else "a newer CUDA release"
        return (f"PyCUDA {_pycuda_version()} is installed, but the CUDA driver is older than the "
                f"CUDA toolkit PyCUDA was built with: the driver lacks {symbol.group(1)} "
                f"(PyCUDA needs {built}; the driver supports {_driver_release()}). Update the "
                f"NVIDIA driver, or rebuild PyCUDA with the toolkit of the driver's CUDA release "
                f"(pip install --force-reinstall --no-binary pycuda pycuda, that toolkit's nvcc "
                f"on PATH); or {ALTERNATIVES}")
    if "libcuda" in message:
        return (f"PyCUDA is installed, but the CUDA driver library (libcuda.so) cannot be loaded "
                f"({message}): install the NVIDIA driver, or put the directory of its "
                f"libcuda.so.1 on LD_LIBRARY_PATH; or {ALTERNATIVES}")
    return (f"PyCUDA {_pycuda_version()} is installed but cannot be imported ({message}); "
            f"reinstall it ({INSTALL_HINT}); or {ALTERNATIVES}")


def init_failure(exc: Exception, drv) -> str:
    """Why the driver did not start once PyCUDA imported (``cuInit``), with the driver's CUDA
    release and the one PyCUDA was built with."""
    versions = (f"driver: CUDA {_release(_call(drv, 'get_driver_version'))}, PyCUDA built "
                f"with CUDA {_release(_call(drv, 'get_version'))}")
    message = str(exc)
    if "insufficient" in message or "mismatch" in message or "unsupported" in message:
        return (f"PyCUDA is installed, but the CUDA driver is too old for it: {message} "
                f"({versions}); update the NVIDIA driver; or {ALTERNATIVES}")
    if "no CUDA-capable device" in message or "NO_DEVICE" in message:
        return (f"PyCUDA and the CUDA driver are installed, but no GPU is visible: {message} "
                f"({versions}; check CUDA_VISIBLE_DEVICES); or {ALTERNATIVES}")
    return (f"PyCUDA is installed but the CUDA driver could not start: {message} ({versions}; "
            f"is the NVIDIA driver installed and a GPU visible, e.g. CUDA_VISIBLE_DEVICES?); "
            f"or {ALTERNATIVES}")


def _call(drv, name: str):
    try:
        return getattr(drv, name)()
    except Exception:  # noqa: BLE001 - the driver may not answer
        return None


def _release(version) -> str:
    """``12040`` or ``(12, 4, 0)`` as ``12.4``; ``unknown`` for None.

    >>> _release(12040), _release((13, 0, 0)), _release(None)
    ('12.4', '13.0', 'unknown')
    """
    if version is None:
        return "unknown"
    if isinstance(version, int):
        return f"{version // 1000}.{version % 1000 // 10}"
    return ".".join(str(v) for v in tuple(version)[:2])


def _driver_release() -> str:
    """The CUDA release the installed driver supports (``cuDriverGetVersion`` through ctypes,
    since PyCUDA could not load), e.g. ``CUDA 12.4``, or ``an unknown CUDA release``."""
    import ctypes
    try:
        library = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int()
        if library.cuDriverGetVersion(ctypes.byref(version)) != 0:
            raise OSError("cuDriverGetVersion failed")
    except (OSError, AttributeError):
        return "an unknown CUDA release"
    return f"CUDA {_release(version.value)}"


def _pycuda_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("pycuda")
    except metadata.PackageNotFoundError:
        return "(version unknown)"


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
    max_threads: int = 1024  # the function's MAX_THREADS_PER_BLOCK, read when loaded

    def launch(self, grid, block, args, stream) -> None:
        threads = int(block[0]) * int(block[1]) * int(block[2])
        if threads > self.max_threads:
            raise CudaError(f"kernel {self.name} cannot run blocks of {threads} threads on this "
                            f"GPU: at most {self.max_threads} (its registers and launch bound "
                            f"allow no more); compile with a smaller block size")
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
            # The program's own context (pycuda.autoinit): its arrays work without copies.
            self.context, self._owned = current, False
        else:
            # The device's primary context, which pycuda.autoprimaryctx shares.
            self.context, self._owned = self.device.retain_primary_context(), True
        self.modules: dict[str, CudaModule] = {}
        self.compute_capability = self.device.compute_capability()
        self.last_launch: tuple[str, str] | None = None  # (kernel, where) of the latest launch
        with self.activate():
            self.pool = tools.DeviceMemoryPool()
            self.stream = drv.Stream()
            self.staging = StagingPool(drv)

    @contextmanager
    def activate(self):
        """Make this context current on the calling thread for the block: pushed before and
        popped after unless it is current already, so no call leaves a context pushed and
        none pops a context it did not push. A driver error inside becomes a ``CudaError``
        naming the last kernel launched."""
        pushed = _current_context(self._drv) != self.context
        if pushed:
            self.context.push()
        try:
            yield self
        except self._drv.Error as exc:
            raise CudaError(self.describe_error(exc)) from exc
        finally:
            if pushed:
                self._drv.Context.pop()

    def describe_error(self, exc) -> str:
        """What a driver error means, with the last kernel launched (see ``CudaError``)."""
        if self.last_launch is None:
            return f"CUDA error on {self.name}: {exc} (no kernel was launched in this context)"
        kernel, where = self.last_launch
        launched = f"kernel {kernel}" + (f" (launched for {where})" if where else "")
        if launch_blocking():
            return (f"CUDA error on {self.name}: {exc}; the last launch, checked when it "
                    f"finished, was {launched}")
        return (f"CUDA error on {self.name}: {exc}; the last kernel launched was {launched}. "
                f"Kernels run asynchronously: a kernel's fault shows at the next wait, which can "
                f"be in a later call, and leaves the context unusable (restart the process). "
                f"Set the flag gpuarray.sync=True (or CUDA_LAUNCH_BLOCKING=1) to check every "
                f"launch, so the error names the kernel that failed")

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
        """A fresh contiguous device copy of ``host`` (any layout; 0-d arrays stay 0-d),
        queued on the stream from a page-locked staging buffer: the call does not wait."""
        host = np.asarray(host)
        array = self.empty(host.shape, host.dtype)
        if host.size:
            self._upload(host, array.gpudata)
        return array

    def _upload(self, host: np.ndarray, pointer) -> None:
        """Queue the copy of ``host`` (any layout) to the device memory at ``pointer``."""
        buffer = self.staging.take(host.nbytes)
        np.copyto(buffer.view(host.shape, host.dtype), host)  # gathers any layout
        self._drv.memcpy_htod_async(pointer, buffer.view((host.nbytes,), np.uint8),
                                    self.stream)
        self.staging.give_back(buffer, self.stream)

    def _download(self, pointer, nbytes: int) -> np.ndarray:
        """The ``nbytes`` at device ``pointer``, copied through a staging buffer once the
        work queued before has run (waits for the stream)."""
        buffer = self.staging.take(nbytes)
        staged = buffer.view((nbytes,), np.uint8)
        self._drv.memcpy_dtoh_async(staged, pointer, self.stream)
        self.stream.synchronize()
        host = staged.copy()
        self.staging.give_back(buffer, self.stream)
        return host

    def to_host(self, array) -> np.ndarray:
        """A fresh contiguous host copy of the device ``array`` (any strides, broadcast and
        reversed ones included); waits for the stream (the host reads it next)."""
        shape, strides, itemsize = array.shape, array.strides, array.dtype.itemsize
        size = int(np.prod(shape, dtype=np.int64))
        if size == 0:
            self.stream.synchronize()
            return np.empty(shape, array.dtype)
        if _c_contiguous(shape, strides, itemsize):
            return self._download(self.pointer(array), size * itemsize).view(
                array.dtype).reshape(shape)
        # Copy the bytes the view spans, then gather on the host.
        low = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
        high = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0) + itemsize
        span = self._download(self.pointer(array) + low, high - low)
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
            self._upload(source, target.gpudata)
        elif target_on_host:
            np.copyto(target, self._download(self.pointer(source), nbytes).view(
                target.dtype).reshape(target.shape))
        else:
            drv.memcpy_dtod_async(target.gpudata, source.gpudata, nbytes, stream)

    def fill(self, array, value) -> None:
        """Set every element of the contiguous device ``array`` to ``value`` with the driver's
        memsets (no kernel compiled at run time: ``GPUArray.fill`` would build one from CUDA C,
        needing nvcc on the user's machine, and has no float16)."""
        if not array.size:
            return
        drv, stream, pointer = self._drv, self.stream, self.pointer(array)
        for call, offset, word, count in memset_plan(array.dtype, value, array.size):
            if call == "d2d32":  # one 32-bit word every 8 bytes: half of each 8-byte element
                drv.memset_d2d32_async(pointer + offset, 8, word, 1, count, stream)
            else:
                getattr(drv, f"memset_{call}_async")(pointer + offset, word, count, stream)

    # -- kernels ------------------------------------------------------------------------------

    def load_module(self, ptx: str, formats: dict[str, str],
                    max_threads: dict[str, int] | None = None) -> CudaModule:
        """The module of ``ptx`` (loaded once per text) with the kernels of ``formats``
        (name → prepared-call format) prepared. Each kernel's ``MAX_THREADS_PER_BLOCK`` is read
        and checked against its launch bound in ``max_threads`` (the biggest block the program
        launches it with): a kernel that cannot run such blocks here is a ``CudaError`` now,
        not a failed launch later."""
        key = hashlib.sha256(ptx.encode()).hexdigest()
        loaded = self.modules.get(key)
        if loaded is None:
            module = self._drv.module_from_buffer(ptx.encode())
            loaded = self.modules[key] = CudaModule(module)
        for name, fmt in formats.items():
            if name not in loaded.kernels:
                function = loaded.module.get_function(name)
                function.prepare(fmt)
                limit = function.get_attribute(
                    self._drv.function_attribute.MAX_THREADS_PER_BLOCK)
                loaded.kernels[name] = CudaKernel(name, function, fmt, int(limit))
        for name, threads in (max_threads or {}).items():
            kernel = loaded.kernels.get(name)
            if kernel is not None and threads > kernel.max_threads:
                registers = kernel.function.get_attribute(self._drv.function_attribute.NUM_REGS)
                raise CudaError(f"kernel {name} is launched with blocks of {threads} threads, "
                                f"but {self.name} runs it with at most {kernel.max_threads} "
                                f"({registers} registers per thread); compile with a smaller "
                                f"block size (GpuExecutor(block_size=...))")
        return loaded

    def launch(self, kernel: CudaKernel, grid, block, args, where: str = "") -> None:
        """Queue ``kernel`` on the stream; with ``launch_blocking()`` wait for it. ``where``
        (the program's op and line) is named by errors reported later."""
        self.last_launch = (kernel.name, where)
        kernel.launch(grid, block, args, self.stream)
        if launch_blocking():
            self.stream.synchronize()

    def synchronize(self) -> None:
        """Wait until everything queued on the stream is done."""
        self.stream.synchronize()

    def event_pair(self):
        """Two fresh events (start, end) for timing work queued on the stream:
        ``start.record(stream)``, ..., ``end.record(stream)``, later ``end.synchronize()`` and
        ``end.time_since(start)`` milliseconds. Made inside the context (events belong to one),
        from any thread."""
        with self.activate():
            return self._drv.Event(), self._drv.Event()

    def close(self) -> None:
        """Free the pool's memory and let the context go (at exit)."""
        try:
            with self.activate():
                self.stream.synchronize()
                self.modules.clear()
                self.pool.stop_holding()
                self.staging.close()
        except Exception:  # noqa: BLE001 - at exit the driver may be gone already
            pass

    def __repr__(self):
        return f"<CudaContext device {self.ordinal}: {self.name}>"


def memset_plan(dtype, value, count: int) -> list[tuple[str, int, int, int]]:
    """The driver memsets that set ``count`` elements of ``dtype`` to ``value``: ``(call, byte
    offset, word, words)`` with call ``d8``/``d16``/``d32`` (``memset_<call>``), or ``d2d32``
    for 8-byte elements whose two halves differ (each half set by a pitched memset).

    >>> memset_plan(np.float16, 1.0, 3), memset_plan(np.float64, 0.0, 2)
    ([('d16', 0, 15360, 3)], [('d32', 0, 0, 4)])
    >>> memset_plan(np.float64, 7.0, 5)
    [('d2d32', 0, 0, 5), ('d2d32', 4, 1075576832, 5)]
    """
    dtype = np.dtype(dtype)
    pattern = np.array(value).astype(dtype).reshape(1)
    size = dtype.itemsize
    if size in (1, 2, 4):
        word = int(pattern.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[size])[0])
        return [(f"d{8 * size}", 0, word, count)]
    if size == 8:
        low, high = (int(w) for w in pattern.view(np.uint32))  # little-endian halves
        if low == high:
            return [("d32", 0, low, 2 * count)]
        return [("d2d32", 0, low, count), ("d2d32", 4, high, count)]
    raise TypeError(f"filling device arrays of {dtype} ({size}-byte elements) is not supported")


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
_PUSHED: list[tuple[CudaContext, int]] = []  # (context, thread) pushed by make_current
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


def host_copy(array) -> np.ndarray:
    """A host copy of the PyCUDA device ``array`` (any strides), read in the context current on
    this thread when the runtime made it, else in the default one (pushed for the copy only).
    What the runtime's own reads of device arrays go through, since no context stays current
    between its calls."""
    context = None
    if _CONTEXTS:
        drv = next(iter(_CONTEXTS.values()))._drv
        current = _current_context(drv)
        context = next((c for c in _CONTEXTS.values() if c.context == current), None)
    context = context or get_context(None)
    with context.activate():
        return context.to_host(array)


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


def make_current(context: CudaContext) -> None:
    """Leave ``context`` current on the calling thread (``lowering.misc.pycuda_init``: the
    program's own PyCUDA calls then find it, as after ``import pycuda.autoprimaryctx``); it is
    popped at exit if it is still the current one there. Does nothing when it is current
    already."""
    if _current_context(context._drv) == context.context:
        return
    context.context.push()
    _PUSHED.append((context, threading.get_ident()))


def _close_all() -> None:
    """At exit: free the pools, and pop what ``make_current`` pushed on this thread, where it is
    still the current context (never a context the program pushed)."""
    for context in list(_CONTEXTS.values()):
        context.close()
    while _PUSHED:
        context, thread = _PUSHED.pop()
        try:
            if thread == threading.get_ident() and \
                    _current_context(context._drv) == context.context:
                context._drv.Context.pop()
        except Exception:  # noqa: BLE001 - the driver may be shutting down
            pass
    _CONTEXTS.clear()


atexit.register(_close_all)
