"""Shape functions, reductions, products and T.nnet: types, ops and values against NumPy."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.frontend.errors import GraphBuildError

from .helpers import evaluate

M = np.arange(1.0, 13.0).reshape(3, 4)


def test_dimshuffle_transpose_squeeze():
    x = T.matrix("x")
    assert x.dimshuffle(1, "x", 0).broadcastable == (False, True, False)
    assert x.dimshuffle((1, 0)).value.op.pattern == (1, 0)
    assert x.dimshuffle(0, 1) is x
    assert np.array_equal(evaluate(x.T, {x: M}), M.T)
    assert np.array_equal(evaluate(x.transpose(1, 0), {x: M}), M.T)
    r = T.row("r")
    assert r.squeeze().ndim == 1 and T.shape_padleft(r, 2).ndim == 4
    assert T.shape_padright(x).broadcastable == (False, False, True)
    with pytest.raises(GraphBuildError, match=r"tensor.dimshuffle: .*drops dim 0"):
        x.dimshuffle(1)


def test_reshape_and_flatten():
    x = T.matrix("x")
    r = x.reshape((2, -1))
    assert r.ndim == 2 and r.value.op.name == "tensor.reshape"
    assert np.array_equal(evaluate(r, {x: M}), M.reshape(2, -1))
    s = x.reshape((x.shape[1], x.shape[0]))
    assert np.array_equal(evaluate(s, {x: M}), M.reshape(4, 3))
    v = x.reshape(x.shape[::-1], ndim=2)
    assert np.array_equal(evaluate(v, {x: M}), M.reshape(4, 3))
    t = T.tensor3("t")
    data = np.arange(24.0).reshape(2, 3, 4)
    assert np.array_equal(evaluate(t.flatten(), {t: data}), data.reshape(-1))
    assert np.array_equal(evaluate(T.flatten(t, 2), {t: data}), data.reshape(2, -1))
    assert x.flatten(2) is x
    with pytest.raises(GraphBuildError, match="cannot reshape"):
        T.constant(M).reshape((5, -1))


def test_concatenate_join_stack():
    a, b = T.matrix("a"), T.fmatrix("b")
    c = T.concatenate([a, b], axis=1)
    assert c.dtype == "float64" and c.value.op.name == "tensor.concatenate"
    bv = M.astype("float32")
    assert np.array_equal(evaluate(c, {a: M, b: bv}), np.concatenate([M, bv], axis=1))
    assert np.array_equal(evaluate(T.join(0, a, a), {a: M}), np.concatenate([M, M]))
    s, t = T.scalar("s"), T.iscalar("t")
    vec = T.stack([s, t, 2])
    assert vec.value.op.name == "tensor.make_vector" and vec.dtype == "float64"
    assert np.array_equal(evaluate(vec, {s: 1.5, t: 3}), [1.5, 3.0, 2.0])
    st = T.stack([a, a * 2], axis=1)
    assert np.array_equal(evaluate(st, {a: M}), np.stack([M, M * 2], axis=1))
    assert T.as_tensor_variable([s, t]).ndim == 1


def test_arange_zeros_ones_alloc_fill():
    x = T.matrix("x")
    r = T.arange(x.shape[0])
    assert r.dtype == "int64"
    assert np.array_equal(evaluate(r, {x: M}), np.arange(3))
    assert np.array_equal(evaluate(T.arange(2, 11, 3), {}), np.arange(2, 11, 3))
    assert T.arange(0.0, 1.0, 0.25).value.type.shape == (4,)
    assert T.arange(5, dtype="float32").dtype == "float32"
    z = T.zeros((x.shape[0], 2))
    assert z.dtype == config.floatX and np.array_equal(evaluate(z, {x: M}), np.zeros((3, 2)))
    assert np.array_equal(evaluate(T.ones(x.shape, dtype="int8"), {x: M}), np.ones((3, 4), "int8"))
    assert np.array_equal(evaluate(T.zeros_like(x), {x: M}), np.zeros_like(M))
    assert evaluate(x.ones_like(dtype="int32"), {x: M}).dtype == np.int32
    assert np.array_equal(evaluate(T.alloc(T.constant([1.0, 2.0]), 3, 2), {}), np.tile([1.0, 2.0], (3, 1)))
    f = T.fill(x, 7)
    assert f.dtype == "float64" and np.array_equal(evaluate(f, {x: M}), np.full((3, 4), 7.0))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_reductions_match_numpy(name, axis):
    x = T.matrix("x")
    if name.startswith("arg") and isinstance(axis, tuple):
        axis = None
    out = getattr(x, name)(axis=axis)
    want = getattr(np, name)(M, axis=axis)
    got = evaluate(out, {x: M})
    assert np.allclose(got, want) and got.shape == np.shape(want)
    assert getattr(T, name)(x, axis=axis, keepdims=True).ndim == 2


def test_reduction_dtypes():
    b = T.bmatrix("b")
    assert b.sum().dtype == "int64" and b.mean().dtype == "float64" and b.max().dtype == "int8"
    f = T.fmatrix("f")
    assert f.sum(dtype="float64").dtype == "float64"
    assert f.sum(acc_dtype="float64").dtype == "float64"
    assert f.mean().dtype == "float32"
    assert b.sum(dtype="int8").dtype == "int8"
    assert b.sum(axis=1, keepdims=True).broadcastable == (False, True)


def test_var_std_norm():
    x = T.matrix("x")
    for axis in (None, 0, 1):
        assert np.allclose(evaluate(x.var(axis=axis), {x: M}), M.var(axis=axis))
        assert np.allclose(evaluate(T.std(x, axis=axis, ddof=1), {x: M}), M.std(axis=axis, ddof=1))
    assert np.allclose(evaluate(x.norm(2), {x: M}), np.linalg.norm(M))
    assert np.allclose(evaluate(x.norm(1, axis=0), {x: M}), np.abs(M).sum(axis=0))
    assert np.allclose(evaluate(x.norm(3), {x: M}), (np.abs(M) ** 3).sum() ** (1 / 3))
    assert T.fmatrix().var(axis=0).dtype == "float32"
    assert T.fmatrix().var(axis=0, ddof=1).dtype == "float32"


def test_size():
    x = T.matrix("x")
    assert evaluate(x.size, {x: M}) == 12


@pytest.mark.parametrize("a_shape, b_shape", [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (4,)), ((), (3,))])
def test_dot_matches_numpy(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a_val, b_val = rng.normal(size=a_shape), rng.normal(size=b_shape)
    a = T.tensor("float64", (False,) * len(a_shape))
    b = T.tensor("float64", (False,) * len(b_shape))
    out = T.dot(a, b)
    assert np.allclose(evaluate(out, {a: a_val, b: b_val}), np.dot(a_val, b_val))


def test_matmul_operator_is_dot():
    a, b = T.matrix("a"), T.vector("b")
    assert (a @ b).value.op.name == "tensor.dot"
    assert (np.ones((2, 3)) @ a).value.op.name == "tensor.dot"


def test_dot_promotes_and_checks_static_shapes():
    assert T.dot(T.fmatrix(), T.dvector()).dtype == "float64"
    with pytest.raises(GraphBuildError, match="tensor.dot: incompatible shapes"):
        T.dot(T.constant(np.ones((3, 4))), T.constant(np.ones(5)))
    # Above rank 2 on the right, NumPy's dot: a's last axis against b's second to last.
    assert T.dot(T.matrix(), T.tensor3()).ndim == 3


def test_outer():
    x, y = T.vector("x"), T.vector("y")
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    assert np.allclose(evaluate(T.outer(x, y), {x: a, y: b}), np.outer(a, b))


def test_nnet():
    x, y = T.matrix("x"), T.ivector("y")
    e = np.exp(M - M.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    assert np.allclose(evaluate(T.nnet.softmax(x), {x: M}), sm)
    assert np.allclose(evaluate(T.nnet.logsoftmax(x), {x: M}), np.log(sm))
    assert np.allclose(evaluate(T.nnet.relu(x - 6), {x: M}), np.maximum(M - 6, 0))
    assert np.allclose(evaluate(T.nnet.relu(x - 6, alpha=0.1), {x: M}),
                       np.where(M > 6, M - 6, 0.1 * (M - 6)))
    labels = np.array([0, 3, 1], "int32")
    ce = T.nnet.categorical_crossentropy(T.nnet.softmax(x), y)
    assert np.allclose(evaluate(ce, {x: M, y: labels}), -np.log(sm[np.arange(3), labels]))
    onehot = T.matrix("onehot")
    ce2 = T.nnet.categorical_crossentropy(T.nnet.softmax(x), onehot)
    assert np.allclose(evaluate(ce2, {x: M, onehot: np.eye(4)[labels]}),
                       -np.log(sm[np.arange(3), labels]))
    p, t = T.vector("p"), T.vector("t")
    pv, tv = np.array([0.2, 0.9]), np.array([0.0, 1.0])
    assert np.allclose(evaluate(T.nnet.binary_crossentropy(p, t), {p: pv, t: tv}),
                       -(tv * np.log(pv) + (1 - tv) * np.log(1 - pv)))
    logits = np.array([-30.0, 30.0])
    got = evaluate(T.nnet.sigmoid_binary_crossentropy(p, t), {p: logits, t: tv})
    assert np.allclose(got, [np.log1p(np.exp(-30.0)), np.log1p(np.exp(-30.0))])
    assert np.allclose(evaluate(T.nnet.hard_sigmoid(p), {p: pv}), np.clip(0.2 * pv + 0.5, 0, 1))
    assert T.nnet.softmax(T.imatrix()).dtype == "float64"
    with pytest.raises(GraphBuildError, match="categorical_crossentropy"):
        T.nnet.categorical_crossentropy(T.matrix(), T.tensor3())


def test_nnet_is_importable_as_a_module():
    from lowering.tensor.nnet import sigmoid, softmax
    assert softmax is T.nnet.softmax and sigmoid is T.sigmoid


def test_a_size_out_of_the_rank_fails_when_the_function_runs_as_in_theano():
    # Theano's x.shape has no static length: x.shape[1] of a vector builds, and fails when the
    # function runs (libraries test the rank after taking the size and raise their own error).
    x = T.vector("x")
    size = x.shape[1]
    f = theano.function([x], size + x.sum())
    with pytest.raises(Exception, match=r"test_shapes.py:\d+:\d+: x.shape\[1\]: index 1 is out of "
                                        r"range for a tensor of rank 1"):
        f(np.ones(3))
