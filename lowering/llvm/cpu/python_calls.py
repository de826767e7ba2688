"""``loops.python_call`` and ``loops.python_results`` in machine code: calls into Python.

The code calls two process symbols, ``lowering_python_call`` and ``lowering_python_results``,
whose addresses are ``ctypes`` callbacks registered with the JIT when the runtime symbols are
(``register_python_callbacks``): object code names them, so code loaded from the disk cache in
another process binds to that process's callbacks. Both take a descriptor of buffers, an ``i64``
array holding for each buffer its element address, its sizes and its strides (in elements)::

    i32 lowering_python_call(i8* site, i64* inputs, i64* sizes_and_token)
    i32 lowering_python_results(i64 token, i64* outputs)

``site`` is the call site's text (``PythonCallSite.text()``, a constant of the module). The
callbacks lend the code the buffers as NumPy arrays without copying (valid during the call
only), run it, check its results, and return 0, or 1 when Python raised: the exception is kept
for the calling thread and the code fails with an error code of kind ``python``, for which the
executor re-raises it (``take_python_error``). ``ctypes`` takes the GIL for each callback, so
the compiled call may run without it; the call must be made on the thread that called the
function (never inside a parallel loop), so Python ops run in program order.

>>> register_python_callbacks()
>>> PYTHON_CALL in registered_callbacks()
True
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.ir as ir
import numpy as np

from lowering.dialects.loops.python_calls import (PythonCallOp, PythonCallSite, PythonResultsOp,
                                                  kept_arguments, pending_layouts, run_site,
                                                  take_results)

from ..jit import register_symbol
from .context import CPU_LOWERING, FunctionLowering, translation_error
from .values import I8, I8P, I32, I64, i64

PYTHON_CALL = "lowering_python_call"
PYTHON_RESULTS = "lowering_python_results"
# The kind of the error codes whose exception Python raised (lowering.compile.cpu.executor).
PYTHON_ERROR_KIND = "python"

_CALL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p)
_RESULTS_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p)

_errors = threading.local()
_callbacks: dict[str, object] = {}
_callbacks_lock = threading.Lock()


def take_python_error() -> BaseException | None:
    """The exception the Python code of the calling thread's last failed call raised (once)."""
    error = getattr(_errors, "error", None)
    _errors.error = None
    return error


def _lent_arrays(address: int, layouts) -> list[np.ndarray]:
    """NumPy arrays over the buffers a descriptor at ``address`` describes (no copies), given
    each one's ``(rank, dtype)``."""
    words = (ctypes.c_int64 * sum(1 + 2 * rank for rank, _ in layouts)).from_address(address)
    arrays, at = [], 0
    for rank, dtype in layouts:
        dtype = np.dtype(dtype)
        pointer = words[at]
        shape = tuple(words[at + 1:at + 1 + rank])
        strides = tuple(s * dtype.itemsize for s in words[at + 1 + rank:at + 1 + 2 * rank])
        at += 1 + 2 * rank
        if 0 in shape or not pointer:
            arrays.append(np.empty(shape, dtype))
            continue
        arrays.append(np.asarray(_Memory(pointer, shape, strides, dtype)))
    return arrays


class _Memory:
    """Memory of compiled code seen through NumPy's array interface."""

    def __init__(self, pointer: int, shape: tuple, strides: tuple, dtype: np.dtype):
        self.__array_interface__ = {"data": (pointer, False), "shape": shape,
                                    "strides": strides, "typestr": dtype.str, "version": 3}


def _python_call(site_text: bytes, inputs: int, out: int) -> int:
    try:
        site = PythonCallSite.from_text(site_text.decode())
        lent = _lent_arrays(inputs, [(t.rank, t.dtype) for t in site.input_types])
        sizes, token = run_site(site, list(lent))
        kept = kept_arguments(lent)
        if kept:
            raise site.error(f"custom op '{site.op_name}' kept its input(s) "
                             f"{', '.join(f'#{i}' for i in kept)} after returning; compiled "
                             f"code lends an op its inputs for the call only: copy what it "
                             f"keeps (numpy.array(value))")
        words = (ctypes.c_int64 * (len(sizes) + 1)).from_address(out)
        for index, size in enumerate(sizes):
            words[index] = size
        words[len(sizes)] = token
        return 0
    except BaseException as exc:  # noqa: BLE001  (re-raised by the caller of the function)
        _errors.error = exc
        return 1


def _python_results(token: int, outputs: int) -> int:
    try:
        take_results(token, _lent_arrays(outputs, pending_layouts(token)))
        return 0
    except BaseException as exc:  # noqa: BLE001
        _errors.error = exc
        return 1


def register_python_callbacks() -> None:
    """Register the callbacks with the JIT (once per process)."""
    with _callbacks_lock:
        if _callbacks:
            return
        for name, ctype, function in ((PYTHON_CALL, _CALL_TYPE, _python_call),
                                      (PYTHON_RESULTS, _RESULTS_TYPE, _python_results)):
            callback = ctype(function)  # kept alive for the life of the process
            register_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)
            _callbacks[name] = callback


def registered_callbacks() -> dict[str, int]:
    """The callbacks' names and addresses."""
    return {name: ctypes.cast(cb, ctypes.c_void_p).value for name, cb in _callbacks.items()}


# ---------------------------------------------------------------------------------------------
# Lowering


def _descriptor(fl: FunctionLowering, buffers: list) -> ir.Value:
    """An ``i64`` array on the stack describing ``buffers``: address, sizes, strides each."""
    words = [w for buf in buffers
             for w in (fl.builder.ptrtoint(buf.ptr, I64), *buf.sizes, *buf.strides)]
    array = fl.alloca(ir.ArrayType(I64, max(len(words), 1)), name="python.args")
    for index, word in enumerate(words):
        fl.builder.store(word, fl.builder.gep(array, [i64(0), ir.Constant(I32, index)]))
    return fl.builder.bitcast(array, I64.as_pointer())


def _site_constant(fl: FunctionLowering, text: str) -> ir.Value:
    data = bytearray(text.encode() + b"\0")
    ty = ir.ArrayType(I8, len(data))
    site = ir.GlobalVariable(fl.state.module, ty, fl.state.unique_name("lowering.python_site"))
    site.global_constant = True
    site.linkage = "internal"
    site.initializer = ir.Constant(ty, data)
    return fl.builder.bitcast(site, I8P)


def _check_sequential(fl: FunctionLowering, op) -> None:
    if fl.outlined:
        raise translation_error(op, f"the Python code of '{op.attributes.get('op_name', op.name)}'"
                                    f" cannot run inside a parallel loop (it runs on the thread "
                                    f"that called the function)")


def _fail_with_python_error(fl: FunctionLowering, op, status: ir.Value) -> None:
    code = fl.state.error_code(f"the Python code of {op.name} raised", op, PYTHON_ERROR_KIND)
    fl.fail_if(fl.builder.icmp_signed("!=", status, ir.Constant(I32, 0)), code)


@CPU_LOWERING.register(PythonCallOp)
def _lower_python_call(fl: FunctionLowering, op: PythonCallOp):
    _check_sequential(fl, op)
    inputs = _descriptor(fl, [fl.get(v) for v in op.inputs])
    out = fl.alloca(ir.ArrayType(I64, len(op.outs)), name="python.sizes")
    fn = fl.state.function(PYTHON_CALL, ir.FunctionType(I32, [I8P, I64.as_pointer(),
                                                              I64.as_pointer()]))
    status = fl.builder.call(fn, [_site_constant(fl, op.site().text()), inputs,
                                  fl.builder.bitcast(out, I64.as_pointer())])
    _fail_with_python_error(fl, op, status)
    return [fl.builder.load(fl.builder.gep(out, [i64(0), ir.Constant(I32, i)]))
            for i in range(len(op.outs))]


@CPU_LOWERING.register(PythonResultsOp)
def _lower_python_results(fl: FunctionLowering, op: PythonResultsOp):
    _check_sequential(fl, op)
    outputs = _descriptor(fl, [fl.get(v) for v in op.outputs])
    fn = fl.state.function(PYTHON_RESULTS, ir.FunctionType(I32, [I64, I64.as_pointer()]))
    status = fl.builder.call(fn, [fl.get(op.token), outputs])
    _fail_with_python_error(fl, op, status)
    return []
