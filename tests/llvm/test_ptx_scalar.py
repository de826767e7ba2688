"""Every scalar-dialect op of every element type in a GPU kernel: translated to PTX and
assembled by ptxas, and the same LLVM IR run on the host (``test_ptx_emulation``) against the
op's own ``evaluate`` (the interpreter's semantics, NumPy's results).

As on the CPU, correctly rounded operations (arithmetic, division, sqrt, rounding, comparisons,
min/max, floor division and modulo, casts) must agree bit for bit and transcendental functions
stay within the vector math library's documented error bound. One gpu.module per element type
holds one kernel per op: ``out[i] = op(a[i], b[i], c[i])`` for the thread's ``i``.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from lowering.dialects.scalar import SCALAR_OPS, CastOp, SelectOp
from lowering.ir.types import SCALAR_TYPES
from lowering.llvm.gpu.ptxas import assemble_ptx, ptxas_available
from lowering.llvm.gpu.to_ptx import translate_gpu_module

from test_ptx_emulation import EmulatedKernels, gpu_module_of
from test_to_llvm_scalar import TYPES, check_op, ops_for
from to_llvm_testing import same_bits

needs_ptxas = pytest.mark.skipif(not ptxas_available(), reason="ptxas (CUDA toolkit) not found")

THREADS, BLOCKS = 32, 2
SIZE = THREADS * BLOCKS


def buffer(t) -> str:
    return f'!loops.buffer<?x{t}, space="device">'


def kernel(name: str, op_name: str, operand_types, result_type) -> str:
    """``out[i] = op(args[i]...)`` with ``i = block_id * block_dim + thread_id``."""
    args = ", ".join(f"%a{k}: {buffer(t)}" for k, t in enumerate(operand_types))
    loads = "\n".join(f"    %x{k} = loops.load %a{k}[%i] : {buffer(t)}"
                      for k, t in enumerate(operand_types))
    operands = ", ".join(f"%x{k}" for k in range(len(operand_types)))
    types = ", ".join(str(t) for t in operand_types)
    all_types = ", ".join([buffer(t) for t in operand_types] + [buffer(result_type)])
    return f'''
  "gpu.func"() ({{
  ^bb0({args}, %out: {buffer(result_type)}):
    %t = "gpu.thread_id"() {{dimension = "x"}} : () -> index
    %b = "gpu.block_id"() {{dimension = "x"}} : () -> index
    %d = "gpu.block_dim"() {{dimension = "x"}} : () -> index
    %o = "scalar.mul"(%b, %d) : (index, index) -> index
    %i = "scalar.add"(%o, %t) : (index, index) -> index
{loads}
    %r = "{op_name}"({operands}) : ({types}) -> {result_type}
    loops.store %r, %out[%i] : {buffer(result_type)}
    "gpu.return"() : () -> ()
  }}) {{sym_name = "{name}", function_type = ({all_types}) -> (), kernel}} : () -> ()'''


def module_text(kernels: list[str]) -> str:
    return '"gpu.module"() ({' + "".join(kernels) + '\n}) {sym_name = "scalar_ops"} : () -> ()'


# f16 functions are the f32 ones rounded to half (as on the CPU): a few of them suffice.
HALF_FUNCTIONS = ("exp", "sin", "log1p", "div", "sqrt", "floor")


def kernels_for(t) -> list[tuple[str, type, list]]:
    """(kernel name, op class, operand types) of every op on ``t``, select and the casts."""
    ops = [cls for cls in ops_for(t)
           if not (t.bits == 16 and t.is_float and cls.kind == "float"
                   and cls.short not in HALF_FUNCTIONS)]
    cases = [(cls.short, cls, [t] * cls.arity) for cls in ops]
    cases.append(("select", SelectOp, [SCALAR_TYPES["i1"], t, t]))
    cases += [(f"cast_to_{u}", CastOp, [t]) for u in TYPES]
    return cases


def result_type(name, cls, operand_types):
    if cls is CastOp:
        return SCALAR_TYPES[name.removeprefix("cast_to_")]
    return cls.result_element(operand_types)


@functools.cache
def translated(type_name: str):
    t = SCALAR_TYPES[type_name]
    cases = kernels_for(t)
    text = module_text([kernel(name, cls.name, types, result_type(name, cls, types))
                        for name, cls, types in cases])
    gpu_module = gpu_module_of(text)
    return cases, gpu_module, translate_gpu_module(gpu_module, arch="sm_90")


def sample(t, rng: np.random.Generator) -> np.ndarray:
    """SIZE values of ``t``: the special ones every op must get right, then random ones."""
    if t.is_bool:
        return rng.integers(0, 2, SIZE).astype(bool)
    if t.is_float:
        info = np.finfo(t.dtype)
        special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan,
                   float(info.max), -float(info.max), float(info.tiny),
                   float(info.smallest_subnormal), 7.0, -7.0, 1e-3]
        with np.errstate(over="ignore"):
            special = np.array(special, t.dtype)
            bits = rng.integers(0, 1 << t.bits, SIZE, dtype=np.uint64)
            random_bits = bits.astype(f"u{t.dtype.itemsize}").view(t.dtype)
            moderate = rng.uniform(-20, 20, SIZE).astype(t.dtype)
        mixed = np.where(rng.integers(0, 2, SIZE).astype(bool), random_bits, moderate)
    else:
        info = np.iinfo(t.dtype)
        special = [v for v in (0, 1, -1, 2, -2, 3, 7, -7, int(info.min), int(info.max),
                               int(info.min) + 1, int(info.max) - 1) if info.min <= v <= info.max]
        special = np.array(special, t.dtype)
        wide = rng.integers(int(info.min), int(info.max), SIZE, dtype=t.dtype, endpoint=True)
        small = rng.integers(max(-9, int(info.min)), 10, SIZE).astype(t.dtype)
        mixed = np.where(rng.integers(0, 2, SIZE).astype(bool), wide, small)
    return np.concatenate([special, mixed])[:SIZE]


# ---------------------------------------------------------------------------------------------
# PTX


@needs_ptxas
@pytest.mark.parametrize("type_name", TYPES)
def test_every_scalar_op_assembles(type_name):
    cases, _, ptx = translated(type_name)
    assert assemble_ptx(ptx.ptx, ptx.arch)
    for name, _, _ in cases:
        assert f".entry {name}(" in ptx.ptx
    # Everything is computed in the kernel: no call of a function that does not exist on the GPU.
    assert ".extern" not in ptx.ptx


def _entry(ptx: str, name: str) -> str:
    """The PTX of kernel ``name`` (its ``.entry`` up to the next one)."""
    start = ptx.index(f".entry {name}(")
    following = ptx.find(".entry ", start + 1)
    return ptx[start:following if following >= 0 else len(ptx)]


@pytest.mark.parametrize("type_name, kernel_name, instructions", [
    ("f32", "div", ["div.rn.f32"]),
    ("f32", "sqrt", ["sqrt.rn.f32"]),
    ("f64", "div", ["div.rn.f64"]),
    ("f64", "sqrt", ["sqrt.rn.f64"]),
    ("f32", "round", ["cvt.rni.f32.f32"]),
    ("f32", "round_half_away_from_zero", ["cvt.rzi.f32.f32"]),  # trunc(x ± 0.5), small x kept
    ("f32", "mul", ["mul.rn.f32"]),            # .rn: ptxas may not fuse it into an fma
    ("f16", "add", ["add.rn.f16"]),          # f32 then rounded: the half sum, exactly
    ("f16", "exp", ["cvt.f32.f16", "cvt.rn.f16.f32"]),
    ("i32", "floordiv", ["div.s32"]),
    ("ui32", "floordiv", ["div.u32"]),
    ("i64", "mod", ["rem.s64"]),
    ("f32", "lt", ["setp.lt.f32"]),
    ("f32", "ne", ["setp.neu.f32"]),           # unordered: NaN != NaN
    ("f64", "cast_to_i32", ["cvt.rzi.s32.f64"]),
    ("i8", "cast_to_f64", ["cvt.rn.f64.s16"]),
    ("f32", "select", ["selp"]),
])
def test_ptx_uses_the_expected_instructions(type_name, kernel_name, instructions):
    _, _, ptx = translated(type_name)
    code = _entry(ptx.ptx, kernel_name)
    for instruction in instructions:
        assert instruction in code, (instruction, code)


def test_float_ops_are_exact_by_default():
    _, _, ptx = translated("f32")
    assert not re.search(r"\.approx|\.ftz|\.full", ptx.ptx)


# ---------------------------------------------------------------------------------------------
# Results (the LLVM IR run on the host)


@functools.cache
def emulated(type_name: str) -> EmulatedKernels:
    return EmulatedKernels(translated(type_name)[2])


@pytest.mark.parametrize("type_name", TYPES)
def test_every_scalar_op_computes_what_the_interpreter_does(type_name):
    t = SCALAR_TYPES[type_name]
    cases, _, _ = translated(type_name)
    kernels = emulated(type_name)
    rng = np.random.default_rng(sum(map(ord, type_name)))
    operands = [sample(t, rng) for _ in range(3)]
    condition = sample(SCALAR_TYPES["i1"], rng)
    for name, cls, types in cases:
        result = result_type(name, cls, types)
        args = [condition, *operands[:2]] if cls is SelectOp else operands[:len(types)]
        out = np.zeros(SIZE, result.dtype)
        kernels.launch(name, BLOCKS, THREADS, [*args, out])
        if cls is SelectOp:
            assert same_bits(out, SelectOp.evaluate(*args)), name
        elif cls is CastOp:
            assert same_bits(out, CastOp.evaluate(args[0], result)), (name, args[0], out)
        else:
            with np.errstate(all="ignore"):
                check_op(cls, out, args)
    assert not kernels.trapped


def test_float_functions_of_integers():
    """Integer operands of float functions are converted first (``scalar.div`` of i32 is f64)."""
    t = SCALAR_TYPES["i32"]
    cases = [(short, SCALAR_OPS[short]) for short in ("div", "exp", "arctan2")]
    text = module_text([kernel(short, cls.name, [t] * cls.arity,
                               cls.result_element([t] * cls.arity)) for short, cls in cases])
    ptx = translate_gpu_module(gpu_module_of(text))
    kernels = EmulatedKernels(ptx)
    rng = np.random.default_rng(5)
    operands = [sample(t, rng) for _ in range(2)]
    for short, cls in cases:
        args = operands[:cls.arity]
        out = np.zeros(SIZE, cls.result_element([t] * cls.arity).dtype)
        kernels.launch(short, BLOCKS, THREADS, [*args, out])
        with np.errstate(all="ignore"):
            check_op(cls, out, args)
