"""theano.tensor helpers: mgrid/ogrid, stacklists, shape_padaxis, specify_shape, batched_dot,
xlogx, and theano.scalar.upcast, checked against NumPy and Theano's behaviour."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config

MODES = ["FAST_RUN", "INTERP"]


# -- mgrid / ogrid -----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_mgrid_and_ogrid_match_numpy(mode):
    dense = theano.function([], T.mgrid[0:5, 0:3], mode=mode)()
    for got, want in zip(dense, np.mgrid[0:5, 0:3]):
        np.testing.assert_array_equal(got, want)
    opened = theano.function([], T.ogrid[0:5, 1:7:2], mode=mode)()
    for got, want in zip(opened, np.ogrid[0:5, 1:7:2]):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_grids_with_symbolic_bounds_and_three_axes():
    n = T.lscalar("n")
    grids = T.mgrid[0:n, 0:2, 1:4]
    assert len(grids) == 3 and all(g.ndim == 3 for g in grids)
    got = theano.function([n], grids)(4)
    for g, want in zip(got, np.mgrid[0:4, 0:2, 1:4]):
        np.testing.assert_array_equal(g, want)
    assert [g.broadcastable for g in T.ogrid[0:n, 0:3]] == [(False, True), (True, False)]


def test_grids_take_slices_only():
    with pytest.raises(TypeError, match="mgrid is indexed with slices"):
        T.mgrid[3]
    with pytest.raises(NotImplementedError, match="step is complex"):
        T.mgrid[0:1:5j]


# -- stacklists, shape_padaxis -----------------------------------------------------------------

def test_stacklists_of_scalars_and_matrices():
    a, b, c, d = T.scalars("abcd")
    X = T.stacklists([[a, b], [c, d]])
    np.testing.assert_array_equal(theano.function([a, b, c, d], X)(1, 2, 3, 4),
                                  [[1.0, 2.0], [3.0, 4.0]])
    A, B, C, D = T.matrices("abcd")
    Y = theano.function([A, B, C, D], T.stacklists([[A, B], [C, D]]))
    x = np.ones((4, 4), config.floatX)
    assert Y(x, x, x, x * 2).shape == (2, 2, 4, 4)
    assert T.stacklists(a) is a


@pytest.mark.parametrize("axis, pattern", [
    (0, (True, False, False)), (1, (False, True, False)), (2, (False, False, True)),
    (-1, (False, False, True)), (-3, (True, False, False))])
def test_shape_padaxis(axis, pattern):
    x = T.dmatrix("x")
    y = T.shape_padaxis(x, axis)
    assert y.broadcastable == pattern
    data = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(theano.function([x], y)(data), np.expand_dims(data, axis))


def test_shape_padaxis_out_of_bounds_is_theanos_index_error():
    with pytest.raises(IndexError, match=r"^axis 3 is out of bounds \[-3, 3\)$"):
        T.shape_padaxis(T.dmatrix(), 3)
    assert T.shape_padleft(T.dvector(), 2).broadcastable == (True, True, False)
    assert T.shape_padright(T.dvector()).broadcastable == (False, True)


# -- specify_shape -----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_specify_shape_passes_matching_values_and_stops_others(mode):
    x, n = T.dmatrix("x"), T.lscalar("n")
    y = T.specify_shape(x, (n, 3))
    assert y.type == x.type
    f = theano.function([x, n], y * 2, mode=mode)
    np.testing.assert_array_equal(f(np.ones((4, 3)), 4), np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match="differs from the specified shape"):
        f(np.ones((4, 3)), 5)
    with pytest.raises(ValueError, match="differs from the specified shape"):
        f(np.ones((4, 2)), 4)


def test_specify_shape_from_another_variables_shape_and_its_gradient():
    x, z = T.dmatrix("x"), T.dmatrix("z")
    y = T.specify_shape(x, z.shape)
    f = theano.function([x, z], y.sum())
    assert f(np.ones((2, 3)), np.zeros((2, 3))) == 6.0
    with pytest.raises(ValueError, match="specify_shape"):
        f(np.ones((2, 3)), np.zeros((3, 2)))
    g = theano.function([x], theano.grad((T.specify_shape(x, (2, 3)) ** 2).sum(), x))
    np.testing.assert_array_equal(g(np.ones((2, 3))), np.full((2, 3), 2.0))


def test_specify_shape_errors_at_build_time():
    x = T.dmatrix("x")
    with pytest.raises(Exception, match="the shape has 3 entries for a tensor of rank 2"):
        T.specify_shape(x, (2, 3, 4))
    static = T.tensor("float64", shape=(2, None), name="s")
    with pytest.raises(Exception, match="dimension 0 of the input has size 2, the shape says 3"):
        T.specify_shape(static, (3, 4))
    with pytest.raises(TypeError, match="vector of integers"):
        T.specify_shape(x, T.dvector())


# -- batched_dot -------------------------------------------------------------------------------

def _reference_batched_dot(A, B):
    if A.ndim == 1:
        return A.reshape((-1,) + (1,) * (B.ndim - 1)) * B
    if B.ndim == 1:
        return A * B.reshape((-1,) + (1,) * (A.ndim - 1))
    axis = max(1, B.ndim - 2) - 1
    return np.stack([np.tensordot(a, b, [[a.ndim - 1], [axis]]) for a, b in zip(A, B)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("a_shape, b_shape, out_shape", [
    ((4, 2, 3), (4, 3, 5), (4, 2, 5)), ((4, 3), (4, 3, 5), (4, 5)), ((4, 2, 3), (4, 3), (4, 2)),
    ((4, 3), (4, 3), (4,)), ((4,), (4, 3, 2), (4, 3, 2)), ((4, 2, 3), (4,), (4, 2, 3)),
    ((4, 2, 2, 3), (4, 3, 5), (4, 2, 2, 5)), ((4, 2, 3), (4, 2, 3, 5), (4, 2, 2, 5)),
])
def test_batched_dot_matches_theano_semantics(mode, a_shape, b_shape, out_shape):
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=a_shape), rng.normal(size=b_shape)
    a = T.tensor("float64", (False,) * len(a_shape))
    b = T.tensor("float64", (False,) * len(b_shape))
    got = theano.function([a, b], T.batched_dot(a, b), mode=mode)(A, B)
    assert got.shape == out_shape
    np.testing.assert_allclose(got, _reference_batched_dot(A, B), rtol=1e-12)


def test_batched_dot_gradients_and_errors():
    a, b = T.dtensor3("a"), T.dtensor3("b")
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(3, 2, 4)), rng.normal(size=(3, 4, 5))
    ga, gb = theano.function([a, b], theano.grad(T.batched_dot(a, b).sum(), [a, b]))(A, B)
    np.testing.assert_allclose(ga, np.einsum("bkj->bk", B)[:, None, :].repeat(2, 1), rtol=1e-12)
    np.testing.assert_allclose(gb, np.einsum("bik->bk", A)[:, :, None].repeat(5, 2), rtol=1e-12)
    with pytest.raises(TypeError, match=r"test_theano_helpers.py:\d+: a must have at least one"):
        T.batched_dot(T.dscalar(), b)
    with pytest.raises(TypeError, match="b must have at least one"):
        T.batched_dot(a, T.dscalar())
    with pytest.raises(Exception, match="contracted axes differ in size: 4 .* and 5"):
        T.batched_dot(T.tensor("float64", shape=(3, 2, 4)), T.tensor("float64", shape=(3, 5, 2)))


# -- xlogx -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_xlogx_and_xlogy0(mode):
    x, y = T.dvectors("xy")
    data = np.array([0.0, 0.5, 0.0, 3.0])
    f = theano.function([x, y], [T.xlogx.xlogx(x), T.xlogx.xlogy0(x, y)], mode=mode)
    got_xlogx, got_xlogy0 = f(data, np.array([0.0, 2.0, 0.0, 4.0]))
    np.testing.assert_allclose(got_xlogx, [0.0, 0.5 * np.log(0.5), 0.0, 3 * np.log(3)])
    # xlogy0 is 0 wherever x is 0, even where log(y) is -inf
    np.testing.assert_allclose(got_xlogy0, [0.0, 0.5 * np.log(2.0), 0.0, 3 * np.log(4.0)])
    g = theano.function([x], theano.grad(T.xlogx.xlogx(x).sum(), x), mode=mode)
    np.testing.assert_allclose(g(np.array([0.5, 2.0])), 1 + np.log([0.5, 2.0]))


def test_xlogx_of_integers_is_float():
    from lowering.tensor.xlogx import xlogx
    assert xlogx(T.ivector()).dtype == "float64"
    assert xlogx(T.bvector()).dtype == T.log(T.bvector()).dtype


# -- theano.scalar.upcast ----------------------------------------------------------------------

def test_scalar_upcast_follows_numpy_promotion():
    upcast = theano.scalar.upcast
    assert upcast("int8", "float32") == "float32"
    assert upcast("int32", "float32") == "float64"
    assert upcast("int8", "int16", "uint8") == "int16"
    assert upcast("float32") == "float32"
    assert upcast("bool", "int8") == "int8"


def test_scalar_upcast_keeps_floatx_under_numpy_floatx_policy():
    upcast = theano.scalar.upcast
    with config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        assert upcast("int64", "float32") == "float32"
        assert upcast("int64", "float64") == "float64"  # float64 asked for: kept
        assert upcast("int8", "int64") == "int64"


def test_specify_shape_on_the_simulated_gpu():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x, n = T.matrix("x"), T.lscalar("n")
        f = theano.function([x, n], T.exp(T.specify_shape(x, (n, 3))) * 2)
        assert f.executor_name == "gpu"
        np.testing.assert_array_equal(np.asarray(f(np.zeros((2, 3), "float32"), 2)),
                                      np.full((2, 3), 2.0))
        with pytest.raises(ValueError, match="differs from the specified shape"):
            f(np.zeros((2, 3), "float32"), 3)
