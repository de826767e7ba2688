"""A sparse x dense product: a 20,000 x 20,000 CSR float32 matrix with 0.25% of its entries
stored (1,000,000) times a dense 20,000 x 64 float32 matrix, reported in GFLOP/s (2 per stored
entry and dense column). The reference (the NumPy row) is ``scipy.sparse``'s CSR product;
``lowering`` runs ``theano.sparse.structured_dot`` on the same scipy.sparse matrix.

>>> WORKLOAD.ports["numpy"](dict(WORKLOAD.params, n=4, m=8)).run().shape
(8, 4)
"""
from __future__ import annotations

import functools

import numpy as np

from benchmarks.harness import Port

from .base import Workload
from .libs import inputs, lowering_function, lowering_modules, pytensor_function, \
    pytensor_modules


def _data(p):
    def make(rng):
        import scipy.sparse
        sparse = scipy.sparse.random(p["m"], p["m"], density=p["density"], format="csr",
                                     dtype=np.float32, random_state=rng)
        return sparse, rng.rand(p["m"], p["n"]).astype(np.float32)
    return inputs(make, "sparse-matmul", p["m"], p["n"], p["density"])


def _lowering(p) -> Port:
    lowering, T = lowering_modules()
    s, d = lowering.sparse.csr_matrix("s", dtype="float32"), T.fmatrix("d")
    f, note = lowering_function([s, d], lowering.sparse.structured_dot(s, d))
    return Port(functools.partial(f, *_data(p)), note=note)


def _scipy(p) -> Port:
    sparse, dense = _data(p)
    return Port(lambda: sparse @ dense, note="scipy.sparse")


def _pytensor(p) -> Port:
    pytensor, pt = pytensor_modules()
    import pytensor.sparse as ps
    s, d = ps.csr_matrix("s", dtype="float32"), pt.fmatrix("d")
    f, note = pytensor_function([s, d], ps.structured_dot(s, d))
    return Port(functools.partial(f, *_data(p)), note=note)


def _flops(p) -> tuple[float, str]:
    stored = round(p["m"] * p["m"] * p["density"])
    return 2.0 * stored * p["n"], "FLOP"


WORKLOAD = Workload(
    name="sparse-matmul",
    describe=lambda p: (f"CSR {p['m']}x{p['m']} ({p['density']:.2%} stored) @ dense "
                        f"{p['m']}x{p['n']} float32; the NumPy row is scipy.sparse"),
    params={"m": 20000, "n": 64, "density": 0.0025, "repeats": 5, "min_seconds": 0.2},
    quick={"repeats": 2, "min_seconds": 0.05},
    ports={"lowering": _lowering, "numpy": _scipy, "pytensor": _pytensor},
    rtol=1e-4, atol=1e-5,
    work=_flops,
    not_applicable={"numexpr": "numexpr has no matrix product",
                    "numba": "Numba has no sparse matrices",
                    "jax": "not ported (jax.experimental.sparse)"},
)
