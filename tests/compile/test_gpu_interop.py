"""Device arrays in and out through ``__cuda_array_interface__`` and DLPack, on the strict
driver stand-in: results export both protocols over their own memory; functions take other
libraries' device arrays without a copy (checked by the device pointers kernels receive),
following each protocol's stream rules; host inputs may be any ``__array_interface__`` or
``kDLCPU`` DLPack object; and the unsupported cases are clear errors."""
from __future__ import annotations

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from cuda_standin.foreign import CudaInterfaceArray, DLPackArray
from lowering.compile.gpu import dlpack
from lowering.config import config


def double_on_device():
    x = T.fvector("x").transfer(None)  # an input that lives on the GPU
    return theano.function([x], (x * 2).transfer(None))


def launched_pointers(standin) -> set:
    return {p for entry in standin.driver.LOG if entry[0] == "params" for p in entry[2]}


def test_results_export_the_cuda_array_interface_and_dlpack(cuda):
    data = np.linspace(-1, 1, 10, dtype=np.float32)
    result = double_on_device()(data)
    pointer = int(result.gpudata)
    interface = result.__cuda_array_interface__
    assert interface == {"shape": (10,), "typestr": "<f4", "data": (pointer, False),
                         "strides": None, "version": 3,
                         "stream": cuda.cuda.stream.handle}
    assert result.__dlpack_device__() == (dlpack.KDL_CUDA, 0)
    live = dlpack.exported()
    tensor = dlpack.from_capsule(result.__dlpack__(stream=1))
    assert (tensor.pointer, tensor.shape, tensor.dtype, tensor.device) == \
        (pointer, (10,), np.dtype(np.float32), (dlpack.KDL_CUDA, 0))
    tensor.release()
    assert dlpack.exported() == live
    with pytest.raises(ValueError, match="stream 0"):
        result.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="not"):
        result.__dlpack__(dl_device=(dlpack.KDL_CPU, 0))
    np.testing.assert_array_equal(np.asarray(result), data * 2)


def test_a_result_goes_into_the_next_function_through_either_protocol(cuda, standin):
    first = double_on_device()
    result = first(np.arange(6, dtype=np.float32))

    class ThroughInterface:
        __cuda_array_interface__ = property(lambda self: result.__cuda_array_interface__)

    class ThroughDLPack:
        def __dlpack__(self, **kw):
            return result.__dlpack__(**kw)

        def __dlpack_device__(self):
            return result.__dlpack_device__()

    second = double_on_device()
    for wrapper in (ThroughInterface(), ThroughDLPack()):
        standin.driver.LOG.clear()
        np.testing.assert_array_equal(np.asarray(second(wrapper)), np.arange(6) * 4)
        assert int(result.gpudata) in launched_pointers(standin)


@pytest.mark.parametrize("protocol", [CudaInterfaceArray, DLPackArray])
def test_foreign_device_arrays_are_used_without_a_copy_after_their_stream(cuda, standin,
                                                                          protocol):
    data = np.linspace(0, 3, 12, dtype=np.float32)
    foreign = protocol(data)
    standin.driver.LOG.clear()
    result = double_on_device()(foreign)
    # The producer's copy was still queued on its stream: read before it, the values differ.
    np.testing.assert_array_equal(np.asarray(result), data * 2)
    assert foreign.pointer in launched_pointers(standin)
    assert cuda.counters.to_device == 0 and cuda.counters.bytes_to_device == 0
    if protocol is DLPackArray:
        assert foreign.streams_given == [cuda.cuda.stream.handle]  # our stream, as asked
    else:
        assert ("cuCtxSynchronize",) in standin.driver.LOG


def test_strided_and_host_bound_foreign_arrays(cuda):
    data = np.arange(10, dtype=np.float32)
    every_other = CudaInterfaceArray(data[::2], strides=(8,))
    np.testing.assert_array_equal(np.asarray(double_on_device()(every_other)), data[::2] * 2)
    x = T.fmatrix("x")
    on_host = theano.function([x], x.sum(axis=1))  # wants host memory: copied back
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(on_host(DLPackArray(matrix)), matrix.sum(axis=1))


def test_foreign_arrays_that_cannot_be_used_are_clear_errors(cuda):
    f = double_on_device()
    data = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="argument 'x'.*not supported"):
        f(CudaInterfaceArray(data, typestr="|V4"))
    with pytest.raises(TypeError, match="argument 'x'.*bfloat16"):
        f(DLPackArray(data.view(np.uint16)[::2].copy(), code=(4, 16, 1)))
    with pytest.raises(TypeError, match="argument 'x'.*float64"):
        f(CudaInterfaceArray(data.astype(np.float64)))
    with pytest.raises(ValueError, match="argument 'x'.*GPU 1.*GPU 0"):
        f(DLPackArray(data, device_id=1))
    with pytest.raises(ValueError, match="argument 'x'.*stream 0.*never 0"):
        f(CudaInterfaceArray(data, stream=0))
    with pytest.raises(ValueError, match="argument 'x'.*mask"):
        f(CudaInterfaceArray(data, mask=object()))
    misaligned = CudaInterfaceArray(data)
    misaligned.strides = (6,)
    with pytest.raises(ValueError, match="argument 'x'.*whole"):
        f(misaligned)


def test_a_read_only_foreign_array_is_read_but_not_written(cuda):
    from lowering.compile.gpu.executor import GpuExecutor, _Argument
    from lowering.compile.gpu.interop import import_device_array
    from lowering.dialects.loops import BufferType
    from lowering.ir.types import F32
    data = np.arange(4, dtype=np.float32)
    readonly = CudaInterfaceArray(data, readonly=True)
    np.testing.assert_array_equal(np.asarray(double_on_device()(readonly)), data * 2)
    # An argument the function updates in place (a shared variable's memory).
    written = _Argument(0, "w", BufferType((None,), F32, memory_space="device"), True)
    executor = GpuExecutor.__new__(GpuExecutor)
    executor.device = cuda
    with pytest.raises(ValueError, match="'w'.*read-only"):
        executor._fit(written, import_device_array(readonly, cuda.cuda))


def _no_cuda_memory(self):
    raise AttributeError("a CPU tensor has no __cuda_array_interface__")  # as PyTorch's


@pytest.mark.parametrize("wrap", ["interface", "dlpack", "cpu tensor"])
def test_host_inputs_may_be_any_array_interface_or_cpu_dlpack_object(standin, wrap):
    data = np.linspace(0, 1, 6, dtype=np.float32)

    class Host:
        if wrap == "interface":
            __array_interface__ = property(lambda self: data.__array_interface__)
        else:
            if wrap == "cpu tensor":  # the property exists on the class, and raises
                __cuda_array_interface__ = property(_no_cuda_memory)

            def __dlpack__(self, **kw):
                return data.__dlpack__(**kw)

            def __dlpack_device__(self):
                return data.__dlpack_device__()

    from lowering.compile.values import host_view
    assert host_view(Host()).ctypes.data == data.ctypes.data  # no copy
    x = T.fvector("x")
    np.testing.assert_allclose(theano.function([x], T.exp(x))(Host()), np.exp(data), rtol=1e-6)
    with config.change_flags(device="cpu"):
        np.testing.assert_allclose(theano.function([x], T.exp(x))(Host()), np.exp(data),
                                   rtol=1e-6)
