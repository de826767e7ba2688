"""``pycuda.gpuarray`` of the stand-in: ``GPUArray`` with the constructor, attributes and copies
the runtime and programs use. Elementwise kernels (``fill``, arithmetic) are refused: PyCUDA
compiles them from CUDA C at run time."""
from __future__ import annotations

import numpy as np

from . import driver


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


class _Flags:
    def __init__(self, array):
        self.c_contiguous = array._contiguous()
        self.f_contiguous = array.ndim <= 1 and self.c_contiguous
        self.forc = self.c_contiguous or self.f_contiguous


class GPUArray:
    def __init__(self, shape, dtype, allocator=None, base=None, gpudata=None, strides=None,
                 order="C"):
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(shape, dtype=np.int64))
        self.nbytes = self.mem_size = self.size * self.dtype.itemsize
        self.strides = tuple(int(s) for s in strides) if strides is not None \
            else _c_strides(shape, self.dtype.itemsize)
        self.allocator = allocator if allocator is not None else driver.mem_alloc
        self.base = base
        if gpudata is None and self.size:
            gpudata = self.allocator(self.nbytes)
        self.gpudata = gpudata

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def ptr(self):
        return int(self.gpudata) if self.gpudata is not None else None

    @property
    def flags(self):
        return _Flags(self)

    def _contiguous(self) -> bool:
        return all(n == 1 or s == e for n, s, e in
                   zip(self.shape, self.strides, _c_strides(self.shape, self.dtype.itemsize)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, index):
        """Basic slicing (ints and slices) as a view, as PyCUDA's."""
        index = index if isinstance(index, tuple) else (index,)
        shape, strides, offset = [], [], 0
        for axis, (n, stride) in enumerate(zip(self.shape, self.strides)):
            item = index[axis] if axis < len(index) else slice(None)
            if isinstance(item, slice):
                start, stop, step = item.indices(n)
                shape.append(len(range(start, stop, step)))
                strides.append(stride * step)
                offset += start * stride
            else:
                offset += (int(item) % n) * stride
        base = self.base if self.base is not None else self
        pointer = int(self.gpudata) + offset if self.gpudata is not None else None
        return GPUArray(tuple(shape), self.dtype, self.allocator, base=base, gpudata=pointer,
                        strides=tuple(strides))

    def set(self, ary, async_=False, stream=None):
        ary = np.ascontiguousarray(ary, dtype=self.dtype)
        if ary.size != self.size:
            raise ValueError("ary and self must be the same size")
        if self.size:
            driver.memcpy_htod(self.gpudata, ary)

    def get(self, ary=None, pagelocked=False, async_=False, stream=None):
        if not self._contiguous():
            raise ValueError("the stand-in's GPUArray.get copies contiguous arrays only")
        if ary is None:
            ary = np.empty(self.shape, self.dtype)
        if self.size:
            driver.memcpy_dtoh(ary, self.gpudata)
        return ary

    def fill(self, value, stream=None):
        raise driver.CompileError(
            "GPUArray.fill builds an elementwise kernel from CUDA C with SourceModule (nvcc and "
            "a host compiler on the user's machine, no float16 type); the driver stand-in "
            "compiles no CUDA C")

    def _elementwise(self, *args, **kwargs):
        raise driver.CompileError("GPUArray arithmetic compiles CUDA C kernels; the driver "
                                  "stand-in compiles no CUDA C")

    __add__ = __sub__ = __mul__ = __truediv__ = __neg__ = _elementwise

    def __repr__(self):
        return f"<stand-in GPUArray {self.shape} {self.dtype}>"


def to_gpu(ary, allocator=None):
    ary = np.asarray(ary)
    result = GPUArray(ary.shape, ary.dtype, allocator)
    result.set(ary)
    return result


def empty(shape, dtype, allocator=None, order="C"):
    return GPUArray(shape, dtype, allocator, order=order)


def zeros(shape, dtype, allocator=None, order="C"):
    result = GPUArray(shape, dtype, allocator, order=order)
    result.fill(0)
    return result
