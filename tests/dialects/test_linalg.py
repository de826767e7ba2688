"""``tensor.dot``: type inference, verifier rules, interpreter against NumPy, grads, folding."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.ir.core import VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.types import F32, F64, I1, I64, TensorType, scalar_type_of
from lowering.dialects.tensor import ConstantOp, DotOp
from lowering.dialects.tensor.typing import ShapeError

from .helpers import check_gradients, evaluate_graph, graph_inputs

NUMERIC = ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64"]


@st.composite
def dot_case(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    m, k, n = (draw(st.integers(0, 4)) for _ in range(3))
    a_shape = draw(st.sampled_from([(k,), (m, k)]))
    b_shape = draw(st.sampled_from([(k,), (k, n)]))
    # small values: integer products wrap the same way in NumPy and here, floats stay exact
    elements = st.integers(-3, 3) if not dtype.startswith("u") else st.integers(0, 3)
    a = draw(hnp.arrays(dtype, a_shape, elements=elements))
    b = draw(hnp.arrays(dtype, b_shape, elements=elements))
    types = []
    for shape in (a_shape, b_shape):
        dynamic = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
        types.append(TensorType(tuple(None if d and s != 1 else s for s, d in zip(shape, dynamic)),
                                scalar_type_of(dtype)))
    return a, b, types


@settings(max_examples=50, deadline=None)
@given(dot_case())
def test_dot_matches_numpy(case):
    a, b, (at, bt) = case
    x, y = graph_inputs(at, bt)
    out = DotOp.build(x, y).result
    assert out.type.shape == at.shape[:-1] + bt.shape[1:]
    assert out.type.element == at.element
    (got,) = evaluate_graph([out], {x: a, y: b})
    expected = np.dot(a, b)
    assert isinstance(got, np.ndarray) and got.dtype == a.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("a, b, result", [
    ((3,), (3,), "tensor<f32>"),
    ((None, 784), (784,), "tensor<?xf32>"),
    ((5,), (5, None), "tensor<?xf32>"),
    ((2, None), (None, 7), "tensor<2x7xf32>"),
    ((1, 4), (4, 1), "tensor<1x1xf32>"),
])
def test_dot_shapes(a, b, result):
    x, y = graph_inputs(TensorType(a, F32), TensorType(b, F32))
    assert str(DotOp.build(x, y).result.type) == result


def test_dot_rules():
    m34, v5, v4, s, m4d, b4, t3 = graph_inputs(
        TensorType((3, 4), F32), TensorType((5,), F32), TensorType((4,), F64), TensorType((), F32),
        TensorType((4, 2), F64), TensorType((4,), I1), TensorType((4, 2, 2), F32))
    with pytest.raises(ShapeError, match="tensor.dot: incompatible shapes \\(3, 4\\) and \\(5,\\)"):
        DotOp.build(m34, v5)
    with pytest.raises(VerifyError, match="tensor.dot: operands must have one element type"):
        DotOp.build(m34, v4)
    with pytest.raises(VerifyError, match="the left operand must have rank 1 or 2, got tensor<f32>"):
        DotOp.build(s, v5)
    with pytest.raises(VerifyError, match="the right operand must have rank 1 or 2"):
        DotOp.build(m34, t3)
    with pytest.raises(VerifyError, match="not booleans"):
        DotOp.build(b4, b4)
    op = DotOp.create([v4, m4d], [TensorType((None,), F64)])
    with pytest.raises(VerifyError, match="tensor.dot: result type tensor<\\?xf64> differs from the inferred tensor<2xf64>") as info:
        op.verify_()
    assert info.value.op is op
    op = DotOp.create([m34, v5], [TensorType((3,), F32)])
    with pytest.raises(ShapeError, match="incompatible shapes"):
        op.verify_()


def test_dot_runtime_shape_mismatch():
    x, y = graph_inputs(TensorType((None, None), F32), TensorType((None,), F32))
    out = DotOp.build(x, y).result
    with pytest.raises(InterpreterError, match="tensor.dot: incompatible shapes \\(2, 3\\) and \\(4,\\)"):
        evaluate_graph([out], {x: np.zeros((2, 3), np.float32), y: np.zeros(4, np.float32)})


@pytest.mark.parametrize("a_shape, b_shape", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                              ((2, 3), (3, 4)), ((1, 3), (3, 1))])
@pytest.mark.parametrize("static", [True, False])
def test_dot_grad(a_shape, b_shape, static):
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    types = [TensorType(a_shape, F64), TensorType(b_shape, F64)] if static else None
    check_gradients(lambda x, y: DotOp.build(x, y).result, [a, b], types)


def test_dot_grad_of_integers_is_none():
    x, y, g = graph_inputs(TensorType((2, 3), I64), TensorType((3,), I64), TensorType((2,), I64))
    assert DotOp.build(x, y).grad([g]) == [None, None]


def test_dot_folds_constants():
    a = ConstantOp.build(np.array([[1.0, 2.0], [3.0, 4.0]])).result
    b = ConstantOp.build(np.array([1.0, -1.0])).result
    (folded,) = DotOp.build(a, b).fold()
    np.testing.assert_array_equal(folded.array, [-1.0, -1.0])
