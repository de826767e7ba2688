"""Device arrays of the simulated device behave like pycuda.gpuarray.GPUArray for what programs
use, and the helpers tell device arrays from host arrays."""
import numpy as np
import pytest

from lowering.compile.gpu import arrays as ga
from lowering.compile.gpu.arrays import SimulatedGpuArray


def test_to_gpu_copies_in_and_get_copies_out():
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = ga.to_gpu(host)
    host[0, 0] = 100  # the device holds its own copy
    out = d.get()
    assert out[0, 0] == 0 and out.dtype == np.float32 and out.shape == (2, 3)
    out[0, 1] = 50  # and get() gives a copy
    assert d.get()[0, 1] == 1
    assert d.shape == (2, 3) and d.dtype == np.float32 and d.size == 6 and d.nbytes == 24
    assert d.strides == (12, 4) and d.ndim == 2 and len(d) == 2 and d.itemsize == 4
    assert d.mem_size == 6


def test_constructors_and_fill():
    assert np.isnan(ga.empty((2,), np.float64).get()).all()  # fresh memory is garbage
    np.testing.assert_array_equal(ga.zeros((2, 2), np.int32).get(), np.zeros((2, 2), np.int32))
    like = ga.zeros_like(np.ones((3,), np.float64))
    assert like.dtype == np.float64 and like.shape == (3,)
    assert ga.empty_like(like, dtype=np.float32).dtype == np.float32
    assert ga.zeros(4).fill(2.5).get().tolist() == [2.5] * 4
    assert SimulatedGpuArray(5).shape == (5,)


def test_gpudata_is_an_address_that_views_the_same_memory():
    d = ga.to_gpu(np.arange(4, dtype=np.float32))
    assert int(d.gpudata) == d.ptr == d.gpudata.memory.ctypes.data
    again = SimulatedGpuArray((2,), np.float32, gpudata=d.gpudata + 8, base=d)
    np.testing.assert_array_equal(again.get(), [2.0, 3.0])
    again.set(np.array([7.0, 8.0], np.float32))
    np.testing.assert_array_equal(d.get(), [0.0, 1.0, 7.0, 8.0])
    with pytest.raises(TypeError, match="simulated device memory"):
        SimulatedGpuArray((2,), np.float32, gpudata=12345)


def test_slices_are_strided_views_and_contiguity_is_reported():
    d = ga.to_gpu(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = d[:, ::2]
    assert view.shape == (3, 2) and view.strides == (16, 8)
    assert not view.flags.c_contiguous and not ga.is_c_contiguous(view)
    assert d.flags.c_contiguous and d.T.flags.f_contiguous and not d.T.flags.c_contiguous
    view.fill(-1)
    assert (d.get()[:, ::2] == -1).all() and (d.get()[:, 1::2] != -1).all()
    assert view.copy().flags.c_contiguous
    assert d.reshape(4, 3).shape == (4, 3) and d.ravel().shape == (12,)
    with pytest.raises(ValueError, match="non-contiguous"):
        d[:, :2].reshape(6)
    with pytest.raises(IndexError, match="basic"):
        d[[0, 2]]


def test_arithmetic_stays_on_the_device():
    a = ga.to_gpu(np.array([1.0, 2.0], np.float32))
    b = ga.to_gpu(np.array([3.0, 5.0], np.float32))
    for result, expected in [(a + b, [4, 7]), (a * 2, [2, 4]), (2 * a, [2, 4]), (b - a, [2, 3]),
                             (1 - a, [0, -1]), (b / a, [3, 2.5]), (-a, [-1, -2]),
                             (a ** 2, [1, 4]), (np.float32(3) * a, [3, 6])]:
        assert isinstance(result, SimulatedGpuArray)
        np.testing.assert_allclose(result.get(), expected)
    a += b
    np.testing.assert_array_equal(a.get(), [4.0, 7.0])
    with pytest.raises(TypeError, match="do not mix"):
        a + np.ones(2, np.float32)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a)


def test_set_and_get_check_shape_and_dtype():
    d = ga.zeros((2,), np.float32)
    with pytest.raises(ValueError, match="shape"):
        d.set(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="dtype"):
        d.set(np.zeros(2, np.float64))
    out = np.empty(2, np.float32)
    assert d.get(out) is out


def test_adopt_wraps_numpy_memory_without_a_copy():
    host = np.zeros((3, 4), np.float32)
    d = SimulatedGpuArray.adopt(host[:, 1:3])
    assert d.shape == (3, 2) and d.strides == (16, 4)
    d.fill(5)
    assert (host[:, 1:3] == 5).all() and (host[:, 0] == 0).all()
    assert d.device_ndarray.base is not None


def test_helpers_tell_device_arrays_from_host_arrays():
    d = ga.to_gpu(np.ones(2))
    assert ga.is_device_array(d) and ga.is_simulated(d)
    assert not ga.is_device_array(np.ones(2)) and not ga.is_device_array(3.0)
    assert isinstance(d, ga.DeviceArray)
    np.testing.assert_array_equal(ga.to_host_array(d), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(d), [1.0, 1.0])  # like Theano's CudaNdarray
    assert ga.numpy_readable(d) is d
    assert repr(ga.to_gpu(np.ones(1, np.float32))) == "gpuarray.array([1.], dtype=float32)"
