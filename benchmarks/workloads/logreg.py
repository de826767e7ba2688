"""Seed 002's logistic regression: N=400 samples, 784 features, float32, one ``train(x, y)``
call per gradient step (10,000 steps in the seed).

``lowering`` and PyTensor run the seed's Theano program unchanged (``build_seed_program``): the
naive cross-entropy ``-y*log(p) - (1-y)*log(1-p)`` with ``p = 1/(1+exp(-x.w-b))``, whose
stabilization (into softplus terms) is the compiler's job; in float32, p rounds to exactly 0 or 1
for many samples of this data, so a compiler that does not stabilize computes infinities. The
NumPy, Numba and JAX ports compute the same model in its stable form, as users of those libraries
write it. Compared after the steps: the weights, the bias and the last step's cross-entropy.

>>> p = dict(WORKLOAD.params, n=5, features=3)
>>> port = WORKLOAD.ports["numpy"](p)
>>> w, b, xent = port.result(port.run())
>>> w.shape, b.dtype, xent.shape
((3,), dtype('float32'), (5,))
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules

F32 = np.float32
LEARNING_RATE = 0.01
L2 = 0.01


def seed_data(n: int, features: int):
    """The seed's data set ``D = (x, y)`` and initial weights, float32."""
    def make(_):
        rng = np.random.RandomState(1234)
        d = (rng.randn(n, features).astype(F32),
             rng.randint(size=n, low=0, high=2).astype(F32))
        return d, rng.randn(features).astype(F32)
    return inputs(make, "logreg", n, features)


def build_seed_program(theano, T, w0: np.ndarray) -> dict:
    """The seed's training step in any Theano-style API (``lowering``, PyTensor): the arguments of
    ``function`` (``inputs``, ``outputs``, ``updates``) and the shared ``w`` and ``b``."""
    x = T.matrix("x")
    y = T.vector("y")
    w = theano.shared(w0.copy(), name="w")
    b = theano.shared(np.asarray(0., dtype=theano.config.floatX), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))                 # probability of having a one
    prediction = p_1 > 0.5                                   # the prediction: 0 or 1
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)        # cross-entropy
    cost = xent.mean() + 0.01 * (w ** 2).sum()               # the cost to optimize
    gw, gb = T.grad(cost, [w, b])
    return {"inputs": [x, y], "outputs": [prediction, xent],
            "updates": {w: w - 0.01 * gw, b: b - 0.01 * gb}, "w": w, "b": b}


def _theano_port(theano, compile_function, p) -> Port:
    (x, y), w0 = seed_data(p["n"], p["features"])
    program = build_seed_program(theano, theano.tensor, w0)
    train, note = compile_function(program["inputs"], program["outputs"],
                                   updates=program["updates"], name="train")
    w, b = program["w"], program["b"]
    return Port(functools.partial(train, x, y), note=note,
                result=lambda last: (w.get_value(), np.asarray(b.get_value()), last[1]))


def _lowering(p) -> Port:
    theano, _ = lowering_modules()
    return _theano_port(theano, lowering_function, p)


def _pytensor(p) -> Port:
    pytensor, _ = pytensor_modules()
    return _theano_port(pytensor, pytensor_function, p)


def _numpy(p) -> Port:
    (x, y), w0 = seed_data(p["n"], p["features"])
    state = {"w": w0.copy(), "b": F32(0)}
    n = F32(len(y))

    def train():
        w, b = state["w"], state["b"]
        z = x @ w + b
        with np.errstate(over="ignore"):
            p_1 = 1 / (1 + np.exp(-z))
        xent = y * np.logaddexp(F32(0), -z) + (1 - y) * np.logaddexp(F32(0), z)
        g = (p_1 - y) / n
        state["w"] = w - F32(LEARNING_RATE) * (x.T @ g + F32(2 * L2) * w)
        state["b"] = b - F32(LEARNING_RATE) * g.sum()
        return p_1 > 0.5, xent
    return Port(train, result=lambda last: (state["w"], np.asarray(state["b"]), last[1]))


def numba_step():
    """A Numba-compiled training step ``(x, y, w, b) -> (w, b, prediction, xent)``."""
    import numba

    @numba.njit
    def step(x, y, w, b):
        one, zero = np.float32(1), np.float32(0)
        z = x @ w + b
        p_1 = one / (one + np.exp(-z))
        xent = y * np.logaddexp(zero, -z) + (one - y) * np.logaddexp(zero, z)
        g = (p_1 - y) / np.float32(len(y))
        w_new = w - np.float32(LEARNING_RATE) * (x.T @ g + np.float32(2 * L2) * w)
        b_new = b - np.float32(LEARNING_RATE) * g.sum()
        return w_new, b_new, p_1 > 0.5, xent
    return step


def _numba(p) -> Port:
    (x, y), w0 = seed_data(p["n"], p["features"])
    step = numba_step()
    state = {"w": w0.copy(), "b": F32(0)}

    def train():
        state["w"], b, prediction, xent = step(x, y, state["w"], state["b"])
        state["b"] = F32(b)  # Numba returns float32 scalars as Python floats
        return prediction, xent
    return Port(train, result=lambda last: (state["w"], np.asarray(state["b"]), last[1]))


def jax_step():
    """A jitted JAX training step ``(w, b, x, y) -> (w, b, prediction, xent)`` (grads by
    ``jax.grad`` of the stable cost)."""
    import jax
    import jax.numpy as jnp

    def cost(w, b, x, y):
        z = x @ w + b
        xent = y * jax.nn.softplus(-z) + (1 - y) * jax.nn.softplus(z)
        return xent.mean() + L2 * (w ** 2).sum(), (jax.nn.sigmoid(z) > 0.5, xent)

    @jax.jit
    def step(w, b, x, y):
        (_, (prediction, xent)), (gw, gb) = jax.value_and_grad(
            cost, argnums=(0, 1), has_aux=True)(w, b, x, y)
        return w - LEARNING_RATE * gw, b - LEARNING_RATE * gb, prediction, xent
    return step, jnp


def _jax(p) -> Port:
    import jax
    (x, y), w0 = seed_data(p["n"], p["features"])
    step, jnp = jax_step()
    xd, yd = jnp.asarray(x), jnp.asarray(y)
    state = {"w": jnp.asarray(w0), "b": jnp.asarray(F32(0))}

    def train():
        state["w"], state["b"], prediction, xent = jax.block_until_ready(
            step(state["w"], state["b"], xd, yd))
        return prediction, xent
    return Port(train, result=lambda last: (np.asarray(state["w"]), np.asarray(state["b"]),
                                            np.asarray(last[1])))


WORKLOAD = Workload(
    name="logreg",
    describe=lambda p: (f"logistic regression (seed 002): N={p['n']}, {p['features']} features, "
                        f"float32, {p['calls']:,} steps"),
    params={"n": 400, "features": 784, "calls": 10_000, "repeats": 1},
    quick={"calls": 300},
    ports={"lowering": _lowering, "numpy": _numpy, "numba": _numba, "pytensor": _pytensor,
           "jax": _jax},
    # Thousands of float32 steps accumulate rounding differently in each library.
    rtol=1e-3, atol=1e-4,
    unit="step",
    parts=("w", "b", "xent"),
    not_applicable={"numexpr": "numexpr has no matrix-vector product"},
)
