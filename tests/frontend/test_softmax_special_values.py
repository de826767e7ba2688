"""softmax and log_softmax of lines holding infinities or NaN: NumPy's formula
``exp(x - max) / sum(exp(x - max))`` in every mode (compiled, interpreted, on the simulated GPU).
"""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config

ROWS = np.array([[np.inf, 1.0, 0.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0],
                 [-np.inf, 1.0, 2.0], [1000.0, 1001.0, -1000.0], [0.5, -2.0, 3.0]])


def numpy_softmax(x):
    with np.errstate(invalid="ignore"):
        shifted = x - x.max(axis=-1, keepdims=True)
        return np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)


def numpy_log_softmax(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = x - x.max(axis=-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_follows_numpy_on_infinities_and_nan(mode, dtype):
    x = T.matrix("x", dtype=dtype)
    f = theano.function([x], [T.nnet.softmax(x), T.nnet.log_softmax(x)], mode=mode)
    data = ROWS.astype(dtype)
    softmax, log_softmax = f(data)
    np.testing.assert_allclose(softmax, numpy_softmax(data), rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(log_softmax, numpy_log_softmax(data), rtol=1e-6, equal_nan=True)
    # The first line, [inf, 1, 0]: inf - inf is NaN, and so is the sum of the line.
    assert np.isnan(softmax[0]).all() and np.isnan(log_softmax[0]).all()


def test_softmax_on_the_simulated_gpu_follows_numpy():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x = T.matrix("x")
        f = theano.function([x], [T.nnet.softmax(x), T.nnet.log_softmax(x)])
        data = ROWS.astype("float32")
        softmax, log_softmax = (np.asarray(r) for r in f(data))
    np.testing.assert_allclose(softmax, numpy_softmax(data), rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(log_softmax, numpy_log_softmax(data), rtol=1e-6, equal_nan=True)
    assert np.isnan(softmax[0]).all()
