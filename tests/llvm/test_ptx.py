"""to-ptx on hand-written kernels: the kernel ABI, loops with carried values, strided buffers,
shared memory with barriers, atomics, thread-private memory, run-time checks, fast math and
architectures. Each kernel is translated and assembled by ptxas; the PTX is checked for the
instructions it must use, and the LLVM IR is run on the host (``test_ptx_emulation``) against
the reference interpreter.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from lowering.config import config
from lowering.dialects.gpu import GpuFuncOp
from lowering.dialects.loops import BufferType
from lowering.ir.parser import parse_module
from lowering.ir.types import F16, F32, F64, I1, I8, I32, INDEX, UI8, UI64
from lowering.llvm.cpu.context import TranslationError
from lowering.llvm.gpu.target import UnknownArchError, default_arch, device_arch, ptx_isa
from lowering.llvm.gpu.ptxas import assemble_ptx, ptxas_available
from lowering.llvm.gpu.to_ptx import kernel_param_format, translate_gpu_module

from test_ptx_emulation import EmulatedKernels, gpu_module_of, run_both

needs_ptxas = pytest.mark.skipif(not ptxas_available(), reason="ptxas (CUDA toolkit) not found")

DEV = 'space="device"'


def translate_and_assemble(text: str, **options):
    """(gpu.module, PtxModule) of IR text; the PTX must assemble (where ptxas is installed)."""
    gpu_module = gpu_module_of(text)
    ptx = translate_gpu_module(gpu_module, **options)
    if ptxas_available():
        assert assemble_ptx(ptx.ptx, ptx.arch)
    return gpu_module, ptx


def entry(ptx: str, name: str) -> str:
    start = ptx.index(f".entry {name}(")
    following = ptx.find(".entry ", start + 1)
    return ptx[start:following if following >= 0 else len(ptx)]


# ---------------------------------------------------------------------------------------------
# The kernel ABI


def test_param_format_follows_the_kernel_abi():
    kernel = GpuFuncOp.build("k", [BufferType((None, 4), F32, memory_space="device"), INDEX,
                                   BufferType((), F64, memory_space="device"), I32, I8, UI8,
                                   I1, F16, F32, F64, UI64,
                                   BufferType((2, None, 3), I32, memory_space="device")],
                             body=lambda b, *args: None)
    assert kernel_param_format(kernel) == "Pqqqq" + "q" + "P" + "ibBbHfdQ" + "P" + "q" * 6


SCALARS = f'''
"gpu.module"() ({{
  "gpu.func"() ({{
  ^bb0(%h: f16, %flag: i1, %b: ui8, %n: index, %out: !loops.buffer<4xf32, {DEV}>):
    %c0 = "scalar.constant"() {{value = 0 : index}} : () -> index
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %c2 = "scalar.constant"() {{value = 2 : index}} : () -> index
    %c3 = "scalar.constant"() {{value = 3 : index}} : () -> index
    %hf = "scalar.cast"(%h) : (f16) -> f32
    %ff = "scalar.cast"(%flag) : (i1) -> f32
    %bf = "scalar.cast"(%b) : (ui8) -> f32
    %nf = "scalar.cast"(%n) : (index) -> f32
    loops.store %hf, %out[%c0] : !loops.buffer<4xf32, {DEV}>
    loops.store %ff, %out[%c1] : !loops.buffer<4xf32, {DEV}>
    loops.store %bf, %out[%c2] : !loops.buffer<4xf32, {DEV}>
    loops.store %nf, %out[%c3] : !loops.buffer<4xf32, {DEV}>
    "gpu.return"() : () -> ()
  }}) {{sym_name = "scalars", function_type = (f16, i1, ui8, index,
      !loops.buffer<4xf32, {DEV}>) -> (), kernel}} : () -> ()
}}) {{sym_name = "kernels"}} : () -> ()'''


@needs_ptxas
def test_scalar_parameters_arrive_as_the_abi_says():
    gpu_module, ptx = translate_and_assemble(SCALARS)
    assert ptx.kernels == {"scalars": "HbBqPqq"}
    params = re.findall(r"\.param ([\w .]+?) scalars_param_\d+", ptx.ptx)
    assert params == [".u16", ".u8", ".u8", ".u64", ".u64 .ptr .global .align 1", ".u64", ".u64"]
    out = np.zeros(4, np.float32)
    reference, ours = run_both(gpu_module, "scalars", 1, 1,
                               [np.float16(-1.5), True, 200, 12345, out])
    np.testing.assert_array_equal(ours[4], [-1.5, 1.0, 200.0, 12345.0])
    np.testing.assert_array_equal(ours[4], reference[4])


# ---------------------------------------------------------------------------------------------
# Loops and strided buffers

MATRIX = f'!loops.buffer<?x?xf64, strides=[?, ?], {DEV}>'
ROW_SUMS = f'''
"gpu.module"() ({{
  "gpu.func"() ({{
  ^bb0(%x: {MATRIX}, %out: !loops.buffer<?xf64, strides=[?], {DEV}>):
    %c0 = "scalar.constant"() {{value = 0 : index}} : () -> index
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %zero = "scalar.constant"() {{value = 0.0 : f64}} : () -> f64
    %t = "gpu.thread_id"() {{dimension = "x"}} : () -> index
    %b = "gpu.block_id"() {{dimension = "x"}} : () -> index
    %d = "gpu.block_dim"() {{dimension = "x"}} : () -> index
    %o = "scalar.mul"(%b, %d) : (index, index) -> index
    %i = "scalar.add"(%o, %t) : (index, index) -> index
    %n = loops.dim %x, 1 : {MATRIX}
    %sum = loops.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {{
      %v = loops.load %x[%i, %j] : {MATRIX}
      %e = "scalar.sqr"(%v) : (f64) -> f64
      %next = "scalar.add"(%acc, %e) : (f64, f64) -> f64
      loops.yield %next : f64
    }}
    loops.store %sum, %out[%i] : !loops.buffer<?xf64, strides=[?], {DEV}>
    "gpu.return"() : () -> ()
  }}) {{sym_name = "row_sums", function_type = ({MATRIX},
      !loops.buffer<?xf64, strides=[?], {DEV}>) -> (), kernel}} : () -> ()
}}) {{sym_name = "kernels"}} : () -> ()'''


@needs_ptxas
def test_loop_with_carried_value_over_strided_rows():
    gpu_module, ptx = translate_and_assemble(ROW_SUMS)
    assert ptx.kernels == {"row_sums": "PqqqqPqq"}
    code = entry(ptx.ptx, "row_sums")
    # LLVM 22 types 64-bit loads and stores as .b64, LLVM 20 as .f64.
    assert re.search(r"ld\.global\.[bf]64", code) and re.search(r"st\.global\.[bf]64", code)
    assert "bra" in code
    x = np.random.default_rng(0).normal(size=(7, 16)).T  # 16 x 7, strides (1, 7): a transpose
    out = np.zeros(32)[::2]                               # 16 elements, stride 2
    reference, ours = run_both(gpu_module, "row_sums", 2, 8, [x, out])
    np.testing.assert_array_equal(ours[1], reference[1])
    want = np.zeros(16)
    for j in range(7):  # in the loop's order
        want += x[:, j] * x[:, j]
    np.testing.assert_array_equal(ours[1], want)


# ---------------------------------------------------------------------------------------------
# Shared memory, barriers, atomics

SHARED = f'!loops.buffer<64xf32, space="shared">'
TREE_SUM = f'''
"gpu.module"() ({{
  "gpu.func"() ({{
  ^bb0(%x: !loops.buffer<?xf32, {DEV}>, %partial: !loops.buffer<?xf32, {DEV}>,
       %total: !loops.buffer<f32, {DEV}>):
    %c0 = "scalar.constant"() {{value = 0 : index}} : () -> index
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %c2 = "scalar.constant"() {{value = 2 : index}} : () -> index
    %c6 = "scalar.constant"() {{value = 6 : index}} : () -> index
    %c32 = "scalar.constant"() {{value = 32 : index}} : () -> index
    %t = "gpu.thread_id"() {{dimension = "x"}} : () -> index
    %b = "gpu.block_id"() {{dimension = "x"}} : () -> index
    %d = "gpu.block_dim"() {{dimension = "x"}} : () -> index
    %o = "scalar.mul"(%b, %d) : (index, index) -> index
    %i = "scalar.add"(%o, %t) : (index, index) -> index
    %s = "gpu.shared_alloc"() : () -> {SHARED}
    %v = loops.load %x[%i] : !loops.buffer<?xf32, {DEV}>
    loops.store %v, %s[%t] : {SHARED}
    "gpu.barrier"() : () -> ()
    %last = loops.for %k = %c0 to %c6 step %c1 iter_args(%stride = %c32) -> index {{
      // Threads below the stride add their partner's value: a loop run once or not at all.
      %active = "scalar.lt"(%t, %stride) : (index, index) -> i1
      %count = "scalar.select"(%active, %c1, %c0) : (i1, index, index) -> index
      loops.for %once = %c0 to %count step %c1 {{
        %j = "scalar.add"(%t, %stride) : (index, index) -> index
        %mine = loops.load %s[%t] : {SHARED}
        %theirs = loops.load %s[%j] : {SHARED}
        %sum = "scalar.add"(%mine, %theirs) : (f32, f32) -> f32
        loops.store %sum, %s[%t] : {SHARED}
        loops.yield
      }}
      "gpu.barrier"() : () -> ()
      %half = "scalar.floordiv"(%stride, %c2) : (index, index) -> index
      loops.yield %half : index
    }}
    %first = "scalar.eq"(%t, %c0) : (index, index) -> i1
    %writers = "scalar.select"(%first, %c1, %c0) : (i1, index, index) -> index
    loops.for %once = %c0 to %writers step %c1 {{
      %block_sum = loops.load %s[%c0] : {SHARED}
      loops.store %block_sum, %partial[%b] : !loops.buffer<?xf32, {DEV}>
      %old = "gpu.atomic_rmw"(%block_sum, %total) {{kind = "add"}}
          : (f32, !loops.buffer<f32, {DEV}>) -> f32
      loops.yield
    }}
    "gpu.return"() : () -> ()
  }}) {{sym_name = "tree_sum", function_type = (!loops.buffer<?xf32, {DEV}>,
      !loops.buffer<?xf32, {DEV}>, !loops.buffer<f32, {DEV}>) -> (), kernel}} : () -> ()
}}) {{sym_name = "kernels"}} : () -> ()'''


@needs_ptxas
def test_shared_memory_tree_reduction_with_barriers_and_an_atomic_add():
    gpu_module, ptx = translate_and_assemble(TREE_SUM)
    code = entry(ptx.ptx, "tree_sum")
    # LLVM 22 types 32-bit shared loads and stores as .b32, LLVM 20 as .f32.
    for pattern in (r"bar\.sync", r"ld\.shared\.[bf]32", r"st\.shared\.[bf]32",
                    r"atom\.global\.add\.f32", r"\.shared \.align 16 \.b8"):
        assert re.search(pattern, ptx.ptx), pattern
    # Small integers: every order of the additions gives the same sums.
    x = np.random.default_rng(1).integers(-50, 50, 3 * 64).astype(np.float32)
    partial, total = np.zeros(3, np.float32), np.zeros((), np.float32)
    reference, ours = run_both(gpu_module, "tree_sum", 3, 64, [x, partial, total])
    np.testing.assert_array_equal(ours[1], x.reshape(3, 64).sum(axis=1))
    np.testing.assert_array_equal(ours[1], reference[1])
    assert ours[2] == reference[2] == x.sum()


def _atomic_kernel(name: str, kind: str, element: str, space: str = DEV) -> str:
    """``old[i] = atomic kind(target[index[i]], values[i])``."""
    buf = f"!loops.buffer<?x{element}, {DEV}>"
    target = f"!loops.buffer<4x{element}, {space}>"
    setup = ""
    if space != DEV:  # shared: start from the device array, end with a copy back
        setup = f'''
    %shared = "gpu.shared_alloc"() : () -> {target}
    %lane = "scalar.lt"(%i, %c4) : (index, index) -> i1
    %lanes = "scalar.select"(%lane, %c1, %c0) : (i1, index, index) -> index
    loops.for %once = %c0 to %lanes step %c1 {{
      %init = loops.load %dest[%i] : !loops.buffer<4x{element}, {DEV}>
      loops.store %init, %shared[%i] : {target}
      loops.yield
    }}
    "gpu.barrier"() : () -> ()'''
    where = "%shared" if space != DEV else "%dest"
    finish = ""
    if space != DEV:
        finish = f'''
    "gpu.barrier"() : () -> ()
    loops.for %once = %c0 to %lanes step %c1 {{
      %final = loops.load %shared[%i] : {target}
      loops.store %final, %dest[%i] : !loops.buffer<4x{element}, {DEV}>
      loops.yield
    }}'''
    return f'''
  "gpu.func"() ({{
  ^bb0(%values: {buf}, %slots: !loops.buffer<?xindex, {DEV}>,
       %dest: !loops.buffer<4x{element}, {DEV}>, %old: {buf}):
    %c0 = "scalar.constant"() {{value = 0 : index}} : () -> index
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %c4 = "scalar.constant"() {{value = 4 : index}} : () -> index
    %i = "gpu.thread_id"() {{dimension = "x"}} : () -> index{setup}
    %v = loops.load %values[%i] : {buf}
    %slot = loops.load %slots[%i] : !loops.buffer<?xindex, {DEV}>
    %previous = "gpu.atomic_rmw"(%v, {where}, %slot) {{kind = "{kind}"}}
        : ({element}, {target}, index) -> {element}
    loops.store %previous, %old[%i] : {buf}{finish}
    "gpu.return"() : () -> ()
  }}) {{sym_name = "{name}", function_type = ({buf}, !loops.buffer<?xindex, {DEV}>,
      !loops.buffer<4x{element}, {DEV}>, {buf}) -> (), kernel}} : () -> ()'''


ATOMICS = [  # name, kind, element, space, an instruction the PTX must have
    ("add_i32", "add", "i32", DEV, "atom.global.add.u32"),
    ("max_i32", "max", "i32", DEV, "atom.global.max.s32"),
    ("min_ui64", "min", "ui64", DEV, "atom.global.min.u64"),
    ("max_f32", "max", "f32", DEV, "atom.<relaxed.gpu.>global.cas.b32"),
    ("min_f64", "min", "f64", DEV, "atom.<relaxed.gpu.>global.cas.b64"),
    ("add_f64", "add", "f64", DEV, "atom.global.add.f64"),
    ("exch_f32", "exch", "f32", DEV, "atom.global.exch.b32"),
    ("add_f16", "add", "f16", DEV, "atom.global.add.noftz.f16"),
    ("max_ui8", "max", "ui8", DEV, "atom.<relaxed.gpu.>global.cas.b32"),  # in its 32-bit word
    ("exch_i1", "exch", "i1", DEV, "atom.<relaxed.gpu.>global.cas.b32"),
    ("add_f32_shared", "add", "f32", 'space="shared"', "atom.shared.add.f32"),
    ("max_i64_shared", "max", "i64", 'space="shared"', "atom.shared.max.s64"),
]
ATOMICS_TEXT = ('"gpu.module"() ({'
                + "".join(_atomic_kernel(n, k, e, s) for n, k, e, s, _ in ATOMICS)
                + '\n}) {sym_name = "atomics"} : () -> ()')


@needs_ptxas
@pytest.mark.parametrize("name, kind, element, space, instruction", ATOMICS,
                         ids=[a[0] for a in ATOMICS])
def test_atomics(name, kind, element, space, instruction, atomics_module):
    gpu_module, ptx, emulated = atomics_module
    # <...>: what LLVM 22 writes and LLVM 20 leaves out (the default, relaxed at system scope,
    # includes the GPU's).
    pattern = "".join(f"(?:{re.escape(part[1:])})?" if part.startswith("<") else re.escape(part)
                      for part in re.split(r"(<[^>]*)>", instruction))
    assert re.search(pattern, entry(ptx.ptx, name)), instruction
    dtype = np.dtype({"i32": np.int32, "ui64": np.uint64, "f32": np.float32, "f64": np.float64,
                      "i64": np.int64, "f16": np.float16, "ui8": np.uint8, "i1": bool}[element])
    rng = np.random.default_rng(sum(map(ord, name)))
    values = rng.integers(0, 100, 32).astype(dtype)
    if dtype.kind == "f" and kind in ("max", "min"):
        values[[5, 17]] = [np.nan, -np.inf]  # NaN wins, whatever the order (NumPy's maximum)
    slots = rng.integers(0, 3, 32).astype(np.int64)  # slot 3 is never touched
    dest = np.arange(4).astype(dtype)
    old = np.zeros(32, dtype)
    reference, ours = run_both(gpu_module, name, 1, 32, [values, slots, dest, old],
                               emulated=emulated)
    if kind == "exch":  # the last writer of a slot depends on the order of the threads
        assert {float(v) for v in ours[2][:3]} <= {float(v) for v in values} | {0.0, 1.0, 2.0}
    else:
        np.testing.assert_array_equal(ours[2], reference[2])
    assert ours[2][3] == dest[3]  # untouched


@pytest.fixture(scope="module")
def atomics_module():
    gpu_module, ptx = translate_and_assemble(ATOMICS_TEXT)
    return gpu_module, ptx, EmulatedKernels(ptx)


# ---------------------------------------------------------------------------------------------
# Ids in three dimensions, thread-private memory, run-time checks

IDS = f'''
"gpu.module"() ({{
  "gpu.func"() ({{
  ^bb0(%out: !loops.buffer<?x?x8xindex, {DEV}>):
    %tx = "gpu.thread_id"() {{dimension = "x"}} : () -> index
    %ty = "gpu.thread_id"() {{dimension = "y"}} : () -> index
    %tz = "gpu.thread_id"() {{dimension = "z"}} : () -> index
    %bx = "gpu.block_id"() {{dimension = "x"}} : () -> index
    %by = "gpu.block_id"() {{dimension = "y"}} : () -> index
    %bz = "gpu.block_id"() {{dimension = "z"}} : () -> index
    %dy = "gpu.block_dim"() {{dimension = "y"}} : () -> index
    %gz = "gpu.grid_dim"() {{dimension = "z"}} : () -> index
    %scratch = loops.alloc() : !loops.buffer<8xindex, {DEV}>
    %c0 = "scalar.constant"() {{value = 0 : index}} : () -> index
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %c2 = "scalar.constant"() {{value = 2 : index}} : () -> index
    %c3 = "scalar.constant"() {{value = 3 : index}} : () -> index
    %c4 = "scalar.constant"() {{value = 4 : index}} : () -> index
    %c5 = "scalar.constant"() {{value = 5 : index}} : () -> index
    %c6 = "scalar.constant"() {{value = 6 : index}} : () -> index
    %c7 = "scalar.constant"() {{value = 7 : index}} : () -> index
    loops.store %tx, %scratch[%c0] : !loops.buffer<8xindex, {DEV}>
    loops.store %ty, %scratch[%c1] : !loops.buffer<8xindex, {DEV}>
    loops.store %tz, %scratch[%c2] : !loops.buffer<8xindex, {DEV}>
    loops.store %bx, %scratch[%c3] : !loops.buffer<8xindex, {DEV}>
    loops.store %by, %scratch[%c4] : !loops.buffer<8xindex, {DEV}>
    loops.store %bz, %scratch[%c5] : !loops.buffer<8xindex, {DEV}>
    loops.store %dy, %scratch[%c6] : !loops.buffer<8xindex, {DEV}>
    loops.store %gz, %scratch[%c7] : !loops.buffer<8xindex, {DEV}>
    %row = "scalar.add"(%bx, %tx) : (index, index) -> index
    %col = "scalar.add"(%by, %ty) : (index, index) -> index
    %target = loops.subview %out[%row, %col, 0] [1, 1, 8] [1, 1, 1] drop_dims [0, 1]
        : !loops.buffer<?x?x8xindex, {DEV}> -> !loops.buffer<8xindex, strides=[1], offset=?, {DEV}>
    loops.copy %scratch, %target
        : !loops.buffer<8xindex, {DEV}>, !loops.buffer<8xindex, strides=[1], offset=?, {DEV}>
    loops.dealloc %scratch : !loops.buffer<8xindex, {DEV}>
    "gpu.return"() : () -> ()
  }}) {{sym_name = "ids", function_type = (!loops.buffer<?x?x8xindex, {DEV}>) -> (),
      kernel}} : () -> ()
}}) {{sym_name = "kernels"}} : () -> ()'''


@needs_ptxas
def test_ids_views_copies_and_thread_private_memory():
    gpu_module, ptx = translate_and_assemble(IDS)
    code = entry(ptx.ptx, "ids")
    for register in ("%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                     "%ntid.y", "%nctaid.z"):
        assert register in code, register
    out = np.full((4, 4, 8), -1, np.int64)
    # Block (x, y) of threads (x, y): thread (tx, ty) of block (bx, by) writes row bx+tx, col by+ty.
    reference, ours = run_both(gpu_module, "ids", (2, 2, 1), (1, 3, 1), [out])
    np.testing.assert_array_equal(ours[0], reference[0])
    assert ours[0][1, 2].tolist() == [0, 1, 0, 1, 1, 0, 3, 1]


def test_a_failing_check_traps():
    """A window out of bounds at run time ends the kernel with ``trap`` (the launch fails)."""
    gpu_module, ptx = translate_and_assemble(IDS)
    assert "trap;" in entry(ptx.ptx, "ids")
    emulated = EmulatedKernels(ptx)
    out = np.full((2, 2, 8), -1, np.int64)
    emulated.launch("ids", (2, 2, 1), (1, 3, 1), [out])  # columns 2 and 3 do not exist
    assert len(emulated.trapped) == 6  # the threads of columns 2 and 3; the others wrote
    assert out[1, 1].tolist() == [0, 0, 0, 1, 1, 0, 3, 1]


# ---------------------------------------------------------------------------------------------
# Errors

def _single_kernel(body: str, args=(("x", f"!loops.buffer<?xf32, {DEV}>"),), attrs="kernel"):
    """A gpu.module with one gpu.func @k taking ``args`` (name, type) pairs."""
    names = ", ".join(f"%{name}: {t}" for name, t in args)
    types = ", ".join(t for _, t in args)
    return f'''
"gpu.module"() ({{
  "gpu.func"() ({{
  ^bb0({names}):
{body}
    "gpu.return"() : () -> ()
  }}) {{sym_name = "k", function_type = ({types}) -> (){", " + attrs if attrs else ""}}} : () -> ()
}}) {{sym_name = "kernels"}} : () -> ()'''


def test_functions_without_kernel_attribute_are_rejected():
    module = parse_module(_single_kernel("", attrs=""))  # the verifier would reject it too
    with pytest.raises(TranslationError, match="no kernel attribute"):
        translate_gpu_module(module)


def test_allocations_of_run_time_size_are_rejected_in_kernels():
    body = ('    %c0 = "scalar.constant"() {value = 0 : index} : () -> index\n'
            f'    %n = loops.dim %x, 0 : !loops.buffer<?xf32, {DEV}>\n'
            '    %b = loops.alloc(%n) : !loops.buffer<?xf32>')
    with pytest.raises(TranslationError, match="static shape"):
        translate_gpu_module(gpu_module_of(_single_kernel(body)))


def test_ops_kernels_do_not_support_are_rejected_naming_the_op_and_the_reason():
    body = ('    %c1 = "scalar.constant"() {value = 1 : index} : () -> index\n'
            f'    %n = loops.dim %x, 0 : !loops.buffer<?xf32, {DEV}>\n'
            f'    %s = loops.call @cblas_sasum(%n, %x, %c1) : (index, !loops.buffer<?xf32, {DEV}>, '
            'index) -> f32')
    with pytest.raises(TranslationError, match=r"GPU kernel lowering: loops.call "
                                               r"\(at <input>:7:\d+\) is not supported: "
                                               r"external functions \(BLAS, C\) cannot be called"):
        translate_gpu_module(gpu_module_of(_single_kernel(body)))


def test_unknown_arch_is_rejected():
    with pytest.raises(UnknownArchError, match="sm_52"):
        translate_gpu_module(gpu_module_of(_single_kernel("")), arch="sm_52")


def test_translate_wants_a_gpu_module():
    gpu_module = gpu_module_of(_single_kernel(""))
    with pytest.raises(TranslationError, match="gpu.module"):
        translate_gpu_module(gpu_module.lookup("k"))
    assert translate_gpu_module(gpu_module.parent_op).kernels == {"k": "Pqq"}


# ---------------------------------------------------------------------------------------------
# Fast math and architectures

FAST = _single_kernel(f'''
    %i = "gpu.thread_id"() {{dimension = "x"}} : () -> index
    %v = loops.load %x[%i] : !loops.buffer<?xf32, {DEV}>
    %w = loops.load %y[%i] : !loops.buffer<?xf64, {DEV}>
    %e = "scalar.exp"(%v) : (f32) -> f32
    %l = "scalar.log"(%e) : (f32) -> f32
    %s = "scalar.sqrt"(%l) : (f32) -> f32
    %d = "scalar.div"(%s, %v) : (f32, f32) -> f32
    %t = "scalar.tanh"(%d) : (f32) -> f32
    loops.store %t, %x[%i] : !loops.buffer<?xf32, {DEV}>
    %q = "scalar.div"(%w, %w) : (f64, f64) -> f64
    loops.store %q, %y[%i] : !loops.buffer<?xf64, {DEV}>''',
                      args=(("x", f"!loops.buffer<?xf32, {DEV}>"),
                            ("y", f"!loops.buffer<?xf64, {DEV}>")))


@needs_ptxas
def test_fast_math_uses_approximate_instructions_and_flushes_subnormals():
    _, fast = translate_and_assemble(FAST, fast_math=True)
    for instruction in ("ex2.approx.ftz.f32", "lg2.approx.ftz.f32", "sqrt.approx.ftz.f32",
                        "div.full.ftz.f32", "tanh.approx.f32", "div.rn.f64"):
        assert instruction in fast.ptx, instruction
    _, exact = translate_and_assemble(FAST)
    assert not re.search(r"\.approx|\.ftz|\.full", exact.ptx)
    assert "sqrt.rn.f32" in exact.ptx and "div.rn.f32" in exact.ptx


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90a", "sm_100", "sm_120"])
def test_architectures(arch):
    _, ptx = translate_and_assemble(TREE_SUM, arch=arch)
    major, minor = ptx_isa(arch)
    assert f".target {arch}" in ptx.ptx and f".version {major}.{minor}" in ptx.ptx


def test_default_arch_is_the_flag_without_a_gpu():
    with config.change_flags({"gpuarray.arch": "sm_86"}):
        assert default_arch() == (device_arch() or "sm_86")


TABLE = _single_kernel(f'''
    %c4 = "scalar.constant"() {{value = 4 : index}} : () -> index
    %table = "loops.constant"() {{value = dense<[1.5, 2.5, 3.5, 4.5]> : tensor<4xf32>}}
        : () -> !loops.buffer<4xf32>
    %i = "gpu.thread_id"() {{dimension = "x"}} : () -> index
    %k = "scalar.mod"(%i, %c4) : (index, index) -> index
    %v = loops.load %table[%k] : !loops.buffer<4xf32>
    loops.store %v, %x[%i] : !loops.buffer<?xf32, {DEV}>''')


@needs_ptxas
def test_constant_tables_are_global_data():
    gpu_module, ptx = translate_and_assemble(TABLE)
    assert re.search(r"\.global \.align 64 \.b8 \S+\[16\] = \{0, 0, 192, 63", ptx.ptx), ptx.ptx
    reference, ours = run_both(gpu_module, "k", 1, 8, [np.zeros(8, np.float32)])
    np.testing.assert_array_equal(ours[0], reference[0])
    np.testing.assert_array_equal(ours[0], [1.5, 2.5, 3.5, 4.5] * 2)
