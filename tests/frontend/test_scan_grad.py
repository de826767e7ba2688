"""``T.grad`` through ``theano.scan``: backpropagation through time against finite
differences, truncated gradients, nested scans and scans inside a gradient."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T

from .helpers import tapped_step_total

NONLINEAR = {"tanh": T.tanh, "sin": T.sin, "square": lambda v: v * v * 0.5}


def numeric_grad(cost, args, eps=1e-6):
    grads = []
    for i, a in enumerate(args):
        g = np.zeros_like(a)
        for idx in np.ndindex(*a.shape):
            plus = [x.copy() for x in args]
            plus[i][idx] += eps
            minus = [x.copy() for x in args]
            minus[i][idx] -= eps
            g[idx] = (cost(*plus) - cost(*minus)) / (2 * eps)
        grads.append(g)
    return grads


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 5), size=st.integers(1, 3),
       out_taps=st.sampled_from([[-1], [-2, -1], [-1, -3]]),
       seq_taps=st.sampled_from([[0], [-1, 0], [0, 2]]),
       nonlinear=st.sampled_from(sorted(NONLINEAR)), backwards=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_bptt_matches_finite_differences(steps, size, out_taps, seq_taps, nonlinear, backwards,
                                         seed):
    depth = -min(out_taps)
    span = max(seq_taps) - min(seq_taps)
    # Taps [-1] take the state itself as initial value; deeper taps its earlier rows.
    xs, W = T.dmatrix("xs"), T.dmatrix("W")
    h0 = T.dmatrix("h0") if depth > 1 else T.dvector("h0")
    act = NONLINEAR[nonlinear]

    def step(*args):
        return act(tapped_step_total(args, len(seq_taps)))

    h, _ = theano.scan(step, sequences={"input": xs, "taps": seq_taps},
                       outputs_info={"initial": h0, "taps": out_taps}, non_sequences=W,
                       go_backwards=backwards)
    cost = (h * h).sum() + h[-1].sum()
    f = theano.function([xs, h0, W], T.grad(cost, [xs, h0, W]), mode="INTERP")
    c = theano.function([xs, h0, W], cost, mode="INTERP")
    r = np.random.default_rng(seed)
    args = [r.normal(size=(steps + span, size)),
            r.normal(size=(depth, size) if depth > 1 else (size,)),
            r.normal(size=(size, size)) * 0.4]
    # Central differences of a cost of size |c| are off by about |c| * float64's epsilon / eps
    # from rounding alone (a squaring recurrence reaches 1e13), on every component alike.
    rounding = 10 * abs(float(c(*args))) * np.finfo(np.float64).eps / 1e-6
    for got, want in zip(f(*args), numeric_grad(c, args)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=max(1e-5, rounding))


def test_bptt_in_compiled_code_matches_the_interpreter():
    xs, h0 = T.fmatrix("xs"), T.fvector("h0")
    W = theano.shared(np.random.default_rng(1).normal(size=(4, 4)).astype("float32") * 0.3,
                      name="W")
    b = theano.shared(np.zeros(4, dtype="float32"), name="b")
    h, _ = theano.scan(lambda x, h: T.tanh(T.dot(W, h) + x + b), sequences=xs,
                       outputs_info=h0)
    cost = h[-1].sum() + (h ** 2).mean()
    grads = T.grad(cost, [W, b, xs, h0])
    r = np.random.default_rng(2)
    X, H0 = r.normal(size=(7, 4)).astype("float32"), r.normal(size=4).astype("float32")
    compiled = theano.function([xs, h0], grads, mode="FAST_RUN")(X, H0)
    interpreted = theano.function([xs, h0], grads, mode="INTERP")(X, H0)
    for a, e in zip(compiled, interpreted):
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
def test_truncated_gradient_uses_only_the_last_k_steps(mode):
    xs, h0, w = T.dvector("xs"), T.dscalar("h0"), T.dscalar("w")
    h, _ = theano.scan(lambda x, h: T.tanh(w * h + x), sequences=xs, outputs_info=h0,
                       truncate_gradient=2)
    cost = h.sum()
    gx, gh0 = T.grad(cost, [xs, h0])
    f = theano.function([xs, h0, w], [gx, gh0, h], mode=mode)
    X, W = np.array([0.1, -0.2, 0.3, 0.5]), 0.7
    dx, dh0, H = f(X, 0.4, W)
    # As Theano: backpropagation through the last 2 steps only.
    expected, carried = np.zeros(4), 0.0
    for t in (3, 2):
        expected[t] = (1.0 + carried) * (1 - H[t] ** 2)
        carried = expected[t] * W
    np.testing.assert_allclose(dx, expected)
    assert dh0 == 0.0


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
def test_nested_scan_forward_and_gradient(mode):
    M, v = T.dmatrix("M"), T.dvector("v")

    def row_step(row, acc, v):
        inner, _ = theano.scan(lambda a, p: p * a + v.sum(), sequences=row,
                               outputs_info=T.constant(1.0))
        return acc + inner[-1]

    total, _ = theano.scan(row_step, sequences=M, outputs_info=T.constant(0.0),
                           non_sequences=v)
    cost = total[-1]
    f = theano.function([M, v], [cost, *T.grad(cost, [M, v])], mode=mode)
    c = theano.function([M, v], cost, mode="INTERP")
    r = np.random.default_rng(3)
    args = [r.normal(size=(3, 4)) * 0.5, r.normal(size=2)]
    expected = 0.0
    for row in args[0]:
        p = 1.0
        for a in row:
            p = p * a + args[1].sum()
        expected += p
    value, *grads = f(*args)
    np.testing.assert_allclose(value, expected)
    for got, want in zip(grads, numeric_grad(c, args)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_gradient_inside_the_step_and_of_the_loop():
    x0 = T.dvector("x0")

    def descend(x):
        return x - 0.1 * T.grad((T.sin(x) * x).sum(), x)

    xs, _ = theano.scan(descend, outputs_info=x0, n_steps=4)
    cost = xs[-1].sum()
    f = theano.function([x0], [xs[-1], T.grad(cost, x0)], mode="INTERP")
    c = theano.function([x0], cost, mode="INTERP")
    X0 = np.array([0.3, -1.2, 2.0])
    last, g = f(X0)
    x = X0.copy()
    for _ in range(4):
        x = x - 0.1 * (np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(last, x)
    np.testing.assert_allclose(g, numeric_grad(c, [X0])[0], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
@pytest.mark.parametrize("backwards", [False, True])
def test_gradient_through_until_backpropagates_the_steps_that_ran(mode, backwards):
    # h_t = tanh(a * h_{t-1} + x_t) until h exceeds the limit: the steps that ran depend on
    # the values, and the gradient goes through exactly those (the rows of xs not read get 0).
    xs, h0, a = T.dvector("xs"), T.dscalar("h0"), T.dscalar("a")
    hs, _ = theano.scan(lambda x, h, a: (T.tanh(a * h + x), theano.scan_module.until(h > 0.8)),
                        sequences=xs, outputs_info=h0, non_sequences=a, go_backwards=backwards)
    cost = (hs * hs).sum() + hs[-1]
    f = theano.function([xs, h0, a], [hs, *T.grad(cost, [xs, h0, a])], mode=mode)
    c = theano.function([xs, h0, a], cost, mode="INTERP")
    X, H0, A = np.array([0.3, 0.4, 0.5, 0.6, 0.2, 0.1]), np.array(0.1), np.array(0.9)
    values, g_xs, g_h0, g_a = f(X, H0, A)
    assert 1 < len(values) < len(X)  # stopped early
    expected = numeric_grad(lambda *v: c(*v), [X, H0, A])
    for got, want in zip([g_xs, g_h0, g_a], expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    unread = g_xs[:len(X) - len(values)] if backwards else g_xs[len(values):]
    assert np.all(unread == 0)


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
def test_gradient_of_a_scan_of_zero_steps_is_an_error_naming_the_line(mode):
    # Theano runs no scan of 0 steps; the gradient says so, with the scan's line.
    xs, h0, W = T.dvector("xs"), T.dvector("h0"), T.dmatrix("W")
    hs, _ = theano.scan(lambda x, h, W: T.tanh(T.dot(W, h) + x), sequences=xs,
                        outputs_info=h0, non_sequences=W)  # the scan's line
    f = theano.function([xs, h0, W], T.grad(hs.sum(), [h0, W]), mode=mode)
    H0, W0 = np.ones(2), np.eye(2)
    g_h0, g_W = f(np.ones(2), H0, W0)
    assert g_h0.shape == (2,) and g_W.shape == (2, 2)
    test = test_gradient_of_a_scan_of_zero_steps_is_an_error_naming_the_line
    line = test.__code__.co_firstlineno + 4
    with pytest.raises(ValueError, match=rf"test_scan_grad.py:{line}:.*at least one step.*0 steps"):
        f(np.ones(0), H0, W0)


def test_gradient_when_the_initial_state_knows_a_static_size_the_step_does_not():
    """``alloc(0., n, 3)`` is ``?x3`` while the step's state argument is ``?x?``: the backward
    step recomputes the forward one on rows of the first type (an LSTM's gated state)."""
    xs = T.dtensor3("xs")
    W = theano.shared(np.random.default_rng(0).normal(size=(3, 6)), name="W")
    n = xs.shape[1]

    def step(x_t, h):
        pre = T.dot(h, W) + x_t
        gate = T.nnet.sigmoid(pre[:, :3])
        return gate[:, None, :][:, 0, :] * h + T.tanh(pre[:, 3:])

    hs, _ = theano.scan(step, sequences=xs, outputs_info=T.alloc(np.float64(0.), n, 3))
    cost = (hs ** 2).sum()
    f = theano.function([xs], T.grad(cost, W))
    xv = np.random.default_rng(1).normal(size=(4, 2, 6))
    Wv = W.get_value()

    def numpy_cost(Wv):
        h = np.zeros((2, 3))
        total = 0.0
        for x_t in xv:
            pre = h @ Wv + x_t
            h = h / (1 + np.exp(-pre[:, :3])) + np.tanh(pre[:, 3:])
            total += (h ** 2).sum()
        return total

    np.testing.assert_allclose(f(xv), numeric_grad(numpy_cost, [Wv])[0], rtol=1e-6, atol=1e-8)
