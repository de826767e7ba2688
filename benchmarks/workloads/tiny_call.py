"""Per-call cost: ``x + 1`` on 8 float32 values, so that the time is the call path, not the work.

>>> WORKLOAD.ports["numpy"](WORKLOAD.params).run()
array([1., 2., 3., 4., 5., 6., 7., 8.], dtype=float32)
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules


def _data(p) -> np.ndarray:
    return np.arange(p["n"], dtype=np.float32)


def _lowering(p) -> Port:
    _, T = lowering_modules()
    x = T.fvector("x")
    f, note = lowering_function([x], x + 1)
    return Port(functools.partial(f, _data(p)), note=note)


def _numpy(p) -> Port:
    return Port(functools.partial(operator.add, _data(p), 1))


def _numexpr(p) -> Port:
    import numexpr
    return Port(functools.partial(numexpr.evaluate, "x + 1", local_dict={"x": _data(p)}))


def _numba(p) -> Port:
    import numba

    @numba.njit
    def add_one(x):
        return x + np.float32(1)
    return Port(functools.partial(add_one, _data(p)))


def _pytensor(p) -> Port:
    _, pt = pytensor_modules()
    x = pt.fvector("x")
    f, note = pytensor_function([x], x + 1)
    return Port(functools.partial(f, _data(p)), note=note)


def _jax(p) -> Port:
    import jax
    import jax.numpy as jnp
    return Port(jax_waiting(jax.jit(lambda x: x + 1), jnp.asarray(_data(p))))


WORKLOAD = Workload(
    name="tiny-call",
    describe=lambda p: f"tiny call: x + 1 on {p['n']} float32",
    params={"n": 8, "repeats": 5, "min_seconds": 0.2},
    quick={"repeats": 3, "min_seconds": 0.05},
    ports={"lowering": _lowering, "numpy": _numpy, "numexpr": _numexpr, "numba": _numba,
           "pytensor": _pytensor, "jax": _jax},
    rtol=0.0, atol=0.0,
)
