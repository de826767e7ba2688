"""Where the logistic-regression step's time goes, measured.

The step (seed 002: N=400 samples, 784 features, float32) is two matrix-vector products over
the data ``x`` (``x . w`` and ``x.T . g``), one fused elementwise kernel over N values and the
update of ``w``. This script times, in one process:

1. ``lowering``'s whole step;
2. the two products alone, through NumPy (OpenBLAS, the library every peer calls for them);
3. ``lowering``'s step without the products (the same program with ``x . w`` replaced by an
   input and ``x.T . g`` by a sum): the fused kernel, the update and the call path;
4. one matrix-vector product per megabyte of matrix at growing sizes, on the thread count
   OpenBLAS uses by default, to show where the matrix stops fitting in a core's L2 cache.

Run: ``python benchmarks/logreg_breakdown.py`` (about 20 s); the figures go in
``docs/performance.md`` under "Logistic regression: what limits it".
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.workloads.libs import lowering_modules  # noqa: E402
from benchmarks.workloads.logreg import build_seed_program, seed_data  # noqa: E402


def best_time(fn, calls: int = 200, repeats: int = 15) -> float:
    """Seconds per call: the best of ``repeats`` runs of ``calls`` calls, after a warm-up."""
    for _ in range(calls):
        fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def step_time(x, y, w0) -> float:
    """One whole training step of ``lowering``."""
    theano, T = lowering_modules()
    program = build_seed_program(theano, T, w0)
    train = theano.function(program["inputs"], program["outputs"],
                            updates=program["updates"], mode="FAST_RUN")
    return best_time(lambda: train(x, y))


def step_without_products(x, y, w0) -> float:
    """The step with both matrix-vector products taken out: ``x . w`` is an input ``xw`` and
    ``x.T . g`` becomes ``g.mean()`` (same elementwise work, same update)."""
    theano, T = lowering_modules()
    xw = T.vector("xw")
    yv = T.vector("y")
    w = theano.shared(w0.copy(), name="w")
    b = theano.shared(np.asarray(0., dtype="float32"), name="b")
    p_1 = 1 / (1 + T.exp(-xw - b))
    xent = -yv * T.log(p_1) - (1 - yv) * T.log(1 - p_1)
    g = p_1 - yv
    gw = g.mean() + 0.02 * w
    train = theano.function([xw, yv], [p_1 > 0.5, xent],
                            updates={w: w - 0.01 * gw, b: b - 0.01 * g.mean()}, mode="FAST_RUN")
    xw_value = (x @ w0).astype(np.float32)
    return best_time(lambda: train(xw_value, y))


def numpy_products(x, w0) -> float:
    """``x . w`` then ``x.T . g`` through NumPy (OpenBLAS sgemv)."""
    def run():
        g = x @ w0
        return g @ x
    return best_time(run)


def gemv_per_megabyte(features: int = 784) -> list[tuple[int, float, float]]:
    """``(rows, matrix MiB, GB/s)`` of ``x @ w`` for growing row counts."""
    rows = []
    rng = np.random.RandomState(0)
    w = rng.randn(features).astype(np.float32)
    for n in (100, 200, 300, 400, 600, 800, 1600):
        x = rng.randn(n, features).astype(np.float32)
        seconds = best_time(lambda: x @ w, calls=300)
        rows.append((n, x.nbytes / 2**20, x.nbytes / seconds / 1e9))
    return rows


def main() -> None:
    (x, y), w0 = seed_data(400, 784)
    whole = step_time(x, y, w0)
    products = numpy_products(x, w0)
    rest = step_without_products(x, y, w0)
    print(f"lowering, whole step:                 {whole * 1e6:7.1f} us")
    print(f"NumPy, the two products alone:         {products * 1e6:7.1f} us "
          f"({products / whole:.0%} of the step)")
    print(f"lowering, the step without products:   {rest * 1e6:7.1f} us")
    print("x @ w (float32, 784 columns) by matrix size:")
    for n, mib, gbs in gemv_per_megabyte():
        print(f"  {n:5d} rows  {mib:5.2f} MiB  {gbs:6.1f} GB/s")


if __name__ == "__main__":
    main()
