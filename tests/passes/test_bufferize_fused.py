"""bufferize of ``tensor.fused``: maps, a trailing reduction, sibling reductions in one pass,
and fused ops made by the ``fuse`` pass from random graphs."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects import loops, scalar
from lowering.dialects import tensor as T
from lowering.dialects.loops import RuntimeCheckError
from lowering.dialects.tensor.fused import Reduction, body_from
from lowering.ir.pass_manager import PassManager
from lowering.ir.types import F16, F64, I8, I64, TensorType

from .bufferize_graphs import assert_same, bufferized, check_graph, function_module, run, run_both

MATRIX = TensorType((None, None), F64)
ROW = TensorType((1, None), F64)
X = np.arange(12, dtype=np.float64).reshape(3, 4) / 7 - 0.5


def fused(reductions, element=F64):
    def build(a, b):
        def compute(p, q):
            three = scalar.ConstantOp.build(3, element).result
            return [scalar.MaximumOp.build(scalar.AddOp.build(p, q).result, three).result,
                    scalar.MulOp.build(p, three).result]
        return list(T.FusedOp.build([a, b], body_from([element, element], compute),
                                    reductions=reductions).results)
    return build


@pytest.mark.parametrize("reductions", [
    None,
    [None, Reduction("sum", (1,))],
    [Reduction("max", (0,)), Reduction("mean", (1,), keepdims=True)],
    [Reduction("prod", (0, 1)), None],
    [Reduction("min", (1,)), Reduction("sum", (0, 1), keepdims=True)],
], ids=["maps", "map+sum", "siblings", "full+map", "min+full"])
def test_fused_results_match_the_interpreter(reductions):
    module = check_graph([MATRIX, ROW], fused(reductions), [X[::-1], X[:1]], tolerance=1e-12)
    # One pass over the space: the body's ops (here, those reading the constant 3) appear once.
    (three,) = [op.result for op in module.walk() if isinstance(op, scalar.ConstantOp)
                and op.result.type == F64 and op.numpy_value == 3]
    assert len(three.uses) == 2


@pytest.mark.parametrize("element", [I8, I64, F16])
def test_fused_sums_of_other_dtypes(element):
    x = np.arange(12).reshape(3, 4).astype(element.dtype)
    t = TensorType((None, None), element)
    check_graph([t, TensorType((1, None), element)], fused([Reduction("sum", (0,)), None],
                                                           element), [x, x[:1]], tolerance=1e-2)


def test_a_single_reduction_carries_its_accumulator():
    def build(a):
        body = body_from([F64], lambda p: [scalar.SqrOp.build(p).result])
        return list(T.FusedOp.build([a], body, reductions=[Reduction("sum", (1,))]).results)
    module = check_graph([MATRIX], build, [X], tolerance=1e-12)
    assert any(isinstance(op, loops.ForOp) and op.inits for op in module.walk())
    assert any(isinstance(op, loops.ParallelOp) for op in module.walk())


def test_input_sizes_are_checked():
    module = function_module([MATRIX, MATRIX], fused(None))
    with pytest.raises(RuntimeCheckError, match=r"tensor\.fused at .*: input shapes \(\?, \?\), "
                                                r"\(\?, \?\) differ in dimension 1"):
        run(bufferized(module), [X, X[:, :2]])


def test_max_over_an_empty_axis_raises():
    module = function_module([MATRIX, ROW], fused([Reduction("max", (0,)), None]))
    with pytest.raises(RuntimeCheckError, match="cannot reduce over an empty axis"):
        run(bufferized(module), [np.zeros((0, 2)), np.zeros((1, 2))])


def test_graphs_fused_by_the_fuse_pass():
    def build(a, b):
        e = T.ExpOp.build(T.SubOp.build(a, b).result).result
        total = T.SumOp.build(e, axes=[1], keepdims=True).result
        peak = T.MaxOp.build(e, axes=[1], keepdims=True).result
        return [T.DivOp.build(e, total).result, peak,
                T.MeanOp.build(T.SqrOp.build(a).result).result]
    module = function_module([MATRIX, ROW], build)
    PassManager("fuse").run(module)
    assert any(op.name == "tensor.fused" for op in module.walk())
    before, after = run_both(module, [X, X[:1]])
    assert_same(before, after, tolerance=1e-12)
