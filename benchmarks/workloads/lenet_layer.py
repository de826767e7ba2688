"""The first LeNet layer of the classic Theano tutorial: a batch of 500 float32 images of 1x28x28,
20 filters of 5x5 (a true convolution, as Theano's ``conv2d`` flips its filters), 2x2 max
pooling, a bias and tanh. ``lenet-fwd`` computes the layer's output; ``lenet-grad`` the sum of
the output and its gradients with respect to the filters and the bias.

PyTensor's port uses its ``signal.convolve2d`` (per image and filter, broadcast over both) and a
reshape + max for the pooling, as PyTensor 3 has no ``conv2d`` or ``pool_2d`` any more; JAX's
``lax.conv_general_dilated`` on the flipped filters and ``lax.reduce_window``.

>>> p = dict(WORKLOAD_FORWARD.params, batch=2, filters=3)
>>> WORKLOAD_FORWARD.ports["numpy"](p).run().shape
(2, 3, 12, 12)
>>> [r.shape for r in WORKLOAD_GRAD.ports["numpy"](p).run()]
[(), (3, 1, 5, 5), (3,)]
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules


def _data(p):
    def make(rng):
        x = rng.rand(p["batch"], 1, 28, 28).astype(np.float32)
        w = rng.uniform(-0.1, 0.1, (p["filters"], 1, 5, 5)).astype(np.float32)
        b = rng.uniform(-0.1, 0.1, p["filters"]).astype(np.float32)
        return x, w, b
    return inputs(make, "lenet", p["batch"], p["filters"])


# -- NumPy: the reference ---------------------------------------------------------------------


def _numpy_layer(x, w, b):
    patches = np.lib.stride_tricks.sliding_window_view(x, (5, 5), axis=(2, 3))
    z = np.einsum("nchwab,ocab->nohw", patches, w[:, :, ::-1, ::-1], optimize=True)
    n, o, rows, cols = z.shape
    pooled = z.reshape(n, o, rows // 2, 2, cols // 2, 2).max(axis=(3, 5))
    return np.tanh(pooled + b[None, :, None, None]), patches, z, pooled


def _numpy_forward(x, w, b):
    return _numpy_layer(x, w, b)[0]


def _numpy_grad(x, w, b):
    out, patches, z, pooled = _numpy_layer(x, w, b)
    d_pooled = 1 - out * out
    up = np.repeat(np.repeat(pooled, 2, axis=2), 2, axis=3)
    d_up = np.repeat(np.repeat(d_pooled, 2, axis=2), 2, axis=3)
    dz = np.where(z == up, d_up, 0).astype(np.float32)
    dw = np.einsum("nohw,nchwab->ocab", dz, patches, optimize=True)[:, :, ::-1, ::-1]
    return (np.float32(out.sum(dtype=np.float32)), np.ascontiguousarray(dw, np.float32),
            d_pooled.sum(axis=(0, 2, 3), dtype=np.float32))


def _numpy(grad):
    def build(p):
        fn = _numpy_grad if grad else _numpy_forward
        return Port(functools.partial(fn, *_data(p)))
    return build


# -- the Theano-style libraries ----------------------------------------------------------------


def _lowering(grad):
    def build(p):
        _, T = lowering_modules()
        from lowering.tensor.signal import pool

        x, w, b = T.ftensor4("x"), T.ftensor4("w"), T.fvector("b")
        conv = T.nnet.conv2d(x, w, input_shape=(p["batch"], 1, 28, 28),
                             filter_shape=(p["filters"], 1, 5, 5))
        out = T.tanh(pool.pool_2d(conv, ws=(2, 2), ignore_border=True)
                     + b.dimshuffle("x", 0, "x", "x"))
        outputs = out if not grad else [out.sum(), *T.grad(out.sum(), [w, b])]
        f, note = lowering_function([x, w, b], outputs)
        return Port(functools.partial(f, *_data(p)), note=note,
                    result=None if not grad else tuple)
    return build


def _pytensor(grad):
    def build(p):
        _, pt = pytensor_modules()
        from pytensor.tensor.signal import convolve2d

        x, w, b = pt.ftensor4("x"), pt.ftensor4("w"), pt.fvector("b")
        # (n, 1, 1, 28, 28) with (1, o, 1, 5, 5): every image with every filter, summed over
        # the one channel.
        conv = convolve2d(x[:, None], w[None], mode="valid").sum(axis=2)
        n, o = conv.shape[0], conv.shape[1]
        pooled = conv.reshape((n, o, 12, 2, 12, 2)).max(axis=(3, 5))
        out = pt.tanh(pooled + b.dimshuffle("x", 0, "x", "x"))
        outputs = out if not grad else [out.sum(), *pt.grad(out.sum(), [w, b])]
        f, note = pytensor_function([x, w, b], outputs)
        return Port(functools.partial(f, *_data(p)), note=note,
                    result=None if not grad else tuple)
    return build


# -- JAX ---------------------------------------------------------------------------------------


def _jax(grad):
    def build(p):
        import jax
        import jax.numpy as jnp
        from jax import lax

        def layer(w, b, x):
            z = lax.conv_general_dilated(x, w[:, :, ::-1, ::-1], (1, 1), "VALID",
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
            pooled = lax.reduce_window(z, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                       "VALID")
            return jnp.tanh(pooled + b[None, :, None, None])

        def cost(w, b, x):
            return layer(w, b, x).sum()

        x, w, b = (jnp.asarray(v) for v in _data(p))
        if not grad:
            return Port(jax_waiting(jax.jit(lambda x, w, b: layer(w, b, x)), x, w, b))
        step = jax.jit(lambda x, w, b: (lambda vg: (vg[0], *vg[1]))(
            jax.value_and_grad(cost, argnums=(0, 1))(w, b, x)))
        return Port(jax_waiting(step, x, w, b),
                    result=lambda last: tuple(np.asarray(v) for v in last))
    return build


def _ports(grad):
    return {"lowering": _lowering(grad), "numpy": _numpy(grad), "pytensor": _pytensor(grad),
            "jax": _jax(grad)}


NOT_APPLICABLE = {"numexpr": "numexpr has no convolution",
                  "numba": "no Numba port of the layer was written"}

WORKLOAD_FORWARD = Workload(
    name="lenet-fwd",
    describe=lambda p: (f"LeNet layer: conv2d {p['batch']}x1x28x28 by {p['filters']} 5x5 "
                        f"filters, 2x2 max pooling, tanh; float32"),
    params={"batch": 500, "filters": 20, "repeats": 5, "min_seconds": 0.2},
    quick={"repeats": 2, "min_seconds": 0.05},
    ports=_ports(False),
    rtol=1e-4, atol=1e-5,
    work=lambda p: (2.0 * p["batch"] * p["filters"] * 24 * 24 * 25, "FLOP"),
    not_applicable=NOT_APPLICABLE,
)

WORKLOAD_GRAD = Workload(
    name="lenet-grad",
    describe=lambda p: (f"LeNet layer forward and gradient (filters, bias): batch "
                        f"{p['batch']}, {p['filters']} 5x5 filters; float32"),
    params={"batch": 500, "filters": 20, "repeats": 5, "min_seconds": 0.2},
    quick={"repeats": 2, "min_seconds": 0.05},
    ports=_ports(True),
    rtol=1e-3, atol=1e-3,
    parts=("cost", "filter gradient", "bias gradient"),
    work=lambda p: (4.0 * p["batch"] * p["filters"] * 24 * 24 * 25, "FLOP"),
    not_applicable=NOT_APPLICABLE,
)
