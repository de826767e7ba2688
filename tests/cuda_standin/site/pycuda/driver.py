"""``pycuda.driver`` of the stand-in: the driver API the runtime uses, strict where a GPU is.

See ``tests/cuda_standin/__init__.py`` for what is checked. State (devices, contexts, memory)
lives in this module, made fresh each time the stand-in is installed.
"""
from __future__ import annotations

import struct
import threading
import time

import numpy as np

from cuda_standin import SPEC, kernel_source
from cuda_standin.host_memory import PinnedRanges
from cuda_standin.memory import DeviceMemory, InvalidPointer
from cuda_standin.ptx_layout import check_format, decode_params, parse_entries, target_arch


if SPEC.import_error is not None:
    raise ImportError(SPEC.import_error)


class Error(Exception):
    pass


class LogicError(Error):
    pass


class LaunchError(Error):
    pass


class RuntimeError(Error):  # noqa: A001 - PyCUDA's name
    pass


class MemoryError(Error):  # noqa: A001 - PyCUDA's name
    pass


class CompileError(Error):
    pass


_INITIALIZED = False
_STACKS = threading.local()
MEMORY = DeviceMemory()
PINNED = PinnedRanges()  # page-locked host memory (pagelocked_empty, register_host_memory)
LOG: list[tuple] = []  # (call, details) of every driver call that tests look at


def get_version():
    return SPEC.toolkit_version


def get_driver_version():
    return SPEC.driver_version


def init(flags=0):
    global _INITIALIZED
    if SPEC.init_error is not None:
        raise RuntimeError(f"cuInit failed: {SPEC.init_error}")
    _INITIALIZED = True


def _require_init(call):
    if not _INITIALIZED:
        raise LogicError(f"{call} failed: initialization error (cuInit has not been called)")


def _stack() -> list:
    if not hasattr(_STACKS, "contexts"):
        _STACKS.contexts = []
    return _STACKS.contexts


def _current(call: str) -> "Context":
    _require_init(call)
    stack = _stack()
    if not stack:
        raise LogicError(f"{call} failed: invalid device context (no context is current on "
                         f"thread {threading.current_thread().name})")
    context = stack[-1]
    if context._faulted is not None:
        raise LaunchError(f"{call} failed: {context._faulted}")
    return context


def _in(context: "Context", call: str) -> "Context":
    current = _current(call)
    if current is not context:
        raise LogicError(f"{call} failed: invalid device context (the object belongs to another "
                         f"context than the current one)")
    return current


class device_attribute:  # noqa: N801 - PyCUDA's name
    MAX_THREADS_PER_BLOCK = "MAX_THREADS_PER_BLOCK"
    MAX_BLOCK_DIM_X = "MAX_BLOCK_DIM_X"
    MAX_SHARED_MEMORY_PER_BLOCK = "MAX_SHARED_MEMORY_PER_BLOCK"
    MAX_REGISTERS_PER_BLOCK = "MAX_REGISTERS_PER_BLOCK"
    MULTIPROCESSOR_COUNT = "MULTIPROCESSOR_COUNT"
    WARP_SIZE = "WARP_SIZE"


class function_attribute:  # noqa: N801 - PyCUDA's name
    MAX_THREADS_PER_BLOCK = "MAX_THREADS_PER_BLOCK"
    NUM_REGS = "NUM_REGS"
    SHARED_SIZE_BYTES = "SHARED_SIZE_BYTES"
    LOCAL_SIZE_BYTES = "LOCAL_SIZE_BYTES"


class Device:
    def __init__(self, ordinal: int):
        _require_init("cuDeviceGet")
        if not 0 <= ordinal < SPEC.devices:
            raise LogicError(f"cuDeviceGet failed: invalid device ordinal {ordinal}")
        self.ordinal = ordinal

    @staticmethod
    def count() -> int:
        _require_init("cuDeviceGetCount")
        return SPEC.devices

    def name(self) -> str:
        return f"Stand-in GPU {self.ordinal} (sm_{SPEC.capability[0]}{SPEC.capability[1]})"

    def compute_capability(self):
        return SPEC.capability

    def total_memory(self) -> int:
        return 80 << 30

    def get_attribute(self, attribute):
        return {"MAX_THREADS_PER_BLOCK": SPEC.max_threads, "MAX_BLOCK_DIM_X": SPEC.max_threads,
                "MAX_SHARED_MEMORY_PER_BLOCK": SPEC.shared_bytes,
                "MAX_REGISTERS_PER_BLOCK": SPEC.registers, "MULTIPROCESSOR_COUNT": 132,
                "WARP_SIZE": 32}[attribute]

    def retain_primary_context(self) -> "Context":
        primary = _PRIMARY.get(self.ordinal)
        if primary is None:
            primary = _PRIMARY[self.ordinal] = Context(self, primary=True)
        primary._references += 1
        return primary

    def make_context(self, flags=0) -> "Context":
        context = Context(self, primary=False)
        _MADE.append(context)
        context.push()
        return context

    def __eq__(self, other):
        return isinstance(other, Device) and other.ordinal == self.ordinal

    def __hash__(self):
        return hash(self.ordinal)


_PRIMARY: dict[int, "Context"] = {}
_MADE: list = []  # contexts made with make_context


class Context:
    def __init__(self, device: Device, primary: bool):
        self._device = device
        self._primary = primary
        self._references = 0
        self._alive = True
        self._faulted: str | None = None
        self._streams: list = []  # made in this context: their queued copies

    def _drain(self) -> None:
        """Finish every stream's queued copies (what a synchronous call waits for)."""
        for stream in self._streams:
            stream._drain()

    def get_device(self) -> Device:
        return self._device

    def push(self) -> None:
        _require_init("cuCtxPushCurrent")
        if not self._alive:
            raise LogicError("cuCtxPushCurrent failed: invalid device context (destroyed)")
        _stack().append(self)
        LOG.append(("push", self, threading.get_ident()))

    @staticmethod
    def pop() -> None:
        _require_init("cuCtxPopCurrent")
        stack = _stack()
        if not stack:
            raise LogicError("cuCtxPopCurrent failed: invalid device context (none is current)")
        LOG.append(("pop", stack.pop(), threading.get_ident()))

    @staticmethod
    def get_current():
        stack = _stack()
        return stack[-1] if stack else None

    @staticmethod
    def synchronize() -> None:
        _current("cuCtxSynchronize")._drain()
        LOG.append(("cuCtxSynchronize",))

    def detach(self) -> None:
        stack = _stack()
        if self._primary:
            self._references -= 1
        else:
            self._alive = False
        if stack and stack[-1] is self:
            stack.pop()

    def __repr__(self):
        kind = "primary" if self._primary else "made"
        return f"<stand-in {kind} context of device {self._device.ordinal}>"


def current_stack() -> list:
    """The contexts pushed on the calling thread, bottom first (for tests)."""
    return list(_stack())


# -- memory ------------------------------------------------------------------------------------


class DeviceAllocation:
    def __init__(self, nbytes: int):
        self._context = _current("cuMemAlloc")
        self.address = MEMORY.allocate(int(nbytes), self._context)
        self.nbytes = int(nbytes)

    def free(self) -> None:
        if self.address is not None:
            self._context._drain()  # cuMemFree waits for the work queued before it
            MEMORY.free(self.address)
            self.address = None

    def __int__(self):
        if self.address is None:
            raise LogicError("the allocation was freed")
        return self.address

    __index__ = __int__


def mem_alloc(nbytes: int) -> DeviceAllocation:
    return DeviceAllocation(nbytes)


def mem_get_info():
    return (79 << 30, 80 << 30)


def _host_bytes(array, call: str) -> np.ndarray:
    array = np.asarray(array) if not isinstance(array, np.ndarray) else array
    if not array.flags.c_contiguous:
        raise TypeError(f"{call}: the host buffer must be contiguous")
    return array.reshape(-1).view(np.uint8)


def _device(pointer, nbytes: int, call: str) -> np.ndarray:
    _current(call)
    try:
        # Unified addressing: copies and memsets reach any context's memory, kernels only
        # their own context's (checked at launch).
        return MEMORY.bytes(int(pointer), nbytes, None)
    except InvalidPointer as exc:
        raise LogicError(f"{call} failed: invalid argument ({exc})") from None


def _stream_context(stream, call):
    if stream is not None:
        _in(stream._context, call)
        stream._drain()  # in order: what was queued on the stream before runs first


def _synchronous(call: str) -> None:
    """A synchronous call waits for the work queued in the current context first."""
    _current(call)._drain()


def _async_host(host: np.ndarray, stream, call: str) -> None:
    """An asynchronous copy needs a stream and page-locked host memory: the driver overlaps
    only such copies with kernels (a pageable buffer is staged and copied synchronously)."""
    if stream is None:
        raise LogicError(f"{call}: no stream given; an asynchronous copy is queued on a stream")
    _in(stream._context, call)
    if host.size and not PINNED.covers(host.ctypes.data, host.nbytes):
        raise LogicError(f"{call}: the host buffer (0x{host.ctypes.data:x}, {host.nbytes} "
                         f"bytes) is pageable: asynchronous copies need page-locked memory "
                         f"(pagelocked_empty, register_host_memory)")


def memcpy_htod(dest, src) -> None:
    _synchronous("cuMemcpyHtoD")
    source = _host_bytes(src, "cuMemcpyHtoD")
    _device(dest, source.size, "cuMemcpyHtoD")[...] = source


def memcpy_htod_async(dest, src, stream=None) -> None:
    """Queued on ``stream``: the host bytes are read when the stream gets to the copy (its
    next launch, wait or synchronous call), so a staging buffer written again before the copy
    has run shows in the results."""
    source = _host_bytes(src, "cuMemcpyHtoDAsync")
    _async_host(source, stream, "cuMemcpyHtoDAsync")
    target = _device(dest, source.size, "cuMemcpyHtoDAsync")  # checked now
    stream._queue(lambda: target.__setitem__(Ellipsis, source))


def memcpy_dtoh(dest, src) -> None:
    _synchronous("cuMemcpyDtoH")
    target = _host_bytes(dest, "cuMemcpyDtoH")
    target[...] = _device(src, target.size, "cuMemcpyDtoH")


def memcpy_dtoh_async(dest, src, stream=None) -> None:
    """Queued on ``stream``: the host buffer holds the bytes only once the stream has been
    waited for."""
    target = _host_bytes(dest, "cuMemcpyDtoHAsync")
    _async_host(target, stream, "cuMemcpyDtoHAsync")
    source = _device(src, target.size, "cuMemcpyDtoHAsync")
    stream._queue(lambda: target.__setitem__(Ellipsis, source))


def memcpy_dtod(dest, src, size) -> None:
    _synchronous("cuMemcpyDtoD")
    data = _device(src, int(size), "cuMemcpyDtoD").copy()
    _device(dest, int(size), "cuMemcpyDtoD")[...] = data


def memcpy_dtod_async(dest, src, size, stream=None) -> None:
    _stream_context(stream, "cuMemcpyDtoDAsync")
    memcpy_dtod(dest, src, size)


def _memset(dest, value, count, width, call):
    _synchronous(call)
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[width]
    if not 0 <= int(value) < 1 << (8 * width):
        raise LogicError(f"{call}: value {value} does not fit {width * 8} bits")
    _device(dest, int(count) * width, call).view(dtype)[...] = int(value)
    LOG.append((call, int(count)))


def memset_d8(dest, data, count):
    _memset(dest, data, count, 1, "cuMemsetD8")


def memset_d16(dest, data, count):
    _memset(dest, data, count, 2, "cuMemsetD16")


def memset_d32(dest, data, count):
    _memset(dest, data, count, 4, "cuMemsetD32")


def memset_d8_async(dest, data, count, stream=None):
    _stream_context(stream, "cuMemsetD8Async")
    memset_d8(dest, data, count)


def memset_d16_async(dest, data, count, stream=None):
    _stream_context(stream, "cuMemsetD16Async")
    memset_d16(dest, data, count)


def memset_d32_async(dest, data, count, stream=None):
    _stream_context(stream, "cuMemsetD32Async")
    memset_d32(dest, data, count)


# -- streams and events ------------------------------------------------------------------------


_HANDLES = iter(range(0x5000, 1 << 40, 0x10))


class Stream:
    def __init__(self, flags=0):
        self._context = _current("cuStreamCreate")
        self._context._streams.append(self)
        self._pending: list = []  # queued host copies, run in order
        self.handle = next(_HANDLES)  # CUstream, as __cuda_array_interface__ passes streams

    def _queue(self, copy) -> None:
        self._pending.append(copy)

    def _drain(self) -> None:
        while self._pending:
            self._pending.pop(0)()

    def synchronize(self) -> None:
        _require_init("cuStreamSynchronize")
        if self._context._faulted is not None:
            raise LaunchError(f"cuStreamSynchronize failed: {self._context._faulted}")
        self._drain()
        LOG.append(("cuStreamSynchronize", self.handle))

    def is_done(self) -> bool:
        self.synchronize()
        return True

    def wait_for_event(self, event) -> None:
        _in(self._context, "cuStreamWaitEvent")
        if event._stream is not None:
            event._stream._drain()


def stream_of_handle(handle: int):
    """The live stream of a ``CUstream`` handle, in any context (None: no such stream)."""
    for context in list(_PRIMARY.values()) + _MADE:
        for stream in context._streams:
            if stream.handle == handle:
                return stream
    return None


class event_flags:  # noqa: N801 - PyCUDA's name
    DEFAULT = 0
    BLOCKING_SYNC = 1
    DISABLE_TIMING = 2


class Event:
    def __init__(self, flags=0):
        self._context = _current("cuEventCreate")
        self._time = None
        self._stream = None

    def record(self, stream=None):
        _in(self._context, "cuEventRecord")
        if stream is not None:
            _in(stream._context, "cuEventRecord")
        self._stream = stream
        self._time = time.perf_counter()
        return self

    def synchronize(self):
        if self._context._faulted is not None:
            raise LaunchError(f"cuEventSynchronize failed: {self._context._faulted}")
        if self._stream is not None:
            self._stream._drain()  # everything queued before the record has run
        return self

    def query(self) -> bool:
        self.synchronize()
        return True

    def time_since(self, other: "Event") -> float:
        if self._time is None or other._time is None:
            raise LogicError("cuEventElapsedTime failed: invalid resource handle (not recorded)")
        return max(self._time - other._time, 1e-6) * 1e3

    def time_till(self, other: "Event") -> float:
        return other.time_since(self)


# -- page-locked host memory -------------------------------------------------------------------


class host_alloc_flags:  # noqa: N801 - PyCUDA's name
    PORTABLE = 1
    DEVICEMAP = 2
    WRITECOMBINED = 4


class mem_host_register_flags:  # noqa: N801 - PyCUDA's name
    PORTABLE = 1
    DEVICEMAP = 2


class _PinnedHost:
    """What ``ndarray.base`` is for page-locked memory (``numpy.asarray`` of an object with
    ``__array_interface__`` keeps the object as the base)."""

    def __init__(self, memory: np.ndarray, kind: str):
        self._context = _current(f"cuMemHost{kind}")
        self._memory = memory
        self.address = memory.ctypes.data
        PINNED.add(self.address, memory.nbytes, kind)
        self.__array_interface__ = {"shape": (memory.nbytes,), "typestr": "|u1",
                                    "data": (self.address, False), "version": 3}

    def _as_array(self, shape, dtype, strides=None) -> np.ndarray:
        """An array over the memory whose ``base`` is this object, as PyCUDA's."""
        self.__array_interface__ = {"shape": tuple(shape), "typestr": np.dtype(dtype).str,
                                    "data": (self.address, False), "strides": strides,
                                    "version": 3}
        return np.asarray(self)

    def _release(self, call: str) -> None:
        if self._memory is None:
            raise LogicError(f"{call} failed: invalid value (released twice)")
        self._context._drain()  # waits for the copies queued on this memory
        PINNED.remove(self.address)
        self._memory = None


class HostAllocation(_PinnedHost):
    """``cuMemHostAlloc``'d memory: ``free()`` gives it back."""

    def __init__(self, nbytes: int, flags: int = 0):
        super().__init__(np.empty(max(int(nbytes), 1), np.uint8), "Alloc")

    def free(self) -> None:
        self._release("cuMemFreeHost")


class RegisteredHostMemory(_PinnedHost):
    """Host memory page-locked in place (``cuMemHostRegister``): ``unregister()``."""

    def __init__(self, ary: np.ndarray, flags: int = 0):
        super().__init__(ary.reshape(-1).view(np.uint8), "Register")
        self.base = ary

    def unregister(self) -> None:
        self._release("cuMemHostUnregister")


def pagelocked_empty(shape, dtype, order="C", mem_flags=0) -> np.ndarray:
    """An uninitialized page-locked array; its ``base`` is the ``HostAllocation``."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    allocation = HostAllocation(nbytes, mem_flags)
    strides = np.empty(shape, dtype, order=order).strides  # of the order asked for
    return allocation._as_array(shape, dtype, strides)


def pagelocked_zeros(shape, dtype, order="C", mem_flags=0) -> np.ndarray:
    result = pagelocked_empty(shape, dtype, order, mem_flags)
    result.fill(0)
    return result


def register_host_memory(ary, flags=0) -> np.ndarray:
    """``ary``'s memory page-locked in place: an array over it whose ``base`` is the
    ``RegisteredHostMemory`` (``unregister()`` ends it)."""
    if not isinstance(ary, np.ndarray) or not ary.flags.c_contiguous or not ary.size:
        raise LogicError("cuMemHostRegister failed: invalid value (a non-empty contiguous "
                         "array is needed)")
    registered = RegisteredHostMemory(ary, flags)
    return registered._as_array(ary.shape, ary.dtype)


def pinned_ranges() -> int:
    """How many page-locked ranges are live (for tests)."""
    return PINNED.live


# -- modules and kernels -----------------------------------------------------------------------


def module_from_buffer(buffer, options=None, message_handler=None) -> "Module":
    context = _current("cuModuleLoadDataEx")
    ptx = buffer.decode() if isinstance(buffer, (bytes, bytearray)) else str(buffer)
    return Module(context, ptx.rstrip("\0"))


class Module:
    def __init__(self, context: Context, ptx: str):
        from cuda_standin import ptx_resources
        self._context = context
        self._ptx = ptx
        self._entries = parse_entries(ptx)
        self._resources = ptx_resources(ptx, target_arch(ptx))
        self._source = kernel_source(ptx)
        LOG.append(("load", len(self._entries)))

    def get_function(self, name: str) -> "Function":
        _in(self._context, "cuModuleGetFunction")
        if name not in self._entries:
            raise LogicError(f"cuModuleGetFunction failed: named symbol not found ({name})")
        return Function(self, name)


class Function:
    def __init__(self, module: Module, name: str):
        self._module = module
        self.name = name
        self._entry = module._entries[name]
        self._format = None
        resources = module._resources.get(name)
        self.num_regs = resources.registers if resources else 0
        self.shared_size_bytes = resources.shared_bytes if resources else 0
        self.local_size_bytes = resources.spill_bytes if resources else 0
        self.max_threads_per_block = SPEC.max_threads_for(self.num_regs,
                                                          self._entry.max_threads)

    def get_attribute(self, attribute):
        return {"MAX_THREADS_PER_BLOCK": self.max_threads_per_block, "NUM_REGS": self.num_regs,
                "SHARED_SIZE_BYTES": self.shared_size_bytes,
                "LOCAL_SIZE_BYTES": self.local_size_bytes}[attribute]

    def prepare(self, arg_types, block=None, shared=None, texrefs=()):
        if not isinstance(arg_types, str):
            raise TypeError("the stand-in takes prepared formats as struct strings")
        struct.calcsize(arg_types)
        self._format = arg_types
        return self

    def prepared_call(self, grid, block, *args, shared_size=0):
        self._launch(grid, block, args, None, shared_size)

    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        self._launch(grid, block, args, stream, shared_size)

    def __call__(self, *args, block=None, grid=(1, 1), stream=None, shared=0, **kw):
        raise LogicError("the stand-in launches prepared kernels only")

    def _launch(self, grid, block, args, stream, shared_size):
        context = _in(self._module._context, "cuLaunchKernel")
        _stream_context(stream, "cuLaunchKernel")
        if stream is None:
            context._drain()
        if self._format is None:
            raise LogicError("prepared_call on a function that was not prepared")
        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        block = tuple(int(b) for b in block) + (1,) * (3 - len(block))
        self._check_limits(grid, block, shared_size)
        buffer = struct.pack(self._format, *args)  # what PyCUDA hands the driver
        try:
            check_format(self._entry.params, self._format)
            params = decode_params(self._entry.params, buffer)
        except ValueError as exc:
            raise LogicError(f"cuLaunchKernel failed: invalid argument ({self.name}: {exc})")
        LOG.append(("launch", self.name, grid, block))
        LOG.append(("params", self.name, tuple(params)))  # device pointers among them
        if self._module._source is None:
            raise LogicError(f"the stand-in cannot run {self.name}: its PTX was not translated "
                             f"by lowering while the stand-in was installed")
        from cuda_standin import run_launch
        fault = run_launch(self._module._source, self.name, self._entry, params, grid, block,
                           context)
        if fault is not None:
            context._faulted = fault  # sticky, reported by the next wait, as on a GPU

    def _check_limits(self, grid, block, shared_size):
        threads = block[0] * block[1] * block[2]
        if min(block) < 1 or block[0] > 1024 or block[1] > 1024 or block[2] > 64 \
                or threads > SPEC.max_threads:
            raise LogicError(f"cuLaunchKernel failed: invalid argument (block {block})")
        if min(grid) < 1 or grid[0] > 2 ** 31 - 1 or grid[1] > 65535 or grid[2] > 65535:
            raise LogicError(f"cuLaunchKernel failed: invalid argument (grid {grid})")
        if self._entry.max_threads is not None and threads > self._entry.max_threads:
            raise LogicError(f"cuLaunchKernel failed: invalid argument (block of {threads} "
                             f"threads, the kernel's .maxntid is {self._entry.max_threads})")
        if threads > self.max_threads_per_block:
            raise LaunchError(f"cuLaunchKernel failed: too many resources requested for launch "
                              f"({self.name}: {self.num_regs} registers x {threads} threads)")
        if self.shared_size_bytes + int(shared_size) > SPEC.shared_bytes:
            raise LaunchError(f"cuLaunchKernel failed: too many resources requested for launch "
                              f"({self.name}: {self.shared_size_bytes + shared_size} bytes of "
                              f"shared memory)")


def memset_d2d32(dest, pitch, data, width, height):
    """``height`` rows of ``width`` 32-bit words, rows ``pitch`` bytes apart."""
    _synchronous("cuMemsetD2D32")
    if int(pitch) < 4 * int(width):
        raise LogicError("cuMemsetD2D32 failed: invalid argument (pitch below the row width)")
    if not 0 <= int(data) < 1 << 32:
        raise LogicError(f"cuMemsetD2D32: value {data} does not fit 32 bits")
    span = int(pitch) * (int(height) - 1) + 4 * int(width)
    rows = _device(dest, span, "cuMemsetD2D32")
    for row in range(int(height)):
        start = row * int(pitch)
        rows[start:start + 4 * int(width)].view(np.uint32)[...] = int(data)
    LOG.append(("cuMemsetD2D32", int(width) * int(height)))


def memset_d2d32_async(dest, pitch, data, width, height, stream=None):
    _stream_context(stream, "cuMemsetD2D32Async")
    memset_d2d32(dest, pitch, data, width, height)
