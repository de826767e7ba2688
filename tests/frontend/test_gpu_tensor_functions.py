"""The tensor functions on the simulated GPU (device=cuda, gpuarray.simulate=True): running sums
and products, argsort and sort, tensordot, eye, one-hot rows, repeat, bincount and diagonal
fills compile to kernels and give NumPy's values."""
import numpy as np

import lowering as theano
import lowering.tensor as T
from lowering.config import config

extra_ops = T.extra_ops


def host_part(fn) -> str:
    """The GPU-stage IR of ``fn`` outside its kernels: what the host runs itself."""
    return fn.ir("gpu").split("gpu.module")[0]


def test_the_tensor_functions_run_as_kernels_on_the_simulated_gpu():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x, v, counts = T.fmatrix("x"), T.fvector("v"), T.ivector("counts")
        labels = T.ivector("labels")
        outputs = [extra_ops.cumsum(x, axis=1), extra_ops.cumprod(x, axis=0),
                   T.argsort(x, axis=1), T.sort(x, axis=0), T.sort(v),
                   T.tensordot(x, x, [[0], [0]]), T.eye(x.shape[0], x.shape[1]),
                   extra_ops.to_one_hot(labels, 4), extra_ops.repeat(v, counts),
                   extra_ops.bincount(labels), extra_ops.fill_diagonal(x, 5.0),
                   T.grad(T.sort(v)[-1] + extra_ops.cumsum(v).sum(), v)]
        f = theano.function([x, v, counts, labels], outputs)
        data = np.random.RandomState(0).uniform(0.5, 2.0, (3, 4)).astype("float32")
        data[1, 2] = data[1, 0]  # a tie: the stable order keeps it
        vec = np.array([2.0, -1.0, 3.0, 0.5], dtype="float32")
        reps = np.array([1, 0, 3, 2], dtype="int32")
        lab = np.array([3, 0, 3], dtype="int32")
        got = [np.asarray(r) for r in f(data, vec, reps, lab)]
    np.testing.assert_allclose(got[0], np.cumsum(data, axis=1), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.cumprod(data, axis=0), rtol=1e-6)
    np.testing.assert_array_equal(got[2], np.argsort(data, axis=1, kind="stable"))
    np.testing.assert_array_equal(got[3], np.sort(data, axis=0))
    np.testing.assert_array_equal(got[4], np.sort(vec))
    np.testing.assert_allclose(got[5], np.tensordot(data, data, [[0], [0]]), rtol=1e-5)
    np.testing.assert_array_equal(got[6], np.eye(3, 4))
    np.testing.assert_array_equal(got[7], np.eye(4)[lab])
    np.testing.assert_array_equal(got[8], np.repeat(vec, reps))
    np.testing.assert_array_equal(got[9], np.bincount(lab))
    filled = data.copy()
    np.fill_diagonal(filled, 5.0)
    np.testing.assert_array_equal(got[10], filled)
    np.testing.assert_allclose(got[11], (vec == vec.max()) + np.arange(4, 0, -1))
    host = host_part(f)
    assert host.count("gpu.launch_func") >= len(outputs)
    assert "loops.parallel" not in host  # every parallel loop became a kernel
