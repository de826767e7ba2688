"""The GPU runtime's CUDA path (``CudaDevice``, ``cuda_runtime``): contexts, the pool, copies,
kernels loaded from PTX, and function() with device=cuda against NumPy. Each test runs on the
strict driver stand-in (``tests/cuda_standin``) and, marked ``gpu``, on a real NVIDIA GPU
through PyCUDA when there is one."""
from __future__ import annotations

import numpy as np
import pytest

from cuda_standin import driver_params, use_driver
from lowering.config import config


@pytest.fixture(params=driver_params())
def driver(request):
    with use_driver(request.param) as standin:
        yield standin


@pytest.fixture
def cuda(driver):
    from lowering.compile.gpu.device import device_for
    with config.change_flags(device="cuda", print_active_device=False):
        device = device_for("cuda")
        device.counters.reset()
        yield device


def test_contexts_are_made_once_per_device(driver):
    from lowering.llvm.gpu.cuda_runtime import get_context
    with config.change_flags(contexts="dev0->cuda0", print_active_device=False):
        assert get_context("dev0") is get_context(None) is get_context("cuda0")


def test_copies_round_trip_and_views_of_device_memory(cuda):
    import pycuda.gpuarray as gpuarray
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(x[:, ::2])
    assert isinstance(d, gpuarray.GPUArray)
    np.testing.assert_array_equal(cuda.to_host(d), x[:, ::2])
    row = cuda.view(d, (2,), (1,), 2)
    with cuda.cuda.activate():  # PyCUDA's own calls need a current context
        np.testing.assert_array_equal(row.get(), x[1, ::2])
    target = cuda.empty((3, 2), np.float32)
    cuda.copy(d, target)
    cuda.fill(d, 7)
    with cuda.cuda.activate():
        np.testing.assert_array_equal(target.get(), x[:, ::2])
        np.testing.assert_array_equal(d.get(), np.full((3, 2), 7, np.float32))


def test_a_hand_written_program_runs_on_the_gpu(cuda):
    from lowering.compile.gpu.build import GpuProgram
    from lowering.compile.gpu.host import HostProgram
    from lowering.ir.parser import parse_module

    from test_gpu_host import exp_program
    module = parse_module(exp_program())
    cuda.load(GpuProgram(module, "cuda", 32))
    program = HostProgram(module.functions[0], cuda)
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    (out,) = program.run([x, np.array(2.0, np.float32)])
    np.testing.assert_allclose(out, np.exp(x) * 2, rtol=1e-6)
    assert cuda.counters.launches == 1


def test_functions_on_the_gpu_give_numpys_results(cuda, driver):
    import pycuda.gpuarray as gpuarray

    from lowering.compile.gpu.device import device_for

    import lowering as theano
    import lowering.tensor as T
    x, m = T.fmatrix("x"), T.fmatrix("m")
    f = theano.function([x, m], [T.exp(x).sum(axis=1), T.dot(x, m), (x * 2).transfer(None)])
    rows, inner, cols = (50, 40, 30) if driver is None else (20, 16, 12)  # interpreted: small
    a = np.random.default_rng(0).standard_normal((rows, inner)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((inner, cols)).astype(np.float32)
    total, product, kept = f(a, b)
    np.testing.assert_allclose(total, np.exp(a).sum(axis=1), rtol=1e-4)
    np.testing.assert_allclose(product, a @ b, rtol=1e-4, atol=1e-4)
    assert isinstance(kept, gpuarray.GPUArray)
    with device_for("cuda").cuda.activate():
        np.testing.assert_allclose(kept.get(), a * 2)


def test_softmax_and_argmax_rows_run_a_block_per_row(cuda, driver):
    import lowering as theano
    import lowering.tensor as T
    x = T.fmatrix("x")
    probabilities = T.nnet.softmax(x)
    f = theano.function([x], [probabilities, T.argmax(probabilities, axis=1)])
    rows, cols = (500, 1000) if driver is None else (6, 40)  # interpreted: small
    a = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32) * 4
    p, best = f(a)
    shifted = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(p, shifted / shifted.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_array_equal(best, a.argmax(axis=1))
    names = [k.name for k in cuda._kernels.values()]
    assert any(n.startswith("rows_max_sum") for n in names)
    assert any(n.startswith("rows_argmax") for n in names)


def test_logistic_regression_on_the_gpu(cuda, driver):
    from test_gpu_executor import logistic_regression, numpy_step
    # The stand-in runs kernels in the interpreter, thread by thread: a smaller problem.
    rows, feats, steps = (400, 784, 5) if driver is None else (32, 16, 2)
    train, w, b = logistic_regression(feats=feats)
    rng = np.random.RandomState(0)
    x = rng.randn(rows, feats).astype("float32")
    y = rng.randint(0, 2, size=rows).astype("float32")
    w_np, b_np = w.get_value(), b.get_value()
    for _ in range(steps):
        before = cuda.counters.snapshot()
        prediction, xent = train(x, y)
        moved = cuda.counters.since(before)
        assert moved["bytes_to_device"] == x.nbytes + y.nbytes
        want_prediction, want_xent, w_np, b_np = numpy_step(x, y, w_np, b_np)
        np.testing.assert_allclose(xent, want_xent, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(w.get_value(), w_np, rtol=1e-3, atol=1e-4)


def test_profiles_time_kernels_with_cuda_events(cuda, driver):
    import lowering as theano
    import lowering.tensor as T
    from lowering.compile.profiling import ProfileStats
    stats = ProfileStats(atexit_print=False)
    x = T.fmatrix("x")
    f = theano.function([x], T.exp(x).sum(), profile=stats)
    size = 256 if driver is None else 16  # interpreted: small
    f(np.ones((size, size), np.float32))
    kernels = [n for n in stats.nodes if n.kind == "gpu" and n.op.startswith("GpuKernel")]
    assert kernels and all(n.time > 0 for n in kernels)
