"""``theano.scan`` and its views through the Theano API, against NumPy loops, in the
interpreter and in compiled code."""
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.scan_module import until

MODES = ["INTERP", "FAST_RUN"]


def rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("mode", MODES)
def test_elman_recurrence_matches_a_numpy_loop(mode):
    xs, h0, W = T.dmatrix("xs"), T.dvector("h0"), T.dmatrix("W")
    h, updates = theano.scan(lambda x_t, h, W: T.tanh(T.dot(W, h) + x_t),
                             sequences=xs, outputs_info=h0, non_sequences=W)
    assert updates == {}
    f = theano.function([xs, h0, W], h, mode=mode)
    r = rng()
    X, H0, WW = r.normal(size=(6, 4)), r.normal(size=4), r.normal(size=(4, 4))
    expected, hh = [], H0
    for x in X:
        hh = np.tanh(WW @ hh + x)
        expected.append(hh)
    np.testing.assert_allclose(f(X, H0, WW), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_taps_on_sequences_and_outputs(mode):
    x = T.dvector("x")
    init = T.dvector("init")

    def step(x_m2, x_0, y_m2, y_m1):
        return x_0 - x_m2 + 0.5 * y_m1 + 0.25 * y_m2

    y, _ = theano.scan(step, sequences={"input": x, "taps": [-2, 0]},
                       outputs_info={"initial": init, "taps": [-2, -1]})
    f = theano.function([x, init], y, mode=mode)
    X, I = np.arange(7.0) ** 2, np.array([1.0, -1.0])
    hist = list(I)
    for t in range(5):
        hist.append(X[t + 2] - X[t] + 0.5 * hist[-1] + 0.25 * hist[-2])
    np.testing.assert_allclose(f(X, I), hist[2:])


@pytest.mark.parametrize("mode", MODES)
def test_outputs_not_fed_back_and_several_outputs(mode):
    x = T.dvector("x")
    (cum, sq), _ = theano.scan(lambda v, acc: [acc + v, v * v], sequences=x,
                               outputs_info=[np.float64(0), None])
    f = theano.function([x], [cum, sq], mode=mode)
    X = np.array([1.0, 2.0, 3.0, 4.0])
    c, s = f(X)
    np.testing.assert_allclose(c, np.cumsum(X))
    np.testing.assert_allclose(s, X * X)


@pytest.mark.parametrize("mode", MODES)
def test_n_steps_without_sequences_and_go_backwards(mode):
    a = T.dscalar("a")
    powers, _ = theano.scan(lambda p, a: p * a, outputs_info=T.constant(1.0),
                            non_sequences=a, n_steps=5)
    x = T.dvector("x")
    rev, _ = theano.scan(lambda v: v * 10, sequences=x, go_backwards=True)
    f = theano.function([a, x], [powers, rev], mode=mode)
    p, r = f(2.0, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(p, [2, 4, 8, 16, 32])
    np.testing.assert_allclose(r, [30, 20, 10])


@pytest.mark.parametrize("mode", MODES)
def test_map_reduce_foldl_foldr(mode):
    x = T.dvector("x")
    m, _ = theano.map(lambda v: v + 1, [x])
    s, _ = theano.reduce(lambda v, acc: acc + v, [x], T.constant(0.0))
    l, _ = theano.foldl(lambda v, acc: acc * 2 + v, [x], T.constant(0.0))
    r, _ = theano.foldr(lambda v, acc: acc * 2 + v, [x], T.constant(0.0))
    f = theano.function([x], [m, s, l, r], mode=mode)
    X = np.array([1.0, 2.0, 3.0])
    out = f(X)
    np.testing.assert_allclose(out[0], X + 1)
    assert out[1] == 6.0
    assert out[2] == ((1 * 2) + 2) * 2 + 3
    assert out[3] == ((3 * 2) + 2) * 2 + 1


@pytest.mark.parametrize("mode", MODES)
def test_until_stops_the_loop(mode):
    x0 = T.dscalar("x0")
    vals, _ = theano.scan(lambda v: (v * 2, until(v * 2 > 50)), outputs_info=x0, n_steps=100)
    f = theano.function([x0], vals, mode=mode)
    np.testing.assert_allclose(f(1.0), [2, 4, 8, 16, 32, 64])
    np.testing.assert_allclose(f(100.0), [200])


@pytest.mark.parametrize("mode", MODES)
def test_zero_steps(mode):
    x = T.dmatrix("x")
    h0 = T.dvector("h0")
    h, _ = theano.scan(lambda v, h: v + h, sequences=x, outputs_info=h0)
    f = theano.function([x, h0], h, mode=mode)
    assert f(np.zeros((0, 3)), np.ones(3)).shape == (0, 3)


@pytest.mark.parametrize("mode", MODES)
def test_shared_variable_updated_inside_fn(mode):
    counter = theano.shared(np.float64(0), name="counter")
    x = T.dvector("x")

    def step(v):
        return v * counter, OrderedDict([(counter, counter + 1)])

    out, updates = theano.scan(step, sequences=x)
    assert list(updates) == [counter]
    f = theano.function([x], out, updates=updates, mode=mode)
    np.testing.assert_allclose(f(np.array([1.0, 1.0, 1.0])), [0, 1, 2])
    assert counter.get_value() == 3
    np.testing.assert_allclose(f(np.array([2.0])), [6])
    assert counter.get_value() == 4


@pytest.mark.parametrize("mode", MODES)
def test_default_update_of_a_shared_variable_used_inside_fn(mode):
    state = theano.shared(np.float64(1), name="state")
    state.default_update = state * 3
    x = T.dvector("x")
    out, updates = theano.scan(lambda v: v + state, sequences=x)
    assert list(updates) == [state]
    f = theano.function([x], out, updates=updates, mode=mode)
    np.testing.assert_allclose(f(np.zeros(3)), [1, 3, 9])
    assert state.get_value() == 27


@pytest.mark.parametrize("mode", MODES)
def test_last_step_of_a_matrix_recurrence(mode):
    A = T.dmatrix("A")
    k = T.iscalar("k")
    result, _ = theano.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A),
                            non_sequences=A, n_steps=k)
    f = theano.function([A, k], result[-1], mode=mode)
    M = np.array([[1.0, 2.0], [3.0, 0.5]])
    np.testing.assert_allclose(f(M, 4), M ** 4)


def test_return_list_and_scan_module_names():
    x = T.dvector("x")
    outs, _ = theano.scan(lambda v: v * 2, sequences=x, return_list=True)
    assert isinstance(outs, list) and len(outs) == 1
    assert theano.scan_module.scan is theano.scan
    assert theano.scan_module.until is until


def test_debug_mode_checks_every_pass_on_a_scan_and_its_gradient():
    xs, h0 = T.dmatrix("xs"), T.dvector("h0")
    W = theano.shared(np.eye(3) * 0.5, name="W")
    h, _ = theano.scan(lambda x, h: T.tanh(T.dot(W, h) + 2 * x), sequences=xs, outputs_info=h0)
    cost = h[-1].sum() + h.sum()
    f = theano.function([xs, h0], [h[-1], *T.grad(cost, [W, xs])], mode="DebugMode")
    g = theano.function([xs, h0], [h[-1], *T.grad(cost, [W, xs])], mode="FAST_RUN")
    args = (rng(4).normal(size=(5, 3)), rng(5).normal(size=3))
    for a, b in zip(f(*args), g(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-10)


@settings(max_examples=12, deadline=None)
@given(steps=st.integers(0, 5), out_taps=st.sampled_from([[-1], [-2, -1], [-3, -1]]),
       seq_taps=st.sampled_from([[0], [-1, 0], [0, 2]]), backwards=st.booleans(),
       last_only=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_compiled_scans_match_the_interpreter(steps, out_taps, seq_taps, backwards, last_only,
                                              seed):
    depth, span = -min(out_taps), max(seq_taps) - min(seq_taps)
    # Taps [-1] take the state itself as initial value; deeper taps its earlier rows.
    xs, W = T.dmatrix("xs"), T.dmatrix("W")
    init = T.dmatrix("init") if depth > 1 else T.dvector("init")

    def step(*args):
        rows, states, w = args[:len(seq_taps)], args[len(seq_taps):-1], args[-1]
        total = sum(rows[1:], rows[0]) * 0.5
        for k, s in enumerate(states):
            total = total + T.dot(w, s) / (k + 2)
        return T.tanh(total), total.sum()

    (h, s), _ = theano.scan(step, sequences={"input": xs, "taps": seq_taps},
                            outputs_info=[{"initial": init, "taps": out_taps}, None],
                            non_sequences=W, go_backwards=backwards)
    outs = [h[-1], s[-1]] if last_only and steps else [h, s]
    r = rng(seed)
    args = [r.normal(size=(steps + span + 1, 3)),
            r.normal(size=(depth, 3) if depth > 1 else 3), r.normal(size=(3, 3))]
    compiled = theano.function([xs, init, W], outs, mode="FAST_RUN")(*args)
    interpreted = theano.function([xs, init, W], outs, mode="INTERP")(*args)
    for a, b in zip(compiled, interpreted):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_training_step_updating_weights_the_scan_reads(mode):
    xs = T.dmatrix("xs")
    W = theano.shared(np.eye(3) * 0.3, name="W")
    b = theano.shared(np.zeros(3), name="b")
    h, _ = theano.scan(lambda x, h: T.tanh(T.dot(W, h) + x + b), sequences=xs,
                       outputs_info=T.zeros((3,), dtype="float64"))
    cost = (h ** 2).sum()
    gW, gb = T.grad(cost, [W, b])
    train = theano.function([xs], cost, updates=[(W, W - 0.1 * gW), (b, b - 0.1 * gb)],
                            mode=mode)
    X = rng(7).normal(size=(4, 3))
    first = train(X)
    second = train(X)
    assert second < first
    # The same two steps by NumPy.
    w, bias = np.eye(3) * 0.3, np.zeros(3)
    for _ in range(2):
        hs, hh = [], np.zeros(3)
        for x in X:
            hh = np.tanh(w @ hh + x + bias)
            hs.append(hh)
        gw, gbias, carried = np.zeros((3, 3)), np.zeros(3), np.zeros(3)
        for t in range(3, -1, -1):
            dz = (2 * hs[t] + carried) * (1 - hs[t] ** 2)
            gw += np.outer(dz, hs[t - 1] if t else np.zeros(3))
            gbias += dz
            carried = w.T @ dz
        w, bias = w - 0.1 * gw, bias - 0.1 * gbias
    np.testing.assert_allclose(W.get_value(), w, rtol=1e-10)
    np.testing.assert_allclose(b.get_value(), bias, rtol=1e-10)


def test_the_optimized_ir_of_scans_prints_and_parses_back():
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op
    x0 = T.dscalar("x0")
    xs = T.dvector("xs")
    vals, _ = theano.scan(lambda v, p: (p + v, until(p > 3)), sequences=xs, outputs_info=x0,
                          go_backwards=True)
    h, _ = theano.scan(lambda v, p: p * v, sequences=xs, outputs_info=x0, truncate_gradient=2)
    f = theano.function([xs, x0], [vals, h[-1], T.grad(h[-1], xs)], mode="FAST_RUN")
    text = str(f.ir("optimized"))
    assert "tensor.scan" in text and "until = true" in text and "go_backwards = true" in text
    assert print_op(parse_module(text)) == text


@pytest.mark.parametrize("units", [1, 5, 130, 260])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_matrix_vector_products_in_a_step_on_both_sides_of_the_loops_threshold(units, layout):
    # A step's products with a matrix of at most 65,536 elements run as generated loops, larger
    # ones through BLAS (130 x 130 and 260 x 260 fall on either side); both orders of the
    # product, and matrices BLAS reads by rows, by columns, or from a copy.
    r = rng(units)
    data = r.normal(size=(units, 2 * units)) / np.sqrt(units)
    w_value = {"contiguous": data[:, :units].copy(), "transposed": data[:, :units].copy().T,
               "strided": data[:, ::2]}[layout]
    xs_value, h0_value = r.normal(size=(4, units)), r.normal(size=units)
    xs, h0, W = T.dmatrix("xs"), T.dvector("h0"), T.dmatrix("W")
    # W.T . h and h . W.T read W's rows in the other form.
    h, _ = theano.scan(lambda x, h_prev, w: T.tanh(T.dot(w, h_prev) + T.dot(h_prev, w) * 0.5
                                                   + T.dot(w.T, h_prev) * 0.25
                                                   + T.dot(h_prev, w.T) * 0.125 + x),
                       sequences=xs, outputs_info=h0, non_sequences=W)
    expected, state = [], h0_value
    for x in xs_value:
        state = np.tanh(w_value @ state + (state @ w_value) * 0.5 + (w_value.T @ state) * 0.25
                        + (state @ w_value.T) * 0.125 + x)
        expected.append(state)
    for mode in MODES:
        got = theano.function([xs, h0, W], h, mode=mode)(xs_value, h0_value, w_value)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12)
