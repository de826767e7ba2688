"""``T.Rop`` through complex numbers: holomorphic functions give ``f'(z) dz``, the real-valued
and conjugating ones their real-linear tangents, checked against finite differences along
complex directions, and against ``Lop`` (``real <u, J v> = real <J^T u, v>``, Theano's
convention for the gradients of complex numbers)."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.frontend.errors import GraphBuildError

EXPRESSIONS = {
    "arith": lambda z, w, x: z * w / (z + 2) - w,
    "exp_sqr_neg": lambda z, w, x: T.exp(z) + T.sqr(w) * -z,
    "abs": lambda z, w, x: abs(z * w + 1j),
    "real_imag": lambda z, w, x: T.real(z * w) * T.imag(z / w),
    "angle": lambda z, w, x: T.angle(z / w),
    "conj": lambda z, w, x: T.conj(z) * w,
    "complex": lambda z, w, x: T.complex(x, x * 2) * z,
    "polar": lambda z, w, x: T.complex_from_polar(x * x + 1, x) * w,
    "dot": lambda z, w, x: T.dot(T.outer(z, w), w) + T.dot(z, w),
    "reductions": lambda z, w, x: z * (T.prod(z * w) + T.mean(z - x)) + z.sum(),
    "cast": lambda z, w, x: T.cast(x, "complex128") * z,
    "switch": lambda z, w, x: T.switch(x > 0, z * w, w),
}


def _point(seed=3):
    r = np.random.default_rng(seed)
    return [r.normal(size=3) + 1j * r.normal(size=3), r.normal(size=3) + 1j * r.normal(size=3),
            r.normal(size=3)]


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_rop_matches_finite_differences_and_lop(name):
    z, w, x = T.zvector("z"), T.zvector("w"), T.dvector("x")
    inputs = [z, w, x]
    points = [T.zvector("vz"), T.zvector("vw"), T.dvector("vx")]
    y = EXPRESSIONS[name](z, w, x)
    u = y.type("u")
    rop = T.Rop(y, inputs, points)
    assert rop.type == y.type
    lops = T.Lop(y, inputs, u, disconnected_inputs="ignore")
    f = theano.function([*inputs, *points, u], [rop, *lops], mode="INTERP",
                        on_unused_input="ignore")
    value = theano.function(inputs, y, mode="INTERP", on_unused_input="ignore")
    args, directions = _point(3), _point(4)
    eps = 1e-6
    numeric = (value(*[a + eps * d for a, d in zip(args, directions)])
               - value(*[a - eps * d for a, d in zip(args, directions)])) / (2 * eps)
    r, shape = np.random.default_rng(5), np.shape(numeric)
    uv = r.normal(size=shape) + 1j * r.normal(size=shape) if np.iscomplexobj(numeric) \
        else r.normal(size=shape)
    jv, *jtu = f(*args, *directions, uv)
    np.testing.assert_allclose(jv, numeric, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.real(np.sum(np.conj(uv) * jv)),
                               sum(np.real(np.sum(np.conj(g) * d))
                                   for g, d in zip(jtu, directions)), rtol=1e-9, atol=1e-9)


def test_compiled_rop_of_a_complex_product_through_blas(dtype="complex128"):
    A, z = T.matrix("A", dtype=dtype), T.vector("z", dtype=dtype)
    vA, vz = T.matrix("vA", dtype=dtype), T.vector("vz", dtype=dtype)
    y = T.exp(T.dot(A, z))
    f = theano.function([A, z, vA, vz], T.Rop(y, [A, z], [vA, vz]))
    r = np.random.default_rng(0)
    Av, zv, VA, VZ = [(r.normal(size=s) + 1j * r.normal(size=s)).astype(dtype) * 0.5
                      for s in [(3, 4), (4,), (3, 4), (4,)]]
    want = np.exp(Av @ zv) * (VA @ zv + Av @ VZ)
    np.testing.assert_allclose(f(Av, zv, VA, VZ), want, rtol=1e-5 if dtype == "complex64"
                               else 1e-12)


def test_rop_through_a_scan_of_complex_numbers():
    zs, h0 = T.zvector("zs"), T.zscalar("h0")
    hs, _ = theano.scan(lambda z, h: h * z + T.conj(z), sequences=zs, outputs_info=h0)
    vz, vh = T.zvector("vz"), T.zscalar("vh")
    f = theano.function([zs, h0, vz, vh], T.Rop(hs, [zs, h0], [vz, vh]), mode="INTERP")
    g = theano.function([zs, h0], hs, mode="INTERP")
    Z, H0 = _point(1)[0], np.complex128(0.5 - 0.2j)
    VZ, VH = _point(2)[0], np.complex128(1 + 1j)
    eps = 1e-6
    numeric = (g(Z + eps * VZ, H0 + eps * VH) - g(Z - eps * VZ, H0 - eps * VH)) / (2 * eps)
    np.testing.assert_allclose(f(Z, H0, VZ, VH), numeric, rtol=1e-6, atol=1e-8)


def test_an_op_without_a_complex_forward_rule_names_itself_and_the_line():
    from lowering.dialects.tensor import complex_rop
    z, v = T.zvector("z"), T.zvector("v")
    y = T.exp(z)
    holomorphic = complex_rop.HOLOMORPHIC
    complex_rop.HOLOMORPHIC = tuple(c for c in holomorphic if c.__name__ != "ExpOp")
    try:
        with pytest.raises(GraphBuildError, match=r"test_complex_rop.py:\d+: Rop: tensor.exp "
                                                  r".*no forward-mode derivative for complex"):
            T.Rop(y, z, v)
    finally:
        complex_rop.HOLOMORPHIC = holomorphic
