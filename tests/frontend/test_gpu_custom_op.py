"""Ops written in Python (``lowering.Op`` / ``lowering.Apply``): seed 002's exercises (a product,
two outputs x+y and x-y, strided inputs) on the CPU through ``perform``, and the custom op's
node, thunk and IR."""
import numpy as np
import pytest

import lowering as theano
import lowering.sandbox.cuda as cuda
import lowering.tensor as T
from lowering import Out
from lowering.compile.gpu.arrays import SimulatedGpuArray, is_device_array
from lowering.config import config
from lowering.dialects.tensor.custom import CustomOp
from lowering.frontend.custom_op import MethodNotDefined
from lowering.ir.interpreter import InterpreterError


class ProductOp(theano.Op):
    """The seed's first exercise: x * y."""

    __props__ = ()

    def make_node(self, x, y):
        x, y = T.as_tensor_variable(x), T.as_tensor_variable(y)
        return theano.Apply(self, [x, y], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        output_storage[0][0] = x * y


class SumDiffOp(theano.Op):
    """The seed's second exercise: two outputs, x + y and x - y."""

    __props__ = ()

    def make_node(self, x, y):
        x, y = T.as_tensor_variable(x), T.as_tensor_variable(y)
        return theano.Apply(self, [x, y], [x.type(), x.type()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        output_storage[0][0] = x + y
        output_storage[1][0] = x - y


class ScaleOp(theano.Op):
    """An op with a parameter (``__props__``), recording the strides it was given."""

    __props__ = ("factor",)
    seen_strides: list = []

    def __init__(self, factor):
        self.factor = factor

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return theano.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        ScaleOp.seen_strides.append(inputs[0].strides)
        output_storage[0][0] = inputs[0] * self.factor


def data(*shape, seed=0):
    return np.random.RandomState(seed).rand(*shape).astype("float32")


def test_a_product_op_runs_through_perform_in_a_compiled_function():
    x, y = T.fmatrix("x"), T.fmatrix("y")
    out = ProductOp()(x, y)
    assert out.dtype == "float32" and out.ndim == 2
    f = theano.function([x, y], out * 2)
    a, b = data(3, 4), data(3, 4, seed=1)
    np.testing.assert_allclose(f(a, b), a * b * 2, rtol=1e-6)
    assert f.executor_name == "cpu"  # compiled code calls the Python code
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == \
        ["ProductOp", "Elemwise{mul,no_inplace}"]
    node = f.maker.fgraph.toposort()[0]
    assert isinstance(node.op, ProductOp) and len(node.inputs) == 2


def test_an_op_with_two_outputs_gives_both():
    x, y = T.dvector("x"), T.dvector("y")
    total, diff = SumDiffOp()(x, y)
    f = theano.function([x, y], [total, diff, total * diff])
    a, b = np.array([1.0, 5.0]), np.array([3.0, 2.0])
    s, d, p = f(a, b)
    np.testing.assert_array_equal(s, [4.0, 7.0])
    np.testing.assert_array_equal(d, [-2.0, 3.0])
    np.testing.assert_array_equal(p, (a + b) * (a - b))
    # Only one output used: the node still runs once, the other output is unused.
    g = theano.function([x, y], diff)
    np.testing.assert_array_equal(g(a, b), [-2.0, 3.0])


def test_strided_inputs_reach_perform_and_give_the_right_values():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    total, diff = SumDiffOp()(x[:, ::2], y.T)
    f = theano.function([x, y], [ScaleOp(3.0)(x[:, ::2]), ScaleOp(2.0)(x.T), total, diff])
    a, b = np.arange(12.0).reshape(3, 4), np.arange(6.0).reshape(2, 3)
    ScaleOp.seen_strides.clear()
    every_other, transposed, s, d = f(a, b)
    np.testing.assert_array_equal(every_other, a[:, ::2] * 3.0)
    np.testing.assert_array_equal(transposed, a.T * 2.0)
    np.testing.assert_array_equal(s, a[:, ::2] + b.T)
    np.testing.assert_array_equal(d, a[:, ::2] - b.T)
    assert set(ScaleOp.seen_strides) == {(32, 16), (8, 32)}  # views reached perform


def test_ops_compare_by_props_and_print_them():
    assert ScaleOp(2.0) == ScaleOp(2.0) and ScaleOp(2.0) != ScaleOp(3.0)
    assert hash(ScaleOp(2.0)) == hash(ScaleOp(2.0))
    assert str(ScaleOp(2.0)) == "ScaleOp{factor=2.0}" and str(ProductOp()) == "ProductOp"
    assert ProductOp() == ProductOp()  # __props__ = (): every instance is equal

    class NoProps(theano.Op):
        pass

    one = NoProps()
    assert one == one and NoProps() != NoProps() and hash(one) == hash(one)
    x = T.dvector("x")
    node = ScaleOp(2.0).make_node(x)
    assert node.nin == 1 and node.nout == 1 and node.out is node.outputs[0]
    assert node.outputs[0].owner.op == ScaleOp(2.0)
    assert isinstance(node.operation, CustomOp) and node.operation.op_name == "ScaleOp{factor=2.0}"
    assert str(node) == "ScaleOp{factor=2.0}(x)"


def test_eval_and_test_values_run_perform():
    x = T.dvector("x")
    y = ScaleOp(5.0)(x)
    np.testing.assert_array_equal(y.eval({x: [1.0, 2.0]}), [5.0, 10.0])
    with config.change_flags(compute_test_value="raise"):
        v = T.dvector("v")
        v.tag.test_value = np.array([1.0, -1.0])
        np.testing.assert_array_equal(ScaleOp(2.0)(v).tag.test_value, [2.0, -2.0])


def test_a_make_thunk_op_gets_its_storage_map():
    calls = []

    class Thunked(theano.Op):
        def make_node(self, x):
            return theano.Apply(self, [x], [x.type()])

        def make_thunk(self, node, storage_map, compute_map, no_recycling):
            inputs = [storage_map[v] for v in node.inputs]
            outputs = [storage_map[v] for v in node.outputs]
            assert list(no_recycling) == node.outputs
            calls.append("made")

            def thunk():
                outputs[0][0] = inputs[0][0] + 1
                compute_map[node.outputs[0]][0] = True
            return thunk

    x = T.dvector("x")
    f = theano.function([x], Thunked()(x))
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 1.0])
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    assert calls == ["made"]  # one thunk per node, reused by every call


def test_what_a_wrong_op_gets_told():
    x = T.dvector("x")

    class NoPerform(theano.Op):
        def make_node(self, x):
            return theano.Apply(self, [x], [x.type()])

    f = theano.function([x], NoPerform()(x))
    with pytest.raises(MethodNotDefined, match="neither perform.*nor make_thunk"):
        f(np.zeros(2))

    class WrongDtype(NoPerform):
        def perform(self, node, inputs, out):
            out[0][0] = inputs[0].astype("int64")

    with pytest.raises(InterpreterError, match="output 0 has dtype int64"):
        theano.function([x], WrongDtype()(x))(np.zeros(2))

    class WrongRank(NoPerform):
        def perform(self, node, inputs, out):
            out[0][0] = np.zeros((2, 2))

    with pytest.raises(InterpreterError, match=r"output 0 has shape \(2, 2\)"):
        theano.function([x], WrongRank()(x))(np.zeros(2))

    class Unset(NoPerform):
        def perform(self, node, inputs, out):
            pass

    with pytest.raises(InterpreterError, match="left output 0 unset"):
        theano.function([x], Unset()(x))(np.zeros(2))

    with pytest.raises(MethodNotDefined, match="make_node"):
        theano.Op()(x)
    with pytest.raises(TypeError, match="symbolic variable"):
        theano.Apply(ProductOp(), [np.zeros(2)], [x.type()])
    with pytest.raises(ValueError, match="already part of a graph"):
        theano.Apply(ProductOp(), [x], [x * 2])


def test_a_float32_op_may_compute_in_float64_and_is_cast():
    class Widening(theano.Op):
        def make_node(self, x):
            return theano.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0].astype("float64") / 3

    x = T.fvector("x")
    result = theano.function([x], Widening()(x))(np.ones(2, "float32"))
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, [1 / 3, 1 / 3], rtol=1e-6)


# -- on the GPU (the simulated device) ----------------------------------------------------------

@pytest.fixture
def gpu():
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        yield


class DoubleOp(theano.Op):
    """Seed 002's PyCUDADoubleOp, its kernel written with NumPy on the device arrays' memory
    (the PyCUDA kernel itself runs in tests/frontend/test_gpu_pycuda.py on a real GPU)."""

    seen: list = []

    def __eq__(self, other):
        return type(self) == type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return self.__class__.__name__

    def make_node(self, inp):
        inp = cuda.basic_ops.gpu_contiguous(
            cuda.basic_ops.as_cuda_ndarray_variable(inp))
        assert inp.dtype == "float32"
        return theano.Apply(self, [inp], [inp.type()])

    def make_thunk(self, node, storage_map, _, _2):
        inputs = [storage_map[v] for v in node.inputs]
        outputs = [storage_map[v] for v in node.outputs]

        def my_fct(i0, o0, size):  # the kernel: o0[i] = i0[i] * 2
            o0.device_ndarray.reshape(-1)[:size] = i0.device_ndarray.reshape(-1)[:size] * 2

        def thunk():
            z = outputs[0]
            DoubleOp.seen.append(inputs[0][0])
            if z[0] is None or z[0].shape != inputs[0][0].shape:
                z[0] = cuda.CudaNdarray.zeros(inputs[0][0].shape)
            my_fct(inputs[0][0], z[0], np.intc(inputs[0][0].size))
        return thunk


def test_the_seed_double_op_runs_its_thunk_on_device_arrays(gpu):
    x = T.fmatrix()
    f = theano.function([x], DoubleOp()(x))
    xv = np.ones((4, 5), dtype="float32")
    DoubleOp.seen.clear()
    assert np.allclose(f(xv), xv * 2)
    assert isinstance(DoubleOp.seen[0], SimulatedGpuArray)
    assert str(f.maker.fgraph.toposort()) == (
        "[GpuFromHost<None>(<TensorType(float32, matrix)>), DoubleOp(GpuFromHost<None>.0), "
        "HostFromGpu(gpuarray)(DoubleOp.0)]")
    print_ = np.asarray(f(xv))
    np.testing.assert_array_equal(print_, np.full((4, 5), 2.0))


def test_a_device_op_gets_contiguous_inputs_and_can_keep_its_output_there(gpu):
    x = T.fmatrix("x")
    y = DoubleOp()(x[:, ::2])
    f = theano.function([x], [Out(y, borrow=True), (y + 1).transfer(None)])
    data = np.arange(12, dtype="float32").reshape(3, 4)
    DoubleOp.seen.clear()
    doubled, plus_one = f(data)
    assert is_device_array(doubled) and is_device_array(plus_one)
    np.testing.assert_array_equal(doubled.get(), data[:, ::2] * 2)
    np.testing.assert_array_equal(plus_one.get(), data[:, ::2] * 2 + 1)
    assert all(a.flags.c_contiguous for a in DoubleOp.seen)


class DeviceSumDiff(theano.Op):
    """The two-output exercise on the device, written with GPUArray arithmetic."""

    __props__ = ()

    def make_node(self, x, y):
        x = cuda.basic_ops.as_cuda_ndarray_variable(x)
        y = cuda.basic_ops.as_cuda_ndarray_variable(y)
        return theano.Apply(self, [x, y], [x.type(), x.type()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        assert is_device_array(x) and is_device_array(y)
        output_storage[0][0] = x + y
        output_storage[1][0] = x - y


def test_a_two_output_op_and_a_host_op_in_one_gpu_function(gpu):
    x, y = T.fvector("x"), T.fvector("y")
    total, diff = DeviceSumDiff()(x, y)
    product = ProductOp()(x, y)  # perform on NumPy arrays: placed on the host
    f = theano.function([x, y], [total, diff, product * 2])
    a, b = np.array([1, 5], "float32"), np.array([3, 2], "float32")
    s, d, p = f(a, b)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(d, a - b)
    np.testing.assert_array_equal(p, a * b * 2)
    assert f.executor_name == "gpu"
    names = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert "DeviceSumDiff" in names and "ProductOp" in names


def test_a_device_op_giving_host_arrays_has_them_moved_to_the_device(gpu):
    class HostResult(theano.Op):
        def make_node(self, x):
            x = cuda.basic_ops.as_cuda_ndarray_variable(x)
            return theano.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = np.asarray(inputs[0]) + 1  # computed on the host

    x = T.fvector("x")
    f = theano.function([x], Out(HostResult()(x), borrow=True))
    result = f(np.zeros(2, "float32"))
    assert is_device_array(result)
    np.testing.assert_array_equal(result.get(), [1.0, 1.0])


def test_grad_goes_through_an_op_that_defines_it():
    class Cube(theano.Op):
        __props__ = ()

        def make_node(self, x):
            x = T.as_tensor_variable(x)
            return theano.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0] ** 3

        def grad(self, inputs, output_grads):
            return [3 * inputs[0] ** 2 * output_grads[0]]

    x = T.dvector("x")
    cost = (Cube()(x) * 2).sum()
    g = theano.function([x], T.grad(cost, x))
    np.testing.assert_allclose(g(np.array([1.0, -2.0])), [6.0, 24.0])
    with pytest.raises(MethodNotDefined, match="defines no grad"):
        T.grad(ProductOp()(x, x).sum(), x)
