"""Array kernels over the vector math functions, JIT-compiled: how tests and benchmarks call them.

``define_array_kernel`` adds ``void <name>(T* in0, [T* in1,] T* out, i64 n)`` applying a math
function elementwise in a plain counted loop (the shape of loop the CPU code generator emits);
``compile_kernels`` builds a module of such kernels at O3 for the host CPU and returns NumPy-facing
callables.

>>> import numpy as np
>>> kernels = compile_kernels([("exp", "f64")])
>>> kernels["exp", "f64"](np.array([0.0, 1.0])).tolist()
[1.0, 2.718281828459045]
"""
from __future__ import annotations

import ctypes
from typing import Callable, Iterable

import llvmlite.ir as ir
import numpy as np

from lowering.llvm.jit import JitLibrary, compile_object
from lowering.llvm.vecmath.library import MATH_FUNCTIONS, define_math_function
from lowering.llvm.vecmath.emit import FORMATS

DTYPES = {"f32": np.float32, "f64": np.float64}


def kernel_name(name: str, fmt: str) -> str:
    """The symbol of the array kernel applying ``name`` to ``fmt`` arrays."""
    return f"vecmath_kernel_{name}_{fmt}"


def define_array_kernel(module: ir.Module, name: str, fmt: str) -> ir.Function:
    """Add the loop ``out[i] = name(in0[i], ...)`` for ``i < n`` to ``module``."""
    ty = FORMATS[fmt].ir_type
    arity = MATH_FUNCTIONS[name].arity
    math_fn = define_math_function(module, name, ty)
    i64 = ir.IntType(64)
    ptr = ty.as_pointer()
    kernel = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (arity + 1) + [i64]),
                         kernel_name(name, fmt))
    *inputs, out, n = kernel.args
    for arg in (*inputs, out):
        arg.add_attribute("noalias")
    entry, body, done = (kernel.append_basic_block(s) for s in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    values = [b.load(b.gep(p, [i], inbounds=True)) for p in inputs]
    b.store(b.call(math_fn, values), b.gep(out, [i], inbounds=True))
    following = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(following, body)
    b.cbranch(b.icmp_signed("<", following, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    return kernel


def kernel_module(pairs: Iterable[tuple[str, str]]) -> ir.Module:
    """A module holding the array kernel of every (function name, format) pair."""
    module = ir.Module(name="vecmath_kernels")
    for name, fmt in pairs:
        define_array_kernel(module, name, fmt)
    return module


def compile_kernels(pairs: Iterable[tuple[str, str]], opt: int = 3
                    ) -> dict[tuple[str, str], Callable[..., np.ndarray]]:
    """JIT-compile the kernels of ``pairs``; each callable takes NumPy arrays and returns one."""
    pairs = list(pairs)
    library = JitLibrary(compile_object(str(kernel_module(pairs)), opt))
    return {(name, fmt): _wrap(library, name, fmt) for name, fmt in pairs}


def _wrap(library: JitLibrary, name: str, fmt: str) -> Callable[..., np.ndarray]:
    arity = MATH_FUNCTIONS[name].arity
    dtype = DTYPES[fmt]
    pointer = ctypes.c_void_p
    signature = ctypes.CFUNCTYPE(None, *([pointer] * (arity + 1)), ctypes.c_int64)
    native = signature(library.address(kernel_name(name, fmt)))

    def call(*args: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if len(args) != arity:
            raise TypeError(f"{name} takes {arity} array(s), got {len(args)}")
        arrays = [np.ascontiguousarray(np.broadcast_arrays(*args)[k], dtype=dtype)
                  for k in range(arity)]
        result = np.empty(arrays[0].shape, dtype) if out is None else out
        shape = arrays[0].shape
        if result.dtype != dtype or result.shape != shape or not result.flags.c_contiguous:
            raise ValueError(f"out must be a contiguous {np.dtype(dtype).name} array of shape "
                             f"{arrays[0].shape}")
        native(*(a.ctypes.data for a in arrays), result.ctypes.data, result.size)
        return result

    call.__name__ = kernel_name(name, fmt)
    call._library = library                          # keep the code alive with the callable
    return call
