"""Device arrays: what a GPU value is on the Python side, for the real and the simulated device.

On a real GPU a device array is a ``pycuda.gpuarray.GPUArray``. With ``gpuarray.simulate=True``
it is a ``SimulatedGpuArray``: NumPy memory standing in for device memory, with the part of
``GPUArray``'s interface that programs use (``shape``, ``dtype``, ``strides``, ``size``,
``gpudata``, ``get()``, ``set()``, ``copy()``, slicing, elementwise arithmetic, and the
``to_gpu``/``empty``/``zeros`` constructors). The host never sees its memory by accident:
``to_gpu`` copies in, ``get`` copies out, exactly where a real device would transfer.

The helpers here are the one place that tells device arrays from host arrays; nothing imports
PyCUDA unless a program already did.

>>> import numpy as np
>>> d = to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3))
>>> is_device_array(d), is_device_array(np.zeros(2))
(True, False)
>>> d
gpuarray.array([[0., 1., 2.],
       [3., 4., 5.]], dtype=float32)
>>> to_host_array(d * 2)[1]
array([ 6.,  8., 10.], dtype=float32)
"""
from __future__ import annotations

import sys
from typing import Any, Protocol, runtime_checkable

import numpy as np

from . import interop

__all__ = [
    "DeviceArray", "SimulatedDevicePointer", "SimulatedGpuArray", "empty", "empty_like",
    "is_c_contiguous", "is_device_array", "is_simulated", "numpy_readable",
    "pycuda_gpuarray_type", "to_gpu",
    "to_host_array", "zeros", "zeros_like",
]


@runtime_checkable
class DeviceArray(Protocol):
    """What every device array offers (``pycuda.gpuarray.GPUArray`` and ``SimulatedGpuArray``)."""

    shape: tuple
    dtype: np.dtype
    strides: tuple
    gpudata: Any

    def get(self) -> np.ndarray: ...


def pycuda_gpuarray_type():
    """``pycuda.gpuarray.GPUArray`` when PyCUDA has been imported, else None (nothing is imported).

    >>> pycuda_gpuarray_type() is None or pycuda_gpuarray_type().__name__ == "GPUArray"
    True
    """
    module = sys.modules.get("pycuda.gpuarray")
    return getattr(module, "GPUArray", None)


def is_simulated(x) -> bool:
    """True for an array of the simulated device.

    >>> is_simulated(zeros(3)), is_simulated(np.zeros(3))
    (True, False)
    """
    return isinstance(x, SimulatedGpuArray)


def is_device_array(x) -> bool:
    """True for an array that lives in (real or simulated) GPU memory.

    >>> is_device_array(empty((2,), np.float32)), is_device_array([1.0])
    (True, False)
    """
    if isinstance(x, SimulatedGpuArray):
        return True
    gpuarray = pycuda_gpuarray_type()
    return gpuarray is not None and isinstance(x, gpuarray)


def to_host_array(x) -> np.ndarray:
    """A host NumPy array holding ``x``'s values: a copy for a device array, ``np.asarray`` else.

    >>> to_host_array(to_gpu(np.ones(2, np.float32)))
    array([1., 1.], dtype=float32)
    >>> to_host_array([1, 2])
    array([1, 2])
    """
    if is_simulated(x):
        return x.get()
    if is_device_array(x):
        from lowering.llvm.gpu.cuda_runtime import host_copy
        return host_copy(x)  # in a context: none stays current between the runtime's calls
    return np.asarray(x)


_READABLE_TYPES: dict[type, type] = {}


def numpy_readable(x, context=None):
    """``x`` such that ``numpy.asarray(x)`` gives its host values (as for Theano's GPU arrays):
    simulated arrays and host values as they are; a ``pycuda.gpuarray.GPUArray`` as an object
    of a subclass with ``__array__`` over the same memory (no copy), which also exports
    ``__cuda_array_interface__`` and ``__dlpack__`` (``gpu.interop``) with the stream of
    ``context`` (the ``CudaContext`` of the array; the default device's when None).

    >>> d = zeros(2); numpy_readable(d) is d, np.asarray(numpy_readable(d))
    (True, array([0., 0.], dtype=float32))
    """
    gpuarray = pycuda_gpuarray_type()
    if gpuarray is None or not isinstance(x, gpuarray) or hasattr(type(x), "__array__"):
        return x
    readable = _READABLE_TYPES.get(type(x))
    if readable is None:
        readable = _READABLE_TYPES[type(x)] = type(
            "GPUArray", (type(x),), {
                "__array__": _gpuarray_array, "__module__": __name__,
                "__cuda_array_interface__": property(_gpuarray_interface),
                "__dlpack__": _gpuarray_dlpack, "__dlpack_device__": _gpuarray_dlpack_device,
                "__doc__": "A GPUArray that numpy.asarray reads, exporting the CUDA array "
                           "interface and DLPack."})
    result = readable(x.shape, x.dtype, allocator=x.allocator, base=x, gpudata=x.gpudata,
                      strides=x.strides)
    result._lowering_context = context
    return result


def _gpuarray_array(self, dtype=None, copy=None):
    host = to_host_array(self)
    return host if dtype is None else host.astype(dtype)


def _context_of(array):
    context = getattr(array, "_lowering_context", None)
    if context is None:
        from lowering.llvm.gpu.cuda_runtime import get_context
        context = get_context(None)
    return context


def _gpuarray_interface(self) -> dict:
    return interop.cuda_array_interface(self, _context_of(self))


def _gpuarray_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return interop.dlpack_capsule(self, _context_of(self), stream, max_version, dl_device, copy)


def _gpuarray_dlpack_device(self) -> tuple:
    return interop.dlpack_device(_context_of(self))


def is_c_contiguous(x) -> bool:
    """True when ``x`` (host or device array) is laid out in C order (size-1 axes ignored).

    >>> is_c_contiguous(zeros((3, 4))), is_c_contiguous(zeros((3, 4))[:, ::2])
    (True, False)
    """
    expected = np.dtype(x.dtype).itemsize
    for size, stride in zip(reversed(x.shape), reversed(x.strides)):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


class SimulatedDevicePointer:
    """``gpudata`` of a simulated array: an address (``int(p)``) into a block of simulated memory.

    Like PyCUDA's ``DeviceAllocation`` it converts to an int; unlike a bare int it still knows its
    memory, so ``SimulatedGpuArray(shape, dtype, gpudata=p)`` can view it again.

    >>> p = zeros(4).gpudata
    >>> int(p) == p.memory.ctypes.data, p.offset
    (True, 0)
    """

    __slots__ = ("memory", "offset")

    def __init__(self, memory: np.ndarray, offset: int = 0):
        self.memory = memory      # 1-d uint8 array: the whole allocation
        self.offset = offset      # bytes from the allocation's start

    def __int__(self) -> int:
        return int(self.memory.ctypes.data) + self.offset

    __index__ = __int__

    def __add__(self, nbytes: int) -> "SimulatedDevicePointer":
        return SimulatedDevicePointer(self.memory, self.offset + int(nbytes))

    def free(self) -> None:
        """Nothing to do: NumPy memory is freed when the last array using it goes."""

    def __repr__(self) -> str:
        return f"<SimulatedDevicePointer {int(self):#x}>"


class _Flags:
    """``GPUArray.flags``: ``c_contiguous``, ``f_contiguous``, ``forc``."""

    def __init__(self, array: "SimulatedGpuArray"):
        self.c_contiguous = is_c_contiguous(array)
        self.f_contiguous = is_c_contiguous(_Reversed(array))
        self.forc = self.c_contiguous or self.f_contiguous


class _Reversed:
    def __init__(self, array):
        self.shape, self.strides, self.dtype = array.shape[::-1], array.strides[::-1], array.dtype


class SimulatedGpuArray:
    """An array in simulated device memory that behaves like ``pycuda.gpuarray.GPUArray``.

    The constructor has ``GPUArray``'s signature; ``gpudata`` (a ``SimulatedDevicePointer``)
    makes an array over existing memory, as PyCUDA does for views.

    >>> a = SimulatedGpuArray((2, 2), np.float32)
    >>> a.fill(3.0).get()
    array([[3., 3.],
           [3., 3.]], dtype=float32)
    >>> b = SimulatedGpuArray(a.shape, a.dtype, gpudata=a.gpudata, base=a)
    >>> b.set(np.eye(2, dtype=np.float32)); a.get()[0]
    array([1., 0.], dtype=float32)
    """

    # NumPy defers to our reflected operators (``2 * d`` stays on the device).
    __array_ufunc__ = None

    def __init__(self, shape, dtype=np.float32, allocator=None, base=None, gpudata=None,
                 strides=None, order="C"):
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        dtype = np.dtype(dtype)
        if gpudata is None:
            nbytes = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, 1)
            # Fresh device memory holds garbage, as on a GPU: poison floats so reads show.
            memory = np.empty(nbytes, np.uint8)
            view = np.ndarray(shape, dtype, memory, 0, order=order)
            if dtype.kind in "fc":
                view.fill(np.nan)
            gpudata = SimulatedDevicePointer(memory)
        elif not isinstance(gpudata, SimulatedDevicePointer):
            raise TypeError(f"a simulated device array needs simulated device memory as gpudata, "
                            f"got {type(gpudata).__name__}")
        self._data = np.ndarray(shape, dtype, gpudata.memory, gpudata.offset, strides, order)
        self.gpudata = gpudata
        self.base = base
        self.allocator = allocator

    # -- construction from NumPy memory --------------------------------------------------------

    @classmethod
    def adopt(cls, array: np.ndarray) -> "SimulatedGpuArray":
        """A device array whose memory *is* ``array`` (no copy); the simulated device's own way
        to hand results out.

        >>> host = np.zeros(3, np.float32); d = SimulatedGpuArray.adopt(host)
        >>> _ = d.fill(1.0); host
        array([1., 1., 1.], dtype=float32)
        """
        array = np.asarray(array)
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        if not (root.flags.c_contiguous and root.flags.writeable):
            array = np.array(array, copy=True)
            root = array
        memory = root.reshape(-1).view(np.uint8) if root.size else np.empty(1, np.uint8)
        offset = int(array.ctypes.data) - int(memory.ctypes.data) if array.size else 0
        return cls(array.shape, array.dtype, gpudata=SimulatedDevicePointer(memory, offset),
                   strides=array.strides)

    @property
    def device_ndarray(self) -> np.ndarray:
        """The NumPy view that is this array's device memory (writes change the device array).

        For the simulated device's executor and thunks; a host program reads with ``get()``.
        """
        return self._data

    # -- GPUArray's attributes -----------------------------------------------------------------

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def strides(self) -> tuple:
        return self._data.strides

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    mem_size = size

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def ptr(self) -> int:
        return int(self.gpudata)

    @property
    def flags(self) -> _Flags:
        return _Flags(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- transfers -----------------------------------------------------------------------------

    def get(self, ary=None, pagelocked=False, async_=False, stream=None) -> np.ndarray:
        """A host copy (into ``ary`` when given)."""
        if ary is None:
            return np.array(self._data, copy=True)
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(f"get(ary): ary has shape {ary.shape} and dtype {ary.dtype}, the "
                             f"device array has shape {self.shape} and dtype {self.dtype}")
        ary[...] = self._data
        return ary

    def get_async(self, stream=None, ary=None) -> np.ndarray:
        return self.get(ary)

    def set(self, ary, async_=False, stream=None) -> None:
        """Copy host values of the same shape and dtype into this array."""
        ary = np.asarray(ary)
        if ary.shape != self.shape:
            raise ValueError(f"set(): host array has shape {ary.shape}, device array {self.shape}")
        if ary.dtype != self.dtype:
            raise ValueError(f"set(): host array has dtype {ary.dtype}, device array {self.dtype}")
        self._data[...] = ary

    def set_async(self, ary, stream=None) -> None:
        self.set(ary)

    def __array__(self, dtype=None, copy=None):
        # numpy.asarray(device_array) gives the host values, as for Theano's CudaNdarray.
        return self.get() if dtype is None else self.get().astype(dtype)

    # -- arrays from arrays --------------------------------------------------------------------

    def copy(self) -> "SimulatedGpuArray":
        return to_gpu(self._data)

    def astype(self, dtype) -> "SimulatedGpuArray":
        return to_gpu(self._data.astype(dtype))

    def fill(self, value, stream=None) -> "SimulatedGpuArray":
        self._data.fill(value)
        return self

    def _view(self, array: np.ndarray) -> "SimulatedGpuArray":
        offset = int(array.ctypes.data) - int(self.gpudata.memory.ctypes.data) if array.size \
            else self.gpudata.offset
        return SimulatedGpuArray(array.shape, array.dtype, base=self, strides=array.strides,
                                 gpudata=SimulatedDevicePointer(self.gpudata.memory, offset))

    def __getitem__(self, index) -> "SimulatedGpuArray":
        view = self._data[index]
        if not isinstance(view, np.ndarray) or not np.shares_memory(view, self._data) \
                and view.size:
            raise IndexError("device arrays support basic (slice) indexing only")
        return self._view(view)

    def __setitem__(self, index, value) -> None:
        self._data[index] = to_host_array(value)

    def reshape(self, *shape, order="C") -> "SimulatedGpuArray":
        shape = shape[0] if len(shape) == 1 and not np.isscalar(shape[0]) else shape
        view = self._data.reshape(shape, order=order)
        if not np.shares_memory(view, self._data) and view.size:
            raise ValueError("reshape of a non-contiguous device array would copy; copy() first")
        return self._view(view)

    def ravel(self) -> "SimulatedGpuArray":
        return self.reshape(-1)

    def view(self, dtype=None) -> "SimulatedGpuArray":
        return self._view(self._data if dtype is None else self._data.view(dtype))

    def transpose(self, axes=None) -> "SimulatedGpuArray":
        return self._view(self._data.transpose(axes))

    @property
    def T(self) -> "SimulatedGpuArray":
        return self.transpose()

    # -- elementwise arithmetic, computed on the simulated device ------------------------------

    def _binary(self, other, op, reflected=False):
        if isinstance(other, np.ndarray):
            raise TypeError("device and host arrays do not mix; move the host array with to_gpu()")
        other = other._data if isinstance(other, SimulatedGpuArray) else other
        result = op(other, self._data) if reflected else op(self._data, other)
        return to_gpu(np.asarray(result, dtype=np.result_type(result)))

    def __add__(self, o): return self._binary(o, np.add)
    def __radd__(self, o): return self._binary(o, np.add, True)
    def __sub__(self, o): return self._binary(o, np.subtract)
    def __rsub__(self, o): return self._binary(o, np.subtract, True)
    def __mul__(self, o): return self._binary(o, np.multiply)
    def __rmul__(self, o): return self._binary(o, np.multiply, True)
    def __truediv__(self, o): return self._binary(o, np.true_divide)
    def __rtruediv__(self, o): return self._binary(o, np.true_divide, True)
    def __pow__(self, o): return self._binary(o, np.power)
    def __neg__(self): return to_gpu(-self._data)
    def __abs__(self): return to_gpu(np.abs(self._data))

    def _inplace(self, other, op):
        other = other._data if isinstance(other, SimulatedGpuArray) else other
        op(self._data, other, out=self._data)
        return self

    def __iadd__(self, o): return self._inplace(o, np.add)
    def __isub__(self, o): return self._inplace(o, np.subtract)
    def __imul__(self, o): return self._inplace(o, np.multiply)
    def __itruediv__(self, o): return self._inplace(o, np.true_divide)

    def __bool__(self):
        raise ValueError("the truth value of a device array is ambiguous; get() it first")

    def __repr__(self) -> str:
        return "gpuarray." + repr(self._data)

    def __str__(self) -> str:
        return str(self._data)


# -- constructors named like pycuda.gpuarray's ---------------------------------------------------


def to_gpu(ary, allocator=None) -> SimulatedGpuArray:
    """A simulated device array holding a copy of ``ary`` (C-contiguous).

    >>> to_gpu(np.arange(3)).get()
    array([0, 1, 2])
    """
    ary = np.asarray(ary)
    result = SimulatedGpuArray(ary.shape, ary.dtype, allocator=allocator)
    result.set(ary)
    return result


to_gpu_async = to_gpu


def empty(shape, dtype=np.float32, allocator=None, order="C") -> SimulatedGpuArray:
    """An uninitialized simulated device array (floats read as NaN until written).

    >>> empty((2,), np.float64).shape
    (2,)
    """
    return SimulatedGpuArray(shape, dtype, allocator=allocator, order=order)


def zeros(shape, dtype=np.float32, allocator=None, order="C") -> SimulatedGpuArray:
    """A simulated device array of zeros.

    >>> zeros((2,)).get()
    array([0., 0.], dtype=float32)
    """
    return empty(shape, dtype, allocator, order).fill(0)


def empty_like(other, dtype=None) -> SimulatedGpuArray:
    """``empty`` with ``other``'s shape (and dtype unless given)."""
    return empty(other.shape, other.dtype if dtype is None else dtype)


def zeros_like(other, dtype=None) -> SimulatedGpuArray:
    """``zeros`` with ``other``'s shape (and dtype unless given).

    >>> zeros_like(np.ones((1, 2), np.int32)).get()
    array([[0, 0]], dtype=int32)
    """
    return zeros(other.shape, other.dtype if dtype is None else dtype)
