"""A 1024x1024 by 1024x1024 float32 matrix product, reported in GFLOP/s (2 n^3 operations).

>>> WORKLOAD.ports["numpy"](dict(WORKLOAD.params, n=2)).run().shape
(2, 2)
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules


def _data(p) -> tuple[np.ndarray, np.ndarray]:
    # Positive values: no cancellation, so a relative tolerance is meaningful.
    return inputs(lambda rng: (rng.rand(p["n"], p["n"]).astype(np.float32),
                               rng.rand(p["n"], p["n"]).astype(np.float32)), "matmul", p["n"])


def _lowering(p) -> Port:
    _, T = lowering_modules()
    a, b = T.fmatrix("a"), T.fmatrix("b")
    f, note = lowering_function([a, b], T.dot(a, b))
    return Port(functools.partial(f, *_data(p)), note=note)


def _numpy(p) -> Port:
    return Port(functools.partial(np.dot, *_data(p)))


def _numba(p) -> Port:
    import numba

    @numba.njit
    def matmul(a, b):
        return np.dot(a, b)
    return Port(functools.partial(matmul, *_data(p)))


def _pytensor(p) -> Port:
    _, pt = pytensor_modules()
    a, b = pt.fmatrix("a"), pt.fmatrix("b")
    f, note = pytensor_function([a, b], pt.dot(a, b))
    return Port(functools.partial(f, *_data(p)), note=note)


def _jax(p) -> Port:
    import jax
    import jax.numpy as jnp
    a, b = _data(p)
    return Port(jax_waiting(jax.jit(jnp.dot), jnp.asarray(a), jnp.asarray(b)))


WORKLOAD = Workload(
    name="matmul",
    describe=lambda p: f"matmul {p['n']}x{p['n']} @ {p['n']}x{p['n']} float32",
    params={"n": 1024, "repeats": 5, "min_seconds": 0.2},
    quick={"repeats": 2, "min_seconds": 0.05},
    ports={"lowering": _lowering, "numpy": _numpy, "numba": _numba, "pytensor": _pytensor,
           "jax": _jax},
    rtol=1e-4, atol=0.0,
    work=lambda p: (2.0 * p["n"] ** 3, "FLOP"),
    not_applicable={"numexpr": "numexpr has no matrix product"},
)
