"""bufferize of ``tensor.dot``: the four shape combinations as loop nests and as CBLAS calls,
the contraction-size check and the choice between the two."""
from __future__ import annotations

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
def test_blas_calls(ranks, callee):
    types, arrays = operands(F64, ranks)
    module = check_graph(types, lambda a, b: [T.DotOp.build(a, b).result], arrays,
                         tolerance=1e-12, use_blas=True)
    calls = [op for op in module.walk() if isinstance(op, loops.CallOp)]
    assert [c.callee for c in calls] == [callee]
    # Arguments have run-time strides: they are copied into contiguous buffers first.
    assert all(v.type.is_contiguous for c in calls for v in c.args
               if isinstance(v.type, loops.BufferType))


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
