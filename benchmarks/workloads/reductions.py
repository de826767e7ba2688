"""Reductions of a 4096x4096 float32 matrix (64 MiB, more than the caches hold): the sum over
axis 1 and the mean of all values. Reported in GB/s of the matrix read.

>>> p = dict(SUM_AXIS1.params, n=4)
>>> SUM_AXIS1.ports["numpy"](p).run().shape, MEAN.ports["numpy"](p).run().dtype
((4,), dtype('float32'))
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, jax_waiting, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules


def _data(p) -> np.ndarray:
    # Positive values: the sums do not cancel, so a relative tolerance is meaningful.
    return inputs(lambda rng: rng.rand(p["n"], p["n"]).astype(np.float32), "matrix", p["n"])


def _ports(reduce_lowering, reduce_numpy, numexpr_text, reduce_pytensor, reduce_jax):
    """One port per library from each library's spelling of the reduction."""

    def lowering(p):
        _, T = lowering_modules()
        x = T.fmatrix("x")
        f, note = lowering_function([x], reduce_lowering(x))
        return Port(functools.partial(f, _data(p)), note=note)

    def numpy(p):
        return Port(functools.partial(reduce_numpy, _data(p)))

    def numexpr(p):
        import numexpr as ne
        x = _data(p)
        return Port(functools.partial(numexpr_text, ne, x))

    def numba(p):
        import numba
        compiled = numba.njit(reduce_numpy)
        x = _data(p)
        if np.asarray(compiled(x)).dtype == x.dtype:
            return Port(functools.partial(compiled, x))
        # Numba's mean of float32 values is a float64; compare its value as NumPy's type.
        return Port(lambda: x.dtype.type(compiled(x)), note="float64 result cast to float32")

    def pytensor(p):
        _, pt = pytensor_modules()
        x = pt.fmatrix("x")
        f, note = pytensor_function([x], reduce_pytensor(x))
        return Port(functools.partial(f, _data(p)), note=note)

    def jax(p):
        import jax as jx
        import jax.numpy as jnp
        return Port(jax_waiting(jx.jit(reduce_jax), jnp.asarray(_data(p))))

    return {"lowering": lowering, "numpy": numpy, "numexpr": numexpr, "numba": numba,
            "pytensor": pytensor, "jax": jax}


def _sum_axis1(x):
    return x.sum(axis=1)


def _mean(x):
    return x.mean()


def _numexpr_sum_axis1(ne, x):
    return ne.evaluate("sum(x, axis=1)", local_dict={"x": x})


def _numexpr_mean(ne, x):
    return ne.evaluate("sum(x)", local_dict={"x": x}) / np.float32(x.size)


_PARAMS = {"n": 4096, "repeats": 5, "min_seconds": 0.2}
_QUICK = {"repeats": 2, "min_seconds": 0.05}

SUM_AXIS1 = Workload(
    name="sum-axis1",
    describe=lambda p: f"sum over axis 1 of a {p['n']}x{p['n']} float32 matrix",
    params=_PARAMS, quick=_QUICK,
    ports=_ports(_sum_axis1, _sum_axis1, _numexpr_sum_axis1, _sum_axis1, _sum_axis1),
    rtol=1e-4, atol=0.0,
    work=lambda p: (4.0 * p["n"] * (p["n"] + 1), "B"),
)

MEAN = Workload(
    name="mean",
    describe=lambda p: f"mean of a {p['n']}x{p['n']} float32 matrix",
    params=_PARAMS, quick=_QUICK,
    ports=_ports(_mean, _mean, _numexpr_mean, _mean, _mean),
    rtol=1e-4, atol=0.0,
    work=lambda p: (4.0 * p["n"] * p["n"], "B"),
)
