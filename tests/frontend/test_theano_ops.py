"""Theano's op classes as views of IR ops, and what compiled graphs show through them."""
import numpy as np
import pytest

import lowering
import lowering.tensor as T
from lowering.dialects.test import GenericOp
from lowering.frontend import theano_ops
from lowering.frontend.theano_ops import (GpuCAReduce, GpuElemwise, IROp, leaf_text,
                                          register_theano_op, theano_op)
from lowering.ir.core import Operation


def op_of(var):
    return theano_op(var.value.op)


@pytest.mark.parametrize("build, cls, text", [
    (lambda x, v: T.exp(x), T.Elemwise, "Elemwise{exp,no_inplace}"),
    (lambda x, v: x / 2, T.Elemwise, "Elemwise{true_div,no_inplace}"),
    (lambda x, v: T.nnet.sigmoid(x), T.Elemwise, "Elemwise{ScalarSigmoid,no_inplace}"),
    (lambda x, v: T.cast(x, "float32"), T.Elemwise, "Elemwise{Cast{float32}}"),
    (lambda x, v: x > 0, T.Elemwise, "Elemwise{gt,no_inplace}"),
    (lambda x, v: T.zeros_like(x), T.Elemwise, "Elemwise{second,no_inplace}"),
    (lambda x, v: x.T, T.DimShuffle, "InplaceDimShuffle{1,0}"),
    (lambda x, v: v.dimshuffle("x", 0), T.DimShuffle, "InplaceDimShuffle{x,0}"),
    (lambda x, v: x.sum(), T.Sum, "Sum{acc_dtype=float64}"),
    (lambda x, v: x.sum(axis=0), T.Sum, "Sum{axis=[0], acc_dtype=float64}"),
    (lambda x, v: x.max(axis=1), T.Max, "Max{axis=[1]}"),
    (lambda x, v: x.argmax(axis=1), T.Argmax, "Argmax{axis=[1]}"),
    (lambda x, v: T.dot(x, v), T.CGemv, "CGemv{no_inplace}"),
    (lambda x, v: T.dot(x, x.T), T.Dot22, "Dot22"),
    (lambda x, v: T.dot(v, v), T.Dot, "Dot"),
    (lambda x, v: x.shape[0], T.Shape_i, "Shape_i{0}"),
    (lambda x, v: x.shape, T.Shape, "Shape"),
    (lambda x, v: T.zeros((x.shape[0],)), T.Alloc, "Alloc"),
    (lambda x, v: x.reshape((-1,)), T.Reshape, "Reshape{1}"),
    (lambda x, v: x[1:3], T.Subtensor, "Subtensor{1:3:}"),
    (lambda x, v: x[T.lscalar():, 0], T.Subtensor, "Subtensor{int64::, 0}"),
    (lambda x, v: T.set_subtensor(x[0], 1.0), T.IncSubtensor, "IncSubtensor{Set;0}"),
    (lambda x, v: T.inc_subtensor(x[0], 1.0), T.IncSubtensor, "IncSubtensor{Inc;0}"),
    (lambda x, v: x[[0, 1]], T.AdvancedSubtensor, "AdvancedSubtensor"),
    (lambda x, v: T.concatenate([v, v]), T.Join, "Join"),
    (lambda x, v: T.arange(x.shape[0]), T.ARange, "ARange{dtype='int64'}"),
    (lambda x, v: T.nnet.softmax(x), T.Softmax, "Softmax"),
])
def test_ops_show_as_theano_classes(build, cls, text):
    out = build(T.matrix("x"), T.vector("v"))
    op = op_of(out)
    assert isinstance(op, cls) and str(op) == text


def test_reductions_share_a_base_class():
    x = T.matrix("x")
    assert all(isinstance(op_of(r), T.CAReduce) for r in (x.sum(), x.prod(), x.max(), x.mean()))


def test_gpu_classes_are_not_cpu_classes():
    x = T.matrix("x")
    op = theano_op(T.exp(x).value.op, on_gpu=True)
    assert isinstance(op, GpuElemwise) and not isinstance(op, T.Elemwise)
    assert str(op) == "GpuElemwise{exp,no_inplace}"
    assert str(theano_op(x.sum(axis=1).value.op, on_gpu=True)) == "GpuCAReduce{add}{01}"
    assert isinstance(theano_op(x.sum().value.op, on_gpu=True), GpuCAReduce)
    assert type(theano_op(T.dot(x, T.vector()).value.op, on_gpu=True)).__name__ == "GpuGemv"


def test_inplace_patterns_print_as_theano():
    x = T.matrix("x")
    assert str(theano_op((x - 1).value.op, inplace_pattern={0: 0})) == "Elemwise{sub}[(0, 0)]"
    assert str(theano_op(T.dot(x, T.vector()).value.op, inplace_pattern={0: 0})) == "CGemv{inplace}"


def test_fused_bodies_print_as_composites():
    from lowering.dialects import scalar
    from lowering.ir.core import Block, Region
    from lowering.ir.types import F64, TensorType

    block = Block([F64, F64])
    i0, i1 = block.args
    neg = block.append(scalar.NegOp.build(i0))
    sub = block.append(scalar.SubOp.build(neg.result, i1))
    block.append(scalar.YieldOp.create([sub.result]))
    x = Block().add_arg(TensorType((None,), F64))

    class Fused(Operation):  # stands for the fusion pass's op: a region holding a scalar body
        name = "tensor.fused"

    fused = Fused.create(operands=[x, x], result_types=[TensorType((None,), F64)],
                         regions=[Region([block])])
    assert str(theano_op(fused)) == "Elemwise{Composite{[sub(neg(i0), i1)]}}"


def test_unknown_ops_and_registration(monkeypatch):
    op = GenericOp.create()
    assert isinstance(theano_op(op), IROp) and str(theano_op(op)) == "test.op"

    class Thing(T.Op):
        pass

    monkeypatch.setattr(theano_ops, "_CLASSES", dict(theano_ops._CLASSES))  # the test's own
    register_theano_op("test.op", (Thing, Thing))
    assert isinstance(theano_op(op), Thing)


def test_leaf_texts():
    assert leaf_text(T.fmatrix().value) == "<TensorType(float32, matrix)>"
    assert leaf_text(T.fmatrix("x").value) == "x"
    assert leaf_text(T.constant(np.ones((1,)) * -1.0).value) == "TensorConstant{(1,) of -1.0}"


def test_compiled_graphs_show_theano_classes():
    x = lowering.shared(np.linspace(0, 1, 8), name="x")
    f = lowering.function([], T.exp(x))
    nodes = f.maker.fgraph.toposort()
    assert any(isinstance(node.op, T.Elemwise) for node in nodes)
    assert "Elemwise{exp,no_inplace}(x)" in str(nodes)
    assert np.allclose(f(), np.exp(np.linspace(0, 1, 8)))


def test_logistic_regression_uses_gemv():
    x, w = T.matrix("x"), lowering.shared(np.zeros(3), name="w")
    train = lowering.function([x], T.dot(x, w).sum(), updates={w: w - 0.1 * T.grad(
        T.dot(x, w).sum(), w)})
    names = [node.op.__class__.__name__ for node in train.maker.fgraph.toposort()]
    assert "CGemv" in names
