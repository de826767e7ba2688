"""theano.gradient: jacobian, hessian, the ops that change a gradient, grad's options and
verify_grad, through the public API (``import lowering as theano``)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.frontend.errors import DisconnectedInputError, GraphBuildError, GraphTypeError

from .helpers import evaluate, float64_by_default, numeric_jacobian  # noqa: F401 (autouse)
from .python_ops import TwiceOp


EXPRESSIONS = {
    "elementwise": lambda x, A: T.exp(x) * T.sin(x[::-1]),
    "matrix-vector": lambda x, A: T.tanh(T.dot(A, x)),
    "vector-matrix": lambda x, A: T.dot(x, A) * x,
    "indexing": lambda x, A: T.concatenate([x[1:] * x[:-1], T.stack([x.max(), x.prod()])]),
    "reshape": lambda x, A: (x.reshape((1, -1)) * A).flatten(),
    "softmax": lambda x, A: T.nnet.softmax(T.dot(A, x).dimshuffle("x", 0))[0],
    "writes": lambda x, A: T.set_subtensor(x[:2], x[1:3] ** 2) + T.inc_subtensor(x[[0]], A[0, :1]),
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@settings(max_examples=3)
@given(seed=st.integers(0, 2 ** 16))
def test_jacobian_of_symbolic_length_matches_finite_differences(name, seed):
    x, A = T.vector("x"), T.matrix("A")
    y = EXPRESSIONS[name](x, A)
    Jx, JA = T.jacobian(y, [x, A], disconnected_inputs="ignore")
    r = np.random.default_rng(seed)
    xv, Av = r.uniform(0.2, 0.9, 3), r.uniform(-1, 1, (3, 3))
    got_x, got_A = evaluate([Jx, JA], {x: xv, A: Av})

    def f(xv, Av):
        return evaluate(y, {x: xv, A: Av})

    np.testing.assert_allclose(got_x, numeric_jacobian(f, [xv, Av], 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_A, numeric_jacobian(f, [xv, Av], 1), rtol=1e-5, atol=1e-6)


def test_jacobian_compiled_and_its_structure():
    x = T.dvector("x")
    W = T.dmatrix("W")
    y = T.tanh(T.dot(W, x))
    J = T.jacobian(y, x)
    assert J.ndim == 2 and not isinstance(J, list)
    assert isinstance(T.jacobian(y, [x]), list) and isinstance(T.jacobian(y, (x,)), tuple)
    f = theano.function([W, x], J)
    Wv, xv = np.arange(6.0).reshape(2, 3) / 10, np.array([0.1, -0.2, 0.3])
    slope = 1 - np.tanh(Wv @ xv) ** 2
    np.testing.assert_allclose(f(Wv, xv), slope[:, None] * Wv)
    # The tutorial's example, whose length is known only at run time.
    np.testing.assert_allclose(theano.function([x], T.jacobian(x ** 2, x))(np.array([4.0, 4.0])),
                               [[8.0, 0.0], [0.0, 8.0]])


def test_jacobian_of_a_scalar_is_the_gradient():
    x = T.dvector("x")
    g = T.jacobian((x ** 2).sum(), x)
    np.testing.assert_allclose(evaluate(g, {x: np.array([1.0, 3.0])}), [2.0, 6.0])


def test_jacobian_of_an_empty_vector():
    x = T.dvector("x")
    J = theano.function([x], T.jacobian(x * 2, x))(np.zeros(0))
    assert J.shape == (0, 0)


def test_jacobian_errors():
    x, m = T.dvector("x"), T.dmatrix("m")
    with pytest.raises(GraphBuildError, match="expression must be a vector"):
        T.jacobian(m * 2, x)
    with pytest.raises(DisconnectedInputError):
        T.jacobian(x * 2, m)
    J = T.jacobian(x * 2, [x, m], disconnected_inputs="ignore")[1]
    assert evaluate(J, {x: np.ones(2), m: np.ones((2, 3))}).shape == (2, 2, 3)


def test_jacobian_through_an_op_without_a_batching_rule():
    """A static length falls back to one reverse sweep per element; a run-time one is an error
    naming the op."""
    x3 = T.tensor("float64", shape=(3,), name="x3")
    J = T.jacobian(TwiceOp()(x3) ** 2, x3)
    xv = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(evaluate(J, {x3: xv}), np.diag(8 * xv))
    x = T.dvector("x")
    with pytest.raises(GraphBuildError, match=r"tensor.custom .*cannot yet be batched.*scan"):
        T.jacobian(TwiceOp()(x) ** 2, x)


@settings(max_examples=4)
@given(seed=st.integers(0, 2 ** 16))
def test_hessian_matches_finite_differences(seed):
    x, A = T.dvector("x"), T.dmatrix("A")
    cost = (T.tanh(T.dot(A, x)) ** 2).sum() + T.log(x).sum() * x.prod()
    H = T.hessian(cost, x)
    r = np.random.default_rng(seed)
    xv, Av = r.uniform(0.5, 1.5, 3), r.uniform(-1, 1, (2, 3))
    g = T.grad(cost, x)
    expected = numeric_jacobian(lambda xv, Av: evaluate(g, {x: xv, A: Av}), [xv, Av], 0)
    got = evaluate(H, {x: xv, A: Av})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, got.T, rtol=1e-10, atol=1e-12)


def test_hessian_compiled_lists_and_errors():
    x, y = T.dvectors("x", "y")
    cost = (x ** 3).sum() + (x * y).sum()
    Hx, Hy = T.hessian(cost, [x, y])
    f = theano.function([x, y], [Hx, Hy], on_unused_input="ignore")
    hx, hy = f(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    np.testing.assert_allclose(hx, np.diag([6.0, 12.0]))
    np.testing.assert_allclose(hy, np.zeros((2, 2)))  # linear in y: zeros, as in Theano
    with pytest.raises(GraphBuildError, match="cost must be a scalar"):
        T.hessian(x * 2, x)
    with pytest.raises(GraphBuildError, match="each wrt must be a vector"):
        T.hessian(T.dmatrix("m").sum(), T.dmatrix("m2"))


# ---------------------------------------------------------------------------------------------
# Ops that change the gradient


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "INTERP"])
def test_gradient_filters_keep_the_value_and_change_the_gradient(mode):
    x = T.dvector("x")
    G = theano.gradient
    outputs = [G.zero_grad(x) * 1, G.disconnected_grad(x) * 1, G.grad_clip(x, -1, 1) * 1,
               G.grad_scale(x, -2.0) * 1,
               T.grad((G.zero_grad(x) * x).sum(), x),
               T.grad((G.disconnected_grad(x) * x).sum(), x),
               T.grad((G.grad_clip(x, -1, 1) ** 2).sum(), x),
               T.grad((G.grad_scale(x, -2.0) ** 2).sum(), x)]
    xv = np.array([2.0, 0.25, -3.0])
    got = theano.function([x], outputs, mode=mode)(xv)
    for value in got[:4]:
        np.testing.assert_allclose(value, xv)
    np.testing.assert_allclose(got[4], xv)                   # only the other factor
    np.testing.assert_allclose(got[5], xv)
    np.testing.assert_allclose(got[6], np.clip(2 * xv, -1, 1))
    np.testing.assert_allclose(got[7], -2 * 2 * xv)


def test_gradient_filters_cost_nothing_once_optimized():
    x = T.dvector("x")
    f = theano.function([x], theano.gradient.grad_clip(x, -1, 1) * 2)
    assert "tensor.grad_filter" in f.ir("tensor")
    assert "grad_filter" not in f.ir("optimized")
    with theano.change_flags(optimizer="None"):
        g = theano.function([x], theano.gradient.zero_grad(x) * 2)
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2.0, 4.0])


def test_disconnected_grad_disconnects_and_zero_grad_does_not():
    x = T.dvector("x")
    with pytest.raises(DisconnectedInputError):
        T.grad(theano.gradient.disconnected_grad(x).sum(), x)
    g = T.grad(theano.gradient.zero_grad(x).sum(), x)
    np.testing.assert_allclose(evaluate(g, {x: np.ones(2)}), [0.0, 0.0])


def test_filters_in_forward_mode():
    x, v = T.dvectors("x", "v")
    G = theano.gradient
    feeds = {x: np.array([1.0, 2.0]), v: np.array([3.0, 4.0])}
    np.testing.assert_allclose(evaluate(T.Rop(G.grad_clip(x, -1, 1), x, v), feeds), [3.0, 4.0])
    np.testing.assert_allclose(evaluate(T.Rop(G.zero_grad(x), x, v), feeds), [0.0, 0.0])
    assert T.Rop(G.disconnected_grad(x), x, v, disconnected_outputs="ignore",
                 return_disconnected="None") is None


def test_consider_constant_is_deprecated_and_zeroes_the_gradient():
    x = T.dscalar("x")
    with pytest.warns(DeprecationWarning, match="zero_grad"):
        c = theano.gradient.consider_constant(x)
    assert float(evaluate(T.grad(c * x, x), {x: 3.0})) == 3.0


def test_gradient_filter_arguments():
    x = T.dvector("x")
    with pytest.raises(GraphBuildError, match="lower_bound .* is above upper_bound"):
        theano.gradient.grad_clip(x, 1, -1)
    with pytest.raises(GraphTypeError, match="lower_bound must be a Python number"):
        theano.gradient.grad_clip(x, T.dscalar(), 1)
    with pytest.raises(GraphTypeError, match="multiplier must be a number"):
        theano.gradient.grad_scale(x, "twice")


# ---------------------------------------------------------------------------------------------
# grad's options


def test_known_grads_and_consider_constant():
    x, y = T.dvectors("x", "y")
    h = x * y
    g = T.grad(None, x, known_grads={h: T.ones_like(h) * 3})
    np.testing.assert_allclose(evaluate(g, {x: np.ones(2), y: np.array([2.0, 5.0])}), [6, 15])
    cost = (T.exp(h) * x).sum()
    g = T.grad(cost, x, consider_constant=[h])
    xv, yv = np.array([0.5, 1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(evaluate(g, {x: xv, y: yv}), np.exp(xv * yv))


def test_disconnected_inputs_policies_and_returns():
    x, y = T.dvectors("x", "y")
    cost = (x ** 2).sum()
    with pytest.raises(DisconnectedInputError):
        T.grad(cost, [x, y])
    with pytest.warns(UserWarning, match="does not depend on y"):
        T.grad(cost, [x, y], disconnected_inputs="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gx, gy = T.grad(cost, [x, y], disconnected_inputs="ignore")
    np.testing.assert_allclose(evaluate(gy, {y: np.ones(3)}), np.zeros(3))
    assert T.grad(cost, [x, y], disconnected_inputs="ignore", return_disconnected="None")[1] \
        is None
    placeholder = T.grad(cost, [x, y], disconnected_inputs="ignore",
                         return_disconnected="Disconnected")[1]
    assert placeholder.type == theano.gradient.DisconnectedType()
    with pytest.raises(ValueError, match="return_disconnected"):
        T.grad(cost, x, return_disconnected="gone")


def test_null_gradients():
    class NoGrad(TwiceOp):
        grad = theano.Op.grad

    x, y = T.dvectors("x", "y")
    cost = (NoGrad()(x) + y).sum()
    with pytest.raises(Exception, match="defines no grad"):
        T.grad(cost, [x, y])
    with pytest.raises(ValueError, match="null_gradients"):
        T.grad(cost, y, null_gradients="maybe")


def test_null_gradients_return_for_an_op_without_a_rule():
    """An op class with float operands and results but no ``grad`` at all."""
    from lowering.dialects.tensor import GemvOp
    from lowering.frontend.variable import wrap
    A, x, y = T.dmatrix("A"), T.dvector("x"), T.dvector("y")
    one = T.constant(1.0).value
    gemv = wrap(GemvOp.build(y.value, one, A.value, x.value, one).result)  # y + A . x
    cost = gemv.sum() + y.sum()
    with pytest.raises(GraphBuildError, match="no gradient rule"):
        T.grad(cost, [A, y])
    gA, gy = T.grad(cost, [A, y], null_gradients="return")
    assert gA is None and gy is None  # y also reaches the cost through gemv


# ---------------------------------------------------------------------------------------------
# verify_grad


def test_verify_grad_passes_for_correct_gradients():
    rng = np.random.RandomState(0)
    theano.gradient.verify_grad(T.tanh, [np.array([[2.0, 3, 4], [-1, 3.3, 9.9]])], rng=rng)
    theano.gradient.verify_grad(lambda a, b: T.dot(a, b) ** 2,
                                [rng.rand(2, 3), rng.rand(3)], rng=rng, n_tests=3)
    T.verify_grad(lambda a: T.nnet.softmax(a), [rng.rand(2, 4).astype("float32")], rng=rng)


def test_verify_grad_raises_its_error_on_a_wrong_gradient():
    def wrong(x):
        return theano.gradient.grad_scale(T.sin(x), 1.5)

    with pytest.raises(theano.gradient.verify_grad.E_grad) as info:
        theano.gradient.verify_grad(wrong, [np.array([0.3, 1.2])], rng=np.random.RandomState(1))
    error = info.value
    assert error is not None and isinstance(error, theano.gradient.GradientError)
    assert error.arg == 0 and error.abs_err > error.abs_tol
    assert "numeric gradient and analytic gradient exceed tolerance" in str(error)
    # Loose enough tolerances accept it.
    theano.gradient.verify_grad(wrong, [np.array([0.3, 1.2])], rng=np.random.RandomState(1),
                                abs_tol=1.0, rel_tol=1.0)


def test_verify_grad_bad_arguments():
    with pytest.raises(TypeError, match="rng must be"):
        theano.gradient.verify_grad(T.tanh, [np.ones(2)])
    with pytest.raises(TypeError, match="input 0 has dtype \"int64\""):
        theano.gradient.verify_grad(T.tanh, [np.ones(2, dtype="int64")],
                                    rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="pt must be a list"):
        theano.gradient.verify_grad(T.tanh, np.ones(2), rng=np.random.RandomState(0))
    with pytest.raises(NotImplementedError, match="one variable"):
        theano.gradient.verify_grad(lambda a: [a, a], [np.ones(2)], rng=np.random.RandomState(0))


def test_the_theano_names():
    G = theano.gradient
    for name in ["grad", "Rop", "Lop", "jacobian", "hessian", "verify_grad", "zero_grad",
                 "disconnected_grad", "grad_clip", "grad_scale", "consider_constant",
                 "DisconnectedInputError", "DisconnectedType", "GradientError"]:
        assert hasattr(G, name), name
    for name in ["Rop", "Lop", "jacobian", "hessian", "verify_grad", "zero_grad",
                 "disconnected_grad", "grad_clip", "consider_constant"]:
        assert getattr(T, name) is getattr(G, name), name
    from lowering.gradient import verify_grad  # noqa: F401 - "from theano.gradient import"


def test_gradient_filters_and_jacobian_on_the_simulated_gpu():
    from lowering.config import config
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x = T.fvector("x")
        G = theano.gradient
        f = theano.function([x], [G.grad_clip(x, -1, 1) * 2,
                                  T.grad((G.grad_clip(x, -1, 1) ** 2).sum(), x),
                                  T.jacobian(T.tanh(x), x)])
        xv = np.array([2.0, 0.25, -3.0], dtype="float32")
        doubled, clipped, J = [np.asarray(v) for v in f(xv)]
    np.testing.assert_allclose(doubled, 2 * xv)
    np.testing.assert_allclose(clipped, np.clip(2 * xv, -1, 1))
    np.testing.assert_allclose(J, np.diag(1 - np.tanh(xv) ** 2), rtol=1e-5, atol=1e-6)
