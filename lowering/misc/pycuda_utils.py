"""Converting between PyCUDA's ``GPUArray`` and Theano's ``CudaNdarray`` (Theano's
``theano.misc.pycuda_utils``).

Both sides are device arrays here, so a conversion makes a new array object over the *same*
device memory, without a copy. ``GPUArray`` has no strides, so a strided (non C-contiguous)
array cannot be converted that way: the conversion raises ``ValueError``, unless
``copyif=True``, which makes a contiguous copy (then the result does not share memory).
``CudaNdarray`` holds float32 only.

On the simulated device (``gpuarray.simulate=True``) the "GPUArray" is the simulated device's
array, which behaves like one.

>>> import numpy as np
>>> from lowering.config import config
>>> from lowering.sandbox.cuda import CudaNdarray
>>> with config.change_flags({"gpuarray.simulate": True}):
...     c = CudaNdarray(np.arange(6).reshape(2, 3))
...     g = to_gpuarray(c)
...     _ = g.fill(7.0); np.asarray(c)[0]
array([7., 7., 7.], dtype=float32)
>>> to_gpuarray(c[:, ::2])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: to_gpuarray: the array is not C-contiguous (shape (2, 2), strides (12, 8)); ...
"""
from __future__ import annotations

import numpy as np

from lowering.compile.gpu.arrays import (SimulatedGpuArray, is_c_contiguous, is_device_array,
                                         numpy_readable, pycuda_gpuarray_type)
from lowering.frontend import gpu

__all__ = ["to_gpuarray", "to_cudandarray", "from_gpuarray"]


def _contiguous(x, what: str, copyif: bool):
    """``x`` itself when C-contiguous; a contiguous device copy with ``copyif``; else an error."""
    if is_c_contiguous(x):
        return x
    if not copyif:
        raise ValueError(f"{what}: the array is not C-contiguous (shape {tuple(x.shape)}, "
                         f"strides {tuple(x.strides)}); a GPUArray has no strides, so it needs a "
                         f"copy: pass copyif=True")
    if isinstance(x, SimulatedGpuArray):
        return x.copy()
    return gpu.device_copy(x, "cuda")


def _same_memory(array_type, x):
    return array_type(x.shape, x.dtype, base=x, gpudata=x.gpudata)


def _device_array(x, what: str):
    if not is_device_array(x):
        raise ValueError(f"{what} converts a device array, got {type(x).__name__}; make one with "
                         f"CudaNdarray(array) or pycuda.gpuarray.to_gpu(array)")


def to_gpuarray(x, copyif: bool = False):
    """A ``pycuda.gpuarray.GPUArray`` over the memory of device array ``x`` (a CudaNdarray);
    a strided ``x`` raises ValueError, or with ``copyif=True`` is copied first (the result
    then has its own memory)."""
    _device_array(x, "to_gpuarray")
    x = _contiguous(x, "to_gpuarray", copyif)
    if isinstance(x, SimulatedGpuArray):
        return _same_memory(SimulatedGpuArray, x)
    return _same_memory(pycuda_gpuarray_type(), x)


def to_cudandarray(x, copyif: bool = False):
    """A ``CudaNdarray`` over the memory of the float32 ``GPUArray`` ``x``; a strided ``x``
    raises ValueError, or with ``copyif=True`` is copied first.

    >>> to_cudandarray(np.zeros(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: to_cudandarray converts a device array, got ndarray; make one with ...
    """
    _device_array(x, "to_cudandarray")
    if np.dtype(x.dtype) != np.float32:
        raise ValueError(f"to_cudandarray: a CudaNdarray holds float32 only, got {x.dtype}; "
                         f"convert it with x.astype(numpy.float32)")
    x = _contiguous(x, "to_cudandarray", copyif)
    if isinstance(x, SimulatedGpuArray):
        return _same_memory(SimulatedGpuArray, x)
    return numpy_readable(_same_memory(pycuda_gpuarray_type(), x))


from_gpuarray = to_cudandarray
