"""function() with device=cuda on the interpreted device (flag gpuarray.simulate): results equal
NumPy's, shared variables stay on the device, outputs kept there are device arrays, transfers
are counted, errors are those of the CPU backend, and a missing GPU is a clear error."""
from __future__ import annotations

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile.gpu.arrays import SimulatedGpuArray, is_device_array
from lowering.compile.gpu.device import device_for
from lowering.config import config
from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError, cuda_available

SIMULATED = {"gpuarray.simulate": True, "device": "cuda"}


@pytest.fixture
def gpu():
    """device=cuda on the interpreted device; the device's counters start at zero."""
    with config.change_flags(SIMULATED):
        device = device_for("cuda")
        device.counters.reset()
        yield device


def gpu_function(*args, **kwargs):
    f = theano.function(*args, **kwargs)
    assert f.executor_name == "gpu", f.executor_name
    return f


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 32 threads keep the interpreted kernels fast."""
    from lowering.compile.gpu import executor as gpu_executor
    monkeypatch.setattr(gpu_executor, "DEFAULT_BLOCK_SIZE", 32)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_elementwise_gives_numpys_result(gpu):
    x, y = T.fmatrix("x"), T.fmatrix("y")
    f = gpu_function([x, y], T.exp(x) * y + 1)
    a, b = rand(3, 5), rand(3, 5, seed=1)
    out = f(a, b)
    assert type(out) is np.ndarray and out.dtype == np.float32
    np.testing.assert_allclose(out, np.exp(a) * b + 1, rtol=1e-5)
    assert gpu.counters.launches >= 1


def test_strided_and_broadcast_inputs(gpu):
    x, v = T.fmatrix("x"), T.frow("v")
    f = gpu_function([x, v], x - v)
    a = rand(6, 8)[::2, ::3]
    b = rand(1, 3, seed=2)
    np.testing.assert_allclose(f(a, b), a - b, rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_give_numpys_result(gpu, axis):
    x = T.fmatrix("x")
    f = gpu_function([x], [x.sum(axis=axis), x.max(axis=axis)])
    a = rand(7, 9)
    total, largest = f(a)
    np.testing.assert_allclose(total, a.sum(axis=axis), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(largest, a.max(axis=axis))


def test_dot_gives_numpys_result(gpu):
    x, w, m = T.fmatrix("x"), T.fvector("w"), T.fmatrix("m")
    f = gpu_function([x, w, m], [T.dot(x, w), T.dot(x, m)])
    a, b, c = rand(5, 4), rand(4, seed=1), rand(4, 3, seed=2)
    gemv, gemm = f(a, b, c)
    np.testing.assert_allclose(gemv, a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gemm, a @ c, rtol=1e-5, atol=1e-6)


def logistic_regression(seed=3, feats=6):
    rng = np.random.RandomState(seed)
    x, y = T.fmatrix("x"), T.fvector("y")
    w = theano.shared(rng.randn(feats).astype("float32"), name="w")
    b = theano.shared(np.float32(0.25), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = gpu_function([x, y], [prediction, xent], name="train",
                         updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    return train, w, b


def numpy_step(x, y, w, b):
    p = 1 / (1 + np.exp(-(x @ w) - b))
    xent = -y * np.log(p) - (1 - y) * np.log(1 - p)
    gp = (-y / p + (1 - y) / (1 - p)) / len(y)
    gz = gp * p * (1 - p)
    return p > 0.5, xent, w - 0.1 * (x.T @ gz + 0.02 * w), b - 0.1 * gz.sum()


def test_logistic_regression_keeps_its_weights_on_the_device(gpu):
    train, w, b = logistic_regression()
    assert w.container.target == "cuda" and is_device_array(w.get_value(borrow=True))
    rng = np.random.RandomState(0)
    x = rng.randn(10, 6).astype("float32")
    y = rng.randint(0, 2, size=10).astype("float32")
    w_np, b_np = w.get_value(), b.get_value()
    before_call = {"w": w.get_value(borrow=True), "b": b.get_value(borrow=True)}
    for _ in range(3):
        before = gpu.counters.snapshot()
        prediction, xent = train(x, y)
        moved = gpu.counters.since(before)
        # Per call: x and y go to the device, the two outputs come back; w and b never move.
        assert (moved["to_device"], moved["to_host"]) == (2, 2), moved
        assert moved["bytes_to_device"] == x.nbytes + y.nbytes
        assert moved["bytes_to_host"] == prediction.nbytes + xent.nbytes
        want_prediction, want_xent, w_np, b_np = numpy_step(x, y, w_np, b_np)
        np.testing.assert_array_equal(prediction, want_prediction)
        np.testing.assert_allclose(xent, want_xent, rtol=1e-4, atol=1e-5)
    # Updates stay device arrays; those the program writes in place keep their very memory.
    now = {"w": w.get_value(borrow=True), "b": b.get_value(borrow=True)}
    assert all(is_device_array(value) for value in now.values())
    in_place = {train._execute.host.func.regions[0].block.args[a].name_hint
                for _, a in train._execute.program.updated_in_place}
    assert in_place and in_place <= {"w", "b"}
    for name in in_place:
        assert now[name] is before_call[name]
    np.testing.assert_allclose(w.get_value(), w_np, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.get_value(), b_np, rtol=1e-4, atol=1e-5)


def test_outputs_kept_on_the_device_are_device_arrays(gpu):
    x = T.fvector("x")
    f = gpu_function([x], [T.exp(x).transfer(None), theano.Out(x * 2, borrow=True), x + 1])
    a = rand(5)
    kept, borrowed, host = f(a)
    assert isinstance(kept, SimulatedGpuArray) and isinstance(borrowed, SimulatedGpuArray)
    assert type(host) is np.ndarray
    np.testing.assert_allclose(kept.get(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(borrowed), a * 2)
    before = gpu.counters.snapshot()
    f(a)
    assert gpu.counters.since(before)["to_host"] == 1  # only x + 1 comes back


def test_device_arrays_are_accepted_as_inputs(gpu):
    x = T.fvector("x")
    f = gpu_function([x], T.sqrt(x))
    a = np.abs(rand(6))
    device_input = gpu.to_device(a)
    np.testing.assert_allclose(f(device_input), np.sqrt(a), rtol=1e-6)
    keep = gpu_function([x.transfer(None)], x * 3)
    before = gpu.counters.snapshot()
    np.testing.assert_allclose(keep(device_input), a * 3, rtol=1e-6)
    assert gpu.counters.since(before)["to_device"] == 0  # the argument is already there


def test_a_device_array_of_the_wrong_dtype_is_refused_by_name(gpu):
    x = T.fvector("x")
    keep = gpu_function([x.transfer(None)], x * 3)
    with pytest.raises(TypeError, match="argument 'x'.*float64"):
        keep(gpu.to_device(np.zeros(3)))


def test_shape_errors_name_the_op_and_the_users_line(gpu):
    x, y = T.fvector("x"), T.fvector("y")
    f = gpu_function([x, y], x + y)
    with pytest.raises(ValueError, match=r"test_gpu_executor.py:\d+.*arguments had shapes"):
        f(np.zeros(3, np.float32), np.zeros(4, np.float32))


def test_inputs_are_converted_as_on_the_cpu(gpu):
    x = T.fvector("x")
    f = gpu_function([x], x * 2, allow_input_downcast=True)
    np.testing.assert_allclose(f([1.0, 2.0]), [2.0, 4.0])
    with pytest.raises(TypeError, match="'x'"):
        f(np.zeros((2, 2), np.float32))


def test_sync_flag_and_launch_blocking_wait_after_every_launch(gpu, monkeypatch):
    x = T.fvector("x")
    f = gpu_function([x], T.exp(x) + 1)
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING", raising=False)
    f(rand(4))
    assert gpu.counters.syncs == 0
    with config.change_flags({"gpuarray.sync": True}):
        before = gpu.counters.snapshot()
        f(rand(4))
        moved = gpu.counters.since(before)
        assert moved["syncs"] == moved["launches"] >= 1
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    before = gpu.counters.snapshot()
    f(rand(4))
    moved = gpu.counters.since(before)
    assert moved["syncs"] == moved["launches"] >= 1


def test_functions_show_the_gpu_stages(gpu):
    x = T.fvector("x")
    f = gpu_function([x], T.exp(x))
    stage = f.ir("gpu")
    assert "gpu.launch_func @" in stage and "gpu.module @" in stage
    ptx = f.ir("ptx")
    assert ".entry" in ptx and ".target sm_" in ptx
    optimized = f.ir("optimized")
    assert 'device = "cuda"' in optimized and "lowering.arg_devices" in optimized


def test_profiles_split_gpu_transfer_and_cpu_time(gpu):
    from lowering.compile.profiling import ProfileStats
    stats = ProfileStats(atexit_print=False)
    x = T.fmatrix("x")
    profiled = gpu_function([x], T.exp(x).sum(), profile=stats)
    np.testing.assert_allclose(profiled(np.zeros((3, 4), np.float32)), 12.0)
    kinds = {node.kind for node in stats.nodes}
    assert {"gpu", "transfer"} <= kinds
    assert all(node.calls == 1 for node in stats.nodes)
    text = stats.summary_text()
    assert "GpuKernel{" in text and "GpuFromHost" in text and "HostFromGpu" in text
    assert "in gpu Op" in text and "transfer Op" in text


def test_missing_pycuda_is_a_clear_error_with_the_install_hint(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pycuda(name, *args, **kwargs):
        if name == "pycuda" or name.startswith("pycuda."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pycuda)
    x = T.fvector("x")
    with config.change_flags(device="cuda"):
        with pytest.raises(CudaUnavailableError,
                           match=r"PyCUDA, which is not installed.*pip install 'lowering\[cuda\]'"):
            theano.function([x], x + 1)


@pytest.mark.skipif(cuda_available(), reason="a GPU is present")
def test_device_cuda_without_a_gpu_does_not_fall_back_to_the_cpu():
    x = T.fvector("x")
    for force in (False, True):
        with config.change_flags(device="cuda", force_device=force):
            with pytest.raises(CudaUnavailableError, match="device=cuda"):
                theano.function([x], x + 1)


def test_force_device_refuses_modes_that_do_not_run_on_the_gpu():
    from lowering.compile.pipeline import ModeError
    x = T.fvector("x")
    with config.change_flags(SIMULATED, force_device=True):
        with pytest.raises(ModeError, match="force_device"):
            theano.function([x], x + 1, mode="INTERP")
    with config.change_flags(SIMULATED):
        assert theano.function([x], x + 1, mode="INTERP").executor_name == "interpreter"
