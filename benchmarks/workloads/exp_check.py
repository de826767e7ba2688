"""Seed 002's "is the GPU used?" check: ``exp`` of a shared float32 vector of 230,400 values,
called 1,000 times. The data (0.9 MB) sits in cache, so the limit is arithmetic.

>>> r = WORKLOAD.ports["numpy"](dict(WORKLOAD.params, n=4)).run()
>>> r.dtype, r.shape
(dtype('float32'), (4,))
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules


def _data(p) -> np.ndarray:
    # The seed's data: RandomState(22).rand(vlen) in floatX.
    return inputs(lambda _: np.random.RandomState(22).rand(p["n"]).astype(np.float32),
                  "exp-check", p["n"])


def _lowering(p) -> Port:
    theano, T = lowering_modules()
    x = theano.shared(_data(p), name="x")
    f, note = lowering_function([], T.exp(x))
    return Port(f, note=note)


def _numpy(p) -> Port:
    return Port(functools.partial(np.exp, _data(p)))


def _numexpr(p) -> Port:
    import numexpr
    return Port(functools.partial(numexpr.evaluate, "exp(x)", local_dict={"x": _data(p)}))


def _numba(p) -> Port:
    import numba

    @numba.njit
    def exp(x):
        return np.exp(x)
    return Port(functools.partial(exp, _data(p)))


def _pytensor(p) -> Port:
    pytensor, pt = pytensor_modules()
    x = pytensor.shared(_data(p), name="x")
    f, note = pytensor_function([], pt.exp(x))
    return Port(f, note=note)


def _jax(p) -> Port:
    import jax
    import jax.numpy as jnp
    return Port(jax_waiting(jax.jit(jnp.exp), jnp.asarray(_data(p))))


WORKLOAD = Workload(
    name="exp-check",
    describe=lambda p: f"exp check: exp of a shared {p['n']:,} float32, {p['calls']:,} calls",
    params={"n": 10 * 30 * 768, "calls": 1000, "repeats": 3},
    quick={"calls": 100, "repeats": 2},
    ports={"lowering": _lowering, "numpy": _numpy, "numexpr": _numexpr, "numba": _numba,
           "pytensor": _pytensor, "jax": _jax},
    rtol=1e-5, atol=1e-6,
    work=lambda p: (8.0 * p["n"], "B"),
)
