"""``theano.sparse`` with two sparse operands through the public API: ``add``, ``sub``, ``mul``,
``structured_dot``, ``dot``, ``true_dot``, ``hstack``/``vstack``, ``cast`` and the comparisons,
every pair of formats, compiled and interpreted, against scipy.sparse on random shapes and
densities (empty rows, no stored entry, 0-size); gradients with respect to the stored values
against finite differences; forward mode; the errors.
"""
import warnings

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
    dense = rng.standard_normal((rows, cols))
    dense[rng.random((rows, cols)) >= density] = 0
    if rows > 1:
        dense[rng.integers(rows)] = 0  # an empty row
    return sp.csr_matrix(dense) if fmt == "csr" else sp.csc_matrix(dense)


def build(fa, fb, mode):
    a, b, c = S.matrix(fa, "a"), S.matrix(fb, "b"), S.matrix(fb, "c")
    d = T.dmatrix("d")
    outputs = [a + b, a - b, a * b, S.structured_dot(a, c), S.dot(a, c), S.true_dot(a, c),
               S.true_dot(a, d.T), S.hstack([a, b]), S.vstack([a, b, a], format="csr"),
               S.cast(a, "float32"), S.add(a, S.structured_exp(a)), S.neq(a, a + b), S.lt(a, d),
               S.ge(d, b)]

    def reference(A, B, C, D):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy: comparisons that store zeros
            return [A + B, A - B, A.multiply(B), A @ C, (A @ C).toarray(), A @ C, sp.csr_matrix(A @ D.T),
                    sp.hstack([A, B]), sp.vstack([A, B, A]), A.astype("float32"),
                    A + A.expm1() + (A != 0), (A != A + B).astype("uint8"), A < D,
                    D >= B.toarray()]
    formats = [fa, fa, fa, fa, None, fa, fa, "csc", "csr", fa, fa, fa, None, None]
    return theano.function([a, b, c, d], outputs, mode=mode), reference, formats


BUILT = {}


@settings(max_examples=12, deadline=None)
@given(fa=st.sampled_from(["csr", "csc"]), fb=st.sampled_from(["csr", "csc"]),
       rows=st.integers(0, 6), cols=st.integers(0, 6), n=st.integers(0, 4),
       density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2 ** 16))
def test_two_sparse_operands_match_scipy(fa, fb, rows, cols, n, density, seed):
    rng = np.random.default_rng(seed)
    A = random_sparse(rng, rows, cols, density, fa)
    B = random_sparse(rng, rows, cols, density, fb)
    B = B + A * 0.5 if rng.random() < 0.5 else B  # overlapping structures
    C = random_sparse(rng, cols, n, density, fb)
    D = rng.standard_normal((rows, cols))
    for mode in MODES:
        if (fa, fb, mode) not in BUILT:
            BUILT[fa, fb, mode] = build(fa, fb, mode)
        function, reference, formats = BUILT[fa, fb, mode]
        got, want = function(A, B, C, D), reference(A, B, C, D)
        for k, (g, w, fmt) in enumerate(zip(got, want, formats)):
            where = f"{mode}, output #{k}"
            if sp.issparse(w):
                assert sp.issparse(g) and g.format == fmt and g.shape == w.shape, where
                assert g.dtype == w.dtype, where
                g, w = g.toarray(), w.toarray()
            else:
                assert not sp.issparse(g), where
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12, atol=1e-12, err_msg=where)


def test_results_store_the_union_and_the_intersection():
    a, b = S.csr_matrix("a"), S.csr_matrix("b")
    f = theano.function([a, b], [a + b, a * b, S.structured_dot(a, b.T)])
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
    B = sp.csr_matrix(np.array([[0.0, 4.0, 5.0], [0.0, 0.0, 0.0]]))
    union, both, product = f(A, B)
    assert union.nnz == 4 and both.nnz == 1 and product.nnz == 2
    np.testing.assert_array_equal(both.toarray(), [[0, 0, 10], [0, 0, 0]])
    # duplicate entries add up first, as scipy's
    dup = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2, 2])),
                        shape=(2, 3))
    np.testing.assert_array_equal(f(dup, A)[1].toarray(), [[3, 0, 0], [0, 0, 0]])


def test_gradients_flow_to_the_stored_values_of_both_operands():
    A = sp.random(4, 5, density=0.5, format="csr", random_state=1)
    B = sp.random(4, 5, density=0.5, format="csc", random_state=2) + A * 0.5
    C = sp.random(5, 3, density=0.5, format="csr", random_state=3)
    parts = [(M.indices, M.indptr, M.shape) for M in (A, B, C)]

    def cost(da, db, dc):
        a = S.CSR(da, *parts[0])
        b = S.CSC(db, *parts[1])
        c = S.CSR(dc, *parts[2])
        product = S.structured_dot(a * b - b, c) + S.true_dot(b, c)
        joined = S.vstack([S.hstack([a, b]), S.hstack([b, a])], format="csr")
        return S.dense_from_sparse(product).sum(1) + S.sp_sum(joined, 1)[:4] \
            + S.dot(c.T, a.T).sum()
    # The rules build the same graphs in both modes, and the ops' compiled loops are checked
    # above: the interpreter checks them all, compiled code the products (the costly compile).
    verify_grad(cost, [A.data, B.data, C.data], rng=np.random.RandomState(0), mode="INTERP")
    verify_grad(lambda da, db: S.dense_from_sparse(
        S.structured_dot(S.CSR(da, *parts[0]) * S.CSC(db, *parts[1]), C)),
        [A.data, B.data], rng=np.random.RandomState(1), mode="FAST_RUN")


def test_forward_mode_through_two_sparse_operands():
    A = sp.random(3, 4, density=0.6, format="csr", random_state=4)
    B = sp.random(3, 4, density=0.6, format="csr", random_state=5)
    da, v = T.dvector("da"), T.dvector("v")
    b = S.as_sparse_variable(B)
    a = S.CSR(da, A.indices, A.indptr, A.shape)
    y = S.sp_sum(S.hstack([a * b + a, b]), 0) + S.dot(a, b.T).sum(0)[0]
    f = theano.function([da], y)
    jv = theano.function([da, v], T.Rop(y, da, v), on_unused_input="ignore")  # y is linear
    V = np.random.default_rng(1).standard_normal(A.nnz)
    eps = 1e-6
    numeric = (f(A.data + eps * V) - f(A.data - eps * V)) / (2 * eps)
    np.testing.assert_allclose(jv(A.data, V), numeric, atol=1e-6)


def test_the_ir_has_the_sparse_ops_and_their_loops():
    a, b = S.csr_matrix("a"), S.csc_matrix("b")
    f = theano.function([a, b], [a + b, S.structured_dot(a, b), S.hstack([a, b])])
    text = f.ir("tensor")
    for name in ("sparse.add", "sparse.convert", "sparse.spmm", "sparse.concat"):
        assert name in text, name
    assert " = sparse." not in f.ir("loops")


def test_bad_input_is_refused_clearly():
    a, b = S.csr_matrix("a"), S.csc_matrix("b")
    f = theano.function([a, b], [a + b])
    with pytest.raises(ValueError, match=r"sparse.add at .*test_sparse_pairs.py:\d+.*"
                                         r"sizes in dimension 1 differ"):
        f(sp.csr_matrix((2, 3)), sp.csc_matrix((2, 4)))
    g = theano.function([a, b], S.structured_dot(a, b), mode="INTERP")
    with pytest.raises(Exception, match="sparse.spmm.*incompatible shapes"):
        g(sp.csr_matrix((2, 3)), sp.csc_matrix((2, 4)))
    h = theano.function([a, b], S.vstack([a, b]))
    with pytest.raises(ValueError, match="sparse.concat.*another size in dimension 1"):
        h(sp.csr_matrix((2, 3)), sp.csc_matrix((2, 4)))
    with pytest.raises(ValueError, match="hstack: cannot join an empty list"):
        S.hstack([])
    with pytest.raises(ValueError, match="vstack: format must be 'csr' or 'csc', got 'coo'"):
        S.vstack([a], format="coo")
    with pytest.raises(TypeError, match="lt: the sparse operands must have one format"):
        S.lt(a, b)
    with pytest.raises(TypeError, match="eq: one operand at least must be sparse"):
        S.eq(T.dmatrix(), T.dmatrix())
    with pytest.raises(TypeError, match="true_dot: one operand at least must be sparse"):
        S.true_dot(T.dmatrix(), T.dmatrix())
    with pytest.raises(TypeError, match="add: the second operand must be a sparse variable"):
        S.add_s_s(a, T.dmatrix("d"))


def test_sparse_shared_variables_in_graphs_and_updates():
    W0 = sp.csr_matrix(np.array([[0.0, 2.0], [1.0, 0.0]]))
    w = theano.shared(W0, name="w")
    assert isinstance(w, S.SparseTensorSharedVariable) and w.type == S.csr_dmatrix
    x = T.dvector("x")
    for mode in MODES:
        w.set_value(W0)
        f = theano.function([x], S.structured_dot(w, x), updates=[(w, w * 2.0 + w)], mode=mode)
        np.testing.assert_array_equal(f(np.ones(2)), [2.0, 1.0])
        np.testing.assert_array_equal(f(np.ones(2)), [6.0, 3.0])
        assert isinstance(w.get_value(), sp.csr_matrix)
        np.testing.assert_array_equal(w.get_value().toarray(), [[0, 18], [9, 0]])
    # a new structure and shape through set_value and through an update
    w.set_value(sp.coo_matrix(np.eye(3)))
    assert w.get_value().format == "csr" and w.get_value().shape == (3, 3)
    grow = theano.function([], [], updates={w: S.vstack([w, w], format="csr")})
    grow()
    np.testing.assert_array_equal(w.get_value().toarray(), np.vstack([np.eye(3)] * 2))
    # values are copies unless borrowed
    value = w.get_value()
    value.data[:] = 7
    assert w.get_value().max() == 1
    # a gradient through it
    cost = (S.structured_dot(w, x) ** 2).sum()
    gx = theano.function([x], T.grad(cost, x))
    np.testing.assert_allclose(gx(np.arange(3.0)), 2 * np.vstack([np.eye(3)] * 2).T @
                               np.vstack([np.eye(3)] * 2) @ np.arange(3.0))


def test_sparse_shared_csc_and_bad_values():
    c = theano.shared(sp.csc_matrix(np.array([[0, 1], [2, 0]], dtype="float32")))
    assert c.type == S.csc_fmatrix
    with pytest.raises(TypeError, match="holds float64 values"):
        c.set_value(sp.csc_matrix(np.eye(2)))
    with pytest.raises(TypeError, match="convert it with .tocsr"):
        theano.shared(sp.coo_matrix(np.eye(2)))
    with pytest.raises(TypeError, match="must have its type"):
        theano.function([], [], updates=[(c, S.csr_from_dense(T.fmatrix()))])
    with pytest.raises(TypeError, match="must be a sparse variable"):
        theano.function([], [], updates=[(c, 3.0)])


def test_theanos_smaller_names():
    assert S.all_dtypes >= {"int8", "uint64", "float32", "complex128"}
    assert S.sparse_formats == ["csr", "csc"]
    X = sp.csr_matrix(np.array([[0.0, 1.5], [2.0, 0.0]]))
    x = S.constant(X, name="x")
    d = T.dmatrix("d")
    assert S.as_sparse_or_tensor_variable(X).format == "csr"
    assert S.as_sparse_or_tensor_variable(np.eye(2)).ndim == 2
    f = theano.function([d], [S.add_s_d(x, d), S.mul_s_d(x, d), S.fcast(x), S.lcast(x)],
                        mode="INTERP")
    D = np.array([[1.0, 2.0], [3.0, 4.0]])
    added, scaled, single, integral = f(D)
    np.testing.assert_array_equal(added, X.toarray() + D)
    np.testing.assert_array_equal(scaled.toarray(), X.multiply(D).toarray())
    assert single.dtype == np.float32 and integral.dtype == np.int64
    np.testing.assert_array_equal(integral.toarray(), [[0, 1], [2, 0]])
    assert S.shared(X).get_value().nnz == 2
    with pytest.raises(TypeError, match="sparse.shared: expected a scipy.sparse matrix"):
        S.shared(np.eye(2))
    with pytest.raises(TypeError, match="sparse.constant: expected a scipy.sparse matrix"):
        S.constant(np.eye(2))
    with pytest.raises(TypeError, match="add_s_d: expected a dense operand, got a sparse one"):
        S.add_s_d(x, x)


@pytest.mark.parametrize("mode", MODES)
def test_sampling_dot_usmm_and_sorted_indices(mode):
    x, y, z = T.dmatrix("x"), T.dmatrix("y"), T.dmatrix("z")
    p = S.csr_matrix("p")
    a = T.dscalar("a")
    unsorted = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1]),
                              np.array([0, 2, 3])), shape=(2, 3))
    f = theano.function([x, y, z, p, a], [S.sampling_dot(x, y, p), S.usmm(a, p, y, z),
                                          S.ensure_sorted_indices(p)], mode=mode)
    rng = np.random.default_rng(0)
    X, Y, Z = rng.standard_normal((2, 4)), rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    sampled, fused, ordered = f(X, Y, Z, unsorted, 2.0)
    np.testing.assert_allclose(sampled.toarray(), unsorted.multiply(X @ Y.T).toarray())
    assert sampled.nnz == 3
    np.testing.assert_allclose(fused, 2.0 * (unsorted @ Y) + Z)
    np.testing.assert_array_equal(ordered.indices, [0, 2, 1])
    np.testing.assert_array_equal(ordered.toarray(), unsorted.toarray())
