"""``theano.sparse`` through the public API: CSR and CSC variables, conversions, products,
elementwise ops with dense operands and sums, compiled (``FAST_RUN``) and interpreted
(``INTERP``), against scipy.sparse and NumPy on random shapes and densities (empty rows and
columns, no stored entry at all); gradients with respect to the dense operands against finite
differences; scipy.sparse arguments and results of ``theano.function``; the errors.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

import lowering as theano  # noqa: E402
import lowering.tensor as T  # noqa: E402
from lowering.config import config  # noqa: E402
from lowering.frontend.verify_grad import verify_grad  # noqa: E402

S = theano.sparse
MODES = ("FAST_RUN", "INTERP")


def random_sparse(rng, rows, cols, density, fmt, dtype="float64"):
    """A scipy.sparse matrix with about ``density`` of its entries stored (some rows empty)."""
    dense = rng.standard_normal((rows, cols)).astype(dtype)
    dense[rng.random((rows, cols)) >= density] = 0
    if rows > 1:
        dense[rng.integers(rows)] = 0  # an empty row
    return sp.csr_matrix(dense) if fmt == "csr" else sp.csc_matrix(dense)


def build_all(fmt):
    """One function computing every operation on a sparse ``x`` of ``fmt`` and dense
    operands, with the scipy/NumPy reference of each output."""
    x = S.matrix(fmt, "x", dtype="float64")
    w, v, d = T.dmatrix("w"), T.dvector("v"), T.dmatrix("d")
    outputs = [S.structured_dot(x, w), S.dot(x, v), S.dot(d.T, x), S.dense_from_sparse(x),
               S.csr_from_dense(d), S.csc_from_dense(d), S.transpose(x), S.add(x, d),
               x + d.sum(axis=0, keepdims=True), S.mul(x, d), x * 3.0, S.sp_sum(x), S.sp_sum(x, 0), S.sp_sum(x, 1),
               x - d]

    def reference(X, W, V, D):
        return [X @ W, X @ V, D.T @ X, X.toarray(), sp.csr_matrix(D), sp.csc_matrix(D), X.T,
                X.toarray() + D, X.toarray() + D.sum(0, keepdims=True), X.multiply(D), X * 3.0, X.sum(),
                np.asarray(X.sum(0)).ravel(), np.asarray(X.sum(1)).ravel(), X.toarray() - D]
    functions = {mode: theano.function([x, w, v, d], outputs, mode=mode) for mode in MODES}
    return functions, reference


FUNCTIONS = {}


def functions_for(fmt):
    if fmt not in FUNCTIONS:
        FUNCTIONS[fmt] = build_all(fmt)
    return FUNCTIONS[fmt]


def assert_matches(got, want):
    if sp.issparse(want):
        assert sp.issparse(got), type(got)
        want = sp.csr_matrix(want) if got.format == "csr" else sp.csc_matrix(want)
        assert got.format in ("csr", "csc") and got.shape == want.shape
        np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-12, atol=1e-12)
    else:
        want = np.asarray(want)
        assert not sp.issparse(got)
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(fmt=st.sampled_from(["csr", "csc"]), rows=st.integers(0, 7), cols=st.integers(0, 7),
       n=st.integers(0, 4), density=st.sampled_from([0.0, 0.15, 0.5, 1.0]),
       seed=st.integers(0, 2 ** 16))
def test_every_operation_matches_scipy_compiled_and_interpreted(fmt, rows, cols, n, density,
                                                                seed):
    rng = np.random.default_rng(seed)
    X = random_sparse(rng, rows, cols, density, fmt)
    W, V = rng.standard_normal((cols, n)), rng.standard_normal(cols)
    D = rng.standard_normal((rows, cols))
    D[rng.random((rows, cols)) < 0.5] = 0  # from_dense meets zeros
    functions, reference = functions_for(fmt)
    want = reference(X, W, V, D)
    for mode in MODES:
        got = functions[mode](X, W, V, D)
        for k, (g, w) in enumerate(zip(got, want)):
            try:
                assert_matches(g, w)
            except AssertionError as exc:
                raise AssertionError(f"{mode}, output #{k}: {exc}") from None


def test_the_results_keep_their_format_and_stored_entries():
    x = S.csr_matrix("x")
    d = T.dmatrix("d")
    f = theano.function([x, d], [x.T, S.csc_from_dense(d), x * d])
    X = sp.csr_matrix(np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 3.0]]))
    xt, c, m = f(X, np.array([[1.0, 0.0, 5.0], [0.0, 0.0, 0.0], [2.0, 2.0, 0.0]]))
    assert isinstance(xt, sp.csc_matrix) and isinstance(c, sp.csc_matrix)
    assert isinstance(m, sp.csr_matrix)
    assert c.nnz == 4 and m.nnz == X.nnz  # mul keeps x's structure, even where d is 0
    np.testing.assert_array_equal(m.indptr, X.indptr)
    np.testing.assert_array_equal(m.toarray(), [[0, 0, 0], [0, 0, 0], [2, 0, 0]])


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_no_stored_entry_and_empty_shapes(fmt):
    x = S.matrix(fmt, "x")
    w = T.dmatrix("w")
    f = theano.function([x, w], [S.structured_dot(x, w), S.sp_sum(x), S.sp_sum(x, 1),
                                 S.csr_from_dense(S.dense_from_sparse(x))])
    for rows, cols in ((3, 4), (0, 4), (3, 0), (0, 0)):
        X = sp.csr_matrix((rows, cols)) if fmt == "csr" else sp.csc_matrix((rows, cols))
        product, total, per_row, back = f(X, np.ones((cols, 2)))
        np.testing.assert_array_equal(product, np.zeros((rows, 2)))
        assert total == 0 and per_row.shape == (rows,) and back.nnz == 0
        assert back.shape == (rows, cols)


@pytest.mark.parametrize("mode", MODES)
def test_float32_stays_float32(mode):
    x = S.csr_matrix("x", dtype="float32")
    w = T.fmatrix("w")
    f = theano.function([x, w], [S.structured_dot(x, w), x * w], mode=mode)
    X = sp.csr_matrix(np.array([[1.5, 0], [0, 2]], dtype="float32"))
    product, scaled = f(X, np.ones((2, 2), dtype="float32"))
    assert product.dtype == np.float32 and scaled.dtype == np.float32
    np.testing.assert_array_equal(product, [[1.5, 1.5], [2, 2]])


# -- gradients -------------------------------------------------------------------------------


def finite_difference(f, W, eps=1e-6):
    grad = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        up, down = W.copy(), W.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (f(up) - f(down)) / (2 * eps)
    return grad


COSTS = {}


def cost_and_gradient(fmt):
    """A cost of a sparse ``x`` of ``fmt`` and dense ``w``, ``d`` through every operation with
    a gradient, and its gradient with respect to ``w`` and ``d`` (compiled once per format)."""
    if fmt not in COSTS:
        x = S.matrix(fmt, "x")
        w, d = T.dmatrix("w"), T.dmatrix("d")
        cost = (T.tanh(S.structured_dot(x, w)) ** 2).sum() + S.sp_sum(x * d) \
            + (S.add(x, d) ** 2).sum() + S.sp_sum(x.T * d.T, 0).sum() \
            + T.dot(d[:, 0], x).sum() + S.sp_sum(S.csr_from_dense(d) * 2.0)
        COSTS[fmt] = (theano.function([x, w, d], cost),
                      theano.function([x, w, d], T.grad(cost, [w, d])))
    return COSTS[fmt]


@settings(max_examples=6, deadline=None)
@given(fmt=st.sampled_from(["csr", "csc"]), rows=st.integers(1, 5), cols=st.integers(1, 5),
       density=st.sampled_from([0.0, 0.4, 1.0]), seed=st.integers(0, 2 ** 16))
def test_gradients_with_respect_to_the_dense_operands_match_finite_differences(
        fmt, rows, cols, density, seed):
    rng = np.random.default_rng(seed)
    X = random_sparse(rng, rows, cols, density, fmt)
    f, g = cost_and_gradient(fmt)
    W, D = rng.standard_normal((cols, 3)), rng.standard_normal((rows, cols))
    gw, gd = g(X, W, D)
    np.testing.assert_allclose(gw, finite_difference(lambda a: f(X, a, D), W), atol=1e-5)
    np.testing.assert_allclose(gd, finite_difference(lambda a: f(X, W, a), D), atol=1e-5)


def test_verify_grad_through_a_sparse_constant():
    X = sp.random(6, 4, density=0.4, format="csr", random_state=3)
    constant = S.as_sparse_variable(X)
    verify_grad(lambda w: S.structured_dot(constant, w), [np.random.RandomState(1).rand(4, 3)],
                rng=np.random.RandomState(2))


def test_the_gradient_of_a_sparse_input_is_structured():
    x = S.csr_matrix("x")
    w = T.dvector("w")
    gx = theano.function([x, w], T.grad(S.structured_dot(x, w).sum(), [w])[0])
    X = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
    np.testing.assert_allclose(gx(X, np.ones(2)), X.T @ np.ones(2))


# -- the boundary: arguments, results, constants -----------------------------------------------


def test_constants_and_theano_dot_dispatch():
    X = sp.csc_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    w = T.dmatrix("w")
    constant = S.as_sparse_variable(X)
    f = theano.function([w], [T.dot(constant, w), T.dot(w, constant)])
    W = np.arange(4.0).reshape(2, 2)
    a, b = f(W)
    np.testing.assert_allclose(a, X @ W)
    np.testing.assert_allclose(b, W @ X)


def test_arguments_are_converted_to_the_variables_format():
    x = S.csr_matrix("x")
    f = theano.function([x], x)
    X = sp.coo_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    out = f(X)
    assert isinstance(out, sp.csr_matrix)
    np.testing.assert_array_equal(out.toarray(), X.toarray())


def test_bad_arguments_are_refused_clearly():
    x = S.csr_matrix("x", dtype="float32")
    w = T.fmatrix("w")
    f = theano.function([x, w], S.structured_dot(x, w))
    with pytest.raises(TypeError, match="input #0 must be a scipy.sparse matrix"):
        f(np.eye(2, dtype="float32"), np.eye(2, dtype="float32"))
    with pytest.raises(TypeError, match="holds float64 values"):
        f(sp.csr_matrix(np.eye(2)), np.eye(2, dtype="float32"))
    with pytest.raises(ValueError, match=r"sparse.matmul at .*test_sparse.py:\d+"):
        f(sp.csr_matrix(np.eye(2, dtype="float32")), np.eye(3, dtype="float32"))
    broken = sp.csr_matrix((np.ones(1, "float32"), np.array([5]), np.array([0, 1, 1])),
                           shape=(2, 2))
    with pytest.raises(ValueError, match=r"coordinates must be in \[0, 2\)"):
        f(broken, np.eye(2, dtype="float32"))


def test_unsupported_combinations_say_so():
    x = S.csr_matrix("x")
    with pytest.raises(TypeError, match="must have rank 0 or 2, got TensorType.float64, vector."):
        x * T.dvector("v")
    with pytest.raises(TypeError, match="cannot be used as a dense tensor; convert it with "
                                        "theano.sparse.dense_from_sparse"):
        T.exp(x)


def test_types_and_names():
    x = S.csc_matrix("x", dtype="float32")
    assert x.type == S.csc_fmatrix and x.format == "csc" and x.dtype == "float32"
    assert S.SparseType("csr", "float64")("y").type == S.csr_dmatrix
    assert S.matrix("csr").dtype == config.floatX
    assert str(x.value.type) == "tensor<?x?xf32, #csc>"
    with pytest.raises(ValueError, match="unknown sparse format 'coo'"):
        S.SparseType("coo", "float64")


def test_the_ir_carries_the_encoding():
    x = S.csr_matrix("x")
    w = T.dmatrix("w")
    f = theano.function([x, w], S.structured_dot(x, w))
    text = f.ir("tensor")
    assert "tensor<?x?xf64, #csr>" in text and "sparse.matmul" in text
    loops = f.ir("loops")
    assert "loops.parallel" in loops and " = sparse." not in loops


def test_the_gpu_backend_refuses_sparse_ops_with_its_reason():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x, w = S.csr_matrix("x"), T.fmatrix("w")
        with pytest.raises(Exception, match=r"bufferize on a GPU: sparse\.\w+ \(at \S+:\d+:\d+\) "
                                            r"is not supported: sparse tensors run on the CPU "
                                            r"only"):
            theano.function([x, w], S.structured_dot(x, w))


def test_rop_through_sparse_operations_matches_finite_differences():
    X = sp.csr_matrix(np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]))
    x = S.csr_matrix("x")
    w, v = T.dmatrix("w"), T.dmatrix("v")
    y = T.tanh(S.structured_dot(x, w)).sum(axis=1) + S.sp_sum(x * w.T, 1) \
        + S.add(x, w.T).sum(axis=1) + S.sp_sum(S.csr_from_dense(w.T) * 2.0, 1)
    f = theano.function([x, w], y)
    jv = theano.function([x, w, v], T.Rop(y, w, v))
    rng = np.random.default_rng(7)
    W, V = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    eps = 1e-6
    numeric = (f(X, W + eps * V) - f(X, W - eps * V)) / (2 * eps)
    np.testing.assert_allclose(jv(X, W, V), numeric, atol=1e-6)


def test_copies_keep_the_sparse_boundary_and_pickling_says_no():
    import pickle
    x = S.csr_matrix("x")
    f = theano.function([x], S.sp_sum(x, 0))
    X = sp.csr_matrix(np.array([[1.0, 0.0], [2.0, 3.0]]))
    np.testing.assert_array_equal(f.copy()(X), [3.0, 3.0])
    with pytest.raises(TypeError, match="sparse inputs or outputs cannot be pickled"):
        pickle.dumps(f)
