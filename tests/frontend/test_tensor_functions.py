"""Theano's tensor functions through the public API: shape unpacking, indexing with a list of
slices, ``T.stack(a, b, ...)``, ``T.square``, ``T.eye``, ``T.tensordot``,
``T.sort``/``T.argsort``, ``T.tile``, ``T.any``/``T.all`` and ``T.addbroadcast``, compiled and interpreted against NumPy, with gradients checked against
finite differences."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowering as theano
import lowering.tensor as T

from .helpers import evaluate

MODES = ["FAST_RUN", "INTERP"]


def test_a_shape_of_known_length_unpacks_into_its_sizes():
    x = T.tensor4("x")
    batch, channels, height, width = x.shape
    rows, cols = x.shape[2:]
    assert batch.ndim == 0 and len(list(x.shape[1:])) == 3
    f = theano.function([x], [batch * channels, height + width, rows * cols])
    got = f(np.zeros((2, 3, 4, 5)))
    assert [int(v) for v in got] == [6, 9, 20]


def test_iterating_a_stacked_vector_gives_its_entries():
    a, b = T.scalars("a", "b")
    first, second = T.stack([a, b * 2])
    assert np.allclose(evaluate([first, second], {a: 1.0, b: 3.0}), [1.0, 6.0])


@pytest.mark.parametrize("make", [lambda: T.vector("v"), lambda: T.matrix("m"),
                                  lambda: T.scalar("s")])
def test_what_has_no_known_length_still_cannot_be_iterated(make):
    with pytest.raises(TypeError, match="cannot be iterated: only a vector of known length"):
        a, b = make()


def test_a_list_of_slices_indexes_as_the_tuple_of_its_items():
    m = T.matrix("m")
    data = np.arange(20.0).reshape(4, 5)
    picked = m[[slice(0, 2), slice(1, 3)]]
    assert picked.ndim == 2
    np.testing.assert_array_equal(evaluate(picked, {m: data}), data[0:2, 1:3])
    np.testing.assert_array_equal(evaluate(m[[slice(1, None), 2]], {m: data}), data[1:, 2])
    np.testing.assert_array_equal(evaluate(m[[0, 2]], {m: data}), data[[0, 2]])  # still an array


def test_stack_takes_separate_arguments_as_theano_1_did():
    a, b, c = T.scalars("a", "b", "c")
    u, v = T.vectors("u", "v")
    feeds = {a: 1.0, b: 2.0, c: 3.0, u: [1.0, 2.0], v: [3.0, 4.0]}
    results = evaluate([T.stack(a, b, c), T.stack([u, v], 1), T.stack([u, v], axis=1),
                        T.stack(tensors=[u, v]), T.stack(u, v)], feeds)
    np.testing.assert_array_equal(results[0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(results[1], [[1.0, 3.0], [2.0, 4.0]])
    np.testing.assert_array_equal(results[2], results[1])
    np.testing.assert_array_equal(results[3], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(results[4], results[3])
    with pytest.raises(TypeError, match="stack needs the tensors"):
        T.stack()


@pytest.mark.parametrize("mode", MODES)
def test_square_and_eye(mode):
    x, n = T.dmatrix("x"), T.lscalar("n")
    f = theano.function([x, n], [T.square(x), T.eye(n), T.eye(n, 4, k=-1, dtype="int32"),
                                 T.identity_like(x)], mode=mode)
    data = np.arange(6.0).reshape(2, 3) - 2
    sq, eye, shifted, ident = f(data, 3)
    np.testing.assert_array_equal(sq, data ** 2)
    np.testing.assert_array_equal(eye, np.eye(3))
    assert eye.dtype == theano.config.floatX
    np.testing.assert_array_equal(shifted, np.eye(3, 4, k=-1, dtype="int32"))
    assert shifted.dtype == np.int32
    np.testing.assert_array_equal(ident, np.eye(2, 3))


# ---------------------------------------------------------------------------------------------
# tensordot

TENSORDOT_CASES = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 5), 1),
    ((2, 3), (4, 5), 0),
    ((2, 3, 4), (4, 3), [[1, 2], [1, 0]]),
    ((3, 4), (4,), [[1], [0]]),
    ((4,), (4,), 1),
]


@pytest.mark.parametrize("mode", MODES)
def test_tensordot_matches_numpy(mode):
    rng = np.random.RandomState(0)
    inputs, outputs, feeds = [], [], []
    for a_shape, b_shape, axes in TENSORDOT_CASES:
        a = T.tensor(dtype="float64", broadcastable=(False,) * len(a_shape))
        b = T.tensor(dtype="float64", broadcastable=(False,) * len(b_shape))
        inputs += [a, b]
        outputs.append(T.tensordot(a, b, axes))
        feeds += [rng.randn(*a_shape), rng.randn(*b_shape)]
    results = theano.function(inputs, outputs, mode=mode)(*feeds)
    for (a_shape, b_shape, axes), got, k in zip(TENSORDOT_CASES, results, range(0, 99, 2)):
        np.testing.assert_allclose(got, np.tensordot(feeds[k], feeds[k + 1], axes), rtol=1e-12)


def test_tensordot_gradient_and_errors():
    rng = np.random.RandomState(1)
    T.verify_grad(lambda a, b: T.tensordot(a, b, [[0, 2], [2, 0]]),
                  [rng.randn(3, 2, 4), rng.randn(4, 5, 3)], rng=rng)
    a, b = T.dtensor3("a"), T.dmatrix("b")
    with pytest.raises(ValueError, match="larger than the dimension of b"):
        T.tensordot(a, b, 3)
    with pytest.raises(ValueError, match="same length"):
        T.tensordot(a, b, [[0, 1], [1]])
    f = theano.function([a, b], T.tensordot(a, b, 1))
    with pytest.raises(ValueError):  # the summed sizes differ: found when the function runs
        f(np.zeros((2, 3, 4)), np.zeros((5, 2)))


# ---------------------------------------------------------------------------------------------
# sort and argsort


@pytest.mark.parametrize("mode", MODES)
def test_sort_and_argsort_match_numpys_stable_order(mode):
    x, m = T.dvector("x"), T.imatrix("m")
    f = theano.function([x, m], [T.sort(x), T.argsort(x), T.sort(m, axis=0), T.argsort(m, 0),
                                 T.sort(m, axis=None), T.argsort(m, axis=None)], mode=mode)
    data = np.array([3.0, np.nan, -1.0, 3.0, -np.inf, 0.0, np.nan, -0.5])
    ints = np.array([[3, 1, 2], [1, 1, 0], [3, 0, 2]], dtype="int32")
    got = f(data, ints)
    np.testing.assert_array_equal(got[0], np.sort(data))
    np.testing.assert_array_equal(got[1], np.argsort(data, kind="stable"))
    np.testing.assert_array_equal(got[2], np.sort(ints, axis=0))
    np.testing.assert_array_equal(got[3], np.argsort(ints, axis=0, kind="stable"))
    np.testing.assert_array_equal(got[4], np.sort(ints, axis=None))
    np.testing.assert_array_equal(got[5], np.argsort(ints, axis=None, kind="stable"))
    assert got[1].dtype == np.int64 and got[2].dtype == np.int32


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.int16]),
                  hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.integers(-4, 4)),
       st.integers(-3, 2))
def test_argsort_along_any_axis_matches_numpy(data, axis):
    axis = axis % data.ndim
    x = T.tensor(dtype=str(data.dtype), broadcastable=(False,) * data.ndim)
    got_sorted, got_order = theano.function([x], [T.sort(x, axis), T.argsort(x, axis)])(data)
    np.testing.assert_array_equal(got_order, np.argsort(data, axis=axis, kind="stable"))
    np.testing.assert_array_equal(got_sorted, np.sort(data, axis=axis))


def test_the_gradient_of_sort_goes_back_to_each_elements_place():
    rng = np.random.RandomState(2)
    T.verify_grad(lambda a: T.sort(a, axis=1) * np.arange(4.0), [rng.randn(3, 4)], rng=rng)
    x = T.dvector("x")
    g = T.grad((T.sort(x) * np.array([1.0, 10.0, 100.0])).sum(), x)
    np.testing.assert_array_equal(evaluate(g, {x: [5.0, -1.0, 2.0]}), [100.0, 1.0, 10.0])


def test_sorting_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match="order"):
        T.sort(T.dvector(), order="name")
    with pytest.raises(Exception, match="axis 2 is out of range"):
        T.argsort(T.dmatrix(), axis=2)


# ---------------------------------------------------------------------------------------------
# tile, any/all, addbroadcast/patternbroadcast


@pytest.mark.parametrize("mode", MODES)
def test_tile_any_all_match_numpy(mode):
    x, k, m = T.dmatrix("x"), T.lscalar("k"), T.lmatrix("m")
    f = theano.function([x, k, m], [T.tile(x, (2, 3)), T.tile(x, (k, 1, 2)), T.tile(x, k),
                                    T.any(m, axis=1), T.all(m, axis=0), T.any(m), T.all(m)],
                        mode=mode)
    data = np.arange(6.0).reshape(2, 3)
    flags = np.array([[0, 3], [0, 0], [1, 2]])
    got = f(data, 2, flags)
    np.testing.assert_array_equal(got[0], np.tile(data, (2, 3)))
    np.testing.assert_array_equal(got[1], np.tile(data, (2, 1, 2)))
    np.testing.assert_array_equal(got[2], np.tile(data, 2))
    np.testing.assert_array_equal(got[3], flags.any(axis=1))
    np.testing.assert_array_equal(got[4], flags.all(axis=0))
    assert got[5] == flags.any() and got[6] == flags.all() and got[3].dtype == bool


def test_tile_gradient_and_reps_errors():
    rng = np.random.RandomState(5)
    T.verify_grad(lambda a: T.tile(a, (2, 1, 3)), [rng.randn(2, 2)], rng=rng)
    with pytest.raises(ValueError, match="integer dtype"):
        T.tile(T.dmatrix(), (2.5, 1))
    with pytest.raises(ValueError, match="specify the ndim"):
        T.tile(T.dmatrix(), T.lvector())


def test_addbroadcast_checks_the_size_when_the_function_runs():
    x = T.dmatrix("x")
    y = T.addbroadcast(x, 0)
    assert y.broadcastable == (True, False)
    assert T.patternbroadcast(x, (False, True)).broadcastable == (False, True)
    f = theano.function([x], y)
    np.testing.assert_array_equal(f(np.ones((1, 3))), np.ones((1, 3)))
    with pytest.raises(ValueError, match="addbroadcast: dimension 0 must have size 1"):
        f(np.ones((2, 3)))
    with pytest.raises(ValueError, match="out of range"):
        T.addbroadcast(x, 2)


def test_dot_of_operands_above_rank_two_and_tensordot_axes_as_an_array():
    # Theano's T.dot of a rank-3 or -4 right operand is NumPy's (a's last axis against b's second
    # to last); tensordot takes its axes as a (2, n) array too.
    a, b = T.tensor3("a"), T.tensor4("b")
    av = np.random.default_rng(0).normal(size=(2, 3, 4))
    bv = np.random.default_rng(1).normal(size=(5, 6, 4, 7))
    axes = np.array([[2], [2]])
    for mode in ("FAST_RUN", "INTERP"):
        got_dot, got_td = theano.function([a, b], [T.dot(a, b), T.tensordot(a, b, axes)],
                                          mode=mode)(av, bv)
        np.testing.assert_allclose(got_dot, np.dot(av, bv), rtol=1e-12)
        np.testing.assert_allclose(got_td, np.tensordot(av, bv, [[2], [2]]), rtol=1e-12)
