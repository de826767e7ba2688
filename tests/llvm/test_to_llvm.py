"""to-llvm on loops-dialect functions: buffers, views, loops, threads, BLAS, errors and the
native ABI, compiled and called with NumPy arrays, compared with NumPy and the interpreter."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.ir.parser import parse_module
from lowering.llvm.cpu import blas, calls as lower_calls
from lowering.llvm.jit import optimized_ir
from lowering.llvm.cpu.context import TranslationError
from lowering.llvm.cpu.thread_pool import POOL_FUNCTION
from lowering.llvm.cpu.to_llvm import emit_asm, emit_llvm, translate_module

from lowering.dialects import tensor as T
from lowering.ir.types import F32, I32, TensorType

from to_llvm_testing import (CompiledCallError, bufferize, compile_loops, interpret, same_bits,
                             tensor_module)

CONSTANTS = '''
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %c2 = "scalar.constant"() {value = 2 : index} : () -> index'''

ANY = "strides=[?], offset=?"
ANY2 = "strides=[?, ?], offset=?"


def module(body: str) -> str:
    return body.replace("CONSTANTS", CONSTANTS)


def check_against_interpreter(text: str, name: str, *inputs, **options):
    compiled = compile_loops(text, **options)
    got = compiled(name, *inputs)
    want = interpret(text, name, *inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert same_bits(g, np.asarray(w)), (g, w)
    return got


# ---------------------------------------------------------------------------------------------
# Memory and loops

SCALE_ROWS = module(f'''
func.func @scale_rows(%x: !loops.buffer<?x?xf64, {ANY2}>, %w: !loops.buffer<?xf64, {ANY}>)
    -> !loops.buffer<?x?xf64> {{
  CONSTANTS
  %m = loops.dim %x, 0 : !loops.buffer<?x?xf64, {ANY2}>
  %n = loops.dim %x, 1 : !loops.buffer<?x?xf64, {ANY2}>
  %out = loops.alloc(%m, %n) : !loops.buffer<?x?xf64>
  loops.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {{
    %a = loops.load %x[%i, %j] : !loops.buffer<?x?xf64, {ANY2}>
    %b = loops.load %w[%i] : !loops.buffer<?xf64, {ANY}>
    %p = "scalar.mul"(%a, %b) : (f64, f64) -> f64
    loops.store %p, %out[%i, %j] : !loops.buffer<?x?xf64>
    loops.yield
  }}
  func.return %out : !loops.buffer<?x?xf64>
}}''')

arrays_2d = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0,
                                                    max_side=7),
                       elements=st.floats(-1e6, 1e6))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=arrays_2d, layout=st.sampled_from(["c", "f", "reversed", "step"]))
def test_strided_and_empty_inputs_match_numpy(x, layout):
    if layout == "f":
        x = np.asfortranarray(x)
    elif layout == "reversed":
        x = x[::-1, ::-1]
    elif layout == "step":
        x = np.repeat(np.repeat(x, 2, axis=0), 3, axis=1)[::2, ::3]
    w = np.linspace(-2, 2, 2 * x.shape[0])[::2]
    (out,) = compiled_scale_rows()("scale_rows", x, w)
    assert same_bits(out, x * w[:, None])


_COMPILED = {}


def compiled_scale_rows():
    if "scale_rows" not in _COMPILED:
        _COMPILED["scale_rows"] = compile_loops(SCALE_ROWS)
    return _COMPILED["scale_rows"]


def test_outputs_are_64_byte_aligned_owned_arrays():
    (out,) = compiled_scale_rows()("scale_rows", np.ones((3, 5)), np.arange(3.0))
    assert out.ctypes.data % 64 == 0 and out.flags.c_contiguous and out.base is not None
    view = out[1]
    del out
    assert view.tolist() == [1.0] * 5  # the memory lives as long as a view of it


REDUCE = module(f'''
func.func @stats(%x: !loops.buffer<?xf32, {ANY}>) -> (!loops.buffer<f32>, !loops.buffer<index>) {{
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xf32, {ANY}>
  %zero = "scalar.constant"() {{value = 0.0 : f32}} : () -> f32
  %total, %count = loops.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %k = %c0) -> (f32, index) {{
    %v = loops.load %x[%i] : !loops.buffer<?xf32, {ANY}>
    %s = "scalar.add"(%acc, %v) : (f32, f32) -> f32
    %pos = "scalar.gt"(%v, %zero) : (f32, f32) -> i1
    %k1 = "scalar.add"(%k, %c1) : (index, index) -> index
    %k2 = "scalar.select"(%pos, %k1, %k) : (i1, index, index) -> index
    loops.yield %s, %k2 : f32, index
  }}
  %t = loops.alloc() : !loops.buffer<f32>
  loops.store %total, %t[] : !loops.buffer<f32>
  %c = loops.alloc() : !loops.buffer<index>
  loops.store %count, %c[] : !loops.buffer<index>
  func.return %t, %c : !loops.buffer<f32>, !loops.buffer<index>
}}''')


@pytest.mark.parametrize("size", [0, 1, 17, 1000])
def test_for_loop_with_carried_values_matches_interpreter(size):
    x = np.random.default_rng(size).standard_normal(size).astype(np.float32)
    total, count = check_against_interpreter(REDUCE, "stats", x[::-1])
    assert int(count) == int(np.sum(x > 0))


VIEWS = module('''
func.func @views(%x: !loops.buffer<4x6xi32>, %o: index, %n: index)
    -> (!loops.buffer<?x3xi32>, !loops.buffer<6x4xi32>, !loops.buffer<3x6xi32>, !loops.buffer<2x12xi32>) {
  CONSTANTS
  %sub = loops.subview %x[%o, 5] [%n, 3] [1, -2]
      : !loops.buffer<4x6xi32> -> !loops.buffer<?x3xi32, strides=[6, -2], offset=?>
  %a = loops.alloc(%n) : !loops.buffer<?x3xi32>
  loops.copy %sub, %a : !loops.buffer<?x3xi32, strides=[6, -2], offset=?>, !loops.buffer<?x3xi32>
  %t = loops.transpose_view %x [1, 0] : !loops.buffer<4x6xi32> -> !loops.buffer<6x4xi32, strides=[1, 6]>
  %b = loops.alloc() : !loops.buffer<6x4xi32>
  loops.copy %t, %b : !loops.buffer<6x4xi32, strides=[1, 6]>, !loops.buffer<6x4xi32>
  %row = loops.subview %x[2, 0] [1, 6] [1, 1] drop_dims [0]
      : !loops.buffer<4x6xi32> -> !loops.buffer<6xi32, offset=12>
  %r2 = loops.transpose_view %row [x, 0] : !loops.buffer<6xi32, offset=12> -> !loops.buffer<1x6xi32, strides=[0, 1], offset=12>
  %wide = loops.broadcast_view %r2(%c2) : !loops.buffer<1x6xi32, strides=[0, 1], offset=12> -> !loops.buffer<?x6xi32, strides=[0, 1], offset=12>
  %c = loops.alloc() : !loops.buffer<3x6xi32>
  %seven = "scalar.constant"() {value = 7 : i32} : () -> i32
  loops.fill %seven, %c : !loops.buffer<3x6xi32>
  %top = loops.subview %c[0, 0] [%c2, 6] [1, 1] : !loops.buffer<3x6xi32> -> !loops.buffer<?x6xi32>
  loops.copy %wide, %top : !loops.buffer<?x6xi32, strides=[0, 1], offset=12>, !loops.buffer<?x6xi32>
  %flat = loops.reshape_view %x() : !loops.buffer<4x6xi32> -> !loops.buffer<2x12xi32>
  %d = loops.alloc() : !loops.buffer<2x12xi32>
  loops.copy %flat, %d : !loops.buffer<2x12xi32>, !loops.buffer<2x12xi32>
  func.return %a, %b, %c, %d : !loops.buffer<?x3xi32>, !loops.buffer<6x4xi32>, !loops.buffer<3x6xi32>, !loops.buffer<2x12xi32>
}''')


@pytest.mark.parametrize("offset,count", [(0, 4), (1, 2), (3, 1), (2, 0), (4, 0)])
def test_views_match_numpy_and_interpreter(offset, count):
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    a, b, c, d = check_against_interpreter(VIEWS, "views", x, np.int64(offset), np.int64(count))
    assert np.array_equal(a, x[offset:offset + count, 5::-2])
    assert np.array_equal(b, x.T)
    assert np.array_equal(c, np.vstack([x[2], x[2], np.full(6, 7, np.int32)]))
    assert np.array_equal(d, x.reshape(2, 12))


@pytest.mark.parametrize("offset,count", [(3, 2), (5, 0), (-1, 1)])
def test_a_window_out_of_bounds_is_an_index_error_not_a_crash(offset, count):
    compiled = _views()
    with pytest.raises(CompiledCallError) as info:
        compiled("views", np.zeros((4, 6), np.int32), np.int64(offset), np.int64(count))
    assert info.value.kind == "index" and "loops.subview" in info.value.message
    assert info.value.code < 0


def _views():
    if "views" not in _COMPILED:
        _COMPILED["views"] = compile_loops(VIEWS)
    return _COMPILED["views"]


# ---------------------------------------------------------------------------------------------
# The entry point: input checks, errors, freeing


def test_inputs_that_do_not_fit_their_types_are_rejected():
    compiled = _views()
    with pytest.raises(CompiledCallError, match=r"input 0 does not have the shape"):
        compiled("views", np.zeros((4, 5), np.int32), np.int64(0), np.int64(1))
    with pytest.raises(CompiledCallError, match=r"input 0 does not have the strides"):
        compiled("views", np.zeros((6, 4), np.int32).T, np.int64(0), np.int64(1))
    # a contiguous type accepts any stride along a size-1 dimension
    check = compile_loops(module('''
func.func @first(%x: !loops.buffer<1x3xf32>) -> !loops.buffer<f32> {
  CONSTANTS
  %v = loops.load %x[%c0, %c2] : !loops.buffer<1x3xf32>
  %out = loops.alloc() : !loops.buffer<f32>
  loops.store %v, %out[] : !loops.buffer<f32>
  func.return %out : !loops.buffer<f32>
}'''))
    column = np.arange(9, dtype=np.float32).reshape(3, 3)[:1]
    assert float(check("first", column)[0]) == 2.0


CHECKED = module('''
func.func @checked(%x: !loops.buffer<?xf64>, %limit: !loops.buffer<index>) -> (!loops.buffer<?xf64>, !loops.buffer<?xf64>) {
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xf64>
  %first = loops.alloc(%n) : !loops.buffer<?xf64>
  loops.copy %x, %first : !loops.buffer<?xf64>, !loops.buffer<?xf64>
  %scratch = loops.alloc(%n) : !loops.buffer<?xf64>
  %lim = loops.load %limit[] : !loops.buffer<index>
  %ok = "scalar.le"(%n, %lim) : (index, index) -> i1
  loops.assert %ok, "f at model.py:3: x is too long" {error_code = 7 : i64}
  loops.dealloc %scratch : !loops.buffer<?xf64>
  %second = loops.alloc(%n) : !loops.buffer<?xf64>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf64>
    %big = "scalar.lt"(%v, %v) : (f64, f64) -> i1
    %fine = "scalar.not"(%big) : (i1) -> i1
    loops.assert %fine, "f at model.py:4: never fails" {error_code = 8 : i64}
    loops.store %v, %second[%i] : !loops.buffer<?xf64>
    loops.yield
  }
  func.return %first, %second : !loops.buffer<?xf64>, !loops.buffer<?xf64>
}''')


def _allocated_bytes() -> int:
    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
            "fordblks", "keepcost")]
    mallinfo2 = ctypes.CDLL(None).mallinfo2
    mallinfo2.restype = MallInfo2
    info = mallinfo2()
    return info.hblkhd + info.uordblks


def test_a_failed_assert_returns_its_code_and_frees_everything():
    compiled = compile_loops(CHECKED)
    lowered = compiled.lowered
    assert lowered.errors[7] == ("f at model.py:3: x is too long", "<input>:13:3")
    x = np.ones(1 << 17)  # 1 MiB per buffer: allocated with mmap, counted exactly
    first, second = compiled("checked", x, np.int64(1 << 20))
    assert np.array_equal(first, x) and np.array_equal(second, x)
    del first, second
    before = _allocated_bytes()
    for _ in range(20):
        with pytest.raises(CompiledCallError, match="x is too long") as info:
            compiled("checked", x, np.int64(10))
        assert info.value.code == 7
    assert _allocated_bytes() - before < (1 << 20)


def test_the_same_code_for_two_messages_is_a_translation_error():
    text = module('''
func.func @f(%x: !loops.buffer<i1>) -> !loops.buffer<i1> {
  %v = loops.load %x[] : !loops.buffer<i1>
  loops.assert %v, "one" {error_code = 3 : i64}
  loops.assert %v, "two" {error_code = 3 : i64}
  %out = loops.alloc() : !loops.buffer<i1>
  loops.store %v, %out[] : !loops.buffer<i1>
  func.return %out : !loops.buffer<i1>
}''')
    with pytest.raises(TranslationError, match="error_code 3 is used for two different messages"):
        translate_module(parse_module(text))


CALLS = module('''
func.func @inner(%x: !loops.buffer<?xf32>, %s: f32) -> (!loops.buffer<?xf32>, i1) {
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %ok = "scalar.lt"(%n, %c2) : (index, index) -> i1
  loops.assert %ok, "inner: too long" {error_code = 5 : i64}
  %out = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.for %i = %c0 to %n step %c1 {
    %v = loops.load %x[%i] : !loops.buffer<?xf32>
    %w = "scalar.mul"(%v, %s) : (f32, f32) -> f32
    loops.store %w, %out[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  %pos = "scalar.gt"(%s, %s) : (f32, f32) -> i1
  func.return %out, %pos : !loops.buffer<?xf32>, i1
}
func.func @outer(%x: !loops.buffer<?xf32>, %s: f32) -> (!loops.buffer<?xf32>, i1) {
  %tmp = loops.alloc() : !loops.buffer<8xf32>
  %a, %flag = "func.call"(%x, %s) {callee = "inner"} : (!loops.buffer<?xf32>, f32) -> (!loops.buffer<?xf32>, i1)
  loops.dealloc %tmp : !loops.buffer<8xf32>
  func.return %a, %flag : !loops.buffer<?xf32>, i1
}''')


def test_calls_scalar_arguments_and_results_and_errors_from_callees():
    compiled = compile_loops(CALLS)
    out, flag = compiled("outer", np.array([1.5], np.float32), np.float32(2.0))
    assert out.tolist() == [3.0] and flag.dtype == np.bool_ and flag.shape == () and not flag
    signature = compiled.lowered.signatures["outer"]
    assert [(i.rank, str(i.element)) for i in signature.outputs] == [(1, "f32"), (0, "i1")]
    with pytest.raises(CompiledCallError, match="inner: too long"):
        compiled("outer", np.zeros(3, np.float32), np.float32(1.0))


def test_returning_a_view_or_an_argument_is_a_translation_error():
    text = module('''
func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
  func.return %x : !loops.buffer<?xf32>
}''')
    with pytest.raises(TranslationError, match="must be a buffer made by loops.alloc"):
        translate_module(parse_module(text))


def test_what_cannot_be_translated_is_named_with_its_location():
    tensors = '''
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}'''
    with pytest.raises(TranslationError, match=r"func.func at <input>:2:1: @f takes or returns "
                                               r"tensor<\?xf32>.*bufferize"):
        translate_module(parse_module(tensors))
    device = '''
func.func @g() -> !loops.buffer<4xf32> {
  %b = loops.alloc() : !loops.buffer<4xf32, space="device">
  %h = loops.alloc() : !loops.buffer<4xf32>
  func.return %h : !loops.buffer<4xf32>
}'''
    with pytest.raises(TranslationError, match=r"loops.alloc at <input>:3:\d+: .*host memory only"):
        translate_module(parse_module(device))
    unknown = '''
func.func @h(%x: f32) -> f32 {
  %y = "tensor.exp"(%x) : (f32) -> f32
  func.return %y : f32
}'''
    with pytest.raises(TranslationError, match=r"CPU lowering: no rule for tensor.exp "
                                               r"\(at <input>:3:\d+\); only loops, scalar"):
        translate_module(parse_module(unknown))


# ---------------------------------------------------------------------------------------------
# Threads

PARALLEL = module(f'''
func.func @rows(%x: !loops.buffer<?x?xf32, {ANY2}>) -> (!loops.buffer<?xf32>, !loops.buffer<?x?xf32>) {{
  CONSTANTS
  %m = loops.dim %x, 0 : !loops.buffer<?x?xf32, {ANY2}>
  %n = loops.dim %x, 1 : !loops.buffer<?x?xf32, {ANY2}>
  %sums = loops.alloc(%m) : !loops.buffer<?xf32>
  %e = loops.alloc(%m, %n) : !loops.buffer<?x?xf32>
  %zero = "scalar.constant"() {{value = 0.0 : f32}} : () -> f32
  loops.parallel (%i) = (%c0) to (%m) step (%c1) {{
    %row = loops.alloc(%n) : !loops.buffer<?xf32>
    %s = loops.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {{
      %v = loops.load %x[%i, %j] : !loops.buffer<?x?xf32, {ANY2}>
      %ev = "scalar.exp"(%v) : (f32) -> f32
      loops.store %ev, %row[%j] : !loops.buffer<?xf32>
      %next = "scalar.add"(%acc, %v) : (f32, f32) -> f32
      loops.yield %next : f32
    }}
    loops.parallel (%k) = (%c0) to (%n) step (%c1) {{
      %r = loops.load %row[%k] : !loops.buffer<?xf32>
      loops.store %r, %e[%i, %k] : !loops.buffer<?x?xf32>
      loops.yield
    }}
    loops.dealloc %row : !loops.buffer<?xf32>
    loops.store %s, %sums[%i] : !loops.buffer<?xf32>
    loops.yield
  }}
  func.return %sums, %e : !loops.buffer<?xf32>, !loops.buffer<?x?xf32>
}}''')


@pytest.mark.parametrize("shape", [(0, 3), (1, 5), (7, 3), (64, 33)])
def test_threaded_parallel_loops_give_identical_results(shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)[:, ::-1]
    sequential = compile_loops(PARALLEL, num_threads=1)("rows", x)
    threaded_compiled = compile_loops(PARALLEL, num_threads=4, parallel_threshold=1)
    assert POOL_FUNCTION in threaded_compiled.lowered.llvm_ir
    assert POOL_FUNCTION in threaded_compiled.lowered.symbols
    for _ in range(3):
        threaded = threaded_compiled("rows", x)
        for a, b in zip(sequential, threaded):
            assert same_bits(a, b)
    sums, e = interpret(PARALLEL, "rows", x)
    assert same_bits(sequential[0], sums)
    np.testing.assert_allclose(sequential[1], e, rtol=3e-7)  # exp: within the library's ulps


STEPS = module('''
func.func @steps(%x: !loops.buffer<?xf64>, %t: index) -> !loops.buffer<?xf64> {
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xf64>
  %out = loops.alloc(%n) : !loops.buffer<?xf64>
  loops.copy %x, %out : !loops.buffer<?xf64>, !loops.buffer<?xf64>
  %table = "loops.constant"() {value = dense<[0.5, 0.25, 2.0]> : tensor<3xf64>} : () -> !loops.buffer<3xf64>
  %again = "loops.constant"() {value = dense<[0.5, 0.25, 2.0]> : tensor<3xf64>} : () -> !loops.buffer<3xf64>
  loops.for %k = %c0 to %t step %c1 {
    %slot = "scalar.mod"(%k, %c2) : (index, index) -> index
    %scale = loops.load %table[%slot] : !loops.buffer<3xf64>
    %bias = loops.load %again[%c2] : !loops.buffer<3xf64>
    loops.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = loops.load %out[%i] : !loops.buffer<?xf64>
      %kf = "scalar.cast"(%k) : (index) -> f64
      %w = "scalar.mul"(%v, %scale) : (f64, f64) -> f64
      %u = "scalar.add"(%w, %kf) : (f64, f64) -> f64
      %z = "scalar.add"(%u, %bias) : (f64, f64) -> f64
      loops.store %z, %out[%i] : !loops.buffer<?xf64>
      loops.yield
    }
    loops.yield
  }
  func.return %out : !loops.buffer<?xf64>
}''')


def test_parallel_loops_inside_sequential_loops_and_constants():
    x = np.linspace(-3, 3, 5001)
    threaded = compile_loops(STEPS, num_threads=4, parallel_threshold=1)
    (got,) = threaded("steps", x, np.int64(5))
    (want,) = interpret(STEPS, "steps", x, np.int64(5))
    assert same_bits(got, want)
    ir_text = threaded.lowered.llvm_ir
    assert len([line for line in ir_text.splitlines() if line.startswith('@"lowering.constant')]) == 1
    with pytest.raises(TranslationError, match="not a view, a constant or an argument"):
        translate_module(parse_module(STEPS.replace(
            "  func.return %out", "  loops.dealloc %table : !loops.buffer<3xf64>\n  func.return %out")))


PINGPONG = module('''
func.func @pingpong(%x: !loops.buffer<?xf64>, %t: index) -> !loops.buffer<?xf64> {
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xf64>
  %a = loops.alloc(%n) : !loops.buffer<?xf64>
  %b = loops.alloc(%n) : !loops.buffer<?xf64>
  loops.copy %x, %a : !loops.buffer<?xf64>, !loops.buffer<?xf64>
  %p, %q = loops.for %k = %c0 to %t step %c1 iter_args(%src = %a, %dst = %b)
      -> (!loops.buffer<?xf64>, !loops.buffer<?xf64>) {
    loops.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = loops.load %src[%i] : !loops.buffer<?xf64>
      %w = "scalar.add"(%v, %v) : (f64, f64) -> f64
      loops.store %w, %dst[%i] : !loops.buffer<?xf64>
      loops.yield
    }
    loops.yield %dst, %src : !loops.buffer<?xf64>, !loops.buffer<?xf64>
  }
  loops.dealloc %q : !loops.buffer<?xf64>
  %out = loops.alloc(%n) : !loops.buffer<?xf64>
  loops.copy %p, %out : !loops.buffer<?xf64>, !loops.buffer<?xf64>
  loops.dealloc %p : !loops.buffer<?xf64>
  %small = "scalar.lt"(%t, %c2) : (index, index) -> i1
  loops.assert %small, "pingpong: too many steps" {error_code = 4 : i64}
  func.return %out : !loops.buffer<?xf64>
}''')


@pytest.mark.parametrize("threads", [1, 3])
def test_loop_carried_buffers_and_freeing_them_through_the_loop(threads):
    compiled = compile_loops(PINGPONG, num_threads=threads, parallel_threshold=1)
    x = np.arange(7.0)
    (got,) = compiled("pingpong", x, np.int64(1))
    assert same_bits(got, interpret(PINGPONG, "pingpong", x, np.int64(1))[0])
    for _ in range(5):  # a and b were freed through p and q: the failure must not free them
        with pytest.raises(CompiledCallError, match="too many steps"):
            compiled("pingpong", x, np.int64(3))


def test_a_failing_check_inside_threads_returns_its_code():
    text = module('''
func.func @f(%x: !loops.buffer<?xi64>) -> !loops.buffer<?xi64> {
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xi64>
  %out = loops.alloc(%n) : !loops.buffer<?xi64>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xi64>
    %tmp = loops.alloc(%c2) : !loops.buffer<?xi64>
    %zero = "scalar.constant"() {value = 0 : i64} : () -> i64
    %ok = "scalar.ge"(%v, %zero) : (i64, i64) -> i1
    loops.assert %ok, "f: negative value" {error_code = 9 : i64, kind = "value"}
    loops.dealloc %tmp : !loops.buffer<?xi64>
    loops.store %v, %out[%i] : !loops.buffer<?xi64>
    loops.yield
  }
  func.return %out : !loops.buffer<?xi64>
}''')
    compiled = compile_loops(text, num_threads=3, parallel_threshold=1)
    x = np.arange(1000, dtype=np.int64)
    assert np.array_equal(compiled("f", x)[0], x)
    x[[17, 900]] = -1

    def failing_calls(count: int) -> None:
        for _ in range(count):
            with pytest.raises(CompiledCallError, match="negative value") as info:
                compiled("f", x)
            assert info.value.code == 9

    failing_calls(10)  # what the first failures allocate once (error texts, Python's caches)
    before = _allocated_bytes()
    failing_calls(200)
    # A leak grows with the calls: the output (8000 bytes) or one thread's buffer (16 bytes and
    # malloc's header) left behind by each call adds more than 64 bytes a call; Python's own
    # allocations around the calls add a few KiB whatever their number.
    assert _allocated_bytes() - before < 200 * 64


# ---------------------------------------------------------------------------------------------
# Bufferized tensor functions


def _dense_softmax(x, w, b):
    return [T.SoftmaxOp.build(T.AddOp.build(T.DotOp.build(x, w).result, b).result).result]


def _reductions(x):
    e = T.ExpOp.build(x).result
    return [T.SumOp.build(e, axes=[0]).result, T.MaxOp.build(x, axes=[1]).result,
            T.ArgMaxOp.build(x, axes=[1]).result]


def _integers(a, b):
    q = T.FloorDivOp.build(a, b).result
    return [T.ModOp.build(a, b).result, T.CastOp.build(q, F32).result]


TENSOR_PROGRAMS = {
    "dense_softmax": ([TensorType((None, 5), F32), TensorType((5, 3), F32),
                       TensorType((1, 3), F32)], _dense_softmax),
    "reductions": ([TensorType((None, None), F32)], _reductions),
    "integers": ([TensorType((None, 4), I32), TensorType((1, 4), I32)], _integers),
}


def _tensor_inputs(name, rows):
    rng = np.random.default_rng(rows)
    if name == "dense_softmax":
        return [rng.standard_normal((rows, 5)).astype(np.float32),
                rng.standard_normal((5, 3)).astype(np.float32),
                rng.standard_normal((1, 3)).astype(np.float32)]
    if name == "reductions":
        return [rng.standard_normal((rows, 6)).astype(np.float32)[:, ::-1]]
    return [rng.integers(-50, 50, (rows, 4)).astype(np.int32),
            np.array([[3, -3, 0, 7]], np.int32)]


@pytest.mark.parametrize("name", sorted(TENSOR_PROGRAMS))
@pytest.mark.parametrize("threads", [1, 2])
def test_bufferized_tensor_functions_match_the_interpreter(name, threads):
    tensors = tensor_module(*TENSOR_PROGRAMS[name])
    loops = bufferize(tensors, use_blas=blas.blas_available())
    compiled = compile_loops(loops, num_threads=threads, parallel_threshold=1)
    for rows in (1, 4, 33):
        inputs = _tensor_inputs(name, rows)
        got = compiled("f", *inputs)
        want = interpret(tensors, "f", *inputs)
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape
            if g.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
            else:
                assert np.array_equal(g, w)


def test_bufferized_shape_checks_become_errors_naming_the_op():
    vector = TensorType((None,), F32)
    tensors = tensor_module([vector, vector], lambda a, b: [T.AddOp.build(a, b).result])
    compiled = compile_loops(bufferize(tensors))
    assert compiled("f", np.ones(3, np.float32), np.ones(3, np.float32))[0].tolist() == [2.0] * 3
    with pytest.raises(CompiledCallError) as info:
        compiled("f", np.ones(3, np.float32), np.ones(4, np.float32))
    assert info.value.code > 0 and info.value.kind == "value"
    assert "tensor.add" in info.value.message and "test_to_llvm.py" in info.value.message
    # static sizes of the types are checked by the entry itself
    static = compile_loops(bufferize(tensor_module(*TENSOR_PROGRAMS["dense_softmax"])))
    x, w, b = _tensor_inputs("dense_softmax", 2)
    with pytest.raises(CompiledCallError, match="input 0 does not have the shape") as info:
        static("f", x[:, :4].copy(), w, b)
    assert info.value.code < 0


# ---------------------------------------------------------------------------------------------
# BLAS

GEMM = module('''
func.func @gemm(%a: !loops.buffer<?x?xT>, %b: !loops.buffer<?x?xT, strides=[1, ?]>) -> !loops.buffer<?x?xT> {
  CONSTANTS
  %m = loops.dim %a, 0 : !loops.buffer<?x?xT>
  %k = loops.dim %a, 1 : !loops.buffer<?x?xT>
  %n = loops.dim %b, 1 : !loops.buffer<?x?xT, strides=[1, ?]>
  %ldb = loops.dim %b, 0 : !loops.buffer<?x?xT, strides=[1, ?]>
  %c = loops.alloc(%m, %n) : !loops.buffer<?x?xT>
  %one = "scalar.constant"() {value = 1.0 : T} : () -> T
  %zero = "scalar.constant"() {value = 0.0 : T} : () -> T
  %rowmajor = "scalar.constant"() {value = 101 : index} : () -> index
  %no = "scalar.constant"() {value = 111 : index} : () -> index
  %yes = "scalar.constant"() {value = 112 : index} : () -> index
  %lda = "scalar.maximum"(%k, %c1) : (index, index) -> index
  %ldbt = "scalar.maximum"(%ldb, %c1) : (index, index) -> index
  %ldc = "scalar.maximum"(%n, %c1) : (index, index) -> index
  loops.call @cblas_Xgemm(%rowmajor, %no, %yes, %m, %n, %k, %one, %a, %lda, %b, %ldbt, %zero, %c, %ldc)
    : (index, index, index, index, index, index, T, !loops.buffer<?x?xT>, index,
       !loops.buffer<?x?xT, strides=[1, ?]>, index, T, !loops.buffer<?x?xT>, index) -> ()
  func.return %c : !loops.buffer<?x?xT>
}
func.func @dot(%x: !loops.buffer<?xT>, %y: !loops.buffer<?xT>) -> !loops.buffer<T> {
  CONSTANTS
  %n = loops.dim %y, 0 : !loops.buffer<?xT>
  %d = loops.call @cblas_Xdot(%n, %x, %c2, %y, %c1) : (index, !loops.buffer<?xT>, index, !loops.buffer<?xT>, index) -> T
  %out = loops.alloc() : !loops.buffer<T>
  loops.store %d, %out[] : !loops.buffer<T>
  func.return %out : !loops.buffer<T>
}''')


def _gemm_module(dtype: str) -> str:
    t, x = {"float32": ("f32", "s"), "float64": ("f64", "d")}[dtype]
    return GEMM.replace("xT", "x" + t).replace(": T", ": " + t).replace("T,", t + ",") \
        .replace("-> T", "-> " + t).replace("cblas_X", "cblas_" + x).replace("<T>", f"<{t}>") \
        .replace("(T", f"({t}")


@pytest.mark.skipif(not blas.blas_available(), reason="no BLAS next to NumPy")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blas_calls_match_numpy(dtype):
    compiled = compile_loops(_gemm_module(dtype))
    symbols = compiled.lowered.symbols
    assert any(s.startswith(("scipy_cblas", "cblas")) for s in symbols)
    rng = np.random.default_rng(0)
    for m, k, n in [(3, 4, 5), (1, 1, 1), (0, 3, 2), (17, 0, 4), (64, 31, 9)]:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = np.asfortranarray(rng.standard_normal((k, n)).astype(dtype))
        (c,) = compiled("gemm", a, b)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    x = rng.standard_normal(40).astype(dtype)
    (d,) = compiled("dot", x, x[1::2].copy())  # x read with increment 2
    np.testing.assert_allclose(d, np.dot(x[::2], x[1::2]), rtol=1e-5)


def test_blas_calls_without_a_blas_are_a_clear_translation_error(monkeypatch):
    monkeypatch.setattr(lower_calls, "find_blas", lambda: None)
    with pytest.raises(TranslationError, match="no BLAS library was found"):
        translate_module(parse_module(_gemm_module("float32")))


# ---------------------------------------------------------------------------------------------
# Code quality and emitters

EXP = module('''
func.func @exp(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
  CONSTANTS
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %out = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf32>
    %e = "scalar.exp"(%v) : (f32) -> f32
    loops.store %e, %out[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  func.return %out : !loops.buffer<?xf32>
}''')


@pytest.mark.parametrize("threads", [1, 2])
def test_an_elementwise_exp_loop_vectorizes(threads):
    text = translate_module(parse_module(EXP), num_threads=threads).llvm_ir
    optimized = optimized_ir(text)
    assert "<8 x float>" in optimized or "<16 x float>" in optimized
    assert "llvm.loop.parallel_accesses" in text


def test_emitters_give_llvm_ir_and_assembly():
    m = parse_module(EXP)
    assert 'define i32 @"exp_entry"(i8** ' in emit_llvm(m)
    assert "exp_entry:" in emit_asm(m)
