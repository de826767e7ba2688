"""The tensor helpers and psi on the simulated GPU (device=cuda, gpuarray.simulate=True): they
compile to kernels and give the interpreter's values; the special functions that call the C
library are refused with the op, the user's line and the way out."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config

from .helpers import evaluate


def test_the_helpers_run_on_the_simulated_gpu():
    x, p = T.fmatrix("x"), T.lvector("p")
    outs = [T.roll(x, 1, 1), T.tril(x), T.take(x, p, axis=1, mode="wrap"),
            T.permute_row_elements(x, p, inverse=True), T.psi(x), T.flatnonzero(x > 1),
            T.grad((T.roll(x, 1, 0) * T.diagonal(x)).sum(), x)]
    data = np.random.RandomState(0).uniform(0.5, 2.0, (3, 3)).astype("float32")
    perm = np.array([2, 0, 1])
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        got = theano.function([x, p], outs)(data, perm)
    for g, want in zip(got, evaluate(outs, {x: data, p: perm})):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)


def test_the_c_library_special_functions_are_refused_on_a_gpu():
    x = T.fmatrix("x")
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        with pytest.raises(Exception, match=r"tensor.gammaln \(at .*test_gpu_tensor_helpers.py"
                                             r".*compile this function for the CPU"):
            theano.function([x], T.gammaln(x))
