"""bufferize of softmax and log_softmax: stable for large inputs, every axis, NaN and -inf rows
as the interpreter has them."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects import loops
from lowering.dialects import tensor as T
from lowering.ir.types import F16, F32, F64, TensorType

from .bufferize_graphs import check_graph

ROWS = np.array([[1.0, 2.0, 3.0, 4.0], [1000.0, 1001.0, 999.0, 1000.0],
                 [-np.inf, -np.inf, -np.inf, -np.inf], [0.0, np.nan, 1.0, 2.0],
                 [-1000.0, -1e4, np.inf, 3.0]])


@pytest.mark.parametrize("element, tolerance", [(F16, 2e-3), (F32, 1e-6), (F64, 1e-14)])
@pytest.mark.parametrize("cls", [T.SoftmaxOp, T.LogSoftmaxOp])
def test_softmax_along_each_axis(cls, element, tolerance):
    x = ROWS.astype(element.dtype)

    def build(v):
        return [cls.build(v, axis=1).result, cls.build(v, axis=0).result]
    module = check_graph([TensorType((None, None), element)], build, [x[:, ::-1]],
                         tolerance=tolerance)
    results = module.functions[0].body.block.last_op.operands
    assert all(isinstance(v.owner, loops.AllocOp) for v in results)


def test_large_inputs_give_finite_results():
    x = np.array([[1e30, 1e30 + 1e15, -1e30]], dtype=np.float64)
    module = check_graph([TensorType((1, None), F64)],
                         lambda v: [T.SoftmaxOp.build(v).result, T.LogSoftmaxOp.build(v).result],
                         [x], tolerance=1e-14)
    assert module is not None


def test_vectors_and_empty_lines():
    check_graph([TensorType((None,), F32)], lambda v: [T.SoftmaxOp.build(v).result],
                [np.array([0.5, -2.0, 3.0], np.float32)], tolerance=1e-6)
    check_graph([TensorType((None, None), F32)], lambda v: [T.LogSoftmaxOp.build(v).result],
                [np.zeros((3, 0), np.float32)])
