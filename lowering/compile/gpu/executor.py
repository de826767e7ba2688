"""The GPU executor: runs a function's module on a GPU (``device=cuda*``).

Registered as executor ``"gpu"``; ``choose_executor`` picks it for every mode but ``INTERP``
when the ``device`` flag asks for a GPU. Building one (once per ``Function``):

1. places the optimized module in place (``place-on-device``, ``elide-transfers``), so that
   ``f.maker.fgraph.toposort()`` shows where each op runs (``GpuElemwise``, ``HostFromGpu``);
2. compiles it for the GPU (``gpu.build.compile_for_gpu``: the ``gpu`` stage and the PTX);
3. loads the kernels on the device of the function's context (``gpu.device.device_for``: a GPU
   through PyCUDA, or the interpreted device with ``gpuarray.simulate``);
4. prepares the host program (``gpu.host.HostProgram``).

A call (``raw_call(*arguments)``, what ``Function`` calls directly) takes NumPy arrays or device
arrays (``GPUArray``, ``SimulatedGpuArray``) for every argument: a host array given where the
function wants device memory is copied to the device, a device array given where it wants host
memory is copied back, each counted by the device as a transfer. Other libraries' arrays
(``__cuda_array_interface__``, DLPack, ``__array_interface__``) are taken as ours without a
copy (``gpu.interop``). Results the function keeps on the device (``result_devices``:
``x.transfer(None)``, ``Out(x, borrow=True)``, updates of resident shared variables) are
device arrays, which export those protocols; the others are fresh NumPy arrays. Shared
variables updated in place are written in their own device memory, and that array is returned as
their new value. A failed check raises what the CPU backend raises (a ``ValueError`` or
``IndexError`` naming the op and the user's line, then the arguments' shapes).

Without PyCUDA or a GPU, and without ``gpuarray.simulate``, ``function()`` raises
``CudaUnavailableError`` saying what is missing and how to get it.

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering import function
>>> from lowering.config import config
>>> x = T.fvector("x")
>>> with config.change_flags({"gpuarray.simulate": True}, device="cuda"):
...     f = function([x], T.exp(x) * 2, mode="FAST_RUN")
...     f.executor_name, f(np.zeros(3, np.float32))
('gpu', array([2., 2., 2.], dtype=float32))
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Operation

from .arrays import is_c_contiguous, is_device_array, numpy_readable, to_host_array
from .build import compile_for_gpu, place, program_context
from .call_protocol import NORMALIZE_CODE
from .device import Device, device_for
from .host import HostProgram
from .interop import exports_device_memory, import_device_array
from ..values import host_view
from .profile_plan import GpuProfilePlan
from ..pipeline import register_executor

__all__ = ["GpuExecutor", "gpu_available", "NORMALIZE_CODE"]

# Threads per block of the kernels (map-to-gpu's block-size); GpuExecutor(block_size=...) or
# this module default decide it.
DEFAULT_BLOCK_SIZE = 256


def gpu_available() -> None:
    """Nothing when GPU functions can run (``gpuarray.simulate``, or PyCUDA with a driver and a
    device); else ``CudaUnavailableError`` saying what is missing and how to get it."""
    from lowering.config import config
    from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError

    from .device import gpu_missing
    missing = gpu_missing()
    if missing is not None:
        raise CudaUnavailableError(f"device={config.device} asks for a GPU: {missing}")


class _Argument:
    """What a call needs to know about one argument of the host function."""

    __slots__ = ("index", "name", "dtype", "rank", "static", "on_device", "contiguous",
                 "written")

    def __init__(self, index: int, name: str, t, written: bool):
        from lowering.dialects.loops import BufferType
        self.index = index
        self.name = name
        if isinstance(t, BufferType):
            self.dtype, self.rank = np.dtype(t.dtype), t.rank
            self.static = [(axis, d) for axis, d in enumerate(t.shape) if d is not None]
            self.on_device = t.memory_space == "device"
            self.contiguous = t.is_contiguous
        else:  # a scalar argument
            self.dtype, self.rank, self.static = np.dtype(t.dtype), 0, []
            self.on_device, self.contiguous = False, False
        self.written = written


class GpuExecutor:
    """Runs the one function of a tensor-level module on a GPU (see the module docstring).

    ``program`` is the ``gpu.build.GpuProgram``, ``device`` the ``gpu.device.Device`` it runs
    on, ``host`` the prepared ``HostProgram``.
    """

    # Function writes nothing in place for this executor: in-place updates are the device's.
    updated_in_place: tuple = ()
    inplace_patterns: tuple = ()

    def __init__(self, module: Operation, block_size: int | None = None,
                 device: Device | None = None):
        from lowering.ir.core import IRError
        from lowering.ir.passes import PassFailure

        from .build import GpuCompileError
        gpu_available()
        context = program_context(module)
        self.device = device or device_for(context)
        try:
            place(module, context)
            self.program = compile_for_gpu(module, context,
                                           block_size=block_size or DEFAULT_BLOCK_SIZE)
        except (PassFailure, IRError) as exc:
            raise GpuCompileError(f"the GPU backend cannot compile this function: {exc}; "
                                  f"device=cpu runs it on the CPU") from exc
        self.device.load(self.program)
        self.host = HostProgram(self.program.host, self.device)
        func = next(op for op in module.regions[0].block.ops if op.name == "func.func")
        names = [a.name_hint or f"#{k}" for k, a in enumerate(func.regions[0].block.args)]
        written = {a for _, a in self.program.updated_in_place}
        host_args = self.program.host.regions[0].block.args
        self._arguments = [_Argument(k, names[k] if k < len(names) else f"#{k}", a.type,
                                     k in written) for k, a in enumerate(host_args)]
        self._updates = sorted(self.program.updated_in_place)
        # What debugprint shows as ``GpuElemwise{...}[(0, 0)]``: results in an operand's memory.
        self.inplace_patterns = self.program.inplace_patterns
        self.raw_call = self._call

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, values: list) -> list:
        result = self.raw_call(*values)
        if type(result) is not list:
            result = self.recover(values, result)
        return result

    def _call(self, *values):
        args = self._ready(values)
        if args is None:
            return NORMALIZE_CODE
        return self._run(args, self.host.run)

    def _run(self, args: list, run) -> list:
        from lowering.dialects.loops import RuntimeCheckError
        try:
            results = run(args)
        except RuntimeCheckError as exc:
            raise type(exc)(f"{exc} (the arguments had shapes {self._shapes(args)})", None,
                            error_code=exc.error_code) from None
        # Device results read with numpy.asarray, as Theano's GPU arrays (seed 002's handle to
        # device data); updated values go back to their shared variables as they are.
        context = getattr(self.device, "cuda", None)
        results = [numpy_readable(r, context) for r in results]
        for r, a in self._updates:
            results.insert(r, args[a])
        return results

    def recover(self, values, code: int, names=None) -> list:
        """Finish a call whose ``raw_call`` returned ``code``: ``values`` have been checked and
        converted by ``Function`` (host arrays of the right dtype and rank)."""
        if names is not None:
            for argument, name in zip(self._arguments, names):
                argument.name = name
        args = self._ready(values)
        if args is None:
            bad = [a.name for a, v in zip(self._arguments, values) if _needs_checks(a, v)]
            raise TypeError(f"arguments {', '.join(bad)} are not arrays of the function's "
                            f"dtypes and ranks")
        return self._run(args, self.host.run)

    def _ready(self, values) -> list | None:
        """The arguments as the host program takes them, or None (and nothing copied) when a
        host value still needs the caller's checks and conversions."""
        arguments = self._arguments
        if len(values) != len(arguments):
            raise TypeError(f"the compiled function takes {len(arguments)} arguments, got "
                            f"{len(values)}")
        values = [value if type(value) is np.ndarray else self._imported(argument, value)
                  for argument, value in zip(arguments, values)]
        for argument, value in zip(arguments, values):
            if _needs_checks(argument, value):
                return None
        return [self._fit(argument, value) for argument, value in zip(arguments, values)]

    def _imported(self, argument: _Argument, value):
        """Another library's array as ours, without a copy (``gpu.interop``): device memory
        as a ``GPUArray`` of this device's context, host memory as an ndarray."""
        if self.device.owns(value):
            return value
        if not exports_device_memory(value):
            return host_view(value)
        context = getattr(self.device, "cuda", None)
        if context is None:
            raise TypeError(f"argument '{argument.name}': {type(value).__name__} is GPU memory "
                            f"of another library, which the simulated device "
                            f"(gpuarray.simulate=True) cannot read; run on a GPU")
        return import_device_array(value, context, f"argument '{argument.name}'")

    def _fit(self, argument: _Argument, value):
        """``value`` (a device array, or a host array of the argument's dtype and rank) as the
        argument needs it: see the module docstring."""
        device = self.device
        if argument.written and getattr(value, "_lowering_readonly", False):
            raise ValueError(f"argument '{argument.name}': the device array is read-only "
                             f"(its __cuda_array_interface__ says so) and the function "
                             f"writes it")
        if argument.on_device:
            if device.owns(value):
                _check_array(argument, value)
                if argument.contiguous and not is_c_contiguous(value):
                    return _contiguous_copy(device, value)
                return value
            if is_device_array(value):
                _check_array(argument, value)
                return device.adopt(value)
            return device.to_device(value)
        if is_device_array(value):
            _check_array(argument, value)
            value = _to_host(device, value)
        if argument.written or argument.contiguous:
            flags = value.flags
            if not flags.c_contiguous or (argument.written and not flags.writeable):
                value = np.array(value, order="C")
        return value

    def _shapes(self, args) -> str:
        """``x (2, 3), w (3,)``: the arguments' shapes, for error messages."""
        return ", ".join(f"{a.name} {tuple(v.shape)}" for a, v in zip(self._arguments, args))

    # -- profiling ----------------------------------------------------------------------------

    def profile_plan(self):
        """The per-step plan ``function(profile=True)`` runs (``gpu.profile_plan.GpuProfilePlan``)."""
        return GpuProfilePlan(self)

    def __repr__(self):
        return f"<GpuExecutor on {self.device!r}>"


def _contiguous_copy(device: Device, value):
    """A contiguous copy of the strided device array ``value``, made through the host (only
    for arguments given with an unusual layout: kernels want the function's own layouts)."""
    return device.to_device(_to_host(device, value))


def _to_host(device: Device, value) -> np.ndarray:
    """A host copy of a device array (this device's or another's), counted as a transfer."""
    if device.owns(value):
        return device.to_host(value)
    device.counters.to_host += 1
    device.counters.bytes_to_host += int(value.nbytes)
    return to_host_array(value)


def _needs_checks(argument: _Argument, value) -> bool:
    """Whether ``value`` is a host value that is not yet an array of the argument's dtype, rank
    and static sizes (device arrays are checked, never converted, by ``_check_array``)."""
    return not is_device_array(value) and not _fits(argument, value)


def _fits(argument: _Argument, value) -> bool:
    """Whether ``value`` is a host array of the argument's dtype, rank and static sizes."""
    return type(value) is np.ndarray and value.dtype == argument.dtype and \
        value.ndim == argument.rank and all(value.shape[axis] == d
                                            for axis, d in argument.static)


def _check_array(argument: _Argument, value) -> None:
    """A device array of the wrong dtype, rank or static size is refused, naming the argument
    (device arrays are never converted)."""
    dtype = np.dtype(value.dtype)
    shape = tuple(value.shape)
    if is_device_array(value) and (dtype != argument.dtype or len(shape) != argument.rank
                                    or any(shape[axis] != d for axis, d in argument.static)):
        want = "x".join("?" if d is None else str(d) for d in _shape_of(argument)) or "scalar"
        raise TypeError(f"argument '{argument.name}': a device array of dtype {dtype} and shape "
                        f"{shape} was given where the function takes {argument.dtype} of rank "
                        f"{argument.rank} ({want}); device arrays are not converted: convert it "
                        f"first")


def _shape_of(argument: _Argument) -> list:
    shape: list = [None] * argument.rank
    for axis, d in argument.static:
        shape[axis] = d
    return shape


register_executor("gpu", GpuExecutor, check=gpu_available)
