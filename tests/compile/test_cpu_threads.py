"""Compiled functions on the thread pool: the same bits on one thread and on several, over many
calls and sizes around the thresholds; reductions in the order NumPy's tolerance allows."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config


def _programs():
    v, m = T.fvector("v"), T.fmatrix("m")
    return {
        "sum": ([v], v.sum()),
        "mean": ([m], m.mean()),
        "sum_exp": ([v], T.exp(v).sum()),
        "sum_axis0": ([m], m.sum(axis=0)),
        "max_axis1": ([m], m.max(axis=1)),
        "expression": ([v], (T.exp(-v) * T.sin(v) + T.sqrt(abs(v))) / (1 + v * v)),
    }


def _inputs(name, size, rng):
    if name in ("mean", "sum_axis0", "max_axis1"):
        rows = max(1, size // 300)
        return [rng.standard_normal((rows, 300)).astype(np.float32)]
    return [rng.standard_normal(size).astype(np.float32)]


NUMPY = {"sum": lambda v: v.sum(), "mean": lambda m: m.mean(),
         "sum_exp": lambda v: np.exp(v).sum(), "sum_axis0": lambda m: m.sum(axis=0),
         "max_axis1": lambda m: m.max(axis=1),
         "expression": lambda v: (np.exp(-v) * np.sin(v) + np.sqrt(np.abs(v))) / (1 + v * v)}


@pytest.fixture(scope="module")
def compiled():
    saved = config.cpu_threads
    functions = {}
    try:
        for threads in (1, 4):
            config.cpu_threads = threads
            for name, (inputs, output) in _programs().items():
                functions[name, threads] = theano.function(inputs, output)
    finally:
        config.cpu_threads = saved
    return functions


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_one_thread_and_four_give_the_same_bits(compiled, name):
    rng = np.random.default_rng(3)
    for size in (1, 63, 1000, 65_536, 70_001, 300_000):
        args = _inputs(name, size, rng)
        one = compiled[name, 1](*args)
        four = compiled[name, 4](*args)
        assert np.asarray(one).tobytes() == np.asarray(four).tobytes(), (name, size)
        want = NUMPY[name](*[a.astype(np.float64) for a in args])
        np.testing.assert_allclose(four, want, rtol=2e-5, atol=1e-4 * np.sqrt(args[0].size))


def test_many_calls_in_a_row(compiled):
    rng = np.random.default_rng(4)
    v = rng.standard_normal(100_000).astype(np.float32)
    want = compiled["expression", 1](v)
    f = compiled["expression", 4]
    for _ in range(300):
        assert np.array_equal(f(v), want)
