"""Floating-point pieces of the GPU backend that can be checked on the host: the exact ``frem``
(``gpu.kernel_math.define_fmod``, compiled for the CPU and compared with C's ``fmod`` bit for
bit), the math functions kernels call, and the fast-math forms.
"""
from __future__ import annotations

import ctypes
import functools

import llvmlite.ir as ir
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lowering.llvm.jit import JitLibrary, compile_object
from lowering.llvm.cpu.context import TranslationError
from lowering.llvm.gpu.kernel_math import GpuMath, KernelBuilder, define_fmod
from lowering.llvm.vecmath.library import MATH_FUNCTIONS

from to_llvm_testing import same_bits


@functools.cache
def host_fmod():
    module = ir.Module()
    for ty in (ir.FloatType(), ir.DoubleType()):
        define_fmod(module, ty).linkage = "external"  # callable from here
    library = JitLibrary(compile_object(str(module)))
    f32 = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_float)(
        library.address("lowering.fmod.f32"))
    f64 = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(
        library.address("lowering.fmod.f64"))
    return {np.float32: f32, np.float64: f64}, library


def fmod_of(dtype, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    fn = host_fmod()[0][dtype]
    return np.array([fn(float(a), float(b)) for a, b in zip(x, y)], dtype)


def random_floats(dtype, n: int, rng) -> np.ndarray:
    """Every bit pattern equally likely: all exponents, subnormals, infinities and NaNs."""
    unsigned = np.uint32 if dtype == np.float32 else np.uint64
    return rng.integers(0, np.iinfo(unsigned).max, n, dtype=unsigned, endpoint=True).view(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmod_is_exact_for_any_bits(dtype):
    rng = np.random.default_rng(7)
    x = random_floats(dtype, 3000, rng)
    with np.errstate(all="ignore"):
        y = np.concatenate([random_floats(dtype, 1500, rng),
                            (x[1500:] * dtype(rng.uniform(1e-3, 2))).astype(dtype)])  # near x
        assert same_bits(fmod_of(dtype, x, y), np.fmod(x, y))


SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.0, -7.5, 1e10, 2.0 ** 100, 5e-324, 1e-310,
           2.2250738585072014e-308, np.inf, -np.inf, np.nan, 1.7976931348623157e308, 0.1, 1e-45]


@settings(max_examples=150, deadline=None)
@given(x=st.one_of(st.sampled_from(SPECIAL), st.floats()),
       y=st.one_of(st.sampled_from(SPECIAL), st.floats()),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_fmod_special_values(x, y, dtype):
    with np.errstate(all="ignore"):
        xs, ys = np.array([x], dtype), np.array([y], dtype)
        assert same_bits(fmod_of(dtype, xs, ys), np.fmod(xs, ys)), (x, y)


def test_kernel_builder_frem_calls_the_exact_fmod():
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()] * 2), "f")
    b = KernelBuilder(fn.append_basic_block())
    b.ret(b.frem(*fn.args))
    text = str(module)
    assert "frem" not in text and 'call double @"lowering.fmod.f64"' in text


def test_kernel_builder_contracts_only_when_asked():
    for contract in (False, True):
        module = ir.Module()
        fn = ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()] * 2), "f")
        b = KernelBuilder(fn.append_basic_block(), contract=contract)
        b.ret(b.fadd(b.fmul(*fn.args), fn.args[0]))
        assert ("fmul contract" in str(module)) == contract


def _call_text(math: GpuMath, name: str, ty: ir.Type) -> str:
    module = ir.Module()
    arity = MATH_FUNCTIONS[name].arity if name in MATH_FUNCTIONS else 1
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * arity), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(math.math_call(b, name, list(fn.args)))
    return str(module)


@pytest.mark.parametrize("name", sorted(MATH_FUNCTIONS))
def test_every_library_function_is_defined_for_kernels(name):
    """Straight-line code without calls into libm or ``llvm.ldexp`` (neither exists on a GPU)."""
    for ty in (ir.FloatType(), ir.DoubleType()):
        text = _call_text(GpuMath(), name, ty)
        assert f'lowering.{name}.{"f32" if ty == ir.FloatType() else "f64"}' in text
        declared = [line for line in text.splitlines() if line.startswith("declare")]
        assert all('@"llvm.' in line for line in declared), declared
        assert "llvm.ldexp" not in text and "vector-function-abi-variant" not in text


@pytest.mark.parametrize("name, intrinsic", [("exp", "ex2.approx"), ("log", "lg2.approx"),
                                             ("sin", "sin.approx"), ("cos", "cos.approx"),
                                             ("tanh", "tanh.approx"), ("sigmoid", "div.full")])
def test_fast_math_approximates_f32_only(name, intrinsic):
    fast = GpuMath(fast=True)
    assert intrinsic in _call_text(fast, name, ir.FloatType())
    assert "llvm.nvvm" not in _call_text(fast, name, ir.DoubleType())
    assert "llvm.nvvm" not in _call_text(GpuMath(), name, ir.FloatType())


def test_fast_tanh_needs_the_instruction():
    text = _call_text(GpuMath(fast=True, approx_tanh=False), "tanh", ir.FloatType())
    assert "llvm.nvvm" not in text and "lowering.tanh.f32" in text


def test_unknown_math_function():
    with pytest.raises(TranslationError, match="no GPU implementation"):
        _call_text(GpuMath(), "gamma", ir.FloatType())
