"""DLPack capsules through ctypes: making one over memory we own, and taking one apart.

A DLPack capsule (``PyCapsule`` named ``"dltensor"``) holds a ``DLManagedTensor``: the data
pointer, the device (``kDLCPU`` 1, ``kDLCUDA`` 2, ...), the dtype as (code, bits, lanes), the
shape and strides (in elements; NULL strides: C order) and a deleter the consumer calls when it
is done with the memory. A consumer takes ownership by renaming the capsule
``"used_dltensor"``; a capsule dropped unconsumed calls the deleter itself.

``to_capsule`` makes one over memory kept alive by ``owner`` until the deleter runs;
``from_capsule`` consumes one and gives a ``DLPackTensor`` whose ``release()`` (or garbage
collection) calls the producer's deleter.

>>> import numpy as np
>>> owner = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> capsule = to_capsule(owner.ctypes.data, owner.shape, None, owner.dtype, (KDL_CPU, 0), owner)
>>> tensor = from_capsule(capsule)
>>> tensor.shape, tensor.strides, tensor.dtype, tensor.device, tensor.pointer == owner.ctypes.data
((2, 3), None, dtype('float32'), (1, 0), True)
>>> live = exported(); tensor.release(); exported() == live - 1
True
"""
from __future__ import annotations

import ctypes
import threading
import weakref

import numpy as np

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
                8: "kDLMetal", 10: "kDLROCM", 11: "kDLROCMHost", 13: "kDLCUDAManaged",
                14: "kDLOneAPI"}

# DLDataTypeCode -> NumPy kind; bfloat16 (4) has no NumPy type.
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
_CODES = {kind: code for code, kind in _KINDS.items()}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex",
               6: "bool"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter)]


_api = ctypes.pythonapi
_new = _api.PyCapsule_New
_new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                 ctypes.c_void_p]
_get = _api.PyCapsule_GetPointer
_get.restype, _get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_set_name = _api.PyCapsule_SetName
_set_name.restype, _set_name.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_is_valid = _api.PyCapsule_IsValid
_is_valid.restype, _is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
# The capsule destructor gets the capsule as a raw pointer: these take one.
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_raw_get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# PyCapsule keeps the name's pointer: the names live as long as the module.
_NAME = ctypes.create_string_buffer(b"dltensor")
_USED = ctypes.create_string_buffer(b"used_dltensor")

_EXPORTED: dict[int, tuple] = {}  # DLManagedTensor address -> what it keeps alive
_LOCK = threading.Lock()


def _delete(address: int) -> None:
    with _LOCK:
        _EXPORTED.pop(address, None)


_DELETER = _Deleter(_delete)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule) -> None:
    # A capsule nobody consumed still owns its tensor.
    if _raw_is_valid(capsule, ctypes.cast(_NAME, ctypes.c_char_p)):
        _delete(_raw_get(capsule, ctypes.cast(_NAME, ctypes.c_char_p)))


def dtype_code(dtype) -> tuple[int, int, int]:
    """``(code, bits, lanes)`` of a NumPy dtype.

    >>> dtype_code(np.float16), dtype_code(np.bool_)
    ((2, 16, 1), (6, 8, 1))
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in _CODES:
        raise TypeError(f"DLPack has no type for {dtype}")
    return _CODES[dtype.kind], 8 * dtype.itemsize, 1


def numpy_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    """The NumPy dtype of a DLPack dtype, or a TypeError naming it.

    >>> numpy_dtype(2, 32, 1), numpy_dtype(1, 8, 1)
    (dtype('float32'), dtype('uint8'))
    """
    name = f"{_CODE_NAMES.get(code, f'code {code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    if lanes != 1 or code not in _KINDS or bits % 8:
        raise TypeError(f"DLPack dtype {name} has no NumPy type (supported: int, uint, float, "
                        f"complex and bool, one lane)")
    try:
        return np.dtype(f"{_KINDS[code]}{bits // 8}") if code != 6 else np.dtype(np.bool_)
    except TypeError:
        raise TypeError(f"DLPack dtype {name} has no NumPy type") from None


def to_capsule(pointer: int, shape, strides, dtype, device: tuple[int, int], owner):
    """A ``"dltensor"`` capsule over ``pointer`` (``strides`` in elements, None for C order)
    on ``device`` (type, id); ``owner`` is kept alive until the consumer's deleter call."""
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(ndim, 1))(*strides) if strides is not None else None
    managed = DLManagedTensor()
    tensor = managed.dl_tensor
    tensor.data = int(pointer) or None
    tensor.device = DLDevice(*device)
    tensor.ndim = ndim
    tensor.dtype = DLDataType(*dtype_code(dtype))
    tensor.shape = ctypes.cast(shape_array, ctypes.POINTER(ctypes.c_int64))
    if strides_array is not None:
        tensor.strides = ctypes.cast(strides_array, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed.deleter = _DELETER
    address = ctypes.addressof(managed)
    with _LOCK:
        _EXPORTED[address] = (managed, shape_array, strides_array, owner)
    return _new(address, ctypes.cast(_NAME, ctypes.c_char_p),
                ctypes.cast(_capsule_destructor, ctypes.c_void_p))


def exported() -> int:
    """How many tensors made by ``to_capsule`` have not been deleted yet."""
    return len(_EXPORTED)


class DLPackTensor:
    """A consumed DLPack tensor: ``pointer`` (data plus byte offset), ``shape``, ``strides``
    (elements, None for C order), ``dtype``, ``device`` (type, id). The producer's memory stays
    valid until ``release()``, which runs when this object is collected at the latest."""

    def __init__(self, address: int):
        managed = DLManagedTensor.from_address(address)
        tensor = managed.dl_tensor
        ndim = int(tensor.ndim)
        self.shape = tuple(int(tensor.shape[k]) for k in range(ndim))
        self.strides = tuple(int(tensor.strides[k]) for k in range(ndim)) \
            if tensor.strides else None
        self.device = (int(tensor.device.device_type), int(tensor.device.device_id))
        self.code = (int(tensor.dtype.code), int(tensor.dtype.bits), int(tensor.dtype.lanes))
        self.pointer = int(tensor.data or 0) + int(tensor.byte_offset)
        deleter = managed.deleter
        self._finalizer = weakref.finalize(self, _release, deleter, address)

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(*self.code)

    def release(self) -> None:
        """Tell the producer the memory is no longer used (once)."""
        self._finalizer()


def _release(deleter, address: int) -> None:
    if deleter:
        deleter(address)


def from_capsule(capsule) -> DLPackTensor:
    """Consume a ``"dltensor"`` capsule (a ValueError when it is not one, or was consumed)."""
    if not _is_valid(capsule, ctypes.cast(_NAME, ctypes.c_char_p)):
        raise ValueError("not an unconsumed DLPack capsule (a PyCapsule named 'dltensor'; "
                         "a capsule can be consumed once)")
    address = _get(capsule, ctypes.cast(_NAME, ctypes.c_char_p))
    tensor = DLPackTensor(address)
    _set_name(capsule, ctypes.cast(_USED, ctypes.c_char_p))
    return tensor
