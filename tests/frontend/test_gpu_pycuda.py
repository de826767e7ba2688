"""The seeds' PyCUDA programs: SourceModule kernels on CudaNdarrays (seed 001), the PyCUDA
example and the PyCUDADoubleOp custom op (seed 002), conversions without copies, and device
arrays coming back from compiled functions as GPUArrays. Each runs on a real GPU (marked
``gpu``: skipped without PyCUDA and an NVIDIA GPU, and the SourceModule kernels without nvcc,
which PyCUDA compiles them with) and, except the SourceModule kernels (the stand-in compiles no
CUDA C), on the strict driver stand-in (``tests/cuda_standin``)."""
import shutil

import numpy
import pytest

from cuda_standin import driver_params, use_driver

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None,
                                reason="PyCUDA's SourceModule compiles kernels with nvcc")

import lowering as theano  # noqa: E402
from lowering.config import config  # noqa: E402


# The kernel of seeds 001 and 002.
MULTIPLY_THEM = """
__global__ void multiply_them(float *dest, float *a, float *b)
{
  const int i = threadIdx.x;
  dest[i] = a[i] * b[i];
}
"""


@pytest.fixture(params=driver_params())
def gpu(request):
    import importlib

    import lowering.misc.pycuda_init as pycuda_init  # the seed's first import
    with use_driver(request.param) as standin, \
            config.change_flags(device="cuda", floatX="float32", print_active_device=False):
        if standin is not None:
            importlib.reload(pycuda_init)  # its effect, on this stand-in
        yield standin
        if standin is not None:
            assert len(standin.driver.current_stack()) == 1  # pycuda_init's, until exit
            standin.simulate_exit()
            assert standin.driver.current_stack() == []
    if request.param != "gpu":
        importlib.reload(pycuda_init)  # what it says without the stand-in


@pytest.fixture
def nvcc(gpu):
    """SourceModule kernels: a real GPU with nvcc."""
    if gpu is not None:
        pytest.skip("the driver stand-in compiles no CUDA C (SourceModule)")


@needs_nvcc
def test_seed_001_multiply_them_on_cuda_ndarrays(gpu, nvcc):
    import lowering.sandbox.cuda as cuda_ndarray
    from pycuda.compiler import SourceModule
    mod = SourceModule(MULTIPLY_THEM)
    multiply_them = mod.get_function("multiply_them")
    # 400 elements for the 400 threads (the seed's 100 would let threads write past the end)
    a = numpy.random.randn(400).astype(numpy.float32)
    b = numpy.random.randn(400).astype(numpy.float32)
    ga = cuda_ndarray.CudaNdarray(a)
    gb = cuda_ndarray.CudaNdarray(b)
    dest = cuda_ndarray.CudaNdarray.zeros(a.shape)
    multiply_them(dest, ga, gb, block=(400, 1, 1), grid=(1, 1))
    assert (numpy.asarray(dest) == a * b).all()


@needs_nvcc
def test_seed_002_pycuda_example(gpu, nvcc):
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    mod = SourceModule(MULTIPLY_THEM)
    multiply_them = mod.get_function("multiply_them")
    a = numpy.random.randn(400).astype(numpy.float32)
    b = numpy.random.randn(400).astype(numpy.float32)
    dest = numpy.zeros_like(a)
    multiply_them(drv.Out(dest), drv.In(a), drv.In(b), block=(400, 1, 1), grid=(1, 1))
    assert numpy.allclose(dest, a * b)


@needs_nvcc
def test_seed_002_pycuda_double_op(gpu, nvcc):
    from pycuda.compiler import SourceModule
    import lowering.sandbox.cuda as cuda

    class PyCUDADoubleOp(theano.Op):
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
            mod = SourceModule("""
    __global__ void my_fct(float * i0, float * o0, int size) {
    int i = blockIdx.x*blockDim.x + threadIdx.x;
    if(i<size){
        o0[i] = i0[i]*2;
    }
  }""")
            pycuda_fct = mod.get_function("my_fct")
            inputs = [storage_map[v] for v in node.inputs]
            outputs = [storage_map[v] for v in node.outputs]

            def thunk():
                z = outputs[0]
                if z[0] is None or z[0].shape != inputs[0][0].shape:
                    z[0] = cuda.CudaNdarray.zeros(inputs[0][0].shape)
                grid = (int(numpy.ceil(inputs[0][0].size / 512.)), 1)
                pycuda_fct(inputs[0][0], z[0], numpy.intc(inputs[0][0].size),
                           block=(512, 1, 1), grid=grid)
            return thunk

    x = theano.tensor.fmatrix()
    f = theano.function([x], PyCUDADoubleOp()(x))
    xv = numpy.ones((4, 5), dtype="float32")
    assert numpy.allclose(f(xv), xv * 2)
    assert numpy.asarray(f(xv)).shape == (4, 5)


def test_conversions_share_gpu_memory(gpu):
    import pycuda.gpuarray
    import lowering.sandbox.cuda as cuda
    from lowering.misc.pycuda_utils import to_cudandarray, to_gpuarray
    c = cuda.CudaNdarray(numpy.arange(6).reshape(2, 3))
    g = to_gpuarray(c)
    assert type(g) is pycuda.gpuarray.GPUArray and int(g.gpudata) == int(c.gpudata)
    import pycuda.driver as drv
    drv.memset_d32(g.gpudata, int(numpy.float32(3).view(numpy.uint32)), g.size)
    assert (numpy.asarray(c) == 3).all()
    back = to_cudandarray(g)
    assert int(back.gpudata) == int(g.gpudata)
    with pytest.raises(ValueError, match="copyif=True"):
        to_gpuarray(c[:, ::2])
    assert to_gpuarray(c[:, ::2], copyif=True).shape == (2, 2)


def test_functions_on_the_gpu_return_gpuarrays_when_asked(gpu):
    import pycuda.gpuarray
    import lowering.tensor as T
    from lowering import sandbox
    x = theano.shared(numpy.asarray(numpy.random.RandomState(22).rand(1000), "float32"))
    f = theano.function([], T.exp(x))
    assert "GpuElemwise" in str(f.maker.fgraph.toposort())
    numpy.testing.assert_allclose(f(), numpy.exp(x.get_value()), rtol=1e-5)
    g = theano.function([], sandbox.cuda.basic_ops.gpu_from_host(T.exp(x)))
    r = g()
    assert isinstance(r, pycuda.gpuarray.GPUArray)
    numpy.testing.assert_allclose(numpy.asarray(r), numpy.exp(x.get_value()), rtol=1e-5)
    assert isinstance(x.get_value(borrow=True), pycuda.gpuarray.GPUArray)
