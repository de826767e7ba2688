"""Calls of compiled functions from several threads: each call's results and updates are those
of some serial order of the calls (docs/architecture.md, "Threads, processes and interrupts")."""
import threading

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config


def _run_threads(target, count=4):
    errors = []

    def guarded(k):
        try:
            target(k)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)
    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
def test_counter_increments_are_never_lost(mode):
    # A counter in every element of a vector: calls long enough to overlap.
    counter = theano.shared(np.zeros(20_000, dtype="int64"), name="counter")
    increment = theano.function([], counter[0], updates={counter: counter + 1}, mode=mode)
    seen = [[] for _ in range(4)]
    calls = 1000 if mode == "FAST_RUN" else 200

    def work(k):
        for _ in range(calls):
            seen[k].append(int(increment()))
    _run_threads(work)
    total = 4 * calls
    assert np.all(counter.get_value() == total)
    # Each call returned the value before its own increment: every value exactly once.
    assert sorted(v for s in seen for v in s) == list(range(total))


@pytest.mark.parametrize("allow_gc", [True, False])
def test_large_in_place_update_is_not_torn(allow_gc):
    n = 1_000_000
    w = theano.shared(np.zeros(n), name="w")
    with config.change_flags(allow_gc=allow_gc):
        step = theano.function([], (w * 2).sum(), updates={w: w + 1})
    assert step.executor_name == "cpu"
    sums = []

    def work(_):
        for _ in range(20):
            sums.append(float(step()))
    _run_threads(work)
    value = w.get_value()
    assert np.all(value == 80.0), np.unique(value)
    # The outputs were computed from the values between whole updates: 2 * n * (0..79).
    assert sorted(sums) == [2.0 * n * k for k in range(80)]


def test_two_functions_sharing_a_variable_serialize_on_it():
    n = 200_000
    w = theano.shared(np.zeros(n), name="w")
    other = theano.shared(np.zeros(3), name="other")
    add_one = theano.function([], [], updates={w: w + 1})
    add_two = theano.function([], [], updates={w: w + 2, other: other + 1})

    def work(k):
        f = add_one if k % 2 else add_two
        for _ in range(25):
            f()
    _run_threads(work)
    assert np.all(w.get_value() == 2 * 25 * 1 + 2 * 25 * 2)
    assert np.all(other.get_value() == 50)


def test_set_value_waits_for_the_running_call():
    w = theano.shared(np.zeros(400_000), name="w")
    step = theano.function([], [], updates={w: w + 1})

    def work(k):
        for _ in range(30):
            if k == 0:
                w.set_value(np.full(400_000, 5.0))
            else:
                step()
    _run_threads(work, count=2)
    # Whatever the interleaving, the array is one value everywhere (no half-written update).
    assert len(np.unique(w.get_value())) == 1


def test_functions_without_state_run_calls_in_parallel_correctly():
    x = T.dvector("x")
    f = theano.function([x], T.exp(x).sum())
    arrays = [np.linspace(0, 1, 100_000) * k for k in range(4)]
    expected = [np.exp(a).sum() for a in arrays]
    results = [[] for _ in range(4)]

    def work(k):
        for _ in range(20):
            results[k].append(float(f(arrays[k])))
    _run_threads(work)
    for k in range(4):
        np.testing.assert_allclose(results[k], expected[k], rtol=1e-12)
