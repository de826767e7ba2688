"""Memory of compiled functions: calls free every temporary (also when a check fails), so calling
a function thousands of times does not grow the process; shared variables are updated in their
own memory (``get_value(borrow=True)`` keeps its data pointer and holds the new values), results
stay those of the same function compiled without ``inplace``, a failed call changes no shared
variable, and arguments that share memory or are not writable are handled."""
import ctypes

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile.pipeline import get_mode
from lowering.config import config
from lowering.dialects.loops.asserts import RuntimeCheckError


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    with config.change_flags(cache_dir=str(tmp_path_factory.mktemp("memory-cache"))):
        yield


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


_mallinfo2 = ctypes.CDLL(None).mallinfo2
_mallinfo2.restype = _MallInfo2


def allocated_bytes() -> int:
    """Bytes the C library's allocator has handed out and not got back (heap and mmap)."""
    info = _mallinfo2()
    return info.hblkhd + info.uordblks


def growth_per_call(call, calls: int) -> float:
    for _ in range(5):  # first calls may fill caches
        call()
    before = allocated_bytes()
    for _ in range(calls):
        call()
    return (allocated_bytes() - before) / calls


# -- temporaries are freed -------------------------------------------------------------------


def test_a_matrix_product_and_its_temporaries_are_freed_on_every_call():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    product = T.dot(x, y)
    f = theano.function([x, y], [product.sum(), T.exp(product * 2).mean(axis=0)])
    a = np.random.default_rng(0).standard_normal((512, 512)) / 20
    bt = a.T  # a transposed argument, passed to BLAS as it lies
    total, means = f(a, bt)
    np.testing.assert_allclose(total, (a @ bt).sum(), rtol=1e-9)
    np.testing.assert_allclose(means, np.exp(2 * (a @ bt)).mean(axis=0), rtol=1e-9)
    # A leak would be 2 MiB (the product) and more per call.
    assert growth_per_call(lambda: f(a, bt), 20) < 4096


def test_a_training_step_called_thousands_of_times_does_not_grow():
    train, w, b = logistic_regression(np.float64, 60, 20)
    x, y = dataset(np.float64, 60, 20)
    assert growth_per_call(lambda: train(x, y), 3000) < 16


def test_failing_checks_free_the_temporaries_made_before_them():
    x, y = T.dmatrix("x"), T.dvector("y")
    f = theano.function([x, y], T.exp(T.dot(x, x)) + y)
    a = np.ones((128, 128))
    with pytest.raises(RuntimeCheckError):
        f(a, np.ones(3))

    def failing():
        with pytest.raises(RuntimeCheckError, match="differ in dimension 1"):
            f(a, np.ones(3))
    assert growth_per_call(failing, 300) < 64


# -- shared variables updated in place ----------------------------------------------------------


def dataset(dtype, n, features):
    rng = np.random.default_rng(5)
    return (rng.standard_normal((n, features)).astype(dtype),
            rng.integers(0, 2, n).astype(dtype))


def logistic_regression(dtype, n, features, mode=None):
    """The seeds' training step with explicit data inputs: w and b are updated."""
    rng = np.random.default_rng(1)
    matrix, vector = T.TensorType(dtype, (False, False)), T.TensorType(dtype, (False,))
    x, y = matrix("x"), vector("y")
    w = theano.shared(rng.standard_normal(features).astype(dtype), name="w")
    b = theano.shared(np.asarray(0.0, dtype=dtype), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = theano.function([x, y], [p_1 > 0.5, xent], updates={w: w - 0.1 * gw, b: b - 0.1 * gb},
                            mode=mode)
    return train, w, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_updates_are_written_into_the_shared_variables_own_memory(dtype):
    train, w, b = logistic_regression(dtype, 50, 30)
    plain, w2, b2 = logistic_regression(dtype, 50, 30, get_mode("FAST_RUN").excluding("inplace"))
    assert plain._execute.updated_in_place == ()
    assert {r for r, _ in train._execute.updated_in_place} == {2, 3}
    x, y = dataset(dtype, 50, 30)
    weights = w.get_value(borrow=True)
    address = weights.__array_interface__["data"][0]
    for _ in range(5):
        got, want = train(x, y), plain(x, y)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-5)
        assert w.get_value(borrow=True) is weights
        assert weights.__array_interface__["data"][0] == address
        np.testing.assert_allclose(weights, w2.get_value(), rtol=1e-5)
        np.testing.assert_allclose(b.get_value(), b2.get_value(), rtol=1e-5)


def test_the_graph_shows_what_is_computed_in_place():
    train, _, _ = logistic_regression(np.float32, 20, 10)
    plain, _, _ = logistic_regression(np.float32, 20, 10,
                                      get_mode("FAST_RUN").excluding("inplace"))
    text = str(train.maker.fgraph.toposort())
    assert "CGemv{inplace}(w" in text and "[(0, 1)](" in text  # b - 0.1 * gb writes into b
    assert "inplace}" not in str(plain.maker.fgraph.toposort()).replace("no_inplace}", "")
    assert "[(" not in str(plain.maker.fgraph.toposort())


def test_a_failed_call_changes_no_shared_variable():
    train, w, b = logistic_regression(np.float64, 40, 8)
    x, y = dataset(np.float64, 40, 8)
    train(x, y)
    weights, bias = w.get_value(), b.get_value()
    with pytest.raises(RuntimeCheckError):
        train(x, y[:-1])  # y does not fit x: found after gradients are computed
    np.testing.assert_array_equal(w.get_value(), weights)
    assert b.get_value() == bias


def test_a_variable_sharing_memory_with_an_argument_is_copied_first():
    w = theano.shared(np.arange(6.0), name="w")
    v = T.dvector("v")
    f = theano.function([v], [], updates={w: w + v[::-1]})
    assert f._execute.updated_in_place  # the update is in place ...
    memory = w.get_value(borrow=True)
    f(memory)  # ... but v is w's own memory: the variable gets a copy first
    np.testing.assert_array_equal(w.get_value(), np.arange(6.0) + np.arange(6.0)[::-1])
    np.testing.assert_array_equal(memory, np.arange(6.0))


def test_two_variables_with_one_memory_are_updated_as_without_inplace():
    data = np.arange(4.0)
    a = theano.shared(data, name="a", borrow=True)
    c = theano.shared(data, name="c", borrow=True)
    f = theano.function([], [], updates={a: a * 2, c: c[::-1] + 1})
    f()
    np.testing.assert_array_equal(a.get_value(), np.arange(4.0) * 2)
    np.testing.assert_array_equal(c.get_value(), np.arange(4.0)[::-1] + 1)


def test_a_borrowed_value_that_is_not_contiguous_or_writable_is_replaced_by_a_copy():
    w = theano.shared(np.zeros(3), name="w")
    f = theano.function([], [], updates={w: w + 1})
    strided = np.arange(6.0)[::2]
    w.set_value(strided, borrow=True)
    f()
    np.testing.assert_array_equal(w.get_value(), [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(strided, [0.0, 2.0, 4.0])
    frozen = np.ones(3)
    frozen.flags.writeable = False
    w.set_value(frozen, borrow=True)
    f()
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(frozen, [1.0, 1.0, 1.0])
    kept = w.get_value(borrow=True)
    f()
    assert w.get_value(borrow=True) is kept  # from now on, in place


# -- inputs ------------------------------------------------------------------------------------


def test_inputs_are_overwritten_only_when_declared_mutable():
    x, i = T.dvector("x"), T.lvector("i")
    gathered = T.exp(x)[i]  # exp(x) is a temporary the size of x, read by the gather
    plain = theano.function([x, i], gathered)
    mutable = theano.function([theano.In(x, mutable=True), i], gathered)
    data, picks = np.linspace(-1, 1, 1000), np.array([3, 999, 0])
    saved = data.copy()
    np.testing.assert_allclose(plain(data, picks), np.exp(saved)[picks])
    np.testing.assert_array_equal(data, saved)
    np.testing.assert_allclose(mutable(data, picks), np.exp(saved)[picks])
    np.testing.assert_allclose(data, np.exp(saved))  # its memory held the temporary
    broadcast = np.broadcast_to(np.zeros(1), (5,))  # read-only: a copy is written instead
    np.testing.assert_array_equal(mutable(broadcast, picks[:1]), [1.0])


# -- allow_gc=False: a workspace kept between calls ----------------------------------------------


def product_function(allow_gc: bool):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    with config.change_flags(allow_gc=allow_gc):
        f = theano.function([x, y], T.exp(T.dot(x, y) / 100).sum(axis=1))
        loops = f.ir("loops")
    return f, loops


def test_without_gc_the_temporaries_stay_between_calls_and_go_with_the_function():
    f, loops = product_function(allow_gc=False)
    assert "workspace = 0" in loops and "workspace = 0" not in product_function(True)[1]
    rng = np.random.default_rng(2)
    small, big = rng.standard_normal((64, 64)), rng.standard_normal((256, 256))
    for a in (small, big, small, big):  # the workspace grows to the largest size seen
        np.testing.assert_allclose(f(a, a), np.exp(a @ a / 100).sum(axis=1), rtol=1e-12)
    assert growth_per_call(lambda: f(big, big), 50) < 16
    held = allocated_bytes()
    del f
    import gc
    gc.collect()
    assert held - allocated_bytes() >= big.nbytes  # the 256 x 256 product's slot is freed


def test_without_gc_a_failed_call_gives_the_workspace_back():
    f, _ = product_function(allow_gc=False)
    a = np.ones((32, 32))

    def failing():
        with pytest.raises(RuntimeCheckError, match="contraction sizes differ"):
            f(a, np.ones((31, 32)))
    assert growth_per_call(failing, 200) < 16
    np.testing.assert_allclose(f(a, a), np.exp(a @ a / 100).sum(axis=1))


def test_without_gc_calls_from_several_threads_at_once_stay_correct():
    import threading
    f, _ = product_function(allow_gc=False)
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((n, n)) for n in (40, 80, 120, 160)]
    expected = [np.exp(a @ a / 100).sum(axis=1) for a in inputs]
    failures = []

    def work(k):
        for _ in range(30):
            got = f(inputs[k], inputs[k])
            if not np.allclose(got, expected[k], rtol=1e-12):
                failures.append(k)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
