"""Compiled functions and shared variables pickle, and come back working in another process
(docs/architecture.md, "Threads, processes and interrupts")."""
import concurrent.futures
import multiprocessing
import pickle
import subprocess
import sys

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T


def _accumulator():
    x = T.dvector("x")
    w = theano.shared(np.zeros(3), name="w")
    f = theano.function([x], (x * w).sum() + 1.5, updates={w: w + x})
    return x, w, f


def test_round_trip_keeps_values_updates_and_sharing():
    _, w, f = _accumulator()
    double = theano.function([], w * 2)
    f(np.ones(3))
    f2, double2, w2 = pickle.loads(pickle.dumps((f, double, w)))
    assert f2.executor_name == "cpu"
    np.testing.assert_array_equal(w2.get_value(), [1, 1, 1])
    assert float(f2(np.array([1.0, 2.0, 3.0]))) == 1 + 2 + 3 + 1.5
    # The update reached the unpickled variable, which both functions still share.
    np.testing.assert_array_equal(w2.get_value(), [2, 3, 4])
    np.testing.assert_array_equal(double2(), [4, 6, 8])
    # The originals are independent of the copies.
    np.testing.assert_array_equal(w.get_value(), [1, 1, 1])


def test_function_options_survive():
    x = T.dvector("x")
    y = T.dscalar("y")
    state = theano.In(T.dscalar("s"), value=10.0, update=None)
    f = theano.function([x, theano.In(y, value=2.0, name="scale"), state],
                        [x * y + state.variable, theano.Out(x.sum(), borrow=True)],
                        mode="FAST_COMPILE", name="scaled")
    g = pickle.loads(pickle.dumps(f))
    assert g.name == "scaled" and g.mode.name == "FAST_COMPILE"
    out, total = g(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(out, [12.0, 14.0])
    assert float(total) == 3.0
    np.testing.assert_array_equal(g(np.array([1.0]), scale=3.0)[0], [13.0])
    with pytest.raises(TypeError, match="scaled"):
        g(np.array([1.0]), 1.0, 2.0, 3.0)


def test_input_state_is_kept():
    x = T.dscalar("x")
    acc = T.dscalar("acc")
    f = theano.function([x, theano.In(acc, value=0.0, update=acc + x)], acc + x)
    f(1.0), f(2.0)
    g = pickle.loads(pickle.dumps(f))
    assert float(g(4.0)) == 7.0 and float(g(1.0)) == 8.0


def test_interpreted_function_pickles():
    x = T.dvector("x")
    f = theano.function([x], T.exp(x), mode="INTERP")
    g = pickle.loads(pickle.dumps(f))
    assert g.executor_name == "interpreter"
    np.testing.assert_allclose(g(np.array([0.0, 1.0])), [1.0, np.e])


def test_shared_variable_alone_pickles():
    w = theano.shared(np.arange(4.0), name="w")
    w2 = pickle.loads(pickle.dumps(w))
    assert w2.name == "w" and w2 is not w
    np.testing.assert_array_equal(w2.get_value(), np.arange(4.0))
    f = theano.function([], [], updates={w2: w2 * 2})
    f()
    np.testing.assert_array_equal(w2.get_value(), np.arange(4.0) * 2)
    np.testing.assert_array_equal(w.get_value(), np.arange(4.0))


def test_shared_variable_with_default_update_says_why_it_does_not_pickle():
    w = theano.shared(0.0, name="counter")
    w.default_update = w + 1
    with pytest.raises(TypeError, match="counter.*default_update"):
        pickle.dumps(w)


_CHILD = """
import pickle, sys
import numpy as np
f, w = pickle.loads(sys.stdin.buffer.read())
print(float(f(np.array([1.0, 1.0, 1.0]))), w.get_value().tolist(), f.executor_name)
"""


def test_unpickles_in_a_fresh_process():
    _, w, f = _accumulator()
    f(np.array([1.0, 2.0, 3.0]))
    done = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps((f, w)),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split(maxsplit=1)[0] == "7.5"
    assert "[2.0, 3.0, 4.0] cpu" in done.stdout.decode()


def test_process_pool_with_spawn_maps_a_compiled_function():
    x = T.dvector("x")
    f = theano.function([x], (x ** 2).sum())
    inputs = [np.arange(n, dtype=float) for n in range(1, 7)]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        results = list(pool.map(f, inputs, timeout=120))
    assert [float(r) for r in results] == [float((a ** 2).sum()) for a in inputs]
