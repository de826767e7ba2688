"""Device arrays in and out through the array protocols other GPU libraries speak.

**Out.** A result a CUDA function keeps on the device (a ``GPUArray``) also exports

- ``__cuda_array_interface__`` (version 3): shape, ``typestr``, ``data`` (pointer, read-only
  flag False), ``strides`` (None when C-contiguous) and ``stream``, the context's stream, on
  which work writing the array may still be queued: a consumer makes its own work wait for it
  (CuPy, Numba and PyTorch do);
- ``__dlpack__(stream=None)`` and ``__dlpack_device__()`` (``(kDLCUDA, device)``): the capsule
  is handed out once the context's stream has finished the work queued before (unless
  ``stream=-1``, the consumer's promise to order the work itself), so it is ready on any
  stream of the consumer's.

**In.** A function given, for an argument, an object with ``__cuda_array_interface__``, or
with ``__dlpack__`` on a ``kDLCUDA`` device (a CuPy or PyTorch tensor, a Numba device array),
uses its memory as it is, without a copy (``import_device_array``):

- ``__cuda_array_interface__``: a ``stream`` it names (an int other than 0, which the protocol
  forbids) may still write the array: the context is synchronized before the array is used;
  a ``mask`` is refused; a read-only array is refused where the function writes;
- ``__dlpack__``: called with ``stream=`` the context's stream, so the producer orders its
  work before ours (the protocol's contract); an array on another GPU than the function's is
  refused;
- the dtype must be one NumPy has (no bfloat16, one lane), strides whole elements; a
  non-contiguous array is used with its strides, or copied where the function needs a
  contiguous one (as for any device array).

A host argument may be any object with ``__array_interface__`` or a ``__dlpack__`` on
``kDLCPU`` (``lowering.compile.values.host_view``): taken without a copy when its dtype fits.

>>> import numpy as np
>>> exports_device_memory(np.zeros(2)), exports_device_memory([1.0])
(False, False)
"""
from __future__ import annotations

import numpy as np

from . import dlpack

__all__ = ["cuda_array_interface", "dlpack_capsule", "dlpack_device", "exports_device_memory",
           "import_device_array"]

CUDA_DEVICES = (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED)


def exports_device_memory(value) -> bool:
    """Whether ``value`` exports device memory: it has ``__cuda_array_interface__``, or
    ``__dlpack__`` on a CUDA device (our own results do too: check for them first)."""
    if isinstance(value, np.ndarray):
        return False
    kind = type(value)
    if hasattr(kind, "__cuda_array_interface__"):
        try:
            value.__cuda_array_interface__
            return True
        except Exception:  # noqa: BLE001 - a CPU tensor's property (PyTorch) raises
            pass
    if hasattr(kind, "__dlpack__") and hasattr(kind, "__dlpack_device__"):
        try:
            return value.__dlpack_device__()[0] in CUDA_DEVICES
        except Exception:  # noqa: BLE001 - a producer that cannot say is not a device array
            return False
    return False


# -- in --------------------------------------------------------------------------------------


def import_device_array(value, context, name: str = "argument"):
    """A ``GPUArray`` over the memory of the foreign device array ``value`` (see the module
    docstring), in the ``CudaContext`` ``context``; a TypeError or ValueError naming ``name``
    says why it cannot be used. The array keeps ``value`` (and a DLPack tensor) alive."""
    if hasattr(type(value), "__dlpack_device__") and not _has_interface(value):
        return _from_dlpack(value, context, name)
    return _from_interface(value, context, name)


def _has_interface(value) -> bool:
    try:
        value.__cuda_array_interface__
    except Exception:  # noqa: BLE001 - absent, or a property that raises
        return False
    return True


def _from_interface(value, context, name: str):
    interface = value.__cuda_array_interface__
    version = interface.get("version")
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"{name}: __cuda_array_interface__ has no version")
    if interface.get("mask") is not None:
        raise ValueError(f"{name}: masked device arrays (__cuda_array_interface__ 'mask') are "
                         f"not supported")
    dtype = _dtype(interface["typestr"], name)
    shape = tuple(int(n) for n in interface["shape"])
    pointer, readonly = interface["data"]
    strides = interface.get("strides")
    strides = None if strides is None else tuple(int(s) for s in strides)
    if version >= 3:
        _wait_for_stream(interface.get("stream"), context, name)
    array = _view(context, int(pointer or 0), shape, strides, dtype, value, name)
    array._lowering_readonly = bool(readonly)
    return array


def _wait_for_stream(stream, context, name: str) -> None:
    """A producer's stream (``__cuda_array_interface__`` v3) may still write the array: wait
    for the context, which holds it (libraries share the device's primary context)."""
    if stream is None:
        return
    if isinstance(stream, bool) or not isinstance(stream, int) or stream <= 0:
        raise ValueError(f"{name}: __cuda_array_interface__ names the stream {stream!r}; the "
                         f"protocol allows None (nothing to wait for), 1 or 2 (the default "
                         f"streams) or a stream handle, never 0")
    with context.activate():
        context._drv.Context.synchronize()


def _from_dlpack(value, context, name: str):
    device_type, device_id = value.__dlpack_device__()
    if device_type not in CUDA_DEVICES:
        raise ValueError(f"{name}: a DLPack array on {dlpack.DEVICE_NAMES.get(device_type, device_type)} "
                         f"is not GPU memory")
    if device_id != context.ordinal:
        raise ValueError(f"{name}: the array is on GPU {device_id}, the function runs on GPU "
                         f"{context.ordinal}; move it there first")
    tensor = dlpack.from_capsule(value.__dlpack__(stream=int(context.stream.handle)))
    try:
        dtype = tensor.dtype
    except TypeError as exc:
        tensor.release()
        raise TypeError(f"{name}: {exc}") from None
    strides = None if tensor.strides is None else \
        tuple(s * dtype.itemsize for s in tensor.strides)
    array = _view(context, tensor.pointer, tensor.shape, strides, dtype, tensor, name)
    array._lowering_readonly = False
    return array


def _dtype(typestr, name: str) -> np.dtype:
    try:
        dtype = np.dtype(typestr)
    except TypeError:
        raise TypeError(f"{name}: unknown element type {typestr!r}") from None
    if dtype.kind not in "biufc" or dtype.byteorder == ">":
        raise TypeError(f"{name}: element type {typestr!r} is not supported (numbers and bools "
                        f"in the machine's byte order)")
    return dtype


def _view(context, pointer: int, shape, strides, dtype, keep, name: str):
    """A ``GPUArray`` over ``pointer`` that keeps ``keep`` alive (through ``base``)."""
    if strides is not None:
        if any(s % dtype.itemsize for s in strides):
            raise ValueError(f"{name}: strides {strides} (bytes) are not whole {dtype} elements")
        if _c_strides(shape, dtype.itemsize) == strides:
            strides = None
    size = int(np.prod(shape, dtype=np.int64))
    if size and not pointer:
        raise ValueError(f"{name}: a device array of {size} elements with a null pointer")
    gpuarray = context._gpuarray
    array = gpuarray.GPUArray(shape, dtype, allocator=context.pool.allocate, base=keep,
                              gpudata=pointer if size else None, strides=strides)
    return array


def _c_strides(shape, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


# -- out -------------------------------------------------------------------------------------


def cuda_array_interface(array, context) -> dict:
    """``__cuda_array_interface__`` (version 3) of our device ``array`` in ``context``."""
    shape = tuple(int(n) for n in array.shape)
    strides = tuple(int(s) for s in array.strides)
    contiguous = _c_strides(shape, array.dtype.itemsize) == strides or not shape
    pointer = int(array.gpudata) if array.gpudata is not None else 0
    return {"shape": shape, "typestr": array.dtype.str, "data": (pointer, False),
            "strides": None if contiguous else strides, "version": 3,
            "stream": int(context.stream.handle)}


def dlpack_capsule(array, context, stream=None, max_version=None, dl_device=None, copy=None):
    """``__dlpack__`` of our device ``array``: a capsule over its memory, once the work
    queued on the context's stream has finished (unless ``stream`` is -1)."""
    if stream == 0:
        raise ValueError("__dlpack__: stream 0 is ambiguous and not allowed on CUDA; pass "
                         "None or 1 (legacy default stream), 2 (per-thread) or a handle")
    if dl_device is not None and tuple(dl_device) != dlpack_device(context):
        raise BufferError(f"__dlpack__: the array is on {dlpack_device(context)}, not "
                          f"{tuple(dl_device)}; copy it with to_host first")
    if copy:
        raise BufferError("__dlpack__: the array is exported without a copy (copy=True is "
                          "not supported)")
    if stream != -1:
        with context.activate():
            context.stream.synchronize()
    itemsize = array.dtype.itemsize
    shape = tuple(int(n) for n in array.shape)
    strides = tuple(int(s) // itemsize for s in array.strides)
    pointer = int(array.gpudata) if array.gpudata is not None else 0
    return dlpack.to_capsule(pointer, shape, strides, array.dtype, dlpack_device(context), array)


def dlpack_device(context) -> tuple[int, int]:
    """``__dlpack_device__`` of arrays in ``context``: ``(kDLCUDA, device number)``."""
    return dlpack.KDL_CUDA, int(context.ordinal)
