#!/usr/bin/env python
"""``lowering.dask`` on 1 and 2 Dask worker processes: the fused expression over a float32 Dask
array, reduced to its sum, and an epoch of data-parallel logistic regression.

Each worker is a process with one thread, and compiled code runs on one thread
(``cpu_threads=1``, set before the workers start), so the workers are the only parallelism.
Measured, best of ``--repeats`` (after one untimed run that builds the functions on the workers):

- ``expr-sum, lowering.dask.reduce``: ``(exp(-x)*sin(x) + sqrt(abs(x))) / (1 + x*x)`` summed,
  each block's expression and partial sum in one compiled loop, Dask's tree combining them;
- ``expr-sum, lowering map_blocks + dask sum``: the compiled expression block by block, then
  ``dask.array``'s sum of its blocks (the blocks of the expression are stored);
- ``expr-sum, dask.array + NumPy``: the same expression written with ``dask.array``;
- ``expr-sum, lowering in one process``: the expression's sum compiled as one function, called
  on a NumPy array of the same size in this process;
- ``logreg epoch``: one full-batch gradient step of the seed's logistic regression (784 float32
  features) over ``--samples`` samples with ``lowering.dask.DataParallel``, and the seed's own
  training function in this process (``1 process`` column).

The input array (``--elements``, 4e8 in the full run; chunks of ``--chunk``) is made and kept
on the workers before timing; the sums are checked against each other.
Run: ``python benchmarks/dask_scaling.py [--elements 4e8] [--chunk 1e7] [--samples 100000]``;
the figures go in docs/performance.md, "Dask: one worker and two".
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def best_seconds(run, repeats: int) -> float:
    """The best of ``repeats`` timed calls of ``run``, after one untimed call."""
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def expression_runs(T, theano, ldask, da, x):
    """``{label: callable}`` computing the expression's sum over the Dask array ``x``, three
    ways; each call returns the sum."""
    v = T.fvector("x")
    f = theano.function([v], (T.exp(-v) * T.sin(v) + T.sqrt(abs(v))) / (1 + v * v),
                        name="expr")
    with_numpy = (da.exp(-x) * da.sin(x) + da.sqrt(abs(x))) / (1 + x * x)
    return {
        "expr-sum, lowering.dask.reduce": lambda: float(ldask.reduce(f, x, kind="sum").compute()),
        "expr-sum, lowering map_blocks + dask sum":
            lambda: float(ldask.map_blocks(f, x).sum().compute()),
        "expr-sum, dask.array + NumPy": lambda: float(with_numpy.sum().compute()),
    }


def random_array(da, elements: int, chunk: int):
    """The benchmark's input: the same float32 values wherever it is computed."""
    return da.random.RandomState(0).standard_normal(elements, chunks=chunk).astype(np.float32)


def one_process_sum(T, theano, x: np.ndarray):
    """The expression's sum compiled as one function and called on the whole array ``x`` in
    this process (no Dask): a callable and its result."""
    v = T.fvector("x")
    f = theano.function([v], ((T.exp(-v) * T.sin(v) + T.sqrt(abs(v))) / (1 + v * v)).sum(),
                        name="expr-sum")
    return (lambda: f(x)), float(f(x))


def logreg(theano, T, samples: int):
    """The seed's model on ``samples`` samples: data, the pieces ``DataParallel`` takes, and the
    seed's own training step."""
    rng = np.random.RandomState(1234)
    data = (rng.randn(samples, 784).astype(np.float32),
            rng.randint(size=samples, low=0, high=2).astype(np.float32))
    x, y = T.fmatrix("x"), T.fvector("y")
    w = theano.shared(rng.randn(784).astype(np.float32), name="w")
    b = theano.shared(np.float32(0), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    updates = {w: w - 0.01 * gw, b: b - 0.01 * gb}
    train = theano.function([x, y], cost, updates=updates, name="train")
    return data, ([x, y], cost, [w, b], [gw, gb], updates), train


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=float, default=4e8)
    parser.add_argument("--chunk", type=float, default=1e7)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    flags = os.environ.get("LOWERING_FLAGS", "")
    os.environ["LOWERING_FLAGS"] = ",".join(filter(None, [flags, "cpu_threads=1"]))
    import dask.array as da
    import distributed
    import lowering as theano
    import lowering.dask as ldask
    import lowering.tensor as T

    elements, chunk = int(args.elements), int(args.chunk)
    data, pieces, train = logreg(theano, T, args.samples)
    rows: dict[str, dict[str, float]] = {"logreg epoch": {
        "1 process": best_seconds(lambda: train(*data), args.repeats)}}
    sums = {}
    local, local_sum = one_process_sum(
        T, theano, random_array(da, elements, chunk).compute(scheduler="sync"))
    rows["expr-sum, lowering in one process"] = {"1 process": best_seconds(local, args.repeats)}
    sums[("one process", "")] = local_sum
    for workers in (int(w) for w in args.workers.split(",")):
        column = f"{workers} worker{'s' if workers > 1 else ''}"
        with distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            x = random_array(da, elements, chunk).persist()
            distributed.wait(x)
            for label, run in expression_runs(T, theano, ldask, da, x).items():
                rows.setdefault(label, {})[column] = best_seconds(run, args.repeats)
                sums[(label, column)] = run()
            del x
            trainer = ldask.DataParallel(*pieces, client)
            trainer.scatter(data)
            rows["logreg epoch"][column] = best_seconds(trainer.step, args.repeats)
        print(f"{column} done", file=sys.stderr)
    values = list(sums.values())
    if not np.allclose(values, values[0], rtol=1e-3):
        print(f"MISMATCH: the sums disagree: {sums}", file=sys.stderr)
        return 1
    columns = ["1 process"] + [f"{w} worker{'s' if int(w) > 1 else ''}"
                               for w in args.workers.split(",")]
    print(f"{elements:.3g} float32 elements in chunks of {chunk:.3g}; logistic regression on "
          f"{args.samples} samples; best of {args.repeats}")
    print("| workload | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for label, times in rows.items():
        cells = [f"{times[c]:.3f} s" if c in times else "" for c in columns]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    if __package__ in (None, ""):
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
