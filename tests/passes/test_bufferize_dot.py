"""bufferize of ``tensor.dot``: the four shape combinations as loop nests and as CBLAS calls,
the contraction-size check and the choice between the two."""
from __future__ import annotations

import re

import numpy as np
import pytest

from lowering.dialects import loops
from lowering.dialects import tensor as T
from lowering.dialects.loops import RuntimeCheckError
from lowering.ir.types import F16, F32, F64, I8, I32, UI16, TensorType

from .bufferize_graphs import bufferized, check_graph, function_module, run

SHAPES = {(1, 1): ((5,), (5,)), (2, 1): ((3, 5), (5,)), (1, 2): ((5,), (5, 4)),
          (2, 2): ((3, 5), (5, 4))}


def operands(element, ranks, strided=True):
    rng = np.random.default_rng(3)
    shapes = SHAPES[ranks]
    arrays = []
    for shape in shapes:
        values = rng.integers(-20, 20, size=shape)
        if element.is_float:
            values = values / 4
        array = np.asarray(values, dtype=element.dtype)
        if strided and array.ndim == 2:
            array = np.asfortranarray(array)[:, :]
        elif strided:
            array = np.repeat(array, 2)[::2]
        arrays.append(array)
    types = [TensorType((None,) * len(s), element) for s in shapes]
    return types, arrays


@pytest.mark.parametrize("ranks", list(SHAPES))
@pytest.mark.parametrize("element", [F16, F32, F64, I8, I32, UI16], ids=str)
def test_loop_nests_match_numpy(element, ranks):
    types, arrays = operands(element, ranks)
    tolerance = 1e-2 if element == F16 else 1e-5 if element.is_float else None
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         tolerance=tolerance)
    assert not any(isinstance(op, loops.CallOp) for op in module.walk())


@pytest.mark.parametrize("ranks, callee", [((1, 1), "cblas_ddot"), ((2, 1), "cblas_dgemv"),
                                           ((1, 2), "cblas_dgemv"), ((2, 2), "cblas_dgemm")])
def test_blas_calls_take_the_arguments_themselves_where_their_layout_allows(ranks, callee):
    types, arrays = operands(F64, ranks)
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         tolerance=1e-12, use_blas=True)
    calls = [op for op in module.walk() if isinstance(op, loops.CallOp)]
    assert {c.callee for c in calls} == {callee}
    # One call per combination of layouts: an argument as it lies in memory (by rows or by
    # columns, any leading dimension or increment) or its contiguous copy.
    args = set(module.functions[0].args)
    given = [[v for v in (c.args if callee.endswith("dot") else c.args[:-2])
              if isinstance(v.type, loops.BufferType)] for c in calls]
    assert any(all(v in args for v in buffers) for buffers in given)
    assert len(calls) == 4 and any(isinstance(op, loops.StrideOp) for op in module.walk())


def layout(array, how):
    """``array`` laid out in memory as ``how`` says, with the same values."""
    if how == "C":
        return np.ascontiguousarray(array)
    if how == "F":
        return np.asfortranarray(array)
    if how == "gaps":  # rows of a bigger matrix, every other column
        big = np.zeros(array.shape[:-1] + (2 * array.shape[-1] + 3,), array.dtype)
        big[..., 1:2 * array.shape[-1] + 1:2] = array
        return big[..., 1:2 * array.shape[-1] + 1:2]
    if how == "reversed":
        return np.ascontiguousarray(array[::-1, ...])[::-1, ...]
    if how == "broadcast":  # stride 0 where the values repeat
        return np.broadcast_to(array[:1], array.shape) if array.shape[0] else array
    raise ValueError(how)


LAYOUTS = ["C", "F", "gaps", "reversed", "broadcast"]


@pytest.mark.parametrize("ranks", list(SHAPES))
@pytest.mark.parametrize("how_a", LAYOUTS)
@pytest.mark.parametrize("how_b", ["C", "F", "gaps", "broadcast"])
def test_blas_gives_numpy_results_for_every_layout(ranks, how_a, how_b):
    rng = np.random.default_rng(7)
    shapes = SHAPES[ranks]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if how_a == "broadcast":
        arrays[0][...] = arrays[0][:1]
    if how_b == "broadcast":
        arrays[1][...] = arrays[1][:1]
    arrays = [layout(arrays[0], how_a), layout(arrays[1], how_b)]
    types = [TensorType((None,) * len(s), F32) for s in shapes]
    module = function_module(types, lambda a, b: [T.DotOp.build(a, b).result])
    (result,) = run(bufferized(module, use_blas=True, blas_min_work=0), arrays)
    np.testing.assert_allclose(result, np.dot(*arrays), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape_a, shape_b", [((0, 3), (3, 2)), ((3, 0), (0, 2)),
                                              ((1, 3), (3, 1)), ((3, 1), (1, 4)), ((0,), (0,)),
                                              ((1, 1), (1,))])
@pytest.mark.parametrize("how", ["C", "F", "gaps"])
def test_blas_with_empty_and_single_row_or_column_operands(shape_a, shape_b, how):
    rng = np.random.default_rng(1)
    arrays = [layout(rng.standard_normal(s), how) for s in (shape_a, shape_b)]
    types = [TensorType((None,) * len(s), F64) for s in (shape_a, shape_b)]
    module = function_module(types, lambda a, b: [T.DotOp.build(a, b).result])
    (result,) = run(bufferized(module, use_blas=True, blas_min_work=0), arrays)
    np.testing.assert_allclose(result, np.dot(*arrays), rtol=1e-12, atol=1e-12)


def test_a_transposed_contiguous_matrix_goes_to_blas_as_transposed_without_checks():
    types = [TensorType((None, None), F64), TensorType((None,), F64)]

    def build(a, v):
        transposed = T.DimShuffleOp.build(T.ExpOp.build(a).result, [1, 0]).result
        return [T.DotOp.build(transposed, T.ExpOp.build(v).result).result]
    arrays = [np.arange(6.0).reshape(2, 3) / 10, np.ones(2)]
    after = check_graph(types, build, arrays, tolerance=1e-12, use_blas=True, blas_min_work=0)
    (call,) = [op for op in after.walk() if isinstance(op, loops.CallOp)]
    assert call.parent_op is after.functions[0]  # no branch, no run-time layout check
    assert not any(isinstance(op, loops.StrideOp) for op in after.walk())


def test_blas_with_an_empty_contraction_gives_zeros():
    types = [TensorType((None, None), F32)] * 2
    arrays = [np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32)]
    check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays, use_blas=True)


def test_small_static_products_stay_loops_with_blas_enabled():
    types = [TensorType((2, 3), F32), TensorType((3, 2), F32)]
    arrays = [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)]
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         use_blas=True)
    assert not any(isinstance(op, loops.CallOp) for op in module.walk())
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         use_blas=True, blas_min_work=1)
    assert any(isinstance(op, loops.CallOp) for op in module.walk())


def test_integer_products_never_call_blas():
    types, arrays = operands(I32, (2, 2))
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         use_blas=True)
    assert not any(isinstance(op, loops.CallOp) for op in module.walk())


def test_matrix_product_walks_rows_innermost():
    types, arrays = operands(F64, (2, 2))
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         tolerance=1e-12)
    stores = [op for op in module.walk() if isinstance(op, loops.StoreOp)]
    (store,) = stores
    innermost = store.parent_op
    assert isinstance(innermost, loops.ForOp)
    assert store.indices[-1] is innermost.induction_var


@pytest.mark.parametrize("use_blas", [False, True])
def test_contraction_mismatch_raises_the_assert_message(use_blas):
    module = function_module([TensorType((None, None), F64), TensorType((None,), F64)],
                             lambda a, b: [T.DotOp.build(a, b).result])
    with pytest.raises(RuntimeCheckError, match=r"tensor\.dot at .*test_bufferize_dot\.py:\d+:"
                       r"\d+: contraction sizes differ: shapes \(\?, \?\) and \(\?,\)"):
        run(bufferized(module, use_blas=use_blas), [np.zeros((2, 3)), np.zeros(4)])


@pytest.mark.parametrize("use_blas", [False, True])
@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_gemv_and_gemm(beta, use_blas):
    x = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    matrix, vector, scalar = (TensorType((None, None), F64), TensorType((None,), F64),
                              TensorType((), F64))

    def build(a, v, y, c, alpha, b):
        return [T.GemvOp.build(y, alpha, a, v, b).result,
                T.GemmOp.build(c, alpha, a, T.DimShuffleOp.build(a, [1, 0]).result, b).result]
    arrays = [x.T.copy().T, x[0], x[:, 1].copy(), np.full((3, 3), np.nan if beta == 0 else 2.0),
              np.array(-1.5), np.array(beta)]
    check_graph([matrix, vector, vector, matrix, scalar, scalar], build, arrays,
                tolerance=1e-12, use_blas=use_blas, blas_min_work=0)


def test_gemv_does_not_read_its_accumulator_when_beta_is_0():
    types = [TensorType((None, None), F64), TensorType((None,), F64), TensorType((None,), F64),
             TensorType((), F64), TensorType((), F64)]
    module = function_module(types, lambda a, v, y, al, be: [T.GemvOp.build(y, al, a, v, be)
                                                             .result])
    x = np.ones((2, 3))
    assert run(bufferized(module), [x, x[0], np.zeros(5), np.array(1.0), np.array(0.0)])[0] \
        .tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeCheckError, match=r"tensor\.gemv at .*: the accumulator of shape "
                                                r"\(\?,\) does not fit"):
        run(bufferized(module), [x, x[0], np.zeros(5), np.array(1.0), np.array(1.0)])


def test_a_matrix_vector_product_in_a_scan_step_chooses_loops_or_blas_at_run_time():
    import lowering as theano
    import lowering.tensor as T
    xs, h0, W = T.fmatrix("xs"), T.fvector("h0"), T.fmatrix("W")
    h, _ = theano.scan(lambda x, h_prev: T.tanh(T.dot(W, h_prev) + x), sequences=xs,
                       outputs_info=h0)
    text = theano.function([xs, h0, W], h).ir("loops")
    step = text[text.index("tensor.scan"):]
    # The loops version: one sum per row of a block, free to be regrouped (vectorized) ...
    assert re.search(r"iter_args\((%\w+ = %\w+(, )?){4}\) -> \(f32, f32, f32, f32\)", step)
    assert 'scalar.add %arg' in step and '{fastmath = "reassoc"}' in step
    # ... and the BLAS call, each under its run-time condition.
    assert "@cblas_sgemv" in step
