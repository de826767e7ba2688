"""The rest of theano.tensor's helper functions through the public API (``import lowering.tensor
as T``): diagonals and triangles, rolling, splitting, taking, choosing and permuting, closeness,
reductions built from others, small elementwise helpers, ``unbroadcast``, ``bartlett``, constant
lookups and the dtype lists; values against NumPy in the interpreter (and once compiled),
gradients against finite differences, and the errors for bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowering as theano
import lowering.tensor as T

from .helpers import evaluate, numeric_grad

floats = st.floats(-10, 10, allow_nan=False, width=64)


def grad_matches(x_var, make_cost, data):
    """T.grad of the scalar cost at ``data`` equals central differences."""
    cost = make_cost(x_var)
    got = evaluate(T.grad(cost, x_var), {x_var: data})
    want = numeric_grad(lambda v: float(evaluate(cost, {x_var: v})), data)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------------------
# diagonals and triangles

@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4), elements=floats),
       st.integers(-3, 3), st.data())
def test_diagonal_matches_numpy(data, offset, draw):
    axis1, axis2 = draw.draw(st.lists(st.integers(-data.ndim, data.ndim - 1), min_size=2,
                                      max_size=2, unique_by=lambda a: a % data.ndim))
    x = T.tensor("float64", (False,) * data.ndim)
    got = evaluate(T.diagonal(x, offset, axis1, axis2), {x: data})
    np.testing.assert_array_equal(got, np.diagonal(data, offset, axis1, axis2))


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.int32, st.integers(0, 4), elements=st.integers(-5, 5)), st.integers(-2, 2))
def test_diag_of_a_vector_and_of_a_matrix(data, k):
    v, m = T.ivector("v"), T.imatrix("m")
    made = evaluate(T.diag(v, k), {v: data})
    np.testing.assert_array_equal(made, np.diag(data, k))
    assert made.dtype == np.int32
    square = np.arange(16, dtype=np.int32).reshape(4, 4)
    np.testing.assert_array_equal(evaluate(T.diag(m, k), {m: square}), np.diag(square, k))


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4), elements=floats),
       st.integers(-4, 4))
def test_tril_triu_and_tri_match_numpy(data, k):
    x = T.tensor("float64", (False,) * data.ndim)
    lower, upper = evaluate([T.tril(x, k), T.triu(x, k)], {x: data})
    np.testing.assert_array_equal(lower, np.tril(data, k))
    np.testing.assert_array_equal(upper, np.triu(data, k))
    n, m = data.shape[-2:]
    made = evaluate(T.tri(n, m, k, dtype="int16"))
    np.testing.assert_array_equal(made, np.tri(n, m, k, dtype="int16"))
    assert made.dtype == np.int16 and evaluate(T.tri(2)).dtype == theano.config.floatX


def test_triangles_zero_nan_outside_and_take_symbolic_sizes():
    x, n, k = T.dmatrix("x"), T.lscalar("n"), T.lscalar("k")
    data = np.full((3, 3), np.nan)
    np.testing.assert_array_equal(evaluate(T.tril(x), {x: data}), np.tril(data))
    np.testing.assert_array_equal(evaluate(T.tri(n, k=k), {n: 3, k: -1}), np.tri(3, k=-1))


@pytest.mark.parametrize("cost", [
    lambda x: (T.diag(x) * [1.0, 2.0, 3.0]).sum(),
    lambda x: (T.diagonal(x, -1) ** 2).sum(),
    lambda x: (T.tril(x, 1) * T.arange(3)).sum(),
    lambda x: (T.triu(x) ** 2).sum(),
], ids=["diag", "diagonal", "tril", "triu"])
def test_gradients_of_diagonals_and_triangles(cost):
    grad_matches(T.dmatrix("x"), cost, np.random.default_rng(0).normal(size=(3, 3)))


def test_diag_of_a_vector_has_a_gradient():
    grad_matches(T.dvector("v"), lambda v: (T.diag(v, 1) * np.arange(16.0).reshape(4, 4)).sum(),
                 np.array([1.0, -2.0, 0.5]))


def test_bad_diagonal_arguments_are_refused():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        T.diagonal(T.dvector())
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        T.diagonal(T.dmatrix(), axis2=2)
    with pytest.raises(ValueError, match="must differ"):
        T.diagonal(T.dmatrix(), axis1=1, axis2=-1)
    with pytest.raises(ValueError, match="at least 1 dimension"):
        T.diag(T.dscalar())
    with pytest.raises(TypeError, match="must be a Python int"):
        T.diagonal(T.dmatrix(), offset=T.lscalar())
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        T.tril(T.dvector())


# ------------------------------------------------------------------------------------------
# moving elements

@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.integers(-9, 9)), st.integers(-7, 7), st.data())
def test_roll_matches_numpy(data, shift, draw):
    axis = draw.draw(st.none() | st.integers(-data.ndim, data.ndim - 1))
    x, s = T.tensor("int64", (False,) * data.ndim), T.lscalar("s")
    got = evaluate([T.roll(x, shift, axis), T.roll(x, s, axis)], {x: data, s: shift})
    for g in got:
        np.testing.assert_array_equal(g, np.roll(data, shift, axis))


def test_roll_has_a_gradient():
    grad_matches(T.dmatrix("x"), lambda x: (T.roll(x, 2, axis=1) * np.arange(6.0).reshape(2, 3)).sum(),
                 np.random.default_rng(1).normal(size=(2, 3)))


def test_swapaxes_and_the_matrix_stacks():
    t = T.dtensor3("t")
    data = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(evaluate(T.swapaxes(t, 0, -1), {t: data}), data.swapaxes(0, -1))
    a, b = T.dmatrices("a", "b")
    feeds = {a: np.ones((2, 2)), b: np.zeros((2, 3))}
    np.testing.assert_array_equal(evaluate(T.horizontal_stack(a, b), feeds),
                                  np.hstack([np.ones((2, 2)), np.zeros((2, 3))]))
    feeds = {a: np.ones((1, 2)), b: np.zeros((3, 2))}
    np.testing.assert_array_equal(evaluate(T.vertical_stack(a, b, a), feeds),
                                  np.vstack([np.ones((1, 2)), np.zeros((3, 2)), np.ones((1, 2))]))
    with pytest.raises(TypeError, match="at least two matrices"):
        T.horizontal_stack(a)
    with pytest.raises(TypeError, match="must be a matrix"):
        T.vertical_stack(a, T.dvector())
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        T.swapaxes(t, 0, 3)


def test_split_gives_the_pieces_and_checks_the_sizes():
    m, sizes = T.dmatrix("m"), T.lvector("sizes")
    data = np.arange(12.0).reshape(2, 6)
    pieces = T.split(m, sizes, 3, axis=1)
    got = evaluate(pieces, {m: data, sizes: [1, 0, 5]})
    for g, w in zip(got, np.split(data, [1, 1], axis=1)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(Exception, match="add up to the size"):
        evaluate(pieces, {m: data, sizes: [1, 1, 1]})
    with pytest.raises(ValueError, match="2 sizes for n_splits=3"):
        T.split(m, [1, 5], 3)
    with pytest.raises(TypeError, match="must be integers"):
        T.split(m, T.dvector(), 2)


def test_split_has_a_gradient():
    grad_matches(T.dvector("x"), lambda x: sum((p * (i + 1)).sum() ** 2 for i, p in
                                               enumerate(T.split(x, [2, 1, 2], 3))),
                 np.array([0.5, -1.0, 2.0, 0.25, 1.5]))


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=floats),
       hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                  elements=st.integers(-12, 12)),
       st.sampled_from(["wrap", "clip", "raise"]), st.data())
def test_take_matches_numpy(data, indices, mode, draw):
    axis = draw.draw(st.none() | st.integers(-data.ndim, data.ndim - 1))
    size = data.size if axis is None else data.shape[axis]
    if mode == "raise":
        indices = np.clip(indices, -size, size - 1)
    x = T.tensor("float64", (False,) * data.ndim)
    got = evaluate(T.take(x, indices, axis, mode), {x: data})
    np.testing.assert_array_equal(got, np.take(data, indices, axis, mode=mode))


def test_take_checks_its_indices_and_has_a_gradient():
    x = T.dvector("x")
    with pytest.raises(Exception, match="take: an index is out of range"):
        evaluate(T.take(x, [3]), {x: [1.0, 2.0, 3.0]})
    with pytest.raises(TypeError, match="indices must be integers"):
        T.take(x, [0.5])
    with pytest.raises(ValueError, match="mode must be"):
        T.take(x, [0], mode="nearest")
    grad_matches(x, lambda v: (T.take(v, [[2, 0], [2, 2]]) * [[1.0, 2.0], [3.0, 4.0]]).sum(),
                 np.array([1.0, 2.0, 3.0]))


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.int64, st.sampled_from([(), (3,), (2, 3)]), elements=st.integers(-4, 4)),
       st.sampled_from(["wrap", "clip"]))
def test_choose_matches_numpy(a_data, mode):
    # Sizes that are not broadcastable must agree (Theano's rule; NumPy would broadcast a 1).
    a = T.tensor("int64", (False,) * a_data.ndim)
    choices = [np.arange(3.0), np.full((1, 3), 10.0), np.arange(3.0) * -1]
    stacked = np.stack([np.arange(3.0), np.full(3, 10.0), -np.arange(3.0)])
    listed = evaluate(T.choose(a, choices, mode=mode), {a: a_data})
    tensor = evaluate(T.choose(a, T.constant(stacked), mode=mode), {a: a_data})
    np.testing.assert_array_equal(listed, np.choose(a_data, choices, mode=mode))
    np.testing.assert_array_equal(tensor, np.choose(a_data, stacked, mode=mode))


def test_choose_raises_for_an_index_out_of_range_and_has_a_gradient():
    a = T.lvector("a")
    c = T.dmatrix("c")
    with pytest.raises(Exception, match="choose: an index is out of range"):
        evaluate(T.choose(a, c), {a: [0, 2], c: np.ones((2, 2))})
    with pytest.raises(ValueError, match="out is not supported"):
        T.choose(a, c, out=c)
    grad_matches(c, lambda c: (T.choose([1, 0, 1], c) * [1.0, 2.0, 3.0]).sum(),
                 np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("x_shape,y", [((2, 3), [2, 0, 1]), ((2, 3), [[2, 0, 1], [1, 2, 0]]),
                                       ((3,), [[2, 0, 1], [0, 1, 2]]),
                                       ((1, 3), [[1, 2, 0], [0, 2, 1]])])
def test_permute_row_elements_and_its_inverse(x_shape, y):
    y = np.array(y)
    data = np.arange(np.prod(x_shape), dtype=np.float64).reshape(x_shape)
    x = T.tensor("float64", tuple(size == 1 for size in x_shape))
    rank = max(data.ndim, y.ndim)
    xb = data.reshape((1,) * (rank - data.ndim) + data.shape)
    yb = y.reshape((1,) * (rank - y.ndim) + y.shape)
    shape = np.broadcast_shapes(xb.shape, yb.shape)
    xb, yb = np.broadcast_to(xb, shape), np.broadcast_to(yb, shape)
    forward = np.take_along_axis(xb, yb, axis=-1)
    backward = np.empty(shape)
    np.put_along_axis(backward, yb, xb, axis=-1)
    got, inv = evaluate([T.permute_row_elements(x, y), T.permute_row_elements(x, y, inverse=True)],
                        {x: data})
    np.testing.assert_array_equal(got, forward)
    np.testing.assert_array_equal(inv, backward)


def test_inverse_permutation_and_the_permutation_gradient():
    p = T.lmatrix("p")
    perms = np.array([[2, 0, 1, 3], [3, 2, 1, 0]])
    np.testing.assert_array_equal(evaluate(T.inverse_permutation(p), {p: perms}),
                                  np.argsort(perms, axis=-1))
    for inverse in (False, True):
        grad_matches(T.dmatrix("x"), lambda x: (T.permute_row_elements(x, [2, 0, 1], inverse) *
                                                [[1.0, 2.0, 3.0]]).sum() ** 2,
                     np.arange(6.0).reshape(2, 3) / 3)
    with pytest.raises(TypeError, match="must be integers"):
        T.permute_row_elements(T.dvector(), T.dvector())
    x, y = T.dmatrix("x"), T.lmatrix("y")
    with pytest.raises(Exception, match="differ in size along axis 0"):
        evaluate(T.permute_row_elements(x, y), {x: np.ones((1, 2)), y: [[0, 1], [1, 0]]})


# ------------------------------------------------------------------------------------------
# comparisons, reductions, elementwise helpers

def test_isclose_and_allclose_follow_numpy_on_infinities_and_nans():
    a, b = T.dvectors("a", "b")
    av = np.array([1e10, 1e-7, 1.0, np.inf, np.inf, np.nan, 1.0])
    bv = np.array([1.00001e10, 1e-8, 1.0 + 1e-9, np.inf, -np.inf, np.nan, np.nan])
    feeds = {a: av, b: bv}
    close, close_nan, every = evaluate([T.isclose(a, b), T.isclose(a, b, equal_nan=True),
                                        T.allclose(a[:1], b[:1])], feeds)
    np.testing.assert_array_equal(close, np.isclose(av, bv))
    np.testing.assert_array_equal(close_nan, np.isclose(av, bv, equal_nan=True))
    assert close.dtype == np.bool_ and bool(every)
    assert not evaluate(T.allclose(a, b, rtol=0.1), feeds)


def test_largest_smallest_and_ptp():
    a, b, c = T.lvectors("a", "b", "c")
    feeds = {a: [1, 5, 3], b: [4, 2, 3], c: [0, 9, -1]}
    got = evaluate([T.largest(a, b), T.largest(a, b, c), T.smallest(a, b), T.smallest(a, b, c)],
                   feeds)
    vals = [np.array(feeds[v]) for v in (a, b, c)]
    for g, w in zip(got, [np.maximum(*vals[:2]), np.max(vals, 0), np.minimum(*vals[:2]),
                          np.min(vals, 0)]):
        np.testing.assert_array_equal(g, w)
    m = T.dmatrix("m")
    data = np.array([[1.0, 7.0, -2.0], [3.0, 2.0, 0.5]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(evaluate(T.ptp(m, axis), {m: data}), np.ptp(data, axis))
    grad_matches(m, lambda x: T.ptp(x, axis=1).sum(), data)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=3),
                  elements=floats, unique=True), st.data(), st.booleans())
def test_max_and_argmax_match_numpy(data, draw, keepdims):
    axes = draw.draw(st.none() | st.lists(st.integers(0, data.ndim - 1), min_size=1, unique=True))
    x = T.tensor("float64", (False,) * data.ndim)
    high, index = evaluate(T.max_and_argmax(x, axes, keepdims), {x: data})
    np.testing.assert_array_equal(high, np.max(data, axis=None if axes is None else tuple(axes),
                                               keepdims=keepdims))
    reduced = list(range(data.ndim)) if axes is None else sorted(axes)
    kept = [d for d in range(data.ndim) if d not in reduced]
    moved = np.transpose(data, kept + reduced).reshape([data.shape[d] for d in kept] + [-1])
    want = np.argmax(moved, axis=-1)
    if keepdims:
        want = np.expand_dims(want, tuple(reduced))
    np.testing.assert_array_equal(index, want)
    assert index.dtype == np.int64


def test_max_and_argmax_refuses_a_bad_axis():
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        T.max_and_argmax(T.dmatrix(), 2)


@pytest.mark.parametrize("rowvar,bias,ddof,with_y", [(True, False, None, False),
                                                     (False, True, None, True),
                                                     (True, False, 2, True)])
def test_cov_matches_numpy(rowvar, bias, ddof, with_y):
    m, y = T.dmatrices("m", "y")
    rng = np.random.default_rng(2)
    md, yd = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    if not rowvar:
        md, yd = md.T, yd.T
    c = T.cov(m, y if with_y else None, rowvar=rowvar, bias=bias, ddof=ddof)
    got = evaluate(c, {m: md, y: yd} if with_y else {m: md})
    want = np.cov(md, yd if with_y else None, rowvar=rowvar, bias=bias, ddof=ddof)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="fweights"):
        T.cov(m, fweights=[1, 2])


def test_elementwise_helpers():
    x, i = T.dvector("x"), T.ivector("i")
    xd = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 90.0])
    idat = np.array([7, -7, 180], dtype=np.int32)
    deg, rad, rounded, away, p, q, r = evaluate(
        [T.deg2rad(x), T.rad2deg(x), T.iround(x), T.iround(x, "half_away_from_zero"),
         T.power(x, 2), *T.divmod(i, 3)], {x: xd, i: idat})
    np.testing.assert_allclose(deg, np.deg2rad(xd), rtol=1e-15)
    np.testing.assert_allclose(rad, np.rad2deg(xd), rtol=1e-15)
    np.testing.assert_array_equal(rounded, np.round(xd).astype(np.int64))
    np.testing.assert_array_equal(away, [-3, -1, 1, 2, 3, 90])
    assert rounded.dtype == np.int64
    np.testing.assert_array_equal(p, xd ** 2)
    np.testing.assert_array_equal(q, idat // 3)
    np.testing.assert_array_equal(r, idat % 3)
    assert T.deg2rad(i).dtype == "float64" and T.rad2deg(T.fvector()).dtype == "float32"
    with pytest.raises(TypeError, match="complex"):
        T.divmod(T.zvector(), 2)
    copy = T.tensor_copy(x)
    assert copy is not x and copy.type == x.type
    np.testing.assert_array_equal(evaluate(copy, {x: xd}), xd)
    grad_matches(x, lambda v: T.deg2rad(T.tensor_copy(v)).sum() ** 2, xd[:3])


def test_unbroadcast_makes_dims_not_broadcastable():
    r = T.row("r")
    u = T.unbroadcast(r, 0)
    assert u.broadcastable == (False, False) and T.unbroadcast(r, 1) is r
    np.testing.assert_array_equal(evaluate(u, {r: [[1.0, 2.0]]}), [[1.0, 2.0]])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        T.unbroadcast(r, 2)
    grad_matches(r, lambda v: (T.unbroadcast(v, 0) ** 2).sum(), np.array([[1.0, -2.0]]))


@pytest.mark.parametrize("n", [-1, 0, 1, 2, 5, 6])
def test_bartlett_matches_numpy(n):
    m = T.lscalar("m")
    got = evaluate(T.bartlett(m), {m: n})
    np.testing.assert_allclose(got, np.bartlett(n), atol=1e-15)
    assert got.dtype == np.float64
    np.testing.assert_allclose(evaluate(T.extra_ops.bartlett(n)), np.bartlett(n), atol=1e-15)


def test_bartlett_refuses_floats_and_tensors():
    with pytest.raises(TypeError, match="integer"):
        T.bartlett(T.dscalar())
    with pytest.raises(TypeError, match="scalar"):
        T.bartlett(T.lvector())


# ------------------------------------------------------------------------------------------
# constants known before a run, dtype lists

def test_get_scalar_constant_value_digs_through_casts_shapes_and_elementwise_ops():
    x = T.dmatrix("x")
    r = T.row("r")
    assert T.get_scalar_constant_value(3) == 3
    assert T.get_scalar_constant_value(np.array([[2.5]])) == 2.5
    assert T.get_scalar_constant_value(T.cast(T.constant(2) * 4, "float32")) == 8.0
    assert T.get_scalar_constant_value(r.shape[0] + 1) == 2
    assert T.get_scalar_constant_value(T.constant(np.full(3, 7.0))) == 7.0
    for v, kwargs in [(x.shape[0], {}), (T.constant([1, 2]), {}), (x, {}),
                      (T.constant(2) + 1, {"elemwise": False}),
                      (T.cast(T.constant(2), "int8"), {"only_process_constants": True}),
                      (None, {})]:
        with pytest.raises(T.NotScalarConstantError):
            T.get_scalar_constant_value(v, **kwargs)
    with pytest.raises(T.EmptyConstantError):
        T.get_scalar_constant_value(np.zeros(0))
    assert T.extract_constant(x) is x and T.extract_constant(T.constant(3) - 1) == 2


def test_get_vector_length():
    x, v = T.dtensor3("x"), T.dvector("v")
    assert T.get_vector_length(x.shape) == 3
    assert T.get_vector_length(x.shape[1:]) == 2
    assert T.get_vector_length(T.constant([1, 2, 3, 4])) == 4
    assert T.get_vector_length(T.stack([v[0], v[1]])) == 2
    assert T.get_vector_length(T.col()[0]) == 1
    with pytest.raises(ValueError, match="known only when the function runs"):
        T.get_vector_length(v)
    with pytest.raises(TypeError, match="must be a vector"):
        T.get_vector_length(T.dmatrix())


def test_dtype_lists_are_theanos():
    assert T.all_dtypes == T.discrete_dtypes + T.continuous_dtypes
    assert T.discrete_dtypes == ["bool"] + T.int_dtypes + T.uint_dtypes
    assert T.complex_dtypes == ["complex64", "complex128"]
    assert T.float_dtypes == ["float16", "float32", "float64"]
    assert T.integer_dtypes == T.int_dtypes + T.uint_dtypes
    assert all(t.dtype.startswith("int") and t.ndim == 2 for t in T.int_matrix_types)
    assert [t.dtype for t in T.float_vector_types] == ["float32", "float64"]


def test_tensor_basic_offers_the_packages_names():
    from lowering.tensor import basic
    for name in ["eye", "tile", "tensordot", "square", "all", "any", "real", "imag", "angle",
                 "conj", "tril", "roll", "float_dtypes", "max_and_argmax"]:
        assert getattr(basic, name) is getattr(T, name)
    with pytest.raises(AttributeError, match="theano.tensor.basic.no_such_name is not supported"):
        basic.no_such_name


# ------------------------------------------------------------------------------------------
# compiled code

def test_the_helpers_compile_to_the_same_values():
    x, p = T.dmatrix("x"), T.lvector("p")
    outs = [T.roll(x, 1, 0), T.tril(x, -1), T.diagonal(x, 1), T.diag(x[0]),
            T.take(x, p, axis=1, mode="wrap"), T.permute_row_elements(x, p, inverse=True),
            T.isclose(x, 1.0), *T.max_and_argmax(x, 1), T.ptp(x), T.cov(x), T.bartlett(4),
            *T.split(x, [1, 2], 2, axis=1), T.choose(p, [x[0], x[1], x[2]])]
    f = theano.function([x, p], outs)
    data, perm = np.arange(9.0).reshape(3, 3) / 4, np.array([2, 0, 1])
    for got, want in zip(f(data, perm), evaluate(outs, {x: data, p: perm})):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# sizes known when the function runs

@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.int8, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                  elements=st.integers(-1, 1)))
def test_nonzero_flatnonzero_and_nonzero_values_match_numpy(data):
    x = T.tensor("int8", (False,) * data.ndim)
    got = evaluate([*T.nonzero(x), T.nonzero(x, return_matrix=True), T.flatnonzero(x),
                    T.nonzero_values(x)], {x: data})
    for g, w in zip(got, np.nonzero(data)):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.int64
    np.testing.assert_array_equal(got[data.ndim], np.array(np.nonzero(data)).reshape(data.ndim, -1))
    np.testing.assert_array_equal(got[-2], np.flatnonzero(data))
    np.testing.assert_array_equal(got[-1], data[data != 0])


def test_nonzero_compiles_refuses_scalars_and_nonzero_values_has_a_gradient():
    m = T.dmatrix("m")
    data = np.array([[0.0, 2.0, -1.0], [0.5, 0.0, 0.0]])
    rows, cols = theano.function([m], list(T.nonzero(m)))(data)
    np.testing.assert_array_equal(rows, np.nonzero(data)[0])
    np.testing.assert_array_equal(cols, np.nonzero(data)[1])
    for fn in (T.nonzero, T.flatnonzero, T.nonzero_values):
        with pytest.raises(ValueError, match="non-scalar"):
            fn(T.dscalar())
    grad = evaluate(T.grad((T.nonzero_values(m) ** 2).sum(), m), {m: data})
    np.testing.assert_array_equal(grad, 2 * data)


def test_forward_mode_goes_through_the_helpers():
    x, v = T.dmatrices("x", "v")
    data, tangent = np.arange(6.0).reshape(2, 3), np.ones((2, 3)) * [[1.0], [-2.0]]
    got = evaluate([T.Rop(T.roll(x, 1, 1), x, v), T.Rop(T.tril(x), x, v),
                    T.Rop(T.take(x, [2, 0], axis=1), x, v)], {x: data, v: tangent})
    np.testing.assert_array_equal(got[0], np.roll(tangent, 1, 1))
    np.testing.assert_array_equal(got[1], np.tril(tangent))
    np.testing.assert_array_equal(got[2], tangent[:, [2, 0]])
