"""Seed 001's PyCUDA interoperability on the simulated device: CudaNdarray, to_gpuarray /
to_cudandarray without copies (and the ValueError for strided arrays), pycuda_init, and the
sandbox transfer functions with the errors they give without a GPU."""
import numpy as np
import pytest

import lowering.sandbox.cuda as cuda_ndarray
import lowering.tensor as T
from lowering.compile.gpu.arrays import SimulatedGpuArray, is_device_array, to_gpu
from lowering.config import config
from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError, cuda_available
from lowering.misc import pycuda_init, pycuda_utils
from lowering.sandbox import gpuarray
from lowering.sandbox.cuda.basic_ops import (GpuUnavailableError, as_cuda_ndarray_variable,
                                             gpu_contiguous, gpu_from_host, host_from_gpu)


@pytest.fixture
def simulated():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda"):
        yield


def test_cuda_ndarray_from_numpy_zeros_and_back(simulated):
    a = np.random.RandomState(0).randn(100)
    ga = cuda_ndarray.CudaNdarray(a)
    assert isinstance(ga, cuda_ndarray.CudaNdarray) and ga.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(ga), a.astype(np.float32))
    dest = cuda_ndarray.CudaNdarray.zeros(a.shape)
    assert dest.shape == (100,) and (np.asarray(dest) == 0).all()
    assert not isinstance(np.zeros(2), cuda_ndarray.CudaNdarray)
    assert isinstance(to_gpu(np.zeros(2)), cuda_ndarray.CudaNdarray)
    with pytest.raises(TypeError, match="float32 only"):
        cuda_ndarray.CudaNdarray.zeros((2,), "float64")
    assert cuda_ndarray.cuda_available


def test_seed_multiply_them_on_device_arrays(simulated):
    """The seed's multiply_them kernel, as a NumPy function on the arrays' device memory."""
    a = np.random.randn(100).astype(np.float32)
    b = np.random.randn(100).astype(np.float32)
    ga, gb = cuda_ndarray.CudaNdarray(a), cuda_ndarray.CudaNdarray(b)
    dest = cuda_ndarray.CudaNdarray.zeros(a.shape)

    def multiply_them(dest, a, b):
        np.multiply(a.device_ndarray, b.device_ndarray, out=dest.device_ndarray)

    multiply_them(dest, ga, gb)
    assert (np.asarray(dest) == a * b).all()


def test_to_gpuarray_shares_memory(simulated):
    c = cuda_ndarray.CudaNdarray(np.arange(6).reshape(2, 3))
    g = pycuda_utils.to_gpuarray(c)
    assert isinstance(g, SimulatedGpuArray) and g is not c and int(g.gpudata) == int(c.gpudata)
    g.fill(3.0)
    np.testing.assert_array_equal(np.asarray(c), np.full((2, 3), 3.0))


def test_strided_arrays_need_copyif(simulated):
    c = cuda_ndarray.CudaNdarray(np.arange(12).reshape(3, 4))
    strided = c[:, ::2]
    with pytest.raises(ValueError, match="not C-contiguous.*copyif=True"):
        pycuda_utils.to_gpuarray(strided)
    copy = pycuda_utils.to_gpuarray(strided, copyif=True)
    np.testing.assert_array_equal(copy.get(), np.arange(12).reshape(3, 4)[:, ::2])
    copy.fill(-1)  # its own memory
    assert (np.asarray(c) >= 0).all()
    with pytest.raises(ValueError, match="not C-contiguous"):
        pycuda_utils.to_cudandarray(strided)
    assert pycuda_utils.to_cudandarray(strided, copyif=True).flags.c_contiguous


def test_to_cudandarray_shares_memory_and_holds_float32(simulated):
    g = to_gpu(np.ones(4, np.float32))
    c = pycuda_utils.to_cudandarray(g)
    assert isinstance(c, cuda_ndarray.CudaNdarray) and int(c.gpudata) == int(g.gpudata)
    g.fill(2.0)
    np.testing.assert_array_equal(np.asarray(c), [2.0] * 4)
    assert pycuda_utils.from_gpuarray is pycuda_utils.to_cudandarray
    with pytest.raises(ValueError, match="float32 only, got float64"):
        pycuda_utils.to_cudandarray(to_gpu(np.ones(2)))
    with pytest.raises(ValueError, match="converts a device array, got ndarray"):
        pycuda_utils.to_gpuarray(np.ones(2, np.float32))


def test_pycuda_init_reports_whether_pycuda_can_be_used():
    assert pycuda_init.pycuda_available == cuda_available()


def test_sandbox_transfers_are_variable_transfers(simulated):
    x = T.fvector("x")
    y = T.exp(x)
    on_gpu = gpu_from_host(y)
    assert on_gpu.target is None and on_gpu.value is y.value
    assert host_from_gpu(on_gpu).target == "cpu"
    assert as_cuda_ndarray_variable(x).target is None
    assert as_cuda_ndarray_variable(on_gpu) is on_gpu
    assert gpu_contiguous(x).target is None
    assert gpuarray.basic_ops.gpu_from_host(x).target is None
    with config.change_flags(contexts="dev0->cuda0"):
        assert gpuarray.basic_ops.as_gpuarray_variable(x, "dev0").target == "dev0"
    const = as_cuda_ndarray_variable(np.ones(2, "float32"))
    assert const.target is None and const.dtype == "float32"


def test_without_a_gpu_the_errors_say_what_is_missing():
    x = T.fvector("x")
    with config.change_flags({"gpuarray.simulate": False}, device="cpu"):
        with pytest.raises(GpuUnavailableError, match="needs device=cuda") as info:
            gpu_from_host(x)
        assert isinstance(info.value, CudaUnavailableError)
        if cuda_available():
            return
        assert "pip install 'lowering[cuda]'" in str(info.value) or \
            "driver" in str(info.value)
        with pytest.raises(CudaUnavailableError, match="CudaNdarray makes an array on the GPU"):
            cuda_ndarray.CudaNdarray(np.zeros(2))
        assert not cuda_ndarray.cuda_available
    with config.change_flags({"gpuarray.simulate": False}, device="cuda"):
        with pytest.raises(GpuUnavailableError, match="a usable GPU") as info:
            gpu_from_host(x)
        assert "device=cuda (the device flag" not in str(info.value)


def test_device_arrays_are_never_host_arrays(simulated):
    d = cuda_ndarray.CudaNdarray(np.ones(3))
    assert is_device_array(d) and not isinstance(d, np.ndarray)
