"""``stabilize``: at extreme inputs the naive graph gives inf or NaN, the rewritten one is finite
and right (checked in the reference interpreter)."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile.pipeline import OPTIMIZATION_ORDER, Mode

from .opt_helpers import module_from, op_names, optimized, run

V = "tensor<?xf64>"


def softplus(x):
    return np.logaddexp(0.0, x)


def sigmoid(x):
    return np.exp(-softplus(-x))


def one(name="c", value="1.0"):
    return f'  %{name} = "tensor.constant"() {{value = dense<{value}> : tensor<1xf64>}} : () -> tensor<1xf64>'


def unary(result, name, operand):
    return f'  %{result} = "tensor.{name}"(%{operand}) : ({V}) -> {V}'


def binary(result, name, a, b, ta=V, tb=V):
    return f'  %{result} = "tensor.{name}"(%{a}, %{b}) : ({ta}, {tb}) -> {V}'


C = "tensor<1xf64>"
X_BIG = np.array([-1000.0, -40.0, -1.0, 0.0, 2.0, 40.0, 1000.0])
X_TINY = np.array([1e-20, -1e-18, 3e-17])

# name, body lines defining %r, input, reference
CASES = [
    ("log(sigmoid(x))", [unary("s", "sigmoid", "x"), unary("r", "log", "s")],
     X_BIG, lambda x: -softplus(-x)),
    ("log(1 - sigmoid(x))", [one(), unary("s", "sigmoid", "x"),
                             binary("m", "sub", "c", "s", C), unary("r", "log", "m")],
     X_BIG, lambda x: -softplus(x)),
    ("log(1 + exp(x))", [one(), unary("e", "exp", "x"), binary("a", "add", "e", "c", V, C),
                         unary("r", "log", "a")],
     X_BIG, softplus),
    ("log1p(exp(x))", [unary("e", "exp", "x"), unary("r", "log1p", "e")], X_BIG, softplus),
    ("log1p(-sigmoid(x))", [unary("s", "sigmoid", "x"), unary("n", "neg", "s"),
                            unary("r", "log1p", "n")],
     X_BIG, lambda x: -softplus(x)),
    ("log(exp(x))", [unary("e", "exp", "x"), unary("r", "log", "e")], X_BIG, lambda x: x),
    ("log(1 / (1 + exp(-x)))", [one(), unary("n", "neg", "x"), unary("e", "exp", "n"),
                                binary("a", "add", "c", "e", C), binary("p", "div", "c", "a", C),
                                unary("r", "log", "p")],
     X_BIG, lambda x: -softplus(-x)),
    ("exp(x) / (1 + exp(x))", [one(), unary("e", "exp", "x"), binary("a", "add", "c", "e", C),
                               binary("r", "div", "e", "a")],
     X_BIG, sigmoid),
    ("exp(x) * sigmoid(-x)", [unary("e", "exp", "x"), unary("n", "neg", "x"),
                              unary("s", "sigmoid", "n"), binary("r", "mul", "e", "s")],
     X_BIG, sigmoid),
    ("(x / sigmoid(x)) * sigmoid(x)", [unary("s", "sigmoid", "x"),
                                       binary("d", "div", "x", "s"),
                                       binary("r", "mul", "d", "s")],
     X_BIG, lambda x: x),
    ("1 / log(1 + x)", [one(), binary("a", "add", "c", "x", C), unary("l", "log", "a"),
                        binary("r", "div", "c", "l", C)],
     X_TINY, lambda x: 1 / np.log1p(x)),
    ("1 / log(1 - x)", [one(), binary("a", "sub", "c", "x", C), unary("l", "log", "a"),
                        binary("r", "div", "c", "l", C)],
     X_TINY, lambda x: 1 / np.log1p(-x)),
    ("1 / (exp(x) - 1)", [one(), unary("e", "exp", "x"), binary("m", "sub", "e", "c", V, C),
                          binary("r", "div", "c", "m", C)],
     X_TINY, lambda x: 1 / np.expm1(x)),
    ("1 / (1 - exp(x))", [one(), unary("e", "exp", "x"), binary("m", "sub", "c", "e", C),
                          binary("r", "div", "c", "m", C)],
     X_TINY, lambda x: -1 / np.expm1(x)),
]


@pytest.mark.parametrize("name, lines, x, reference", CASES, ids=[c[0] for c in CASES])
def test_rewrite_is_finite_where_the_naive_graph_is_not(name, lines, x, reference):
    text = f"func.func @f(%x: {V}) -> {V} {{\n" + "\n".join(lines) + f"\n  func.return %r : {V}\n}}"
    module = module_from(text)
    (naive,) = run(module, x)
    assert not np.isfinite(naive).all(), "the input is not extreme enough to test anything"
    after = optimized(module, "stabilize")
    (got,) = run(after, x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, reference(x), rtol=1e-12)


def test_log_of_softmax_is_log_softmax():
    m = "tensor<?x?xf64>"
    text = f"""func.func @f(%x: {m}) -> {m} {{
  %s = "tensor.softmax"(%x) {{axis = 1}} : ({m}) -> {m}
  %r = "tensor.log"(%s) : ({m}) -> {m}
  func.return %r : {m}
}}"""
    x = np.array([[0.0, -1000.0, 5.0], [3.0, 2.0, 1.0]])
    module = module_from(text)
    assert not np.isfinite(run(module, x)[0]).all()
    after = optimized(module, "stabilize")
    assert op_names(after) == ["tensor.log_softmax"]
    shifted = x - x.max(axis=1, keepdims=True)
    expected = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(run(after, x)[0], expected, rtol=1e-12)


def test_sums_distribute_where_a_term_cancels():
    # (u / q + v / p) * p * q with p, q sigmoids: u * p + v * q, finite where p or q is 0.
    text = f"""func.func @f(%x: {V}, %u: {V}, %v: {V}) -> {V} {{
  %p = "tensor.sigmoid"(%x) : ({V}) -> {V}
  %nx = "tensor.neg"(%x) : ({V}) -> {V}
  %q = "tensor.sigmoid"(%nx) : ({V}) -> {V}
  %a = "tensor.div"(%u, %q) : ({V}, {V}) -> {V}
  %b = "tensor.div"(%v, %p) : ({V}, {V}) -> {V}
  %g = "tensor.add"(%a, %b) : ({V}, {V}) -> {V}
  %t = "tensor.mul"(%g, %p) : ({V}, {V}) -> {V}
  %r = "tensor.mul"(%t, %q) : ({V}, {V}) -> {V}
  func.return %r : {V}
}}"""
    x, u, v = X_BIG, np.full(X_BIG.shape, 0.5), np.full(X_BIG.shape, -2.0)
    module = module_from(text)
    assert not np.isfinite(run(module, x, u, v)[0]).all()
    (got,) = run(optimized(module, "stabilize"), x, u, v)
    p = sigmoid(x)
    np.testing.assert_allclose(got, u * p + v * (1 - p), rtol=1e-12)


def test_products_keep_finite_results_and_lose_double_negations():
    # -x is also a result: the product reads through it all the same.
    text = f"""func.func @f(%x: {V}, %y: {V}) -> ({V}, {V}) {{
  %nx = "tensor.neg"(%x) : ({V}) -> {V}
  %ny = "tensor.neg"(%y) : ({V}) -> {V}
  %r = "tensor.mul"(%nx, %ny) : ({V}, {V}) -> {V}
  func.return %r, %nx : {V}, {V}
}}"""
    after = optimized(module_from(text), "stabilize")
    assert op_names(after) == ["tensor.neg", "tensor.mul"]
    x, y = np.array([1.5, -2.0]), np.array([3.0, np.inf])
    got, negated = run(after, x, y)
    np.testing.assert_array_equal(got, x * y)
    np.testing.assert_array_equal(negated, -x)


# ---------------------------------------------------------------------------------------------
# The seeds' logistic regression (float32): no NaN after stabilization, forward or backward.


def _logistic_regression(floatx: str, n: int = 40, feats: int = 12, scale: float = 40.0):
    rng = np.random.RandomState(1234)
    data_x = (rng.randn(n, feats) * scale).astype(floatx)
    data_y = rng.randint(size=n, low=0, high=2).astype(floatx)
    w0 = rng.randn(feats).astype(floatx)
    x, y = T.matrix("x", dtype=floatx), T.vector("y", dtype=floatx)
    w = theano.shared(w0, name="w")
    b = theano.shared(np.asarray(0.0, dtype=floatx), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    return (x, y, w, b), (xent, gw, gb), (data_x, data_y, w0)


def _reference(data_x, data_y, w0):
    x, y, w = (a.astype(np.float64) for a in (data_x, data_y, w0))
    z = x @ w
    p = sigmoid(z)
    xent = y * softplus(-z) + (1 - y) * softplus(z)
    gz = (p - y) / len(y)
    return xent, x.T @ gz + 0.02 * w, gz.sum()


OPTIMIZED = Mode("optimized in the interpreter", OPTIMIZATION_ORDER, ("interpreter",))


@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_logistic_regression_is_finite_forward_and_backward(floatx):
    (x, y, w, b), outputs, (data_x, data_y, w0) = _logistic_regression(floatx)
    naive = theano.function([x, y], list(outputs), mode="INTERP")
    with np.errstate(all="ignore"):
        naive_values = naive(data_x, data_y)
    assert not all(np.isfinite(v).all() for v in naive_values), "inputs not extreme enough"
    stable = theano.function([x, y], list(outputs), mode=OPTIMIZED)
    xent, gw, gb = stable(data_x, data_y)
    assert all(np.isfinite(v).all() for v in (xent, gw, gb))
    want_xent, want_gw, want_gb = _reference(data_x, data_y, w0)
    rtol = 2e-4 if floatx == "float32" else 1e-9
    np.testing.assert_allclose(xent, want_xent, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(gw, want_gw, rtol=rtol, atol=rtol * np.abs(want_gw).max())
    np.testing.assert_allclose(gb, want_gb, rtol=rtol, atol=rtol)


def test_logistic_regression_training_stays_finite():
    (x, y, w, b), (xent, gw, gb), (data_x, data_y, _) = _logistic_regression("float32")
    train = theano.function([x, y], xent, updates={w: w - 0.01 * gw, b: b - 0.01 * gb},
                            mode=OPTIMIZED)
    for _ in range(3):
        err = train(data_x, data_y)
    assert np.isfinite(err).all() and np.isfinite(w.get_value()).all()
    assert np.isfinite(b.get_value())


def test_a_general_factor_does_not_cancel_so_zero_over_zero_stays_nan():
    import lowering as theano
    import lowering.tensor as T
    x = T.dscalar("x")
    f = theano.function([x], x / x)
    assert np.isnan(f(0.0)) and np.isnan(f(np.inf)) and f(2.0) == 1.0
