"""The front end's way to the GPU: whether one can be used, its devices by context name, and
device arrays made on them (shared variables, ``CudaNdarray``).

A GPU can be used when the flag ``gpuarray.simulate`` is set (the interpreted device: NumPy
memory, kernels run in the reference interpreter) or when PyCUDA, a CUDA driver and a device
are present. Otherwise ``require_gpu`` raises ``CudaUnavailableError`` saying what is missing
and how to get it.

Context names are those of ``lowering.frontend.transfer.context_name``: ``"cuda"`` (the default
context), ``"cudaN"``, or a name of the ``contexts`` flag.

>>> import numpy as np
>>> from lowering.config import config
>>> with config.change_flags({"gpuarray.simulate": True}):
...     d = to_device(np.ones(2, np.float32), "cuda")
...     type(d).__name__, d.get()
('SimulatedGpuArray', array([1., 1.], dtype=float32))
"""
from __future__ import annotations

import numpy as np

from lowering.compile.gpu import device as gpu_device
from lowering.compile.gpu.arrays import is_c_contiguous, is_device_array, to_host_array
from lowering.compile.gpu.device import gpu_missing
from lowering.compile.gpu.placement import gpu_device_flag  # noqa: F401  (re-exported)
from lowering.config import config
from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError

__all__ = ["CudaUnavailableError", "device_copy", "device_for", "gpu_device_flag", "gpu_missing",
           "is_simulated_gpu", "require_gpu", "to_device", "zeros"]


def is_simulated_gpu() -> bool:
    """Whether GPU work runs on the interpreted device (flag ``gpuarray.simulate``)."""
    return gpu_device.simulated()


def require_gpu(what: str) -> None:
    """Nothing when a GPU can be used; else CudaUnavailableError starting with ``what`` and
    saying what is missing (PyCUDA, the driver, a device) and how to get it.

    >>> with config.change_flags({"gpuarray.simulate": True}):
    ...     require_gpu("a test")
    """
    missing = gpu_missing()
    if missing is not None:
        raise CudaUnavailableError(f"{what}: {missing}")


def device_for(context: str):
    """The device (``lowering.compile.gpu.device.Device``) of a context name: the interpreted
    one with ``gpuarray.simulate``, else the GPU through PyCUDA (CudaUnavailableError when
    there is none)."""
    require_gpu(f"GPU context {context!r}")
    return gpu_device.device_for(context)


def to_device(array, context: str):
    """A device array on ``context`` holding ``array``: a copy of a host array; a device array
    of that device itself (another device's array is copied through the host)."""
    return device_for(context).adopt(array if is_device_array(array) else np.asarray(array))


def device_copy(array, context: str):
    """A new C-contiguous device array on ``context`` with ``array``'s values (copied on the
    device when ``array`` is a contiguous array of it)."""
    device = device_for(context)
    if device.owns(array) and is_c_contiguous(array):
        copy = device.empty(array.shape, array.dtype)
        device.copy(array, copy)
        return copy
    host = to_host_array(array)
    return device.to_device(host)


def _shape(shape) -> tuple:
    return (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)


def zeros(shape, dtype, context: str = "cuda"):
    """A device array of zeros on ``context``.

    >>> with config.change_flags({"gpuarray.simulate": True}):
    ...     zeros((2,), "float32").get()
    array([0., 0.], dtype=float32)
    """
    device = device_for(context)
    array = device.empty(_shape(shape), np.dtype(dtype))
    device.fill(array, 0)
    return array
