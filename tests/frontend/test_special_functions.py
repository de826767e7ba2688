"""Theano's special functions through T (erfc, gammaln, gamma, psi, tri_gamma, j0, j1, erfinv,
erfcinv, erfcx): values
against SciPy, interpreted and compiled, in float32 and float64; gradients against SciPy's
derivatives; integers computed in floats; complex numbers refused; a GPU declared unable."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowering as theano
import lowering.tensor as T
from lowering.compile.op_support import BACKENDS, support
from lowering.dialects.tensor import SPECIAL_ELEMENTWISE_OPS

from .helpers import evaluate

special = pytest.importorskip("scipy.special")

FUNCTIONS = {"erfc": special.erfc, "gammaln": special.gammaln, "gamma": special.gamma,
             "psi": special.psi, "tri_gamma": lambda x: special.polygamma(1, x),
             "j0": special.j0, "j1": special.j1}
DERIVATIVES = {"erfc": lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x),
               "gammaln": special.psi,
               "gamma": lambda x: special.gamma(x) * special.psi(x),
               "psi": lambda x: special.polygamma(1, x),
               "tri_gamma": lambda x: special.polygamma(2, x),
               "j0": lambda x: -special.j1(x),
               "j1": lambda x: special.jvp(1, x)}
POINTS = np.array([-7.25, -2.5, -0.3, 0.01, 0.5, 1.4616321449683622, 3.0, 7.5, 30.0, 171.5])


def close(got, want, rtol):
    scale = np.maximum(1.0, np.abs(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_less(np.abs(got[finite] - want[finite]) / scale[finite], rtol)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-13), ("float32", 2e-6)])
def test_compiled_and_interpreted_values_match_scipy(dtype, rtol):
    x = T.vector("x", dtype=dtype)
    outs = [getattr(T, name)(x) for name in FUNCTIONS]
    assert all(o.dtype == dtype for o in outs)
    data = POINTS.astype(dtype)
    compiled = theano.function([x], outs)(data)
    interpreted = evaluate(outs, {x: data})
    for name, got, interp in zip(FUNCTIONS, compiled, interpreted):
        want = FUNCTIONS[name](data.astype(np.float64))
        if dtype == "float32":
            want = want.astype(np.float32).astype(np.float64)
        close(got.astype(np.float64), want, rtol)
        close(interp.astype(np.float64), want, rtol)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 5),
                  elements=st.floats(-20, 40, allow_subnormal=False).filter(
                      lambda v: not (v <= 0 and abs(v - round(v)) < 1e-3))))
def test_interpreted_values_match_scipy_anywhere(data):
    x = T.dvector("x")
    got = evaluate([getattr(T, name)(x) for name in FUNCTIONS], {x: data})
    for name, g in zip(FUNCTIONS, got):
        close(g, FUNCTIONS[name](data), 1e-9)


def test_poles_and_special_points_follow_scipy():
    x = T.dvector("x")
    data = np.array([0.0, -0.0, -1.0, -3.0, np.inf])
    got = evaluate([T.gammaln(x), T.gamma(x), T.psi(x), T.tri_gamma(x)], {x: data[:4]})
    np.testing.assert_array_equal(got[0], special.gammaln(data[:4]))
    np.testing.assert_array_equal(got[1], special.gamma(data[:4]))
    np.testing.assert_array_equal(got[2], special.psi(data[:4]))
    np.testing.assert_array_equal(got[3], [np.inf] * 4)
    np.testing.assert_allclose(evaluate(T.erfc(x), {x: [np.inf, -np.inf, 26.0]}),
                               [0.0, 2.0, special.erfc(26.0)], rtol=1e-13)


def test_gradients_match_the_derivatives():
    x = T.dvector("x")
    data = POINTS[:-1]
    grads = [T.grad(getattr(T, name)(x).sum(), x) for name in DERIVATIVES]
    for name, got in zip(DERIVATIVES, theano.function([x], grads)(data)):
        close(got, DERIVATIVES[name](data), 1e-9)
    at_zero = evaluate(T.grad(T.j1(x).sum(), x), {x: [0.0]})
    np.testing.assert_array_equal(at_zero, [0.5])


def test_integers_compute_in_floats_and_complex_numbers_are_refused():
    assert T.gammaln(T.ivector()).dtype == "float64"
    assert T.psi(T.bvector()).dtype == theano.config.floatX
    np.testing.assert_allclose(evaluate(T.gamma(T.constant([4, 5]))), [6.0, 24.0])
    for fn in (T.erfc, T.psi):
        with pytest.raises(TypeError, match="complex numbers are not supported"):
            fn(T.zvector())


def test_a_gpu_is_declared_unable():
    gpu = [b for b in BACKENDS if "gpu" in str(b.name).lower()]
    assert gpu
    for cls in SPECIAL_ELEMENTWISE_OPS.values():
        assert support(cls, gpu[0]).state == "no"
        assert [str(support(cls, b)) for b in BACKENDS if b not in gpu] == ["yes"] * (len(BACKENDS) - 1)


INVERSES = np.concatenate([np.linspace(-1, 1, 21), 1 - np.logspace(-16, -1, 6),
                           -1 + np.logspace(-14, -2, 4), [1.5, np.nan]])


def test_erfinv_erfcinv_and_erfcx_match_scipy_to_the_last_bits():
    y, tiny = T.dvectors("y", "tiny")
    small = 10.0 ** (-300 * (INVERSES + 1) / 2)  # down to 1e-300: erfcinv's far tail
    outs = [T.erfinv(y), T.erfcinv(1 - y), T.erfcinv(tiny), T.erfcx(30 * y)]
    wants = [special.erfinv(INVERSES), special.erfcinv(1 - INVERSES), special.erfcinv(small),
             special.erfcx(30 * INVERSES)]
    compiled = theano.function([y, tiny], outs)(INVERSES, small)
    for got in (compiled, evaluate(outs, {y: INVERSES, tiny: small})):
        for g, want in zip(got, wants):
            np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
            finite = np.isfinite(want)
            np.testing.assert_array_equal(g[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
            np.testing.assert_allclose(g[finite], want[finite], rtol=2e-15 if g is not got[3] else 1e-12)


def test_the_inverse_error_functions_have_the_derivatives_of_inverses():
    y = T.dvector("y")
    data = np.array([-0.999, -0.6, 0.0, 0.2, 0.5, 0.9, 1 - 1e-12])
    got = evaluate([T.grad(T.erfinv(y).sum(), y), T.grad(T.erfcinv(1 - y).sum(), y),
                    T.grad(T.erfcx(4 * y).sum(), y)], {y: data})
    slope = np.sqrt(np.pi) / 2 * np.exp(special.erfinv(data) ** 2)
    np.testing.assert_allclose(got[0], slope, rtol=1e-12)
    np.testing.assert_allclose(got[1], slope, rtol=1e-12)
    x = 4 * data
    np.testing.assert_allclose(got[2], 4 * (2 * x * special.erfcx(x) - 2 / np.sqrt(np.pi)),
                               rtol=1e-12, atol=1e-14)
    with pytest.raises(TypeError, match="complex numbers are not supported"):
        T.erfinv(T.zvector())


def test_forward_mode_goes_through_the_special_functions():
    x, v = T.dvectors("x", "v")
    data, tangent = np.array([0.5, 2.0, 7.5]), np.array([1.0, -2.0, 0.5])
    got = evaluate([T.Rop(T.gammaln(x), x, v), T.Rop(T.erfc(x), x, v), T.Rop(T.j0(x), x, v)],
                   {x: data, v: tangent})
    np.testing.assert_allclose(got[0], special.psi(data) * tangent, rtol=1e-13)
    np.testing.assert_allclose(got[1], DERIVATIVES["erfc"](data) * tangent, rtol=1e-13)
    np.testing.assert_allclose(got[2], -special.j1(data) * tangent, rtol=1e-13)
