"""One native call per Function call: the wrapper of ``cpu.wrapper_ir``, loaded as a built-in.

``NativeCall(entry_address, input_dtypes, output_dtypes, load)`` compiles (or reuses) the
wrapper for the signature, fills its context (entry address, ``ndarray``, NumPy's
``PyArray_NewFromDescr`` and ``PyArray_SetBaseObject``, the dtype objects) and makes it a Python
built-in function with ``METH_FASTCALL``, so ``call.function(*arrays)`` goes from Python to the
compiled entry and back with no Python code in between. It returns the list of output arrays, or
an ``int``: the entry's error code, or ``NORMALIZE_CODE + i`` when argument ``i`` must first be
put in the form the wrapper reads (``native_form`` does that).

The wrapper reads NumPy's array objects directly. ``array_layout()`` derives the field offsets
from ``PyArrayObject_fields`` (stable in NumPy's ABI since 1.7) and checks them on probe arrays;
where they do not hold, ``NativeCallUnavailable`` is raised and the caller uses the ``ctypes``
call path instead.

>>> layout = array_layout()
>>> layout.data == object.__basicsize__
True
"""
from __future__ import annotations

import ctypes
import functools
import sys

import numpy as np

from .call_protocol import ARGCOUNT_CODE, CONTEXT_FIELDS, NORMALIZE_CODE, WRAPPER_NAME, ArrayLayout

__all__ = ["NativeCall", "NativeCallUnavailable", "array_layout", "native_form",
           "NORMALIZE_CODE", "ARGCOUNT_CODE"]

_METH_FASTCALL = 0x0080

# Python C API functions the wrapper calls (all in the stable ABI), and the C library's free.
_PYTHON_SYMBOLS = ("PyLong_FromLongLong", "PyList_New", "PyList_SetItem", "PyCapsule_New",
                   "PyCapsule_GetPointer", "PyEval_SaveThread", "PyEval_RestoreThread",
                   "Py_IncRef", "Py_DecRef")

# Indices in NumPy's C API table (numpy/__multiarray_api.h; the table only ever grows).
_NUMPY_API_INDEX = {"ndarray_type": 2, "new_from_descr": 94, "set_base_object": 282}


class NativeCallUnavailable(RuntimeError):
    """This Python or NumPy does not have the object layout the native wrapper relies on."""


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_api = ctypes.pythonapi
_new_builtin = _api.PyCFunction_NewEx
_new_builtin.restype = ctypes.py_object
_new_builtin.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
_new_capsule = _api.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = _api.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_name = _api.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]


@functools.cache
def array_layout() -> ArrayLayout:
    """Where NumPy's array object keeps what the wrapper reads, checked on probe arrays."""
    if ctypes.sizeof(ctypes.c_void_p) != 8 or getattr(sys, "_is_gil_enabled", lambda: True)() \
            is False:
        raise NativeCallUnavailable("the native call path needs a 64-bit CPython with the GIL")
    head = object.__basicsize__  # PyObject_HEAD; ob_type is its last field
    layout = ArrayLayout(ob_type=head - 8, data=head, nd=head + 8, dimensions=head + 16,
                         strides=head + 24, descr=head + 40)
    probes = (np.empty((3, 4), np.float32)[:, ::2], np.zeros((), np.int8),
              np.ones(5, np.bool_)[::-1], np.empty((2, 0, 3), np.float64).transpose(2, 0, 1))
    for probe in probes:
        problem = _layout_problem(probe, layout)
        if problem:
            raise NativeCallUnavailable(f"NumPy's array object does not have the expected "
                                        f"layout ({problem})")
    return layout


def _layout_problem(array: np.ndarray, layout: ArrayLayout) -> str | None:
    base = id(array)

    def word(offset: int, ctype=ctypes.c_void_p):
        return ctype.from_address(base + offset).value or 0

    if word(layout.ob_type) != id(type(array)):
        return "type pointer"
    if word(layout.data) != array.__array_interface__["data"][0]:
        return "data pointer"
    if word(layout.nd, ctypes.c_int) != array.ndim:
        return "number of dimensions"
    if word(layout.descr) != id(array.dtype):
        return "dtype"
    if array.ndim:
        dims = (ctypes.c_int64 * array.ndim).from_address(word(layout.dimensions))
        strides = (ctypes.c_int64 * array.ndim).from_address(word(layout.strides))
        if tuple(dims) != array.shape or tuple(strides) != array.strides:
            return "shape or strides"
    return None


@functools.cache
def _numpy_api() -> dict[str, int]:
    """Addresses of the NumPy API entries the wrapper uses, from NumPy's C API table."""
    try:
        from numpy._core import _multiarray_umath as multiarray
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as multiarray
    capsule = multiarray._ARRAY_API
    table_address = _capsule_pointer(capsule, _capsule_name(capsule))
    if not table_address:
        raise NativeCallUnavailable("NumPy's C API table cannot be read")
    table = (ctypes.c_void_p * (max(_NUMPY_API_INDEX.values()) + 1)).from_address(table_address)
    found = {name: table[index] for name, index in _NUMPY_API_INDEX.items()}
    if found["ndarray_type"] != id(np.ndarray):
        raise NativeCallUnavailable("NumPy's C API table is not laid out as expected")
    return found


@functools.cache
def _register_python_symbols() -> None:
    from lowering.llvm.jit import register_symbol
    for name in _PYTHON_SYMBOLS:
        register_symbol(name, ctypes.cast(getattr(_api, name), ctypes.c_void_p).value)
    libc = ctypes.CDLL(None)
    register_symbol("free", ctypes.cast(libc.free, ctypes.c_void_p).value)


class _KeepAlive:
    """What the built-in function needs alive as long as it exists (its ``__module__``)."""

    __slots__ = ("context", "method", "libraries", "dtypes")

    def __init__(self, context, method, libraries, dtypes):
        self.context = context
        self.method = method
        self.libraries = libraries
        self.dtypes = dtypes

    def __repr__(self):
        return "<compiled function>"


class NativeCall:
    """The built-in ``function(*arrays)`` calling the entry at ``entry_address``.

    ``load(description, produce_ir)`` returns the ``JitLibrary`` of the LLVM IR that
    ``produce_ir()`` gives, compiled (or found compiled under ``description``); ``keep`` is kept
    alive with the function (the library holding the entry).
    """

    def __init__(self, entry_address: int, input_dtypes, output_dtypes, load, keep=()):
        layout = array_layout()
        api = _numpy_api()
        _register_python_symbols()
        self.input_dtypes = tuple(input_dtypes)
        self.output_dtypes = tuple(output_dtypes)
        n_in = len(self.input_dtypes)
        signature = [(dt.itemsize, rank) for dt, rank in (*self.input_dtypes,
                                                          *self.output_dtypes)]
        inputs, outputs = tuple(signature[:n_in]), tuple(signature[n_in:])

        def produce_ir() -> str:
            from .wrapper_ir import wrapper_ir  # the code generator: only on a cache miss
            return wrapper_ir(inputs, outputs, layout)

        library = load(f"python call wrapper|{inputs}|{outputs}|{layout}", produce_ir)
        dtypes = [dt for dt, _ in (*self.input_dtypes, *self.output_dtypes)]
        fields = [entry_address, api["ndarray_type"], api["new_from_descr"],
                  api["set_base_object"]] + [id(dt) for dt in dtypes]
        assert len(fields) == len(CONTEXT_FIELDS) + len(dtypes)
        context = (ctypes.c_void_p * len(fields))(*fields)
        method = _MethodDef(b"compiled_function", library.address(WRAPPER_NAME),
                            _METH_FASTCALL, None)
        owner = _KeepAlive(context, method, (library, *keep), dtypes)
        self_capsule = _new_capsule(ctypes.addressof(context), None, None)
        self.function = _new_builtin(ctypes.addressof(method), self_capsule, owner)


def native_form(value, dtype: np.dtype, rank: int, label: str) -> np.ndarray:
    """``value`` as an array the wrapper reads without help: exactly an ``ndarray`` with the
    dtype object ``dtype`` (native byte order), ``rank`` dimensions, an aligned data pointer
    and strides that are multiples of the item size (copied where needed).

    >>> a = native_form(np.arange(4.0).astype(">f8")[::2], np.dtype("float64"), 1, "x")
    >>> a.dtype is np.dtype("float64"), a.tolist()
    (True, [0.0, 2.0])
    """
    array = np.asarray(value)
    if array.dtype.newbyteorder("=") != dtype or array.ndim != rank:
        raise TypeError(f"{label}: expected an array of dtype {dtype} and rank {rank}, got "
                        f"dtype {array.dtype} and shape {array.shape}")
    size = dtype.itemsize
    if not array.dtype.isnative or array.__array_interface__["data"][0] % size or \
            any(s % size for s in array.strides):
        array = np.array(array, dtype=dtype, order="C")
    if array.dtype is not dtype:
        array = array.view(dtype)
    return array
