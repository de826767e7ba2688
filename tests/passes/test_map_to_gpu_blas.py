"""``map-to-gpu`` on CBLAS calls with device buffers: ``cblas_?gemm`` as shared-memory tiles,
``cblas_?gemv`` as a block per row, ``cblas_?dot`` as a reduction to one value; with alpha and
beta, both orders, transposed operands (flags known only at run time too), leading dimensions
wider than the matrices, matrices passed as they are or transposed, and the run-time check of
layouts a kernel cannot read. The interpreter's reference CBLAS before the pass is the oracle,
and NumPy too."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.loops import RuntimeCheckError

from .map_to_gpu_helpers import device_loops, kernel_ops, launches, mapped, module_of, \
    same_results

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ANY = "strides=[?, ?], offset=?, space=\"device\""
VEC = "strides=[?], offset=?, space=\"device\""
ROW_MAJOR, COL_MAJOR, NO_TRANS, TRANS = 101, 102, 111, 112

GEMM = f'''
func.func @f(%a: !loops.buffer<?x?xT, {ANY}>, %b: !loops.buffer<?x?xT, {ANY}>,
             %c: !loops.buffer<?x?xT, {ANY}>, %order: index, %ta: index, %tb: index,
             %m: index, %n: index, %k: index, %alpha: T, %lda: index, %ldb: index, %beta: T,
             %ldc: index) {{
  loops.call @cblas_Pgemm(%order, %ta, %tb, %m, %n, %k, %alpha, %a, %lda, %b, %ldb, %beta, %c, %ldc)
      : (index, index, index, index, index, index, T, !loops.buffer<?x?xT, {ANY}>, index,
         !loops.buffer<?x?xT, {ANY}>, index, T, !loops.buffer<?x?xT, {ANY}>, index) -> ()
  func.return
}}
'''

GEMV = f'''
func.func @f(%a: !loops.buffer<?x?xT, {ANY}>, %x: !loops.buffer<?xT, {VEC}>,
             %y: !loops.buffer<?xT, {VEC}>, %order: index, %trans: index, %m: index, %n: index,
             %alpha: T, %lda: index, %incx: index, %beta: T, %incy: index) {{
  loops.call @cblas_Pgemv(%order, %trans, %m, %n, %alpha, %a, %lda, %x, %incx, %beta, %y, %incy)
      : (index, index, index, index, T, !loops.buffer<?x?xT, {ANY}>, index,
         !loops.buffer<?xT, {VEC}>, index, T, !loops.buffer<?xT, {VEC}>, index) -> ()
  func.return
}}
'''

DOT = f'''
func.func @f(%x: !loops.buffer<?xT, {VEC}>, %y: !loops.buffer<?xT, {VEC}>, %n: index,
             %incx: index, %incy: index) -> T {{
  %d = loops.call @cblas_Pdot(%n, %x, %incx, %y, %incy)
      : (index, !loops.buffer<?xT, {VEC}>, index, !loops.buffer<?xT, {VEC}>, index) -> T
  func.return %d : T
}}
'''


def typed(text: str, dtype) -> str:
    element, prefix = ("f32", "s") if np.dtype(dtype) == np.float32 else ("f64", "d")
    return text.replace("xT", "x" + element).replace(": T", ": " + element) \
        .replace("T,", element + ",").replace("-> T", "-> " + element) \
        .replace("@cblas_P", "@cblas_" + prefix)


def stored(matrix: np.ndarray, order: int, extra: int, flipped: bool):
    """A buffer holding ``matrix`` for a call with ``order`` and a leading dimension ``extra``
    elements wider than needed: the stored rows as they are (``strides = [ld, 1]``) or,
    ``flipped``, their transpose (``[1, ld]``). Returns the buffer, ld and the matrix as a
    view of the buffer's memory."""
    rows_major = matrix if order == ROW_MAJOR else matrix.T
    rows, cols = rows_major.shape
    ld = max(cols, 1) + extra
    memory = np.full((rows, ld), np.nan, matrix.dtype)
    memory[:, :cols] = rows_major
    view = memory[:, :cols]
    return (view.T if flipped else view), ld, (view if order == ROW_MAJOR else view.T)


def run_fresh(module, make):
    """Results and the arrays after, on arrays ``make()`` builds afresh (with their layout)."""
    args = make()
    results = run_function(module.functions[0], args)
    return [np.asarray(r) for r in results], args


@SETTINGS
@given(m=st.integers(0, 5), n=st.integers(0, 5), k=st.integers(0, 5),
       order=st.sampled_from([ROW_MAJOR, COL_MAJOR]), ta=st.sampled_from([NO_TRANS, TRANS]),
       tb=st.sampled_from([NO_TRANS, TRANS]), flips=st.tuples(*[st.booleans()] * 3),
       extra=st.integers(0, 2), beta=st.sampled_from([0.0, 1.0, -0.5]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2 ** 16))
def test_gemm_matches_the_reference_and_numpy(m, n, k, order, ta, tb, flips, extra, beta,
                                              dtype, seed):
    module = module_of(typed(GEMM, dtype))
    after = mapped(module, "map-to-gpu{block-size=16 max-blocks=2 tile-size=2}")
    (launch,) = [k_ for k_ in launches(after) if k_.get_attr("kernel_name") == "gemm"]
    assert kernel_ops(launch).count("gpu.shared_alloc") == 2
    rng = np.random.default_rng(seed)
    op_a = rng.standard_normal((m, k)).astype(dtype)
    op_b = rng.standard_normal((k, n)).astype(dtype)
    c0 = rng.standard_normal((m, n)).astype(dtype)
    alpha = dtype(1.5)

    def make():
        a, lda, _ = stored(op_a if ta == NO_TRANS else op_a.T.copy(), order, extra, flips[0])
        b, ldb, _ = stored(op_b if tb == NO_TRANS else op_b.T.copy(), order, extra, flips[1])
        c, ldc, logical = stored(c0, order, extra, flips[2])
        if beta == 0:
            c[...] = np.nan  # not read when beta is 0
        outputs.append(logical)
        return [a, b, c, order, ta, tb, m, n, k, alpha, lda, ldb, dtype(beta), ldc]

    outputs = []
    run_fresh(module, make)
    run_fresh(after, make)
    before, got = outputs
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, before, rtol=tolerance, atol=tolerance)
    want = alpha * (op_a @ op_b) + (dtype(beta) * c0 if beta else 0)
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@SETTINGS
@given(m=st.integers(0, 6), n=st.integers(0, 6), order=st.sampled_from([ROW_MAJOR, COL_MAJOR]),
       trans=st.sampled_from([NO_TRANS, TRANS]), flipped=st.booleans(),
       incs=st.tuples(st.integers(1, 3), st.integers(1, 3)), beta=st.sampled_from([0.0, 2.0]),
       seed=st.integers(0, 2 ** 16))
def test_gemv_matches_the_reference_and_numpy(m, n, order, trans, flipped, incs, beta, seed):
    module = module_of(typed(GEMV, np.float32))
    after = mapped(module, "map-to-gpu{block-size=8 max-blocks=2}")
    (launch,) = [k for k in launches(after) if k.get_attr("kernel_name") == "gemv"]
    assert "gpu.barrier" in kernel_ops(launch)  # one block per row, a tree reduction
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((m, n)).astype(np.float32)
    op = matrix if trans == NO_TRANS else matrix.T
    x0 = rng.standard_normal(op.shape[1]).astype(np.float32)
    y0 = rng.standard_normal(op.shape[0]).astype(np.float32)
    alpha = np.float32(-2.0)

    def make():
        a, lda, _ = stored(matrix, order, 1, flipped)
        x = np.zeros(max(len(x0), 1) * incs[0], np.float32)[::incs[0]][:len(x0)]
        x[...] = x0
        y = np.zeros(max(len(y0), 1) * incs[1], np.float32)[::incs[1]][:len(y0)]
        y[...] = np.nan if beta == 0 else y0
        return [a, x, y, order, trans, m, n, alpha, lda, incs[0], np.float32(beta), incs[1]]

    _, before = run_fresh(module, make)
    _, got = run_fresh(after, make)
    np.testing.assert_allclose(got[2], before[2], rtol=1e-5, atol=1e-5)
    want = alpha * (op @ x0) + (np.float32(beta) * y0 if beta else 0)
    np.testing.assert_allclose(got[2], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, inc", [(0, 1), (1, 3), (37, 1), (20, 2)])
def test_dot_is_a_reduction_to_a_value_read_back_by_the_host(n, inc):
    module = module_of(typed(DOT, np.float64))
    after = mapped(module, "map-to-gpu{block-size=8 max-blocks=3}")
    assert [k.get_attr("kernel_name") for k in launches(after)] == ["init", "dot"]
    rng = np.random.default_rng(n)
    x0, y0 = rng.standard_normal(n), rng.standard_normal(n)

    def make():
        x = np.zeros(max(n, 1) * inc)[::inc][:n]
        x[...] = x0
        return [x, y0.copy(), n, inc, 1]

    (want,), _ = run_fresh(module, make)
    (got,), _ = run_fresh(after, make)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, np.dot(x0, y0), rtol=1e-12, atol=1e-12)


def test_a_buffer_not_lying_the_way_the_call_walks_it_stops_the_call():
    module = module_of(typed(GEMV, np.float32))
    after = mapped(module)
    a = np.ones((3, 4), np.float32)
    x, y = np.ones(4, np.float32), np.zeros(3, np.float32)
    # lda 5 for a matrix whose rows are 4 apart: BLAS would read other elements.
    args = [a, x, y, ROW_MAJOR, NO_TRANS, 3, 4, np.float32(1), 5, 1, np.float32(0), 1]
    with pytest.raises(RuntimeCheckError, match=r"cblas_sgemv .* does not lie in device memory"):
        run_function(after.functions[0], args)
    args[8] = 4
    run_function(after.functions[0], args)
    np.testing.assert_array_equal(y, [4, 4, 4])


PRODUCTS = '''
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>, %v: tensor<?xf32>,
             %w: tensor<?xf32>, %alpha: tensor<f32>, %beta: tensor<f32>)
    -> (tensor<?x?xf32>, tensor<?xf32>, tensor<f32>)
    attributes {lowering.arg_devices = ["cuda", "cuda", "cuda", "cuda", "cuda", "cpu", "cpu"]} {
  %bt = "tensor.dimshuffle"(%b) {pattern = [1, 0]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %g = "tensor.gemm"(%c, %alpha, %a, %bt, %beta)
      : (tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %at = "tensor.dimshuffle"(%a) {pattern = [1, 0]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %mv = "tensor.gemv"(%w, %alpha, %at, %v, %beta)
      : (tensor<?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %d = "tensor.dot"(%v, %v) : (tensor<?xf32>, tensor<?xf32>) -> tensor<f32>
  func.return %g, %mv, %d : tensor<?x?xf32>, tensor<?xf32>, tensor<f32>
}
'''


@pytest.mark.parametrize("bufferize", ["bufferize{use-blas blas-min-work=0}", "bufferize"])
def test_products_placed_on_the_device_match_numpy(bufferize):
    module = device_loops(PRODUCTS, bufferize=bufferize)
    after = mapped(module, "map-to-gpu{block-size=16 max-blocks=2 tile-size=4}")
    names = {k.get_attr("kernel_name") for k in launches(after)}
    if "use-blas" in bufferize:
        assert {"gemm", "gemv"} <= names
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal((6, 3)).astype(np.float32)
    c = rng.standard_normal((5, 6)).astype(np.float32)
    v = rng.standard_normal(5).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    alpha, beta = np.array(0.5, np.float32), np.array(-1.0, np.float32)
    g, mv, d = same_results(module, after, [a, b, c, v, w, alpha, beta], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g, 0.5 * a @ b.T - c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mv, 0.5 * a.T @ v - w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d, v @ v, rtol=1e-5)
