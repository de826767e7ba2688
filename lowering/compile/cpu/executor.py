"""The CPU executor: a function's module as x86-64 machine code, called with one native call.

Registered as executor ``"cpu"`` (the first choice of modes ``FAST_RUN`` and ``FAST_COMPILE``)
and as the producer of the IR stages ``loops`` (after ``bufferize``), ``llvm`` (LLVM IR after
LLVM's O3 pipeline) and ``asm`` (the host assembly)::

    module (tensor level, optimized) → bufferize → to-llvm → LLVM O3 → JIT   (cpu_build)
                                      ↳ disk cache, keyed by the loops IR and the target

A ``CpuExecutor`` is built once per ``Function`` (one compiled code per dtype/rank signature of
its arguments; sizes are dynamic). ``raw_call(*arrays)`` is the built-in function of
``cpu.native_call`` (or the ``ctypes`` path where that is unavailable): it returns the list of
fresh output arrays, or an ``int`` code; ``Function`` calls it directly and comes back to
``recover`` with the code. Calling the executor itself (``executor(values)``) does both.

Error codes become the exceptions of the checks that failed, with their messages (which name the
op and the user's line): ``RuntimeCheckError`` (a ``ValueError``) for shape checks,
``RuntimeIndexError`` (an ``IndexError``) for indices out of range, ``MemoryError`` when memory
runs out. Nothing is written to the arguments, and the outputs allocated so far are freed.

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering import function
>>> x = T.fvector("x")
>>> f = function([x], x + 1)
>>> f.executor_name, f(np.arange(3, dtype=np.float32))
('cpu', array([1., 2., 3.], dtype=float32))
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Operation

from .build import (CompiledModule, compile_for_cpu, cpu_options, has_tensors, load_llvm,
                    lower_to_loops)
from .ctypes_call import CtypesCall
from .native_call import (ARGCOUNT_CODE, NORMALIZE_CODE, NativeCall, NativeCallUnavailable,
                          native_form)
from ..pipeline import register_executor, register_stage
from lowering.llvm.cpu.interrupts import INTERRUPT_CODE, watch_sigint
from lowering.dialects.loops.python_calls import drop_pending_results
from lowering.llvm.cpu.python_calls import PYTHON_ERROR_KIND, take_python_error
from lowering.llvm.cpu.workspace import release_name

__all__ = ["CpuExecutor", "CpuCompileError", "compiled_error", "writable_contiguous", "emit_llvm",
           "emit_asm"]


class CpuCompileError(Exception):
    """The CPU backend cannot compile a function (an op it has no lowering for); the message
    names the op and the user's line."""


class CpuExecutor:
    """Runs the one function of a tensor-level module as machine code.

    ``call_path`` is ``"native"`` (the built-in wrapper) or ``"ctypes"``; by default the native
    one when this Python and NumPy allow it.
    """

    def __init__(self, module: Operation, call_path: str | None = None):
        from lowering.ir.core import IRError
        from lowering.ir.passes import PassFailure
        try:
            self.compiled: CompiledModule = compile_for_cpu(module)
        except (PassFailure, IRError) as exc:
            raise CpuCompileError(f"the CPU backend cannot compile this function: {exc}; "
                                  f"function(..., mode='INTERP') runs it in the interpreter"
                                  ) from exc
        signature = self.compiled.signature
        address = self.compiled.entry_address
        keep = (self.compiled,)
        if call_path not in (None, "native", "ctypes"):
            raise ValueError(f"call_path must be 'native' or 'ctypes', got {call_path!r}")
        call = None
        if call_path != "ctypes":
            try:
                call = NativeCall(address, signature.inputs, signature.outputs, load_llvm,
                                  keep).function
                self.call_path = "native"
            except NativeCallUnavailable:
                if call_path == "native":
                    raise
        if call is None:
            call = CtypesCall(address, signature.inputs, signature.outputs, keep)
            self.call_path = "ctypes"
        self.raw_call = call
        watch_sigint()  # Ctrl-C stops long loops (lowering.llvm.cpu.interrupts)
        # Code keeping its temporaries in a workspace between calls (allow_gc=False) runs one
        # call at a time, whichever Function calls it; other code is reentrant.
        has_workspace = _release_workspace_at_exit(self, self.compiled)
        self.call_lock = self.compiled.call_lock if has_workspace else None

    @property
    def signature(self):
        return self.compiled.signature

    @property
    def updated_in_place(self) -> tuple[tuple[int, int], ...]:
        """``(result, argument)`` pairs: results the code writes into the argument's memory
        instead of returning them (shared variables updated in place). ``raw_call`` and
        ``recover`` return the other results only; the argument must be C-contiguous and
        writable (``function()`` sees to it)."""
        return self.compiled.signature.updated_in_place

    @property
    def inplace_patterns(self) -> tuple[tuple[int, int, int], ...]:
        """``(op, result, operand)``: the result of the module's op (by position in the
        function's block) computed in that operand's memory."""
        return self.compiled.signature.inplace_patterns

    def __call__(self, values: list) -> list:
        """The function's results for the argument arrays ``values``; a result updated in
        place is its argument's array itself (holding the new value)."""
        if self.updated_in_place:
            values = list(values)
            for _, a in self.updated_in_place:
                values[a] = writable_contiguous(values[a], self.signature.inputs[a][0])
        result = self.raw_call(*values)
        if type(result) is not list:
            result = self.recover(values, result)
        for r, a in self.updated_in_place:
            result.insert(r, values[a])
        return result

    def recover(self, values, code: int, names=None) -> list:
        """Finish a call whose ``raw_call`` returned ``code``: convert the arguments it could
        not read and call again, or raise the error the code stands for (its message then ends
        with the arguments' shapes, labelled with ``names`` where given)."""
        names = list(names or [f"#{i}" for i in range(len(values))])
        while code == INTERRUPT_CODE:
            # Stopped by Ctrl-C before writing anything: Python's handler raises
            # KeyboardInterrupt here. Where it does not (another thread than the main one, a
            # handler that returns), the call is simply made again.
            _run_signal_handlers()
            result = self.raw_call(*values)
            if type(result) is list:
                return result
            code = result
        if code >= NORMALIZE_CODE and code != ARGCOUNT_CODE:
            values = [native_form(v, dtype, rank, f"argument {name}")
                      for v, name, (dtype, rank) in zip(values, names, self.signature.inputs)]
            result = self.raw_call(*values)
            if type(result) is list:
                return result
            code = result
        if code == ARGCOUNT_CODE:
            raise TypeError(f"the compiled function takes {len(self.signature.inputs)} "
                            f"arguments, got {len(values)}")
        shapes = ", ".join(f"{name} {np.shape(v)}" for name, v in zip(names, values))
        raise compiled_error(code, self.compiled.errors, self.compiled.error_kinds,
                             f"the arguments had shapes {shapes}" if shapes else "")


def _run_signal_handlers() -> None:
    """Python's handlers of the signals that arrived (``KeyboardInterrupt`` from SIGINT's)."""
    import ctypes
    ctypes.pythonapi.PyErr_CheckSignals()  # (ctypes raises the exception a handler set)


def _release_workspace_at_exit(executor: CpuExecutor, compiled: CompiledModule) -> bool:
    """Code compiled with ``allow_gc=False`` keeps its temporaries in a workspace: free it when
    ``executor`` goes (the finalizer keeps the code loaded until then). Whether it has one."""
    import ctypes
    import weakref

    name = release_name(compiled.signature.entry[:-len("_entry")])
    try:
        address = compiled.library.address(name)
    except KeyError:
        return False  # no workspace
    release = ctypes.CFUNCTYPE(ctypes.c_int32)(address)
    weakref.finalize(executor, _call_release, release, compiled.library)
    return True


def _call_release(release, library) -> None:
    # ``library`` is an argument only to stay loaded until the workspace is freed.
    release()


def writable_contiguous(value, dtype: np.dtype) -> np.ndarray:
    """``value`` itself if compiled code may write into it in place (an ndarray of exactly
    ``dtype``, C-contiguous, aligned and writable), else a copy that is.

    >>> a = np.arange(6.0).reshape(2, 3)
    >>> writable_contiguous(a, a.dtype) is a, writable_contiguous(a.T, a.dtype).flags.c_contiguous
    (True, True)
    """
    if type(value) is np.ndarray and value.dtype is dtype:
        flags = value.flags
        if flags.c_contiguous and flags.aligned and flags.writeable:
            return value
    return np.array(value, dtype=dtype, order="C")


def compiled_error(code: int, errors: dict, kinds: dict, context: str = "") -> Exception:
    """The exception for error ``code`` of a compiled entry: its message names the op and the
    user's line, and ends with ``context`` (e.g. the arguments' shapes).

    >>> e = compiled_error(3, {3: ("tensor.add at a.py:4:1: shapes differ", "a.py:4:1")},
    ...                    {3: "value"}, "the arguments had shapes x (2,), y (3,)")
    >>> type(e).__name__, isinstance(e, ValueError)
    ('RuntimeCheckError', True)
    >>> print(e)
    tensor.add at a.py:4:1: shapes differ (the arguments had shapes x (2,), y (3,))
    """
    from lowering.dialects.loops.asserts import RuntimeCheckError, RuntimeIndexError
    message, location = errors.get(code, (f"compiled code failed with error code {code}", ""))
    if location and location not in message and not location.startswith("<unknown>"):
        message = f"{message} (at {location})"
    if context:
        message = f"{message} ({context})"
    kind = kinds.get(code, "value")
    drop_pending_results()  # results of Python ops the failed call did not take
    if kind == PYTHON_ERROR_KIND:  # an op written in Python raised: its own exception
        raised = take_python_error()
        if raised is not None:
            return raised
    if kind == "memory":
        return MemoryError(message)
    cls = RuntimeIndexError if kind == "index" else RuntimeCheckError
    return cls(message, None, error_code=code)


# ---------------------------------------------------------------------------------------------
# IR stages and text output


def _loops_stage(module: Operation) -> Operation:
    return lower_to_loops(module)


def _translated(module: Operation):
    """``to-llvm`` of ``module``, bufferized first if it is at the tensor level (a pass failure
    becomes an ``IRError`` naming the op, as diagnostics expect)."""
    from lowering.ir.core import IRError
    from lowering.ir.passes import PassFailure
    from lowering.llvm.cpu.to_llvm import translate_module
    try:
        loops = lower_to_loops(module) if has_tensors(module) else module
    except PassFailure as exc:
        raise IRError(exc.message, exc.op) from exc
    return translate_module(loops, num_threads=cpu_options().num_threads)


def emit_llvm(module: Operation) -> str:
    """The LLVM IR of ``module`` (tensor or loops level) after LLVM's O3 pipeline: what the CPU
    runs (``Function.ir("llvm")``, ``lowering-opt --emit llvm``)."""
    from lowering.llvm.jit import optimized_ir
    return optimized_ir(_translated(module).llvm_ir)


def emit_asm(module: Operation) -> str:
    """The host assembly of ``module`` (tensor or loops level) (``Function.ir("asm")``,
    ``lowering-opt --emit asm``)."""
    from lowering.llvm.jit import emit_assembly
    return emit_assembly(_translated(module).llvm_ir)


register_executor("cpu", CpuExecutor)
register_stage("loops", "optimized", _loops_stage)
register_stage("llvm", "loops", emit_llvm)
register_stage("asm", "loops", emit_asm)
