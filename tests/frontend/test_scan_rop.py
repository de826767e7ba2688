"""``T.Rop`` through ``theano.scan``: the recurrence of tangents against finite differences and
against ``Lop`` (``<u, J v> = <J^T u, v>``), in the interpreter, compiled code and the simulated
GPU, and the Gauss-Newton product of Hessian-free training."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.frontend.errors import DisconnectedInputError
from lowering.scan_module import until

from .helpers import float64_by_default, numeric_jacobian, tapped_step_total  # noqa: F401 (autouse)
from .python_ops import TwiceOp

NONLINEAR = {"tanh": T.tanh, "sigmoid": T.nnet.sigmoid, "square": lambda v: v * v * 0.5}


def directional(fn, args, directions, eps=1e-6):
    """Central differences of ``fn`` along ``directions``."""
    up = fn(*[a + eps * d for a, d in zip(args, directions)])
    down = fn(*[a - eps * d for a, d in zip(args, directions)])
    return (np.asarray(up) - np.asarray(down)) / (2 * eps)


def eval_points(variables):
    return [v.type(f"v_{v.name}") for v in variables]


@settings(max_examples=10, deadline=None)
@given(steps=st.integers(1, 4), size=st.integers(1, 3),
       out_taps=st.sampled_from([[-1], [-2, -1], [-1, -3]]),
       seq_taps=st.sampled_from([[0], [-1, 0], [0, 2]]),
       nonlinear=st.sampled_from(sorted(NONLINEAR)), backwards=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_rop_matches_finite_differences_and_lop(steps, size, out_taps, seq_taps, nonlinear,
                                                backwards, seed):
    """Several past taps of sequences and outputs, non-sequences, both directions, and an
    output that is not fed back (``y``, read by nothing in the step)."""
    depth = -min(out_taps)
    span = max(seq_taps) - min(seq_taps)
    xs, W = T.dmatrix("xs"), T.dmatrix("W")
    h0 = T.dmatrix("h0") if depth > 1 else T.dvector("h0")
    act = NONLINEAR[nonlinear]

    def step(*args):
        h = act(tapped_step_total(args, len(seq_taps)))
        return h, T.nnet.softmax(h.dimshuffle("x", 0))[0] * args[0]

    (h, y), _ = theano.scan(step, sequences={"input": xs, "taps": seq_taps},
                            outputs_info=[{"initial": h0, "taps": out_taps}, None],
                            non_sequences=W, go_backwards=backwards)
    inputs = [xs, h0, W]
    points = eval_points(inputs)
    rops = T.Rop([h, y], inputs, points)
    r = np.random.default_rng(seed)
    args = [r.normal(size=(steps + span, size)),
            r.normal(size=(depth, size) if depth > 1 else (size,)),
            r.normal(size=(size, size)) * 0.4]
    directions = [r.normal(size=a.shape) for a in args]
    u = [r.normal(size=(steps, size)) for _ in range(2)]
    us = [T.dmatrix("uh"), T.dmatrix("uy")]
    lops = T.Lop([h, y], inputs, us)
    f = theano.function([*inputs, *points, *us], [*rops, *lops], mode="INTERP")
    values = theano.function(inputs, [h, y], mode="INTERP")
    jv_h, jv_y, *jtu = f(*args, *directions, *u)
    for got, output in zip([jv_h, jv_y], range(2)):
        want = directional(lambda *a: values(*a)[output], args, directions)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.sum(u[0] * jv_h) + np.sum(u[1] * jv_y),
                               sum(np.sum(g * d) for g, d in zip(jtu, directions)),
                               rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
def test_rop_of_an_until_scan_covers_the_steps_that_ran(mode):
    xs, h0, a = T.dvector("xs"), T.dscalar("h0"), T.dscalar("a")
    hs, _ = theano.scan(lambda x, h, a: (T.tanh(a * h + x), until(h > 0.8)),
                        sequences=xs, outputs_info=h0, non_sequences=a)
    inputs = [xs, h0, a]
    points = eval_points(inputs)
    f = theano.function([*inputs, *points], [hs, T.Rop(hs, inputs, points)], mode=mode)
    args = [np.array([0.3, 0.4, 0.5, 0.6, 0.2, 0.1]), np.array(0.1), np.array(0.9)]
    directions = [np.linspace(-1, 1, 6), np.array(0.5), np.array(-0.3)]
    values, tangents = f(*args, *directions)
    assert 1 < len(values) < len(args[0]) and tangents.shape == values.shape
    g = theano.function(inputs, hs, mode="INTERP")
    np.testing.assert_allclose(tangents, directional(g, args, directions), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
def test_n_steps_and_a_shared_variable_read_in_the_step(mode):
    """No sequences: a shared matrix read in the step is a non-sequence, and Rop may take it as
    a variable of wrt."""
    W = theano.shared(np.random.default_rng(0).normal(size=(3, 3)) * 0.5, name="W")
    h0, n = T.dvector("h0"), T.iscalar("n")
    hs, _ = theano.scan(lambda h: T.tanh(T.dot(W, h)), outputs_info=h0, n_steps=n)
    vW, vh0 = T.dmatrix("vW"), T.dvector("vh0")
    f = theano.function([h0, n, vW, vh0], T.Rop(hs[-1], [W, h0], [vW, vh0]), mode=mode)
    H0, VW, VH0 = np.array([0.2, -0.4, 0.7]), np.eye(3) * 0.3, np.array([1.0, 0.5, -1.0])
    W0 = W.get_value()

    def numpy_last(Wv, h):
        for _ in range(4):
            h = np.tanh(Wv @ h)
        return h

    np.testing.assert_allclose(f(H0, 4, VW, VH0),
                               directional(numpy_last, [W0, H0], [VW, VH0]), rtol=1e-6)


def test_a_nested_scan_and_tangents_only_of_the_non_sequences():
    M, v = T.dmatrix("M"), T.dvector("v")

    def row_step(row, acc, v):
        inner, _ = theano.scan(lambda a, p, v: p * a + T.exp(v).sum(), sequences=row,
                               outputs_info=T.constant(1.0), non_sequences=v)
        return acc + inner[-1]

    total, _ = theano.scan(row_step, sequences=M, outputs_info=T.constant(0.0),
                           non_sequences=v)
    vv = T.dvector("vv")
    f = theano.function([M, v, vv], T.Rop(total, v, vv), mode="INTERP")
    g = theano.function([M, v], total, mode="INTERP")
    Mv, V, VV = np.array([[0.5, 0.2], [0.3, -0.4]]), np.array([0.1, -0.2]), np.array([1.0, 2.0])
    np.testing.assert_allclose(f(Mv, V, VV), directional(lambda a: g(Mv, a), [V], [VV]),
                               rtol=1e-6)


def rnn(x, W, V):
    """An Elman network's outputs: ``h_t = tanh(W h_{t-1} + x_t)``, ``y_t = V h_t``."""
    h0 = T.zeros_like(x[0])
    hs, _ = theano.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=x,
                        outputs_info=h0, non_sequences=W)
    return T.dot(hs, V.T)


def test_gauss_newton_vector_product_of_an_rnn():
    """``J^T J v``, as Hessian-free training builds it: ``Lop(y, W, Rop(y, W, v))``."""
    x, W, V, v = T.dmatrix("x"), T.dmatrix("W"), T.dmatrix("V"), T.dmatrix("v")
    y = rnn(x, W, V)
    Gv = T.Lop(y, W, T.Rop(y, W, v))
    f = theano.function([x, W, V, v], Gv)
    r = np.random.default_rng(3)
    X, W0, V0, D = (r.normal(size=(5, 3)), r.normal(size=(3, 3)) * 0.5, r.normal(size=(2, 3)),
                    r.normal(size=(3, 3)))
    outputs = theano.function([x, W, V], y, mode="INTERP")
    J = numeric_jacobian(lambda w: outputs(X, w, V0), [W0], 0).reshape(10, 9)
    np.testing.assert_allclose(f(X, W0, V0, D), (J.T @ (J @ D.ravel())).reshape(3, 3),
                               rtol=1e-6, atol=1e-8)


def test_hessian_vector_product_through_the_scan_of_the_gradient():
    """``Rop(grad(cost, W), W, v)`` (Pearlmutter's product) goes through the backward scan
    that ``grad`` builds, and matches finite differences of the gradient."""
    x, W, v = T.dmatrix("x"), T.dmatrix("W"), T.dmatrix("v")
    hs, _ = theano.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=x,
                        outputs_info=T.zeros_like(x[0]), non_sequences=W)
    g = T.grad((hs ** 2).sum(), W)
    f = theano.function([x, W, v], T.Rop(g, W, v), mode="INTERP")
    gradient = theano.function([x, W], g, mode="INTERP")
    r = np.random.default_rng(0)
    X, W0, D = r.normal(size=(4, 3)), r.normal(size=(3, 3)) * 0.5, r.normal(size=(3, 3))
    np.testing.assert_allclose(f(X, W0, D), directional(lambda w: gradient(X, w), [W0], [D]),
                               rtol=1e-6, atol=1e-8)


def test_the_tensor_ir_shows_one_scan_of_values_and_tangents():
    x, W, v = T.dmatrix("x"), T.dmatrix("W"), T.dmatrix("v")
    hs, _ = theano.scan(lambda xt, h, W: T.tanh(T.dot(W, h) + xt), sequences=x,
                        outputs_info=T.zeros_like(x[0]), non_sequences=W)
    f = theano.function([x, W, v], T.Rop(hs, W, v))
    text = f.ir("tensor")
    # The state and its tangent, both fed back; the step's dot and its two tangent dots.
    assert len(re.findall(r"= tensor\.scan ", text)) == 1
    assert "output_taps = [[-1 : i64], [-1 : i64]]" in text
    assert text.count("tensor.dot") == 3


def test_the_simulated_gpu_runs_the_recurrence_of_tangents():
    r = np.random.default_rng(0)
    X, H0, W0, VW = (r.normal(size=(4, 3)), r.normal(size=3), r.normal(size=(3, 3)) * 0.5,
                     r.normal(size=(3, 3)))
    flags = dict(device="cuda", floatX="float32", print_active_device=False)
    with config.change_flags({"gpuarray.simulate": True}, **flags):
        xs, h0, W, vW = T.fmatrix("xs"), T.fvector("h0"), T.fmatrix("W"), T.fmatrix("vW")
        h, _ = theano.scan(lambda x, h, w: T.tanh(T.dot(w, h) + x), sequences=xs,
                           outputs_info=h0, non_sequences=W)
        f = theano.function([xs, h0, W, vW], T.Rop(h, W, vW))
        got = f(*(a.astype("float32") for a in (X, H0, W0, VW)))
    assert "gpu.module" in f.ir("gpu")  # the step's ops run as kernels
    h, dh, want = H0, np.zeros(3), []
    for x in X:  # h' = tanh(W h + x), dh' = (1 - h'^2) (VW h + W dh)
        new = np.tanh(W0 @ h + x)
        dh = (1 - new ** 2) * (VW @ h + W0 @ dh)
        h = new
        want.append(dh)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


def test_an_output_the_tangents_do_not_reach_is_disconnected():
    xs, c = T.dvector("xs"), T.dscalar("c")
    (a, b), _ = theano.scan(lambda x, p, q, c: (p + x, q * c), sequences=xs,
                            outputs_info=[T.constant(0.0), T.constant(1.0)], non_sequences=c)
    vx = T.dvector("vx")
    with pytest.raises(DisconnectedInputError, match="does not depend"):
        T.Rop(b, xs, vx)
    f = theano.function([xs, c, vx], T.Rop(a, xs, vx), mode="INTERP")
    np.testing.assert_allclose(f(np.ones(3), 2.0, np.array([1.0, 2.0, 3.0])), [1.0, 3.0, 6.0])


def test_an_op_without_a_forward_rule_in_the_step_names_itself():
    class NoROp(TwiceOp):
        R_op = theano.Op.R_op

    xs, vx = T.dvector("xs"), T.dvector("vx")
    hs, _ = theano.scan(lambda x, h: NoROp()(x) + h, sequences=xs, outputs_info=T.constant(0.0))
    with pytest.raises(Exception, match="defines no R_op"):
        T.Rop(hs, xs, vx)
