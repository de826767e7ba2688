"""``T.round(x, mode)``: Theano's two rounding modes, halves to even (NumPy's ``round``) and halves
away from zero (C's ``round``), compiled, interpreted and on the simulated GPU, bit for bit against
NumPy (signed zeros included), with a zero gradient and Theano's error for an unknown mode.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.config import config


def away_from_zero(values):
    """C's round from NumPy's parts: ``x - trunc(x)`` is exact (``x + 0.5`` may round up)."""
    whole = np.trunc(values)
    with np.errstate(invalid="ignore"):  # inf - inf
        return np.where(np.abs(values - whole) >= 0.5, whole + np.sign(values), whole)


REFERENCE = {"half_to_even": np.round, "half_away_from_zero": away_from_zero}


def hard_values(dtype) -> np.ndarray:
    """Halves, their neighbours, values past the last fractional bit, zeros, inf and NaN."""
    halves = np.arange(-5, 6, dtype=dtype) + dtype(0.5)
    below, above = np.nextafter(halves, dtype(0)), np.nextafter(halves, dtype(np.inf))
    big = np.array([2 ** (np.finfo(dtype).nmant - 1) + 0.5, 2.0 ** np.finfo(dtype).nmant + 1],
                   dtype)
    special = np.array([0.0, -0.0, -0.4, np.inf, -np.inf, np.nan, np.finfo(dtype).max], dtype)
    return np.concatenate([halves, below, above, big, -big, special])


def assert_same_values(got, want):
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()  # round(-0.4) is -0.0


@pytest.mark.parametrize("mode", sorted(REFERENCE))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("compile_mode", ["FAST_RUN", "INTERP"])
def test_both_modes_round_hard_values_as_numpy_does(mode, dtype, compile_mode):
    x = T.vector("x", dtype=dtype)
    f = theano.function([x], T.round(x, mode), mode=compile_mode)
    data = hard_values(np.dtype(dtype).type)
    assert_same_values(f(data), REFERENCE[mode](data))


@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=0, max_size=40))
def test_half_away_from_zero_matches_numpy_on_any_float32(values):
    x = T.fvector("x")
    f = theano.function([x], T.round(x, "half_away_from_zero") * 2)  # fused with the product
    data = np.array(values, np.float32)
    assert_same_values(f(data), away_from_zero(data) * 2)


def test_integers_round_to_the_float_type_theano_gives_them():
    i = T.ivector("i")
    y = T.round_half_away_from_zero(i)
    assert y.dtype == "float64"
    np.testing.assert_array_equal(theano.function([i], y)(np.array([-3, 7], np.int32)), [-3, 7])


def test_rounding_has_a_zero_gradient():
    x = T.dvector("x")
    g = theano.function([x], T.grad(T.round(x, "half_away_from_zero").sum(), x))
    np.testing.assert_array_equal(g(np.array([0.3, 1.5, -2.7])), [0.0, 0.0, 0.0])


def test_an_unknown_mode_is_an_error_naming_the_modes():
    with pytest.raises(ValueError, match="mode 'half_up' is not one of 'half_to_even', "
                                         "'half_away_from_zero'"):
        T.round(T.dvector(), "half_up")


def test_the_simulated_gpu_rounds_halves_away_from_zero():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x = T.fvector("x")
        f = theano.function([x], T.round(x, "half_away_from_zero"))
        data = hard_values(np.float32)
        got = np.asarray(f(data))
    assert_same_values(got, away_from_zero(data))
