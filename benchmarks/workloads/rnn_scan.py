"""A recurrent layer over a sequence with ``scan``: ``h_t = tanh(W h_{t-1} + U x_t + b)``, 128
units, 1,000 steps, float32; forward alone (``scan-rnn``: every step's ``h``) and forward with
the gradient of ``sum(h)`` with respect to ``W``, ``U`` and ``b`` (``scan-rnn-grad``).

``lowering`` and PyTensor run the same Theano program (``theano.scan``, ``T.grad``); JAX uses
``lax.scan`` and ``jax.value_and_grad``; NumPy is a Python loop over the steps (its gradient
is backpropagation through time written out by hand).

>>> p = dict(FORWARD.params, units=3, steps=4)
>>> FORWARD.ports["numpy"](p).run().shape
(4, 3)
>>> cost, gw, gu, gb = GRADIENT.ports["numpy"](p).run()
>>> gw.shape, gb.shape
((3, 3), (3,))
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules

F32 = np.float32


def _data(p):
    """The inputs ``x`` (steps x units), ``h0`` and the weights ``W``, ``U``, ``b``."""
    def make(rng):
        n, steps = p["units"], p["steps"]
        scale = F32(1 / np.sqrt(n))
        return (rng.randn(steps, n).astype(F32), np.zeros(n, F32),
                (rng.randn(n, n) * scale).astype(F32), (rng.randn(n, n) * scale).astype(F32),
                (rng.randn(n) * F32(0.1)).astype(F32))
    return inputs(make, "rnn", p["units"], p["steps"])


def _theano_program(theano, T, p, gradient: bool):
    x_data, h0_data, w, u, b = _data(p)
    W = theano.shared(w.copy(), name="W")
    U = theano.shared(u.copy(), name="U")
    B = theano.shared(b.copy(), name="b")
    x, h0 = T.matrix("x"), T.vector("h0")
    h, _ = theano.scan(lambda x_t, h_prev: T.tanh(T.dot(W, h_prev) + T.dot(U, x_t) + B),
                       sequences=x, outputs_info=h0)
    if not gradient:
        return [x, h0], h, (x_data, h0_data)
    cost = h.sum()
    return [x, h0], [cost, *T.grad(cost, [W, U, B])], (x_data, h0_data)


def _theano_port(modules, compile_function, gradient: bool):
    def build(p) -> Port:
        theano, T = modules()
        ins, outs, args = _theano_program(theano, T, p, gradient)
        f, note = compile_function(ins, outs)
        return Port(functools.partial(f, *args), note=note)
    return build


def numpy_forward(x, h0, w, u, b):
    """Every step's ``h``, by a Python loop."""
    hs = np.empty((len(x), len(h0)), F32)
    h = h0
    for t in range(len(x)):
        h = np.tanh(w @ h + u @ x[t] + b)
        hs[t] = h
    return hs


def numpy_gradient(x, h0, w, u, b):
    """``sum(h)`` and its gradient with respect to ``w``, ``u``, ``b`` (BPTT by hand)."""
    hs = numpy_forward(x, h0, w, u, b)
    gw, gu, gb = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    carried = np.zeros_like(h0)
    for t in range(len(x) - 1, -1, -1):
        dz = (F32(1) + carried) * (F32(1) - hs[t] * hs[t])
        previous = hs[t - 1] if t else h0
        gw += np.outer(dz, previous)
        gu += np.outer(dz, x[t])
        gb += dz
        carried = w.T @ dz
    return F32(hs.sum()), gw, gu, gb


def _numpy(gradient: bool):
    def build(p) -> Port:
        fn = numpy_gradient if gradient else numpy_forward
        return Port(functools.partial(fn, *_data(p)))
    return build


def _jax(gradient: bool):
    def build(p) -> Port:
        import jax
        import jax.numpy as jnp

        def forward(w, u, b, x, h0):
            def step(h, x_t):
                h = jnp.tanh(w @ h + u @ x_t + b)
                return h, h
            return jax.lax.scan(step, h0, x)[1]

        x, h0, w, u, b = (jnp.asarray(a) for a in _data(p))
        if not gradient:
            return Port(jax_waiting(jax.jit(forward), w, u, b, x, h0))
        value_and_grad = jax.jit(jax.value_and_grad(
            lambda w, u, b, x, h0: forward(w, u, b, x, h0).sum(), argnums=(0, 1, 2)))

        def run():
            cost, grads = jax.block_until_ready(value_and_grad(w, u, b, x, h0))
            return (cost, *grads)
        return Port(run)
    return build


def _workload(name: str, gradient: bool) -> Workload:
    what = "forward and gradient" if gradient else "forward"
    return Workload(
        name=name,
        describe=lambda p: (f"scan: h = tanh(W h + U x_t + b), {p['units']} units, "
                            f"{p['steps']:,} steps, float32, {what}"),
        params={"units": 128, "steps": 1000, "repeats": 5, "min_seconds": 0.2},
        quick={"repeats": 2, "min_seconds": 0.05},
        ports={"lowering": _theano_port(lowering_modules, lowering_function, gradient),
               "numpy": _numpy(gradient),
               "pytensor": _theano_port(pytensor_modules, pytensor_function, gradient),
               "jax": _jax(gradient)},
        # 1,000 float32 steps (and their gradient sums) round differently in each library.
        rtol=2e-3, atol=2e-4,
        parts=("cost", "dW", "dU", "db") if gradient else (),
        not_applicable={"numexpr": "numexpr has no loops or matrix products",
                        "numba": "no Numba port of this loop was written"},
    )


FORWARD = _workload("scan-rnn", gradient=False)
GRADIENT = _workload("scan-rnn-grad", gradient=True)
