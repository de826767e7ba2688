"""Logistic regression trained by ``scipy.optimize.fmin_cg`` as the tutorial does it: the
parameters are views of one flat shared vector, and the optimizer's callbacks set that vector
and call compiled functions for the minibatch costs, their gradient and the validation error."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T

optimize = pytest.importorskip("scipy.optimize")

N_IN, N_OUT, BATCH = 6, 3, 10


def dataset(n, seed):
    r = np.random.default_rng(seed)
    y = r.integers(0, N_OUT, n)
    centres = np.random.default_rng(0).normal(0, 2, (N_OUT, N_IN))
    return r.normal(centres[y], 1.0), y.astype("int32")


def numpy_cost_and_grad(theta, x, y):
    W = theta[:N_IN * N_OUT].reshape(N_IN, N_OUT)
    b = theta[N_IN * N_OUT:]
    logits = x @ W + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    cost = -np.mean(np.log(p[np.arange(len(y)), y]))
    d = p.copy()
    d[np.arange(len(y)), y] -= 1
    d /= len(y)
    return cost, np.concatenate([(x.T @ d).ravel(), d.sum(0)])


def test_conjugate_gradient_through_compiled_callbacks():
    xs, ys = dataset(40, seed=1)
    xv, yv = dataset(20, seed=2)
    train_x, valid_x = theano.shared(xs), theano.shared(xv)
    train_y = T.cast(theano.shared(ys.astype("float64")), "int32")
    valid_y = T.cast(theano.shared(yv.astype("float64")), "int32")

    theta = theano.shared(np.zeros(N_IN * N_OUT + N_OUT), name="theta", borrow=True)
    W = theta[0:N_IN * N_OUT].reshape((N_IN, N_OUT))
    b = theta[N_IN * N_OUT:N_IN * N_OUT + N_OUT]
    x, y, index = T.matrix("x"), T.ivector("y"), T.lscalar("index")
    p_y = T.nnet.softmax(T.dot(x, W) + b)
    cost = -T.mean(T.log(p_y)[T.arange(y.shape[0]), y])
    errors = T.mean(T.neq(T.argmax(p_y, axis=1), y))

    def batch(data):
        return data[index * BATCH:(index + 1) * BATCH]

    batch_cost = theano.function([index], cost, givens={x: batch(train_x), y: batch(train_y)})
    batch_grad = theano.function([index], T.grad(cost, theta),
                                 givens={x: batch(train_x), y: batch(train_y)})
    validate = theano.function([], errors, givens={x: valid_x, y: valid_y})

    def train_fn(value):
        theta.set_value(value, borrow=True)
        return np.mean([batch_cost(i) for i in range(4)])

    def train_fn_grad(value):
        theta.set_value(value, borrow=True)
        return np.mean([batch_grad(i) for i in range(4)], axis=0)

    validation = []
    probe = np.random.default_rng(3).normal(size=theta.get_value().shape)
    for i in range(4):  # the compiled cost and gradient against NumPy's, batch by batch
        theta.set_value(probe)
        want_cost, want_grad = numpy_cost_and_grad(probe, xs[i * BATCH:(i + 1) * BATCH],
                                                   ys[i * BATCH:(i + 1) * BATCH])
        np.testing.assert_allclose(batch_cost(i), want_cost, rtol=1e-10)
        np.testing.assert_allclose(batch_grad(i), want_grad, rtol=1e-9, atol=1e-12)

    start = np.zeros_like(probe)
    best = optimize.fmin_cg(f=train_fn, x0=start, fprime=train_fn_grad,
                            callback=lambda value: validation.append(
                                (theta.set_value(value, borrow=True), validate())[1]),
                            disp=0, maxiter=30)
    assert len(validation) > 3
    assert train_fn(best) < 0.5 * train_fn(start)
    whole_cost, _ = numpy_cost_and_grad(best, xs, ys)
    np.testing.assert_allclose(train_fn(best), whole_cost, rtol=1e-10)
    assert validation[-1] < 0.3
