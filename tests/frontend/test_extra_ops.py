"""``T.extra_ops`` through the public API, compiled and interpreted against NumPy: running sums
and products, differences, one-hot rows, squeeze, repeat, bincount, diagonal fills and flat
index arithmetic, with their gradients and the run-time errors Theano raised."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowering as theano
import lowering.tensor as T

extra_ops = T.extra_ops
MODES = ["FAST_RUN", "INTERP"]


@pytest.mark.parametrize("mode", MODES)
def test_running_sums_and_products_along_each_axis(mode):
    x, i = T.dtensor3("x"), T.ivector("i")
    outputs = [extra_ops.cumsum(x), extra_ops.cumprod(x, axis=1), extra_ops.cumsum(x, axis=-1),
               extra_ops.cumsum(i), extra_ops.cumprod(i), T.cumsum(i > 0)]
    f = theano.function([x, i], outputs, mode=mode)
    data = np.random.RandomState(0).randn(2, 3, 4)
    ints = np.array([3, -1, 2, 5], dtype="int32")
    got = f(data, ints)
    np.testing.assert_allclose(got[0], np.cumsum(data), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.cumprod(data, axis=1), rtol=1e-12)
    np.testing.assert_allclose(got[2], np.cumsum(data, axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(got[3], np.cumsum(ints))
    np.testing.assert_array_equal(got[4], np.cumprod(ints))
    assert got[3].dtype == np.int32  # Theano's CumOp keeps the input's type
    np.testing.assert_array_equal(got[5], np.cumsum(ints > 0))


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64]),
                  hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.integers(-3, 3)),
       st.integers(-3, 2))
def test_cumsum_matches_numpy_on_any_shape(data, axis):
    axis = axis % data.ndim
    x = T.tensor(dtype=str(data.dtype), broadcastable=(False,) * data.ndim)
    got = theano.function([x], extra_ops.cumsum(x, axis=axis))(data)
    np.testing.assert_array_equal(got, np.cumsum(data, axis=axis, dtype=data.dtype))


def test_running_sums_and_products_have_theanos_gradients():
    rng = np.random.RandomState(1)
    T.verify_grad(lambda a: extra_ops.cumsum(a, axis=0), [rng.randn(4, 3)], rng=rng)
    T.verify_grad(lambda a: extra_ops.cumsum(a), [rng.randn(2, 3)], rng=rng)
    positive = rng.uniform(0.5, 2.0, (3, 4))
    T.verify_grad(lambda a: extra_ops.cumprod(a, axis=1), [positive], rng=rng)
    T.verify_grad(lambda a: extra_ops.cumprod(a), [positive], rng=rng)


def test_the_forward_derivative_of_running_products():
    x, v = T.dvector("x"), T.dvector("v")
    y = extra_ops.cumprod(x)
    f = theano.function([x, v], [T.Rop(y, x, v), T.Rop(extra_ops.cumsum(x), x, v)])
    data, tangent = np.array([1.5, -2.0, 0.5]), np.array([1.0, 0.5, -2.0])
    jacobian = np.tril(np.cumprod(data)[:, None] / data[None, :])
    rop, rop_sum = f(data, tangent)
    np.testing.assert_allclose(rop, jacobian @ tangent)
    np.testing.assert_allclose(rop_sum, np.cumsum(tangent))


@pytest.mark.parametrize("mode", MODES)
def test_diff_one_hot_and_squeeze(mode):
    x, y = T.dmatrix("x"), T.lvector("y")
    r = T.tensor(dtype="float64", broadcastable=(True, False, True), name="r")
    outputs = [extra_ops.diff(x), extra_ops.diff(x, n=2, axis=0),
               extra_ops.to_one_hot(y, 4), extra_ops.to_one_hot(y, x.shape[1], dtype="int32"),
               extra_ops.squeeze(r), extra_ops.squeeze(r, axis=2)]
    f = theano.function([x, y, r], outputs, mode=mode)
    data = np.random.RandomState(2).randn(4, 5)
    labels = np.array([3, 0, 1])
    got = f(data, labels, np.arange(3.0).reshape(1, 3, 1))
    np.testing.assert_allclose(got[0], np.diff(data))
    np.testing.assert_allclose(got[1], np.diff(data, n=2, axis=0))
    np.testing.assert_array_equal(got[2], np.eye(4)[labels])
    assert got[2].dtype == theano.config.floatX and got[3].dtype == np.int32
    np.testing.assert_array_equal(got[3], np.eye(5, dtype="int32")[labels])
    assert got[4].shape == (3,) and got[5].shape == (1, 3)
    assert extra_ops.squeeze(r, axis=1).broadcastable == (True, False, True)  # not broadcastable


@pytest.mark.parametrize("mode", MODES)
def test_repeat_by_a_count_or_per_element(mode):
    x, n, counts = T.dmatrix("x"), T.lscalar("n"), T.ivector("counts")
    outputs = [extra_ops.repeat(x, 2, axis=0), extra_ops.repeat(x, n, axis=1),
               extra_ops.repeat(x, n), extra_ops.repeat(x, counts, axis=1),
               extra_ops.repeat(x, [2], axis=0)]
    f = theano.function([x, n, counts], outputs, mode=mode)
    data = np.arange(6.0).reshape(2, 3)
    per_column = np.array([0, 3, 1], dtype="int32")
    got = f(data, 3, per_column)
    np.testing.assert_array_equal(got[0], np.repeat(data, 2, axis=0))
    np.testing.assert_array_equal(got[1], np.repeat(data, 3, axis=1))
    np.testing.assert_array_equal(got[2], np.repeat(data, 3))
    np.testing.assert_array_equal(got[3], np.repeat(data, per_column, axis=1))
    np.testing.assert_array_equal(got[4], np.repeat(data, [2], axis=0))
    with pytest.raises(ValueError, match="repeats may not be negative"):
        f(data, 3, np.array([1, -1, 2], dtype="int32"))


def test_repeat_gradients_and_argument_errors():
    rng = np.random.RandomState(3)
    T.verify_grad(lambda a: extra_ops.repeat(a, 3, axis=1), [rng.randn(2, 3)], rng=rng)
    T.verify_grad(lambda a: extra_ops.repeat(a, np.array([2, 0, 1]), axis=0),
                  [rng.randn(3, 2)], rng=rng)
    with pytest.raises(ValueError, match="should not exceed 1"):
        extra_ops.repeat(T.dvector(), T.imatrix())
    with pytest.raises(TypeError, match="must be integers"):
        extra_ops.repeat(T.dvector(), 1.5)


@pytest.mark.parametrize("mode", MODES)
def test_bincount_counts_and_weights(mode):
    x, w = T.ivector("x"), T.dvector("w")
    f = theano.function([x, w], [extra_ops.bincount(x), extra_ops.bincount(x, w),
                                 extra_ops.bincount(x, minlength=8),
                                 extra_ops.bincount(x, assert_nonneg=True)], mode=mode)
    values = np.array([1, 4, 1, 0, 4, 4], dtype="int32")
    weights = np.linspace(0.5, 3.0, 6)
    got = f(values, weights)
    np.testing.assert_array_equal(got[0], np.bincount(values))
    assert got[0].dtype == np.int32
    np.testing.assert_allclose(got[1], np.bincount(values, weights))
    np.testing.assert_array_equal(got[2], np.bincount(values, minlength=8))
    with pytest.raises(ValueError, match="bincount: the input has negative values"):
        f(np.array([1, -1], dtype="int32"), weights[:2])
    with pytest.raises(TypeError, match="dimension 1"):
        extra_ops.bincount(T.imatrix())


@pytest.mark.parametrize("mode", MODES)
def test_fill_diagonal_of_rectangles_cubes_and_offsets(mode):
    a, c, v, k = T.dmatrix("a"), T.dtensor3("c"), T.dscalar("v"), T.lscalar("k")
    f = theano.function([a, c, v, k], [extra_ops.fill_diagonal(a, v),
                                       extra_ops.fill_diagonal(c, v),
                                       extra_ops.fill_diagonal_offset(a, v, k)], mode=mode)
    rect, cube = np.zeros((3, 5)), np.zeros((2, 2, 2))
    for offset in (-2, 0, 3, 7):
        filled, filled_cube, shifted = f(rect, cube, 7.0, offset)
        want = rect.copy()
        np.fill_diagonal(want, 7.0)
        np.testing.assert_array_equal(filled, want)
        want_cube = cube.copy()
        np.fill_diagonal(want_cube, 7.0)
        np.testing.assert_array_equal(filled_cube, want_cube)
        want_shifted = rect.copy()
        rows = np.arange(rect.shape[0])
        cols = rows + offset
        keep = (cols >= 0) & (cols < rect.shape[1])
        want_shifted[rows[keep], cols[keep]] = 7.0
        np.testing.assert_array_equal(shifted, want_shifted)
    with pytest.raises(ValueError, match="equal length"):
        f(rect, np.zeros((2, 3, 2)), 1.0, 0)


def test_fill_diagonal_gradients_are_theanos():
    rng = np.random.RandomState(4)
    T.verify_grad(lambda a, v: extra_ops.fill_diagonal(a, v), [rng.randn(3, 4), np.array(2.0)],
                  rng=rng)
    T.verify_grad(lambda a, v: extra_ops.fill_diagonal_offset(a, v, 1),
                  [rng.randn(4, 3), np.array(-1.0)], rng=rng)


@pytest.mark.parametrize("mode", MODES)
def test_flat_indices_and_coordinates_convert_both_ways(mode):
    i, r, c = T.lvector("i"), T.ivector("r"), T.ivector("c")
    dims = (3, 4)
    outputs = list(extra_ops.unravel_index(i, dims)) + \
        list(extra_ops.unravel_index(i, dims, order="F")) + [
            extra_ops.ravel_multi_index((r, c), dims),
            extra_ops.ravel_multi_index((r, c), dims, order="F")]
    f = theano.function([i, r, c], outputs, mode=mode)
    lenient = theano.function([r, c], [extra_ops.ravel_multi_index((r, c), dims, mode="wrap"),
                                       extra_ops.ravel_multi_index((r, c), dims, mode="clip")],
                              mode=mode)
    flat = np.array([0, 5, 11, 7])
    rows, cols = np.array([2, 0, 1], dtype="int32"), np.array([3, 1, 0], dtype="int32")
    got = f(flat, rows, cols)
    for k, want in enumerate(np.unravel_index(flat, dims) + np.unravel_index(flat, dims, "F")):
        np.testing.assert_array_equal(got[k], want)
    np.testing.assert_array_equal(got[4], np.ravel_multi_index((rows, cols), dims))
    np.testing.assert_array_equal(got[5], np.ravel_multi_index((rows, cols), dims, order="F"))
    far = np.array([5, -1, 1], dtype="int32")
    wrapped, clipped = lenient(far, cols)
    np.testing.assert_array_equal(wrapped, np.ravel_multi_index((far, cols), dims, mode="wrap"))
    np.testing.assert_array_equal(clipped, np.ravel_multi_index((far, cols), dims, mode="clip"))
    with pytest.raises(ValueError, match="ravel_multi_index: invalid entry"):
        f(flat, rows, np.array([4, 0, 0], dtype="int32"))
    with pytest.raises(ValueError, match="unravel_index: an index is out of bounds"):
        f(np.array([12]), rows, cols)


def test_symbolic_dims_need_a_known_length():
    i, shape = T.lvector("i"), T.lvector("shape")
    with pytest.raises(TypeError, match="pass ndim="):
        extra_ops.unravel_index(i, shape)
    rows, cols = extra_ops.unravel_index(i, shape, ndim=2)
    f = theano.function([i, shape], [rows, cols])
    np.testing.assert_array_equal(f(np.array([7]), np.array([2, 5])), np.unravel_index([7], (2, 5)))
