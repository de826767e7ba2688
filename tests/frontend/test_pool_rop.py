"""``T.Rop`` through ``pool_2d``: forward mode through max, sum and average pooling, against
finite differences and against ``T.Lop`` (``<u, J v> = <J^T u, v>``), interpreted and compiled.
"""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.tensor.signal import pool

from .helpers import evaluate, float64_by_default  # noqa: F401 (autouse)

POOL_MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]
CASES = [
    dict(ws=(2, 2), ignore_border=True),
    dict(ws=(3, 2), ignore_border=False),                       # partial last windows
    dict(ws=(3, 3), stride=(1, 2), ignore_border=False),        # overlapping windows
    dict(ws=(3, 2), stride=(2, 1), pad=(1, 1), ignore_border=True),
    dict(ws=(2, 3), stride=(3, 3), ignore_border=True),         # cells no window reads
]


def _rop_function(case, pool_mode, mode):
    x, v = T.tensor4("x"), T.tensor4("v")
    y = pool.pool_2d(x, mode=pool_mode, **case)
    return theano.function([x, v], [y, T.Rop(y, x, v)], mode=mode), x, v, y


# Compiled code for the max-pooling rule (the one built of strided reads); the interpreter for all.
COMBINATIONS = [(case, pool_mode, "INTERP") for case in CASES for pool_mode in POOL_MODES] + [
    (CASES[1], "max", "FAST_RUN"), (CASES[3], "max", "FAST_RUN"), (CASES[2], "sum", "FAST_RUN")]


@pytest.mark.parametrize("case,pool_mode,mode", COMBINATIONS, ids=str)
def test_rop_matches_finite_differences(case, pool_mode, mode):
    f, *_ = _rop_function(case, pool_mode, mode)
    r = np.random.default_rng(5)
    xv = r.standard_normal((2, 2, 6, 7))  # distinct values: no ties at a maximum
    vv = r.standard_normal(xv.shape)
    eps = 1e-6
    up, _ = f(xv + eps * vv, vv)
    down, _ = f(xv - eps * vv, vv)
    _, jv = f(xv, vv)
    np.testing.assert_allclose(jv, (up - down) / (2 * eps), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("pool_mode", POOL_MODES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_rop_is_the_transpose_of_lop(case, pool_mode):
    x, v = T.tensor4("x"), T.tensor4("v")
    y = pool.pool_2d(x, mode=pool_mode, **case)
    u = T.tensor4("u")
    r = np.random.default_rng(8)
    xv = np.round(r.standard_normal((1, 3, 6, 7)), 1)  # rounded: some windows tie
    vv = r.standard_normal(xv.shape)
    uv = r.standard_normal(evaluate(y, {x: xv}).shape)
    jv, jtu = evaluate([T.Rop(y, x, v), T.Lop(y, x, u)], {x: xv, v: vv, u: uv})
    np.testing.assert_allclose(np.sum(uv * jv), np.sum(jtu * vv), rtol=1e-10)


def test_max_pooling_routes_the_tangent_from_each_window_maximum():
    x, v = T.matrix("x"), T.matrix("v")
    y = pool.pool_2d(x, ws=(2, 2), ignore_border=True)
    f = theano.function([x, v], T.Rop(y, x, v), mode="INTERP")
    xv = np.array([[1.0, 5.0, 2.0, 0.0],
                   [3.0, 4.0, 7.0, 1.0]])
    vv = np.array([[10.0, 20.0, 30.0, 40.0],
                   [50.0, 60.0, 70.0, 80.0]])
    np.testing.assert_array_equal(f(xv, vv), [[20.0, 70.0]])


def test_rop_of_a_lenet_layer_matches_finite_differences():
    """conv2d then max pooling then tanh, the layer of the classic LeNet, in forward mode."""
    x, w = T.tensor4("x"), T.tensor4("w")
    vx, vw = T.tensor4("vx"), T.tensor4("vw")
    y = T.tanh(pool.pool_2d(T.nnet.conv2d(x, w), ws=(2, 2), ignore_border=True))
    f = theano.function([x, w], y, mode="INTERP")
    jvp = theano.function([x, w, vx, vw], T.Rop(y, [x, w], [vx, vw]), mode="INTERP")
    r = np.random.default_rng(1)
    xv, wv = r.standard_normal((2, 1, 8, 8)), r.standard_normal((3, 1, 3, 3))
    dx, dw = r.standard_normal(xv.shape), r.standard_normal(wv.shape)
    eps = 1e-6
    numeric = (f(xv + eps * dx, wv + eps * dw) - f(xv - eps * dx, wv - eps * dw)) / (2 * eps)
    np.testing.assert_allclose(jvp(xv, wv, dx, dw), numeric, rtol=1e-5, atol=1e-7)
