"""Shared variables on a GPU context (seed 000): where ``shared()`` puts a value, get_value /
set_value across host and device, named contexts, and how such variables print; on the
simulated device and on ``CudaDevice`` over the strict driver stand-in (``tests/cuda_standin``)."""
import numpy as np
import pytest

import lowering as theano
from lowering.compile.gpu.arrays import SimulatedGpuArray, is_device_array
from lowering.compile.gpu.device import device_for
from lowering.config import config
from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError


@pytest.fixture(params=["simulated", "stand-in"])
def gpu(request):
    """device=cuda with two named contexts, on the simulated device and on the stand-in."""
    from cuda_standin import install
    flags = dict(device="cuda", contexts="dev0->cuda0;dev1->cuda1", print_active_device=False)
    if request.param == "simulated":
        with config.change_flags({"gpuarray.simulate": True}, **flags):
            yield request.param
        return
    with install(), config.change_flags(**flags):
        yield request.param


def device_array(host):
    """A device array of the device in use."""
    return device_for("cuda").to_device(np.asarray(host))


def test_float_values_live_on_the_default_context(gpu):
    w = theano.shared(np.ones((2, 3), "float32"), name="w")
    assert w.container.target == "cuda"
    stored = w.get_value(borrow=True)
    assert is_device_array(stored) and stored.shape == (2, 3)
    assert isinstance(stored, SimulatedGpuArray) == (gpu == "simulated")
    host = w.get_value()
    assert type(host) is np.ndarray and host.dtype == np.float32
    np.testing.assert_array_equal(host, np.ones((2, 3)))
    host[0, 0] = 5  # a copy: the variable is unchanged
    assert w.get_value()[0, 0] == 1
    assert w.get_value(return_internal_type=True) is not stored
    assert is_device_array(w.get_value(return_internal_type=True))


def test_integer_scalars_stay_on_the_host(gpu):
    state = theano.shared(0)
    assert state.container.target == "cpu"
    assert repr(state) == "<TensorType(int64, scalar)>"
    assert repr(state.get_value()) == "array(0)"
    state.set_value(1)
    assert repr(state.get_value()) == "array(1)"
    assert theano.shared(np.array(True)).container.target == "cpu"
    assert theano.shared(np.arange(3)).container.target == "cuda"  # arrays go, whatever dtype


def test_targets_pick_the_context(gpu):
    v = theano.shared(np.zeros((2, 2), "float32"), target="dev1")
    assert v.container.target == "dev1"
    assert repr(v) == "<GpuArrayType<dev1>(float32, (False, False))>"
    assert repr(theano.shared(np.zeros(2, "float32"))) == "<GpuArrayType<None>(float32, (False,))>"
    h = theano.shared(np.zeros(2, "float32"), target="cpu")
    assert h.container.target == "cpu" and type(h.get_value(borrow=True)) is np.ndarray
    assert repr(h) == "<TensorType(float32, vector)>"
    with pytest.raises(ValueError, match="unknown transfer target 'dev7'"):
        theano.shared(np.zeros(2), target="dev7")


def test_without_the_gpu_flag_values_stay_on_the_host():
    with config.change_flags({"gpuarray.simulate": True}, device="cpu"):
        assert theano.shared(np.zeros(2, "float32")).container.target == "cpu"
        # an explicit context still puts it on a GPU
        assert theano.shared(np.zeros(2, "float32"), target="cuda").container.target == "cuda"


def test_set_value_takes_host_and_device_arrays(gpu):
    w = theano.shared(np.zeros(3, "float32"))
    w.set_value(np.array([1, 2, 3], "float32"))
    np.testing.assert_array_equal(w.get_value(), [1, 2, 3])
    assert is_device_array(w.get_value(borrow=True))
    w.set_value([4.0, 5.0, 6.0])  # cast by the variable's rules, as on the host
    np.testing.assert_array_equal(w.get_value(), [4, 5, 6])
    d = device_array(np.array([7, 8, 9], "float32"))
    w.set_value(d, borrow=True)
    assert w.get_value(borrow=True) is d
    w.set_value(d)  # without borrow: copied on the device
    assert w.get_value(borrow=True) is not d
    device_for("cuda").fill(d, 0)
    np.testing.assert_array_equal(w.get_value(), [7, 8, 9])
    with pytest.raises(TypeError, match="device arrays are not cast"):
        w.set_value(device_array(np.zeros(3, "float64")))
    with pytest.raises(TypeError, match="expects float32"):
        w.set_value(np.zeros(3, "float64"))


def test_a_device_array_can_start_a_shared_variable(gpu):
    d = device_array(np.arange(4, dtype="float32"))
    v = theano.shared(d)
    assert v.type.dtype == "float32" and v.container.target == "cuda"
    device_for("cuda").fill(d, 0)  # the variable holds its own copy
    np.testing.assert_array_equal(v.get_value(), [0, 1, 2, 3])


def test_a_gpu_context_without_a_gpu_says_what_is_missing():
    with config.change_flags({"gpuarray.simulate": False}, device="cpu"):
        if theano.sandbox.cuda.cuda_available:
            pytest.skip("a GPU is present")
        with pytest.raises(CudaUnavailableError, match="PyCUDA|driver|device") as info:
            theano.shared(np.zeros(2, "float32"), target="cuda")
        assert "GPU context 'cuda'" in str(info.value)
        assert "pip install 'lowering[cuda]'" in str(info.value) or \
            "driver" in str(info.value)
