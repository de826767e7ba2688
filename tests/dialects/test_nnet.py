"""``tensor.softmax`` and ``tensor.log_softmax``: inference, verifier rules, interpreter against a
float64 reference, stability, grads, folding."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.ir.attributes import IntAttr
from lowering.ir.core import VerifyError
from lowering.ir.types import F16, F32, F64, I32, TensorType, scalar_type_of
from lowering.dialects.tensor import ConstantOp, LogSoftmaxOp, SoftmaxOp

from .helpers import check_gradients, evaluate_graph, graph_inputs

TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}


def reference(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
    """Softmax in float64 from the definition, written against a max-shifted input."""
    x = x.astype(np.float64)
    shifted = x - x.max(axis=axis, keepdims=True)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)
    return shifted - np.log(total) if log else np.exp(shifted) / total


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["float16", "float32", "float64"]),
       hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), st.data(), st.booleans())
def test_softmax_matches_reference(dtype, shape, data, log):
    x = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-30, 30, width=16)))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    (v,) = graph_inputs(TensorType((None,) * len(shape), scalar_type_of(dtype)))
    op = (LogSoftmaxOp if log else SoftmaxOp).build(v, axis)
    assert op.axis == axis % len(shape) and op.result.type == v.type
    (got,) = evaluate_graph([op.result], {v: x})
    assert got.dtype == x.dtype and got.shape == x.shape
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(got, reference(x, axis, log), rtol=tol, atol=tol * (30 if log else 1))


def test_softmax_is_stable_for_large_inputs():
    (v,) = graph_inputs(TensorType((2, 3), F32))
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 1e30]], np.float32)
    (s, ls) = evaluate_graph([SoftmaxOp.build(v).result, LogSoftmaxOp.build(v).result], {v: x})
    np.testing.assert_allclose(s, [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    assert np.isfinite(ls[0]).all() and ls[0, 0] == pytest.approx(-np.log(2))
    assert ls[1, 2] == 0.0


def test_softmax_of_empty_axis():
    (v,) = graph_inputs(TensorType((None, None), F64))
    (got,) = evaluate_graph([SoftmaxOp.build(v).result], {v: np.zeros((3, 0))})
    assert got.shape == (3, 0)


@pytest.mark.parametrize("cls", [SoftmaxOp, LogSoftmaxOp])
def test_softmax_rules(cls):
    s, i, m = graph_inputs(TensorType((), F32), TensorType((3,), I32), TensorType((None, 3), F32))
    with pytest.raises(VerifyError, match=f"{cls.name}: needs a tensor of rank 1 or more"):
        cls.build(s)
    with pytest.raises(VerifyError, match=f"{cls.name}: needs a float tensor, got tensor<3xi32>"):
        cls.build(i)
    with pytest.raises(VerifyError, match=f"{cls.name}: axis 2 is out of range"):
        cls.build(m, axis=2)
    op = cls.create([m], [TensorType((None, 3), F32)], {"axis": IntAttr(5)})
    with pytest.raises(VerifyError, match="axis 5 is out of range") as info:
        op.verify_()
    assert info.value.op is op
    op = cls.create([m], [TensorType((None, 3), F16)], {"axis": IntAttr(1)})
    with pytest.raises(VerifyError, match="differs from the inferred tensor<\\?x3xf32>"):
        op.verify_()
    # parsed IR may spell the last axis -1
    cls.create([m], [TensorType((None, 3), F32)], {"axis": IntAttr(-1)}).verify_()


@pytest.mark.parametrize("cls", [SoftmaxOp, LogSoftmaxOp])
@pytest.mark.parametrize("shape, axis", [((4,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 1, 3), -1)])
def test_softmax_grad(cls, shape, axis):
    rng = np.random.default_rng(12)
    check_gradients(lambda x: cls.build(x, axis).result, [rng.normal(size=shape)])


@pytest.mark.parametrize("cls", [SoftmaxOp, LogSoftmaxOp])
def test_softmax_folds_constants(cls):
    x = np.array([[0.0, np.log(3.0)]])
    (folded,) = cls.build(ConstantOp.build(x).result).fold()
    np.testing.assert_allclose(folded.array, reference(x, 1, cls is LogSoftmaxOp))
