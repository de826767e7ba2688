"""The CUDA path (``CudaDevice``, ``cuda_runtime``) on the strict driver stand-in
(``tests/cuda_standin``): what the stand-in refuses, and the runtime defects it found, each
fixed: 0-d arrays, events made outside the context, launch bounds, import errors, kernel faults,
contexts left pushed, fills that compiled CUDA C."""
from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from cuda_standin import SPEC, install
from lowering.config import config
from lowering.llvm.gpu.cuda_runtime import CudaError


def exp_program_on(cuda):
    """The hand-written host program of ``test_gpu_host`` loaded on ``cuda``."""
    from lowering.compile.gpu.build import GpuProgram
    from lowering.compile.gpu.host import HostProgram
    from lowering.ir.parser import parse_module
    from test_gpu_host import exp_program
    module = parse_module(exp_program())
    cuda.load(GpuProgram(module, "cuda", 32))
    return HostProgram(module.functions[0], cuda)


# -- what the stand-in refuses -----------------------------------------------------------------


def test_the_stand_in_needs_a_current_context_and_live_memory(standin):
    drv = standin.driver
    drv.init()
    with pytest.raises(drv.LogicError, match="invalid device context"):
        drv.mem_alloc(16)
    context = drv.Device(0).retain_primary_context()
    context.push()
    try:
        block = drv.mem_alloc(16)
        drv.memcpy_htod(block, np.zeros(4, np.float32))
        with pytest.raises(drv.LogicError, match="outside the allocation"):
            drv.memcpy_htod(block, np.zeros(5, np.float32))
        block.free()
        with pytest.raises(drv.LogicError, match="no live device allocation"):
            drv.memcpy_dtoh(np.zeros(4, np.float32), 0x7F00_0000_0000)
    finally:
        drv.Context.pop()


def test_launches_are_checked_against_limits_and_the_ptx_param_list(cuda, standin):
    program = exp_program_on(cuda)
    kernel = next(iter(cuda._kernels.values()))
    with cuda.cuda.activate():
        data = cuda.cuda.to_device(np.ones(32, np.float32))
        out = cuda.cuda.empty((32,), np.float32)
        args = [cuda.cuda.pointer(data), 32, 1, cuda.cuda.pointer(out), 32, 1, 2.0, 32]
        with pytest.raises(standin.driver.LogicError, match="block"):
            kernel.function.prepared_call((1, 1), (2048, 1, 1), *args)
        with pytest.raises(standin.driver.LogicError, match="grid"):
            kernel.function.prepared_call((1, 70000, 1), (32, 1, 1), *args)
        kernel.function.prepare(kernel.format.replace("f", "d"))  # f32 passed as a double
        with pytest.raises(standin.driver.LogicError, match="argument buffer"):
            kernel.function.prepared_call((1, 1), (32, 1, 1), *args)
        kernel.function.prepare(kernel.format)
    (result,) = program.run([np.linspace(-1, 1, 40, dtype=np.float32),
                             np.array(2.0, np.float32)])
    np.testing.assert_allclose(result, 2 * np.exp(np.linspace(-1, 1, 40, dtype=np.float32)),
                               rtol=1e-6)


# -- 0-d arrays --------------------------------------------------------------------------------


def test_zero_d_arrays_keep_rank_zero_on_the_device(cuda):
    d = cuda.to_device(np.array(0.25, np.float32))
    assert d.shape == () and cuda.to_host(d).shape == ()
    b = theano.shared(np.float32(0.25), name="b")
    x = T.fvector("x")
    f = theano.function([x], x + b, updates=[(b, b * 2)])
    np.testing.assert_allclose(f(np.ones(3, np.float32)), 1.25)
    assert np.asarray(b.get_value()).shape == () and b.get_value() == 0.5


# -- events ------------------------------------------------------------------------------------


def test_profiles_time_kernels_from_a_thread_without_the_context(cuda):
    from lowering.compile.profiling import ProfileStats
    stats = ProfileStats(atexit_print=False)
    x = T.fmatrix("x")
    f = theano.function([x], T.exp(x).sum(), profile=stats)
    f(np.ones((8, 8), np.float32))  # the context is made on this thread
    failures = []

    def worker():
        try:
            f(np.ones((8, 8), np.float32))
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert failures == []
    assert any(n.time > 0 for n in stats.nodes if n.kind == "gpu")


# -- launch bounds -----------------------------------------------------------------------------


def test_kernels_declare_their_block_size_and_the_runtime_reads_the_limit(cuda, standin,
                                                                          monkeypatch):
    from lowering.compile.gpu import executor as gpu_executor
    monkeypatch.setattr(gpu_executor, "DEFAULT_BLOCK_SIZE", 1024)
    x = T.dvector("x")
    f = theano.function([x], [T.exp(x) * 2, T.sum(x ** 2)])
    exp, total = f(np.linspace(0, 1, 5))
    np.testing.assert_allclose(exp, 2 * np.exp(np.linspace(0, 1, 5)))
    np.testing.assert_allclose(total, np.sum(np.linspace(0, 1, 5) ** 2))
    loaded = [m.module._ptx for m in cuda.cuda.modules.values()]
    assert any(".maxntid 1024" in ptx for ptx in loaded)
    launched = {name: block for kind, name, grid, block in
                [e for e in standin.driver.LOG if e[0] == "launch"]}
    kernels = {k.name: k for k in cuda._kernels.values()}
    assert launched and all(kernels[name].max_threads >= block[0] * block[1] * block[2]
                            for name, block in launched.items())


def test_a_kernel_that_cannot_run_its_block_size_is_refused_at_load(cuda, standin):
    from lowering.compile.gpu.build import GpuProgram
    from lowering.ir.parser import parse_module
    from test_gpu_host import exp_program
    module = parse_module(exp_program())
    saved = SPEC.registers
    SPEC.registers = 32 * 8  # a GPU with too few registers for a warp of this kernel
    try:
        with pytest.raises(CudaError, match="blocks of 32 threads.*at most"):
            cuda.load(GpuProgram(module, "cuda", 64))
    finally:
        SPEC.registers = saved


# -- import errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("error, says", [
    ("libcuda.so.1: cannot open shared object file: No such file or directory",
     r"CUDA driver library \(libcuda.so\) cannot be loaded"),
    ("/site-packages/pycuda/_driver.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
     "cuCtxCreate_v4", r"driver is older than the CUDA toolkit.*cuCtxCreate_v4.*CUDA 12.5"),
])
def test_import_errors_say_which_failure_it_is(error, says):
    from lowering.compile.gpu.device import gpu_missing
    with install(import_error=error):
        message = gpu_missing()
    assert message is not None and "not installed" not in message
    assert re.search(says, message), message


def test_a_driver_that_does_not_start_gives_its_versions():
    from lowering.compile.gpu.device import gpu_missing
    with install(init_error="CUDA driver version is insufficient for CUDA runtime version"):
        message = gpu_missing()
    assert "too old" in message and "driver: CUDA 13.0" in message


# -- kernel faults -----------------------------------------------------------------------------


def _faulting_launch(cuda):
    """Launch the exp kernel on a view reaching past its allocation (a fault on a GPU)."""
    exp_program_on(cuda)
    small = cuda.to_device(np.ones(4, np.float32))
    past = cuda.view(small, (64,), (1,), 0)
    out = cuda.empty((64,), np.float32)
    cuda.launch("kernels::exp_scaled", (2, 1, 1), (32, 1, 1),
                [past, out, np.float32(2), 64], where="seed.py:12 (Elemwise{exp})")


def test_a_kernel_fault_names_the_last_kernel_and_the_sync_flag(cuda):
    _faulting_launch(cuda)  # returns: the fault shows at the next wait
    with pytest.raises(CudaError) as info:
        cuda.synchronize()
    message = str(info.value)
    assert "exp_scaled" in message and "seed.py:12" in message
    assert "gpuarray.sync=True" in message


def test_with_sync_every_launch_is_checked(cuda):
    with config.change_flags({"gpuarray.sync": True}):
        with pytest.raises(CudaError, match="the last launch, checked when it finished, was "
                                            "kernel exp_scaled"):
            _faulting_launch(cuda)


# -- contexts ----------------------------------------------------------------------------------


def test_no_call_leaves_a_context_pushed_on_any_thread(cuda, standin):
    drv = standin.driver
    stacks = {}

    def worker():
        from lowering.llvm.gpu import cuda_runtime
        cuda_runtime._CONTEXTS.clear()  # the first get_context happens here
        x = T.fvector("x")
        theano.function([x], x * 2)(np.ones(3, np.float32))
        stacks["worker"] = drv.current_stack()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert stacks == {"worker": []} and drv.current_stack() == []
    standin.simulate_exit()
    assert drv.current_stack() == []


def test_pycuda_autoinit_context_is_used_and_never_popped_by_the_runtime(standin):
    import pycuda.autoinit
    import pycuda.gpuarray as gpuarray
    drv = standin.driver
    user = drv.Context.get_current()
    data = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
    x = T.fvector("x")
    failures = []

    def worker():  # the runtime's first context is made on a thread without the user's
        try:
            theano.function([x], x + 1)(np.ones(2, np.float32))
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    with config.change_flags(device="cuda", print_active_device=False):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        from lowering.llvm.gpu import cuda_runtime
        cuda_runtime._CONTEXTS.clear()
        from lowering.compile.gpu import device
        device._DEVICES.clear()
        f = theano.function([x], T.exp(x))
        np.testing.assert_allclose(f(data), np.exp(np.arange(4)), rtol=1e-6)
    assert failures == [] and drv.current_stack() == [user]
    standin.simulate_exit()  # the runtime's handler, then autoinit's pop: both succeed
    assert drv.current_stack() == [] and pycuda.autoinit.context is None


def test_pycuda_autoprimaryctx_shares_the_runtimes_context(standin):
    import pycuda.autoprimaryctx  # noqa: F401
    import pycuda.gpuarray as gpuarray
    drv = standin.driver
    data = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
    x = T.fvector("x")
    with config.change_flags(device="cuda", print_active_device=False):
        f = theano.function([x], (x * 3).transfer(None))
        result = f(data)
        assert isinstance(result, gpuarray.GPUArray)
        np.testing.assert_allclose(result.get(), np.arange(4) * 3)  # the user's context reads it
    standin.simulate_exit()
    assert drv.current_stack() == []


# -- fills -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, value", [(np.float16, 1.5), (np.float32, -2.0),
                                          (np.float64, 7.25), (np.int8, -3), (np.int64, 2 ** 40),
                                          (np.bool_, True)])
def test_fills_use_memsets_for_every_dtype(cuda, standin, dtype, value):
    array = cuda.empty((5,), dtype)
    cuda.fill(array, value)
    np.testing.assert_array_equal(cuda.to_host(array), np.full(5, value, dtype))
    assert any(entry[0].startswith("cuMemset") for entry in standin.driver.LOG)
