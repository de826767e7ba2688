"""T.grad: gradients through every kind of op against finite differences, and the driver's
options (consider_constant, disconnected inputs, known_grads)."""
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lowering.tensor as T
from lowering.frontend.errors import DisconnectedInputError, GraphTypeError

from .helpers import evaluate, float64_by_default, numeric_grad  # noqa: F401 (autouse)

rng = np.random.default_rng(42)
A = rng.uniform(0.5, 1.5, (3, 4))
B = rng.uniform(0.5, 1.5, (3, 4))
V4 = rng.uniform(0.5, 1.5, 4)
V3 = rng.uniform(0.5, 1.5, 3)


def check_grad(cost, feeds: dict, wrt=None, rtol=1e-5, atol=1e-7):
    """Every gradient of ``cost`` has its variable's exact type and matches central differences."""
    wrt = wrt or [v for v in feeds if v.dtype.startswith("float")]
    grads = T.grad(cost, wrt)
    got = evaluate(grads, feeds)
    for w, g, value in zip(wrt, grads, got):
        assert g.value.type == w.value.type, f"{g.value.type} != {w.value.type}"

        def f(data, w=w):
            return float(evaluate(cost, {**feeds, w: data}))

        np.testing.assert_allclose(value, numeric_grad(f, feeds[w]), rtol=rtol, atol=atol,
                                   err_msg=f"gradient with respect to {w}")


def test_arithmetic():
    x, y = T.matrix("x"), T.matrix("y")
    cost = (x * y + x / y - x ** 2 + 3 * x - y // 1 + x % 0.7).sum()
    check_grad(cost, {x: A, y: B})


@pytest.mark.parametrize("name", [
    "exp", "log", "sqrt", "sqr", "tanh", "sigmoid", "softplus", "log1p", "expm1", "sin", "cos",
    "abs", "erf", "arctan", "inv", "log2", "cosh", "arcsin"])
def test_unary_functions(name):
    x = T.vector("x")
    check_grad(getattr(T, name)(x * 0.5).sum(), {x: V4})


def test_binary_functions():
    x, y = T.vector("x"), T.vector("y")
    a, b = np.array([0.5, 2.0, 1.2]), np.array([1.0, 0.7, 3.0])
    cost = (T.maximum(x, y) + 2 * T.minimum(x, y) + x ** y + T.arctan2(x, y)).sum()
    check_grad(cost, {x: a, y: b})


def test_broadcasting():
    m, r, c, v, s = T.matrix("m"), T.row("r"), T.col("c"), T.vector("v"), T.scalar("s")
    cost = ((m + r) * c - v * s + s).sum()
    feeds = {m: A, r: V4.reshape(1, 4), c: V3.reshape(3, 1), v: V4, s: np.array(1.3)}
    check_grad(cost, feeds)
    grads = T.grad(cost, [r, c])
    assert grads[0].broadcastable == (True, False) and grads[1].broadcastable == (False, True)


def test_float32_gradients_stay_float32():
    x, w = T.fmatrix("x"), T.fvector("w")
    cost = T.nnet.sigmoid(T.dot(x, w)).mean()
    gw, gx = T.grad(cost, [w, x])
    assert gw.dtype == gx.dtype == "float32"
    assert evaluate(gw, {x: A.astype("float32"), w: V4.astype("float32")}).dtype == np.float32


@pytest.mark.parametrize("build", [
    lambda x: x.sum(axis=0).dot(T.constant(V4)),
    lambda x: (x.mean(axis=1) ** 2).sum(),
    lambda x: x.max(axis=0).sum() + x.min(),
    lambda x: x.prod(axis=1).sum(),
    lambda x: x.var(axis=0).sum() + x.std(),
    lambda x: (x.sum(axis=1, keepdims=True) * x).sum(),
    lambda x: x.norm(2),
])
def test_reductions(build):
    x = T.matrix("x")
    check_grad(build(x), {x: A})


@pytest.mark.parametrize("build", [
    lambda x: x[1:3].sum(),
    lambda x: (x[::-1, 1] * T.arange(3)).sum(),
    lambda x: x[T.arange(3), T.constant(np.array([3, 0, 2]))].sum(),
    lambda x: (x[:, None] ** 2).sum(),
    lambda x: T.set_subtensor(x[1], x[0] * 2).sum() + (T.set_subtensor(x[1], 0) ** 2).sum(),
    lambda x: (T.inc_subtensor(x[:, 1:3], x[:, :2]) ** 2).sum(),
    lambda x: (T.inc_subtensor(x[[0, 0, 2]], 1.0) ** 2).sum(),
])
def test_indexing(build):
    x = T.matrix("x")
    check_grad(build(x), {x: A})


def test_symbolic_index_and_slice_bounds():
    x, i = T.matrix("x"), T.lscalar("i")
    cost = (x[i] * 3).sum() + (x[i:i + 2] ** 2).sum()
    check_grad(cost, {x: A, i: np.array(1)}, wrt=[x])


@pytest.mark.parametrize("a_shape, b_shape", [
    ((4,), (4,)), ((3, 4), (4,)), ((3,), (3, 4)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 2))])
def test_dot(a_shape, b_shape):
    a = T.tensor("float64", (False,) * len(a_shape), name="a")
    b = T.tensor("float64", (False,) * len(b_shape), name="b")
    cost = (T.dot(a, b) ** 2).sum()
    check_grad(cost, {a: rng.normal(size=a_shape), b: rng.normal(size=b_shape)})


@pytest.mark.parametrize("build", [
    lambda x: (x.T * T.constant(A.T)).sum(),
    lambda x: (x.dimshuffle(1, "x", 0) * T.constant(V4).dimshuffle(0, "x", "x")).sum(),
    lambda x: (x.reshape((2, 6)) ** 2 * T.arange(6)).sum(),
    lambda x: (x.flatten() ** 3).sum(),
    lambda x: (T.concatenate([x, x ** 2], axis=1) * T.arange(8)).sum(),
    lambda x: (T.stack([x.sum(), x.max(), x[0, 0]]) ** 2).sum(),
    lambda x: (T.stack([x, 2 * x], axis=1) ** 2).sum(),
])
def test_shape_ops(build):
    x = T.matrix("x")
    check_grad(build(x), {x: A})


def test_switch_clip_cast():
    x = T.vector("x")
    data = np.array([-1.0, 0.3, 2.0, 0.8])
    check_grad((T.switch(x > 0.5, x ** 2, -x) + x.clip(0, 1) * 3).sum(), {x: data})
    f = T.fvector("f")
    cost = T.cast(f, "float64").sum() * 2.0
    g = T.grad(cost, f)
    assert g.dtype == "float32" and np.allclose(evaluate(g, {f: data}), 2.0)


def test_nnet():
    x, y = T.matrix("x"), T.ivector("y")
    labels = np.array([1, 3, 0], "int32")
    check_grad(T.nnet.categorical_crossentropy(T.nnet.softmax(x), y).mean(), {x: A, y: labels},
               wrt=[x])
    check_grad((T.nnet.log_softmax(x) * T.constant(B)).sum(), {x: A})
    check_grad(T.nnet.relu(x - 1).sum(), {x: A})


def test_logistic_regression_cost():
    x, y, w, b = T.matrix("x"), T.vector("y"), T.vector("w"), T.scalar("b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    feeds = {x: rng.normal(size=(5, 4)), y: np.array([0.0, 1.0, 1.0, 0.0, 1.0]),
             w: rng.normal(size=4), b: np.array(0.1)}
    check_grad(cost, feeds, wrt=[w, b])


def test_contributions_from_several_paths_add_up():
    x = T.vector("x")
    y = x * 2
    cost = (y * y).sum() + y.sum() + x.sum()
    g = T.grad(cost, x)
    assert np.allclose(evaluate(g, {x: V3}), 8 * V3 + 3)


def test_second_derivative():
    x = T.vector("x")
    g = T.grad((x ** 3).sum(), x)
    h = T.grad(g.sum(), x)
    assert np.allclose(evaluate(h, {x: V3}), 6 * V3)


def test_consider_constant_stops_the_gradient():
    x = T.vector("x")
    stop = x * 2
    cost = (x * stop).sum()
    assert np.allclose(evaluate(T.grad(cost, x), {x: V3}), 4 * V3)
    assert np.allclose(evaluate(T.grad(cost, x, consider_constant=[stop]), {x: V3}), 2 * V3)


def test_wrt_forms_and_result_types():
    x, r = T.fmatrix("x"), T.frow("r")
    cost = (x * r).sum()
    assert not isinstance(T.grad(cost, x), list)
    gx, gr = T.grad(cost, [x, r])
    assert (gx.type, gr.type) == (x.type, r.type)
    assert T.grad(cost, (x,))[0].type == x.type
    s = T.scalar("s")
    assert np.allclose(evaluate(T.grad(s, s), {s: 2.0}), 1.0)


def test_gradient_names():
    x = T.vector("x")
    cost = (x ** 2).sum()
    cost.name = "cost"
    assert T.grad(cost, x).name == "(dcost/dx)"
    assert T.grad((x ** 2).sum(), x).name is None


def test_disconnected_inputs():
    x, y = T.vector("x"), T.vector("y")
    cost = (x ** 2).sum()
    with pytest.raises(DisconnectedInputError, match="does not depend on y"):
        T.grad(cost, [x, y])
    with pytest.warns(UserWarning, match="does not depend on y"):
        gx, gy = T.grad(cost, [x, y], disconnected_inputs="warn")
    assert np.array_equal(evaluate(gy, {y: V3}), np.zeros(3)) and gy.type == y.type
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, none = T.grad(cost, [x, y], disconnected_inputs="ignore", return_disconnected="None")
    assert none is None
    with pytest.raises(DisconnectedInputError):
        T.grad(cost, y, consider_constant=[x])  # the only path is cut
    with pytest.raises(ValueError, match="disconnected_inputs"):
        T.grad(cost, x, disconnected_inputs="sometimes")


def test_paths_through_integers_give_zero_gradients():
    x, i = T.vector("x"), T.ivector("i")
    cost = (x * T.argmax(x)).sum() + T.cast(i, "float64").sum()
    gi = T.grad(cost, i)  # Theano's gradients are never integers: float zeros
    assert gi.dtype == "float64" and np.array_equal(evaluate(gi, {i: np.array([1, 2], "int32")}),
                                                    [0, 0])


def test_known_grads():
    x = T.vector("x")
    y = T.exp(x)
    g = T.grad(None, x, known_grads={y: T.constant(np.array([1.0, 2.0, 3.0]))})
    assert np.allclose(evaluate(g, {x: V3}), np.exp(V3) * [1, 2, 3])
    cost = y.sum()
    both = T.grad(cost, x, known_grads={y: T.ones_like(y)})
    assert np.allclose(evaluate(both, {x: V3}), 2 * np.exp(V3))


def test_cost_must_be_a_scalar():
    x = T.vector("x")
    with pytest.raises(GraphTypeError, match=r"test_grad.py:\d+: grad: the cost must be a scalar"):
        T.grad(x * 2, x)
    with pytest.raises(TypeError, match="symbolic variables"):
        T.grad(x.sum(), np.ones(3))


def test_gradient_ops_carry_the_forward_lines():
    x = T.vector("x")
    y = T.tanh(x)  # the line of the forward op
    line = y.value.op.location.line
    g = T.grad(y.sum(), x)
    assert g.value.op.location.line == line


def away_from_ties(x: np.ndarray, y: np.ndarray, margin: float) -> np.ndarray:
    """``x`` with each element at least ``margin`` from the element of ``y`` it meets when
    broadcast: ``maximum`` switches operands where they tie, and a central difference taken
    across that kink is no derivative at all.

    >>> away_from_ties(np.array([1.0, 2.0, 3.0]), np.array([1.001, 5.0, 2.999]), 0.01)
    array([0.991, 2.   , 3.009])
    """
    partner = np.broadcast_to(y, x.shape)
    close = np.abs(x - partner) < margin
    return np.where(close, partner + np.where(x >= partner, margin, -margin), x)


# A tie of x and y within the float32 step (seed 16383) put the kink of maximum inside the
# finite difference.
@example("maximum", [False, False, False], 0, "float32", 16383)
@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["add", "sub", "mul", "true_div", "maximum", "pow"]),
       st.lists(st.booleans(), min_size=1, max_size=3), st.integers(0, 2),
       st.sampled_from(["float32", "float64"]), st.integers(0, 2 ** 16))
def test_broadcast_gradients_property(name, pattern, dropped, dtype, seed):
    """Random broadcast patterns, ranks and dtypes through a binary op, then a reduction."""
    rank = len(pattern)
    low_rank = max(rank - dropped, 0)
    x = T.tensor("float64", (False,) * rank, name="x")
    y = T.tensor(dtype, tuple(pattern[rank - low_rank:]), name="y")
    out = getattr(T, name)(x, y)
    cost = (out * T.constant(np.linspace(0.5, 1.5, 4 ** rank).reshape((4,) * rank))).sum()
    gen = np.random.default_rng(seed)
    feeds = {x: gen.uniform(0.5, 1.5, (4,) * rank),
             y: gen.uniform(0.5, 1.5, tuple(1 if b else 4 for b in y.broadcastable)).astype(dtype)}
    # The largest finite-difference step below is 1e-3: ties stay ten steps away.
    if name == "maximum":
        feeds[x] = away_from_ties(feeds[x], feeds[y], margin=1e-2)
    grads = T.grad(cost, [x, y])
    assert [g.value.type for g in grads] == [x.value.type, y.value.type]
    for var, g in zip((x, y), evaluate(grads, feeds)):
        def f(data, var=var):
            return float(evaluate(cost, {**feeds, var: data}))
        tolerance = 1e-5 if var.dtype == "float64" else 2e-2
        np.testing.assert_allclose(g, numeric_grad(f, feeds[var], eps=1e-6 if tolerance == 1e-5
                                                   else 1e-3), rtol=tolerance, atol=tolerance)
