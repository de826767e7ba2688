"""Compiled functions on the GPU through the public API, on the simulated device (device=cuda,
gpuarray.simulate=True) and on ``CudaDevice`` over the strict driver stand-in
(``tests/cuda_standin``): seed 000's transfers and debugprints, seed 002's checks, outputs kept
on the device, device inputs, resident shared variables, named contexts, and what a missing GPU
gives."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering import Out, function, sandbox, shared
from lowering.compile.gpu.arrays import SimulatedGpuArray, is_device_array, to_gpu
from lowering.compile.gpu.device import device_for
from lowering.config import config
from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError, cuda_available


@pytest.fixture(params=["simulated", "stand-in"])
def gpu(request):
    """The simulated device, and ``CudaDevice`` on the strict driver stand-in."""
    from cuda_standin import install
    flags = dict(device="cuda", floatX="float32", contexts="dev0->cuda0;dev1->cuda1",
                 print_active_device=False)
    if request.param == "simulated":
        with config.change_flags({"gpuarray.simulate": True}, **flags):
            yield request.param
        return
    with install() as standin, config.change_flags(**flags):
        import pycuda.autoprimaryctx  # noqa: F401  (the tests read results with PyCUDA's get())
        yield request.param
        standin.simulate_exit()


def device_array(host):
    """A device array of the device in use (simulated, or PyCUDA's on the stand-in)."""
    from lowering.frontend.gpu import to_device
    return to_device(host, "cuda")


def used_the(fn) -> str:
    """The seed's gpuarray-backend check."""
    if np.any([isinstance(x.op, T.Elemwise) and ('Gpu' not in type(x.op).__name__)
               for x in fn.maker.fgraph.toposort()]):
        return "cpu"
    return "gpu"


def test_eval_of_a_transfer_gives_a_device_array(gpu):
    a = T.matrix()
    b = a.transfer(None)
    result = b.eval({a: np.ones((2, 2)).astype(config.floatX)})
    assert is_device_array(result)
    if gpu == "simulated":
        assert isinstance(result, SimulatedGpuArray)
        assert repr(result) == ("gpuarray.array([[1., 1.],\n       [1., 1.]], dtype=float32)")
    np.testing.assert_array_equal(np.asarray(result), np.ones((2, 2)))
    assert theano.printing.debugprint(b, file="str") == (
        "GpuFromHost<None> [id A] ''   \n"
        " |<TensorType(float32, matrix)> [id B]\n")


def test_seed_000_square_moves_to_the_gpu_and_back(gpu):
    a = T.matrix("a")
    b = a ** 2
    sq = function([a], b)
    lines = theano.printing.debugprint(sq, file="str").splitlines()
    assert lines[0] == "HostFromGpu(gpuarray) [id A] ''   2"
    assert lines[1].startswith(" |GpuElemwise{") and lines[1].endswith("[id B] ''   1")
    assert lines[2:] == ["   |GpuFromHost<None> [id C] ''   0", "     |a [id D]"]
    data = np.arange(4, dtype="float32").reshape(2, 2)
    result = sq(data)
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, data ** 2)
    assert used_the(sq) == "gpu"

    kept = function([a], b.transfer(None))  # no transfer back
    lines = theano.printing.debugprint(kept, file="str").splitlines()
    assert lines[0].startswith("GpuElemwise{") and lines[0].endswith("[id A] ''   1")
    assert lines[1:] == [" |GpuFromHost<None> [id B] ''   0", "   |a [id C]"]
    on_device = kept(data)
    assert is_device_array(on_device)
    assert isinstance(on_device, SimulatedGpuArray) == (gpu == "simulated")
    np.testing.assert_array_equal(on_device.get(), data ** 2)
    assert theano.printing.debugprint(a.transfer("cpu"), file="str") == "a [id A]\n"


def test_seed_002_exp_check_on_a_shared_vector(gpu):
    x = shared(np.asarray(np.random.RandomState(22).rand(64), config.floatX))
    f = function([], T.exp(x))
    assert str(f.maker.fgraph.toposort()) == (
        "[GpuElemwise{exp,no_inplace}(<GpuArrayType<None>(float32, (False,))>), "
        "HostFromGpu(gpuarray)(GpuElemwise{exp,no_inplace}.0)]")
    assert not np.any([isinstance(n.op, T.Elemwise) for n in f.maker.fgraph.toposort()])
    assert used_the(f) == "gpu"
    r = f()
    assert type(r) is np.ndarray
    np.testing.assert_allclose(r, np.exp(x.get_value()), rtol=1e-6)

    g = function([], sandbox.cuda.basic_ops.gpu_from_host(T.exp(x)))
    assert str(g.maker.fgraph.toposort()) == \
        "[GpuElemwise{exp,no_inplace}(<GpuArrayType<None>(float32, (False,))>)]"
    r = g()
    assert is_device_array(r)
    np.testing.assert_allclose(np.asarray(r), np.exp(x.get_value()), rtol=1e-6)
    h = function([], sandbox.gpuarray.basic_ops.gpu_from_host(T.exp(x)))
    assert used_the(h) == "gpu" and is_device_array(h())


def test_borrowed_outputs_stay_on_the_device(gpu):
    v = T.vector("v")
    f = function([v], [Out(v * 2, borrow=True), v + 1])
    doubled, plus_one = f(np.array([1.0, 2.0], "float32"))
    assert is_device_array(doubled) and type(plus_one) is np.ndarray
    np.testing.assert_array_equal(doubled.get(), [2.0, 4.0])
    np.testing.assert_array_equal(plus_one, [2.0, 3.0])


def test_device_inputs_are_used_without_a_copy(gpu):
    x = T.vector("x").transfer(None)  # an input that lives on the GPU
    f = function([x], x * 3)
    device = device_for("cuda")
    d = device_array(np.array([1.0, 2.0], "float32"))
    before = device.counters.snapshot()
    np.testing.assert_array_equal(f(d), [3.0, 6.0])
    moved = device.counters.since(before)
    assert moved["to_device"] == 0 and moved["to_host"] == 1  # only the result comes back
    # a host array is copied there
    np.testing.assert_array_equal(f(np.array([1.0, 1.0], "float32")), [3.0, 3.0])


def test_a_device_array_beside_an_argument_that_needs_converting(gpu):
    x = T.vector("x").transfer(None)
    y = T.vector("y")
    f = function([x, y], x * y)
    d = device_array(np.array([1.0, 2.0], "float32"))
    device = device_for("cuda")
    before = device.counters.snapshot()
    # ``[3, 4]`` is a list of ints: converted on the way in; ``d`` is used as it is (no copy
    # to the host and back)
    np.testing.assert_array_equal(f(d, [3, 4]), [3.0, 8.0])
    moved = device.counters.since(before)
    assert moved["to_device"] == 1 and moved["to_host"] == 1  # y in, the result out
    assert is_device_array(d) and d.get().tolist() == [1.0, 2.0]


def test_updates_of_resident_shared_variables_never_leave_the_device(gpu):
    w = shared(np.zeros(3, "float32"), name="w")
    inc = T.vector("inc").transfer(None)
    step = function([inc], [], updates=[(w, w + inc)])
    device = device_for("cuda")
    data = device_array(np.ones(3, "float32"))
    step(data)
    before = device.counters.snapshot()
    step(data)
    moved = device.counters.since(before)
    assert moved["to_device"] == 0 and moved["to_host"] == 0
    assert is_device_array(w.get_value(borrow=True))
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])
    state = shared(0)  # an integer scalar on the host, beside it
    count = function([], state, updates=[(state, state + 1)])
    assert count() == 0 and state.get_value() == 1


def test_shared_variables_on_named_contexts(gpu):
    v = shared(np.arange(4, dtype="float32"), target="dev1", name="v")
    f = function([], v * 2, updates=[(v, v + 1)])
    np.testing.assert_array_equal(f(), [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(v.get_value(), [1.0, 2.0, 3.0, 4.0])
    assert is_device_array(v.get_value(borrow=True))
    assert f.ir().count('"dev1"') >= 2  # lowering.arg_devices and result_devices name the context
    with config.change_flags(device="cpu"):  # a context asked for by itself still runs there
        u = shared(np.ones(2, "float32"), target="dev0")
        g = function([], u + 1)
        assert g.executor_name == "gpu"
        np.testing.assert_array_equal(g(), [2.0, 2.0])


def test_logistic_regression_uses_gpu_gemv_and_matches_the_cpu():
    rng = np.random.RandomState(0)
    n, feats = 8, 5
    data_x = rng.randn(n, feats).astype("float32")
    data_y = rng.randint(size=n, low=0, high=2).astype("float32")
    w0 = rng.randn(feats).astype("float32")

    def train(device):
        flags = {"gpuarray.simulate": True} if device == "cuda" else {}
        with config.change_flags(flags, device=device, floatX="float32"):
            x, y = shared(data_x, name="x"), shared(data_y, name="y")
            w = shared(w0, name="w")
            b = shared(np.asarray(0., dtype="float32"), name="b")
            p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
            prediction = p_1 > 0.5
            xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
            cost = T.cast(xent.mean(), "float32") + 0.01 * (w ** 2).sum()
            gw, gb = T.grad(cost, [w, b])
            step = function([], [prediction, xent], updates={w: w - 0.01 * gw, b: b - 0.01 * gb})
            pred, err = step()  # one step: the simulated device runs reductions slowly
            return step, pred, err, w.get_value()

    gpu_step, gpu_pred, gpu_err, gpu_w = train("cuda")
    cpu_step, cpu_pred, cpu_err, cpu_w = train("cpu")
    names = [n.op.__class__.__name__ for n in gpu_step.maker.fgraph.toposort()]
    assert "GpuGemv" in names and not {"Gemv", "CGemv", "Gemm", "CGemm"} & set(names)
    assert {"Gemv", "CGemv", "Gemm", "CGemm"} & {n.op.__class__.__name__
                                                  for n in cpu_step.maker.fgraph.toposort()}
    np.testing.assert_array_equal(gpu_pred, cpu_pred)
    np.testing.assert_allclose(gpu_err, cpu_err, rtol=1e-5)
    np.testing.assert_allclose(gpu_w, cpu_w, rtol=1e-5)


def test_a_transfer_without_a_gpu_says_what_is_missing():
    if cuda_available():
        pytest.skip("a GPU is present")
    a = T.fmatrix()
    with config.change_flags({"gpuarray.simulate": False}, device="cpu"):
        with pytest.raises(CudaUnavailableError, match="asked to stay on the GPU") as info:
            a.transfer(None).eval({a: np.ones((2, 2), "float32")})
        assert isinstance(info.value, ValueError)
        assert "pip install 'lowering[cuda]'" in str(info.value)
    with config.change_flags({"gpuarray.simulate": False}, device="cuda"):
        with pytest.raises(CudaUnavailableError, match="pip install 'lowering\\[cuda\\]'"):
            function([a], a * 2)


def test_transfers_to_named_contexts(gpu):
    a = T.vector("a")
    f = function([a], (a * 2).transfer("dev0"))
    result = f(np.ones(2, "float32"))
    assert is_device_array(result)
    np.testing.assert_array_equal(result.get(), [2.0, 2.0])
    assert theano.printing.debugprint(f, file="str").splitlines()[1] == \
        " |GpuFromHost<dev0> [id B] ''   0"
    v = shared(np.ones(2, "float32"), target="dev1")
    g = function([a], a + v)
    np.testing.assert_array_equal(g(np.ones(2, "float32")), [2.0, 2.0])
    assert theano.printing.debugprint(g, file="str").splitlines()[-1] == \
        "   |<GpuArrayType<dev1>(float32, (False,))> [id E]"
