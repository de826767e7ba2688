"""A compound elementwise expression, ``(exp(-x)*sin(x) + sqrt(abs(x))) / (1 + x*x)``, on 1e6
and 1e7 float32 values. Reported in GB/s (4 bytes read and 4 written per value) beside the
machine's copy bandwidth: a fused loop can approach it, one loop per operation cannot.

>>> p = dict(SMALL.params, n=3)
>>> SMALL.ports["numpy"](p).run().dtype
dtype('float32')
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules

EXPRESSION = "(exp(-x)*sin(x) + sqrt(abs(x))) / (1 + x*x)"


def _data(p) -> np.ndarray:
    return inputs(lambda rng: rng.randn(p["n"]).astype(np.float32), "expression", p["n"])


def _lowering(p) -> Port:
    _, T = lowering_modules()
    x = T.fvector("x")
    f, note = lowering_function([x], (T.exp(-x) * T.sin(x) + T.sqrt(abs(x))) / (1 + x * x))
    return Port(functools.partial(f, _data(p)), note=note)


def _numpy(p) -> Port:
    def expression(x):
        return (np.exp(-x) * np.sin(x) + np.sqrt(np.abs(x))) / (1 + x * x)
    return Port(functools.partial(expression, _data(p)))


def _numexpr(p) -> Port:
    import numexpr
    return Port(functools.partial(numexpr.evaluate, EXPRESSION, local_dict={"x": _data(p)}))


def _numba(p) -> Port:
    import numba

    @numba.njit
    def expression(x):
        return (np.exp(-x) * np.sin(x) + np.sqrt(np.abs(x))) / (np.float32(1) + x * x)
    return Port(functools.partial(expression, _data(p)))


def _pytensor(p) -> Port:
    _, pt = pytensor_modules()
    x = pt.fvector("x")
    f, note = pytensor_function([x], (pt.exp(-x) * pt.sin(x) + pt.sqrt(abs(x))) / (1 + x * x))
    return Port(functools.partial(f, _data(p)), note=note)


def _jax(p) -> Port:
    import jax
    import jax.numpy as jnp

    def expression(x):
        return (jnp.exp(-x) * jnp.sin(x) + jnp.sqrt(jnp.abs(x))) / (1 + x * x)
    return Port(jax_waiting(jax.jit(expression), jnp.asarray(_data(p))))


def _workload(name: str, n: int) -> Workload:
    return Workload(
        name=name,
        describe=lambda p: f"{EXPRESSION} on {p['n']:,} float32",
        params={"n": n, "repeats": 5, "min_seconds": 0.2},
        quick={"repeats": 2, "min_seconds": 0.05},
        ports={"lowering": _lowering, "numpy": _numpy, "numexpr": _numexpr, "numba": _numba,
               "pytensor": _pytensor, "jax": _jax},
        # exp(-x)*sin(x) + sqrt(|x|) cancels near its zeros: an absolute tolerance of a few
        # float32 ulps of the O(1) terms is the meaningful one there.
        rtol=1e-5, atol=1e-5,
        work=lambda p: (8.0 * p["n"], "B"),
    )


SMALL = _workload("expr-1e6", 10**6)
LARGE = _workload("expr-1e7", 10**7)
