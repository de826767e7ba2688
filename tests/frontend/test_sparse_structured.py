"""``theano.sparse`` storage and structured functions through the public API: ``csm_properties``
and ``CSR``/``CSC`` from the parts, the structured elementwise functions (on the stored values
only), ``mul_s_v``, ``structured_add_s_v``, ``row_scale``/``col_scale``, ``sp_ones_like`` and
``sp_zeros_like``, compiled and interpreted, against scipy.sparse on random shapes and
densities (empty rows, no stored entry, 0-size); gradients with respect to the stored values
against finite differences; the errors.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

import lowering as theano  # noqa: E402
import lowering.tensor as T  # noqa: E402
from lowering.frontend.verify_grad import verify_grad  # noqa: E402

S = theano.sparse
MODES = ("FAST_RUN", "INTERP")


def random_sparse(rng, rows, cols, density, fmt):
    """Stored values in (-0.9, 0.9) away from 0, about ``density`` of the entries, a row
    empty."""
    dense = rng.uniform(0.1, 0.9, (rows, cols)) * rng.choice([-1.0, 1.0], (rows, cols))
    dense[rng.random((rows, cols)) >= density] = 0
    if rows > 1:
        dense[rng.integers(rows)] = 0
    return sp.csr_matrix(dense) if fmt == "csr" else sp.csc_matrix(dense)


def on_values(X, fn):
    """``X`` with ``fn`` applied to its stored values (the reference of a structured op)."""
    out = X.copy()
    out.data = fn(X.data)
    return out


# (the function of the sparse x, the reference on the stored values). Each is the dense
# function on the stored values: the interpreter checks them all, compiled code those marked.
STRUCTURED = [
    (lambda x: S.structured_sigmoid(x), lambda d: 1 / (1 + np.exp(-d))),
    (lambda x: S.structured_exp(x), np.exp),
    (lambda x: S.structured_log(S.abs_(x)), lambda d: np.log(np.abs(d))),
    (lambda x: S.structured_pow(x, 3), lambda d: d ** 3),
    (lambda x: S.structured_minimum(x, 0.25), lambda d: np.minimum(d, 0.25)),
    (lambda x: S.structured_maximum(x, -0.25), lambda d: np.maximum(d, -0.25)),
    (lambda x: S.structured_add(x, 2), lambda d: d + 2),
    (S.sin, np.sin), (S.tan, np.tan), (S.arcsin, np.arcsin), (S.arctan, np.arctan),
    (S.sinh, np.sinh), (S.arcsinh, np.arcsinh), (S.tanh, np.tanh), (S.arctanh, np.arctanh),
    (lambda x: S.rint(x * 4.0), lambda d: np.rint(d * 4)), (S.sgn, np.sign),
    (lambda x: S.ceil(x * 4.0), lambda d: np.ceil(d * 4)),
    (lambda x: S.floor(x * 4.0), lambda d: np.floor(d * 4)),
    (S.log1p, np.log1p), (S.expm1, np.expm1), (S.deg2rad, np.deg2rad), (S.rad2deg, np.rad2deg),
    (lambda x: S.trunc(x * 4.0), lambda d: np.trunc(d * 4)), (S.sqr, np.square),
    (lambda x: S.sqrt(S.abs_(x)), lambda d: np.sqrt(np.abs(d))), (S.conj, np.conj),
    (S.neg, np.negative), (S.sp_ones_like, np.ones_like),
]
COMPILED = [1, 3, 6, 16, 25, 28]  # exp, pow, add, sgn, sqrt of abs, ones_like


def build(fmt, mode):
    x = S.matrix(fmt, "x", dtype="float64")
    y, r = T.dvector("y"), T.dvector("r")
    data, indices, indptr, shape = S.csm_properties(x)
    chosen = STRUCTURED if mode == "INTERP" else [STRUCTURED[k] for k in COMPILED]
    outputs = [f(x) for f, _ in chosen] + [
        S.mul_s_v(x, y), S.structured_add_s_v(x, y), S.row_scale(x, r), S.col_scale(x, y),
        S.sp_zeros_like(x), data, indices, indptr, shape, S.csm_data(x) * 2.0,
        S.CSM(fmt)(data, indices, indptr, shape),
        (S.CSC if fmt == "csr" else S.CSR)(data, indices, indptr, shape[::-1])]

    def reference(X, Y, R):
        structure = on_values(X, np.ones_like)
        return [on_values(X, ref) for _, ref in chosen] + [
            X.multiply(Y[None, :]), structure.multiply(Y[None, :]) + X,
            X.multiply(R[:, None]), X.multiply(Y[None, :]), sp.csr_matrix(X.shape),
            X.data, X.indices, X.indptr, np.array(X.shape), X.data * 2, X, X.T]
    return theano.function([x, y, r], outputs, mode=mode), reference, len(chosen) + 4


BUILT = {}


def assert_matches(got, want, structure=None):
    if sp.issparse(want):
        assert sp.issparse(got) and got.shape == want.shape, (type(got), want.shape)
        np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-12, atol=1e-12)
        if structure is not None:  # stored places kept, nothing else
            assert got.nnz == structure.nnz
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=12, deadline=None)
@given(fmt=st.sampled_from(["csr", "csc"]), rows=st.integers(0, 6), cols=st.integers(0, 6),
       density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2 ** 16))
def test_structured_functions_and_storage_match_scipy(fmt, rows, cols, density, seed):
    rng = np.random.default_rng(seed)
    X = random_sparse(rng, rows, cols, density, fmt)
    Y, R = rng.standard_normal(cols), rng.standard_normal(rows)
    for mode in MODES:
        if (fmt, mode) not in BUILT:
            BUILT[fmt, mode] = build(fmt, mode)
        function, reference, keeping_structure = BUILT[fmt, mode]
        for k, (g, w) in enumerate(zip(function(X, Y, R), reference(X, Y, R))):
            try:
                assert_matches(g, w, X if k < keeping_structure else None)
                if sp.issparse(g) and k < keeping_structure:
                    assert g.format == fmt
            except AssertionError as exc:
                raise AssertionError(f"{mode}, output #{k}: {exc}") from None


def test_the_tutorial_reconstructs_a_csc_matrix_as_csr():
    x = S.csc_matrix(name="x", dtype="int64")
    data, indices, indptr, shape = S.csm_properties(x)
    y = S.CSR(data, indices, indptr, shape)
    a = sp.csc_matrix(np.asarray([[0, 1, 1], [0, 0, 0], [1, 0, 0]]))
    for mode in MODES:
        out = theano.function([x], y, mode=mode)(a)
        assert out.format == "csr" and out.dtype == np.int64
        np.testing.assert_array_equal(out.toarray(), [[0, 0, 1], [1, 0, 0], [1, 0, 0]])


def test_csr_from_parts_of_other_integer_types_and_constants():
    data = T.fvector("data")
    y = S.CSR(data, np.array([1, 0], dtype="int32"), np.array([0, 1, 2], dtype="int32"), (2, 3))
    assert y.dtype == "float32" and y.format == "csr"
    out = theano.function([data], y)(np.array([5, 6], dtype="float32"))
    np.testing.assert_array_equal(out.toarray(), [[0, 5, 0], [6, 0, 0]])


def test_gradients_flow_to_the_stored_values():
    """Through structured functions, the storage and the vector scalings at once (the value
    used several times: its sparse gradients add up), each value's gradient against finite
    differences, compiled and interpreted."""
    X = sp.random(4, 5, density=0.5, format="csc", random_state=3)
    X.data = 0.2 + 0.6 * X.data
    y = np.linspace(0.5, 1.5, 5)

    def cost(d):
        x = S.CSC(d, X.indices, X.indptr, X.shape)
        total = S.structured_exp(x) + S.sqrt(x) + S.structured_pow(x, 3) \
            + S.mul_s_v(x, y) + S.structured_add_s_v(x, y) + S.row_scale(x, y[:4])
        return S.dense_from_sparse(total) + S.csm_data(x).sum()
    for mode in MODES:
        verify_grad(cost, [X.data], rng=np.random.RandomState(0), mode=mode)


def test_the_gradient_with_respect_to_the_dense_operand_of_mul_s_v():
    x, y = S.csr_matrix("x"), T.dvector("y")
    g = theano.function([x, y], T.grad(S.sp_sum(S.mul_s_v(x, y) * S.structured_add_s_v(x, y)),
                                       y))
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    Y = np.array([0.5, -1.0, 2.0])
    # sum over stored (i, j) of x y_j (x + y_j): d/dy_j = sum_i x^2 + 2 x y_j
    want = np.asarray(X.power(2).sum(0)).ravel() + 2 * Y * np.asarray(X.sum(0)).ravel()
    np.testing.assert_allclose(g(X, Y), want)


def test_bad_input_is_refused_clearly():
    x = S.csr_matrix("x")
    with pytest.raises(TypeError, match="CSR: indices must hold integers, got float64"):
        S.CSR(T.dvector(), T.dvector(), T.lvector(), (2, 2))
    with pytest.raises(TypeError, match="CSR: data must be a vector"):
        S.CSR(T.dmatrix(), T.lvector(), T.lvector(), (2, 2))
    with pytest.raises(ValueError, match="CSC: shape must have 2 entries, got 3"):
        S.CSC(T.dvector(), T.lvector(), T.lvector(), (2, 2, 2))
    with pytest.raises(ValueError, match="CSM: format must be 'csr' or 'csc'"):
        S.CSM("coo")
    with pytest.raises(TypeError, match="structured_pow: argument #1 must be a scalar"):
        S.structured_pow(x, T.dvector())
    with pytest.raises(TypeError, match="mul_s_v: the dense operand must be a vector"):
        S.mul_s_v(x, T.dmatrix())
    with pytest.raises(TypeError, match="structured_exp must be a sparse variable"):
        S.structured_exp(T.dmatrix("d"))
    d, i, p = T.dvector("d"), T.lvector("i"), T.lvector("p")
    f = theano.function([d, i, p], S.dense_from_sparse(S.CSR(d, i, p, (2, 2))))
    with pytest.raises(ValueError, match=r"sparse.assemble at .*test_sparse_structured.py:\d+"):
        f(np.ones(2), np.array([0, 1]), np.array([0, 1]))   # 3 positions for 2 rows
    y = T.dvector("y")
    g = theano.function([x, y], S.mul_s_v(x, y))
    with pytest.raises(ValueError, match="sparse.mul_dense"):
        g(sp.csr_matrix(np.eye(2)), np.ones(3))
