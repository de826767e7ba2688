"""``CudaNdarray``: Theano's CUDA array, here a float32 device array of the default GPU context.

``CudaNdarray(a)`` copies a host array to the device (cast to float32, the one dtype Theano's
CUDA arrays hold); ``CudaNdarray.zeros(shape)`` makes zeros there; ``numpy.asarray(d)`` copies
one back. Any device array (a ``pycuda.gpuarray.GPUArray``, the simulated device's arrays) is an
instance: ``isinstance(d, CudaNdarray)``. Its ``gpudata`` is what PyCUDA kernels take, so
``kernel(dest, a, b, block=..., grid=...)`` works on them directly.

>>> import numpy as np
>>> from lowering.config import config
>>> with config.change_flags({"gpuarray.simulate": True}):
...     d = CudaNdarray(np.arange(3))
...     isinstance(d, CudaNdarray), np.asarray(d), CudaNdarray.zeros((1, 2)).shape
(True, array([0., 1., 2.], dtype=float32), (1, 2))
"""
from __future__ import annotations

import numpy as np

from lowering.compile.gpu.arrays import is_device_array, numpy_readable, to_host_array
from lowering.frontend import gpu



class _CudaNdarrayType(type):
    """Makes ``isinstance(x, CudaNdarray)`` true for every device array."""

    def __instancecheck__(cls, obj) -> bool:
        return is_device_array(obj)


class CudaNdarray(metaclass=_CudaNdarrayType):
    """A float32 array on the default GPU context (see the module docstring)."""

    def __new__(cls, array):
        gpu.require_gpu("CudaNdarray makes an array on the GPU")
        host = to_host_array(array)
        return numpy_readable(gpu.to_device(np.asarray(host, dtype=np.float32), "cuda"))

    @staticmethod
    def zeros(shape, dtype="float32"):
        """A device array of zeros (float32, as Theano's CUDA arrays are)."""
        gpu.require_gpu("CudaNdarray.zeros makes an array on the GPU")
        if np.dtype(dtype) != np.float32:
            raise TypeError(f"CudaNdarray holds float32 only, got dtype {np.dtype(dtype)}")
        return numpy_readable(gpu.zeros(shape, np.float32, "cuda"))
