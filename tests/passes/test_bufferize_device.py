"""``bufferize`` of ops placed on a GPU: device buffers for their values, the device's arguments
and results, buffer-level transfers, constants copied to the device, BLAS calls on device
buffers, scalars computed on the device kept in device memory (the host never loads or stores
device memory), ``inplace`` and ``plan-memory`` on device buffers, and the interpreter's results
unchanged (device buffers are NumPy arrays there)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lowering.dialects.function_attrs import RESULT_DEVICES, UPDATED_IN_PLACE
from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.dialects.loops import (AllocOp, BufferType, CallOp, ConstantOp, DeallocOp, LoadOp,
                                     ParallelOp, RuntimeCheckError)
from lowering.ir.interpreter import InterpreterError
from lowering.ir.pass_manager import PassError, PassManager
from lowering.passes.bufferize.device import host_accesses_to_device
from lowering.passes.plan_memory import PlanMemory

from .bufferize_graphs import assert_same, graph_cases, run
from .opt_helpers import module_from, optimized
from .placement_cases import (LOGISTIC_REGRESSION, SQUARE, body_ops, casts_floats_to_integers,
                              mixed_memory_loops, producer, random_devices, set_devices)

SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
PLACE = "place-on-device,elide-transfers"


def on_device(text_or_module, bufferize: str = "bufferize", after: str = ""):
    """The module after placement, elision, ``bufferize`` and ``after``, checked to keep the
    host out of device memory and kernels out of host memory."""
    module = module_from(text_or_module) if isinstance(text_or_module, str) else text_or_module
    pipeline = ",".join(p for p in (PLACE, bufferize, after) if p)
    lowered = optimized(module, pipeline)
    assert host_accesses_to_device(lowered.functions[0].body.block) == []
    assert mixed_memory_loops(lowered) == []
    return lowered


def types_of(values) -> list[str]:
    return [str(v.type) for v in values]


def device_buffer(value) -> bool:
    return isinstance(value.type, BufferType) and value.type.memory_space == "device"


def one_thread_kernels(module) -> list:
    return [op for op in body_ops(module) if isinstance(op, ParallelOp) and
            [getattr(producer(u), "numpy_value", None) for u in op.uppers] == [1]]


# ---------------------------------------------------------------------------------------------
# The seed's a ** 2


def test_square_copies_in_computes_in_device_memory_and_copies_back():
    module = on_device(SQUARE)
    func = module.functions[0]
    assert types_of(func.args) == ["!loops.buffer<?x?xf32, strides=[?, ?], offset=?>"]
    assert [str(t) for t in func.function_type.results] == ["!loops.buffer<?x?xf32>"]
    names = [op.name for op in body_ops(module) if op.name.startswith(("gpu", "loops"))]
    assert names == ["loops.dim", "loops.dim", "gpu.to_device", "loops.alloc", "loops.parallel",
                     "gpu.to_host"]
    to_device = next(op for op in body_ops(module) if isinstance(op, ToDeviceOp))
    alloc = next(op for op in body_ops(module) if isinstance(op, AllocOp))
    to_host = next(op for op in body_ops(module) if isinstance(op, ToHostOp))
    assert str(to_device.result.type) == '!loops.buffer<?x?xf32, space="device">'
    assert str(alloc.result.type) == '!loops.buffer<?x?xf32, space="device">'
    assert to_host.input is alloc.result
    assert func.body.block.last_op.operands[0] is to_host.result
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1]
    np.testing.assert_array_equal(run(module, [a])[0], a ** 2)


def test_square_kept_on_the_device_returns_its_device_buffer():
    module = module_from(SQUARE)
    set_devices(module, ["cpu"], ["cuda"])
    lowered = on_device(module)
    func = lowered.functions[0]
    assert [str(t) for t in func.function_type.results] == \
        ['!loops.buffer<?x?xf32, space="device">']
    assert not any(isinstance(op, ToHostOp) for op in body_ops(lowered))
    assert isinstance(producer(func.body.block.last_op.operands[0]), AllocOp)


def test_device_arguments_keep_the_layout_of_host_arguments():
    module = module_from(SQUARE)
    set_devices(module, ["cuda"], ["cpu"])
    lowered = on_device(module)
    assert types_of(lowered.functions[0].args) == \
        ['!loops.buffer<?x?xf32, strides=[?, ?], offset=?, space="device">']
    assert not any(isinstance(op, ToDeviceOp) for op in body_ops(lowered))


# ---------------------------------------------------------------------------------------------
# Logistic regression: w and b resident on the device


def logistic_inputs(seed: int = 0, rows: int = 7, cols: int = 5) -> list:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((rows, cols)).astype(np.float32),
            (rng.random(rows) > 0.5).astype(np.float32),
            rng.standard_normal(cols).astype(np.float32), np.array(0.25, dtype=np.float32)]


@pytest.mark.parametrize("bufferize", ["bufferize", "bufferize{use-blas}"])
def test_logistic_regression_runs_on_the_device_with_the_same_results(bufferize):
    module = module_from(LOGISTIC_REGRESSION)
    lowered = on_device(module, bufferize)
    func = lowered.functions[0]
    assert [t.memory_space for t in func.function_type.inputs] == \
        ["host", "host", "device", "device"]
    assert [t.memory_space for t in func.function_type.results] == ["host", "device", "device"]
    # The cost (a mean, computed on the device) is copied back; nothing else is.
    assert [op.input.name_hint for op in body_ops(lowered) if isinstance(op, ToHostOp)] == \
        [producer(func.body.block.last_op.operands[0]).input.name_hint]
    inputs = logistic_inputs()
    assert_same([np.asarray(v) for v in run(module, inputs)],
                [np.asarray(v) for v in run(lowered, inputs)], tolerance=1e-5)


def test_device_updates_of_shared_variables_are_written_into_their_device_buffers():
    module = module_from(LOGISTIC_REGRESSION)
    lowered = on_device(module, "bufferize{use-blas}", "inplace,plan-memory")
    func = lowered.functions[0]
    assert UPDATED_IN_PLACE.get(func) == [(1, 2), (2, 3)]
    assert RESULT_DEVICES.get(func) == ["cpu"]  # the entries of the updated results are gone
    assert types_of(func.args)[2:] == ['!loops.buffer<?xf32, space="device">',
                                       '!loops.buffer<f32, space="device">']
    assert [str(t) for t in func.function_type.results] == ["!loops.buffer<f32>"]
    # The BLAS call writes the new w into w's own device buffer.
    gemv = [op for op in lowered.walk() if isinstance(op, CallOp)][-1]
    assert gemv.callee == "cblas_sgemv" and gemv.args[10] is func.args[2]
    inputs = logistic_inputs(1)
    expected = [np.asarray(v) for v in run(module, inputs)]
    w, b = inputs[2].copy(), inputs[3].copy()
    (cost,) = run(lowered, [inputs[0], inputs[1], w, b])
    np.testing.assert_allclose(cost, expected[0], rtol=1e-5)
    np.testing.assert_allclose(w, expected[1], rtol=1e-5)
    np.testing.assert_allclose(b, expected[2], rtol=1e-5)


def test_plan_memory_frees_the_transfers_copies_and_the_device_temporaries():
    lowered = on_device(LOGISTIC_REGRESSION, "bufferize", "plan-memory")
    ops = body_ops(lowered)
    freed = {id(op.operands[0]) for op in ops if isinstance(op, DeallocOp)}
    returned = {id(v) for v in lowered.functions[0].body.block.last_op.operands}
    for op in ops:
        if isinstance(op, (AllocOp, ToDeviceOp, ToHostOp)):
            assert id(op.result) in freed or id(op.result) in returned, op
    assert any(isinstance(op, ToDeviceOp) and id(op.result) in freed for op in ops)


REUSE = '''
func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32, space="device"> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %h = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %h : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %d = "gpu.to_device"(%h) {context = "cuda"} : (!loops.buffer<?xf32>) -> !loops.buffer<?xf32, space="device">
  %t = loops.alloc(%n) : !loops.buffer<?xf32, space="device">
  loops.copy %d, %t : !loops.buffer<?xf32, space="device">, !loops.buffer<?xf32, space="device">
  %u = loops.alloc(%n) : !loops.buffer<?xf32, space="device">
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %t[%i] : !loops.buffer<?xf32, space="device">
    %e = "scalar.exp"(%v) : (f32) -> f32
    loops.store %e, %u[%i] : !loops.buffer<?xf32, space="device">
    loops.yield
  }
  %r = loops.alloc(%n) : !loops.buffer<?xf32, space="device">
  loops.copy %u, %r : !loops.buffer<?xf32, space="device">, !loops.buffer<?xf32, space="device">
  func.return %r : !loops.buffer<?xf32, space="device">
}
'''


def test_memory_is_reused_only_within_one_memory_space():
    module = module_from(REUSE)
    PlanMemory().apply(module)
    ops = body_ops(module)
    allocs = [op for op in ops if isinstance(op, AllocOp)]
    # %d (the device copy, dead after the copy into %t) gives its memory to %u, and %t (dead
    # after the loop into %u) to %r; the host %h, dead as early, is never taken by a device
    # allocation.
    assert [op.result.name_hint for op in allocs] == ["h", "t"]
    ret = module.functions[0].body.block.last_op
    assert ret.operands[0] is allocs[1].result
    freed = [op.operands[0].name_hint for op in ops if isinstance(op, DeallocOp)]
    assert sorted(freed) == ["d", "h"]  # %d, holding %u by then, after the copy into %r
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(run(module, [x])[0], np.exp(x), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Scalars computed on the device


MEAN = '''
func.func @f(%x: tensor<?xf32>) -> tensor<f32> attributes {lowering.arg_devices = ["cuda"]} {
  %m = "tensor.mean"(%x) {axes = [0]} : (tensor<?xf32>) -> tensor<f32>
  %s = "tensor.sqr"(%m) : (tensor<f32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
'''


def test_a_scalar_computed_on_the_device_stays_in_device_memory():
    lowered = on_device(MEAN)
    # The partial sums are combined, and the square taken, by kernels of one thread that
    # store into rank-0 device buffers; the host only reads the copy brought back.
    kernels = one_thread_kernels(lowered)
    assert kernels
    for kernel in kernels:
        assert all(device_buffer(op.buffer) for op in kernel.walk()
                   if isinstance(op, LoadOp))
    (to_host,) = [op for op in body_ops(lowered) if isinstance(op, ToHostOp)]
    assert str(to_host.input.type) == '!loops.buffer<f32, space="device">'
    x = np.linspace(-3, 5, 101, dtype=np.float32)
    np.testing.assert_allclose(run(lowered, [x])[0], np.mean(x) ** 2, rtol=1e-5)


@pytest.mark.parametrize("bufferize", ["bufferize", "bufferize{use-blas}"])
def test_a_dot_of_two_device_vectors_is_a_device_reduction(bufferize):
    module = module_from('''
    func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<f32>
        attributes {lowering.arg_devices = ["cuda", "cuda"]} {
      %d = "tensor.dot"(%x, %y) : (tensor<?xf32>, tensor<?xf32>) -> tensor<f32>
      func.return %d : tensor<f32>
    }''')
    lowered = on_device(module, bufferize)
    assert not any(isinstance(op, CallOp) for op in lowered.walk())
    x, y = np.linspace(-1, 1, 300, dtype=np.float32), np.linspace(2, 0, 300, dtype=np.float32)
    np.testing.assert_allclose(run(lowered, [x, y])[0], np.dot(x, y), rtol=1e-4)


def test_matrix_products_on_device_buffers_call_blas_like_on_the_host():
    module = module_from('''
    func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32>
        attributes {lowering.arg_devices = ["cuda", "cuda"], lowering.result_devices = ["cuda"]} {
      %c = "tensor.dot"(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
      func.return %c : tensor<?x?xf32>
    }''')
    lowered = on_device(module, "bufferize{use-blas}")
    calls = [op for op in lowered.walk() if isinstance(op, CallOp)]
    assert calls and all(op.callee == "cblas_sgemm" for op in calls)
    assert all(device_buffer(v) for op in calls for v in op.args if isinstance(v.type,
                                                                              BufferType))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::-1]
    np.testing.assert_allclose(run(lowered, [a, b])[0], a @ b, rtol=1e-6)


def test_a_constant_used_on_the_device_is_copied_there():
    module = module_from('''
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> attributes {lowering.arg_devices = ["cuda"]} {
      %c = "tensor.constant"() {value = dense<[1.0, 2.0, 4.0]> : tensor<3xf32>} : () -> tensor<3xf32>
      %s = "tensor.mul"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      func.return %s : tensor<3xf32>
    }''')
    lowered = on_device(module)
    (constant,) = [op for op in body_ops(lowered) if isinstance(op, ConstantOp)]
    (to_device,) = [op for op in body_ops(lowered) if isinstance(op, ToDeviceOp)]
    assert to_device.input is constant.result
    x = np.array([3, 2, 1], dtype=np.float32)
    np.testing.assert_array_equal(run(lowered, [x])[0], [3, 4, 4])


def test_a_check_of_device_data_reads_a_host_copy_and_still_fails():
    module = module_from('''
    func.func @f(%x: tensor<?xf32>, %i: tensor<?xi64>) -> tensor<?xf32>
        attributes {lowering.arg_devices = ["cuda", "cuda"]} {
      %g = "tensor.advanced_subtensor"(%x, %i) {spec = [["array"]]}
          : (tensor<?xf32>, tensor<?xi64>) -> tensor<?xf32>
      func.return %g : tensor<?xf32>
    }''')
    lowered = on_device(module)
    assert any(isinstance(op, ToHostOp) and op.input.type.rank == 0 for op in body_ops(lowered))
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(run(lowered, [x, np.array([3, -1, 0])])[0], [3, 3, 0])
    with pytest.raises(RuntimeCheckError, match="index is out of range"):
        run(lowered, [x, np.array([1, 4])])


def test_bufferize_refuses_host_code_reading_device_memory():
    # Without place-on-device, a host op would read the device argument's element.
    module = module_from('''
    func.func @f(%s: tensor<f32>) -> tensor<f32> attributes {lowering.arg_devices = ["cuda"]} {
      %e = "tensor.exp"(%s) : (tensor<f32>) -> tensor<f32>
      func.return %e : tensor<f32>
    }''')
    with pytest.raises(PassError, match=r"host code would access device memory at loops\.load"):
        PassManager("bufferize").run(module)


# ---------------------------------------------------------------------------------------------
# Random graphs


def check_random(module, arrays, devices, bufferize, tolerance=None):
    assume(not casts_floats_to_integers(module))
    set_devices(module, *devices)
    lowered = on_device(module, bufferize, "inplace,plan-memory")
    try:
        expected = [np.asarray(v) for v in run(module, arrays)]
    except InterpreterError:
        with pytest.raises(RuntimeCheckError):
            run(lowered, arrays)
        return
    assert_same(expected, [np.asarray(v) for v in run(lowered, arrays)], tolerance)


@settings(max_examples=50, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True), data=st.data())
def test_random_graphs_on_the_device_give_the_same_results(case, data):
    module, arrays = case
    check_random(module, arrays, data.draw(random_devices(module)), "bufferize")


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=False), data=st.data(), optimize=st.booleans())
def test_random_summing_graphs_on_the_device_agree(case, data, optimize):
    module, arrays = case
    if optimize:
        PassManager("canonicalize,cse,stabilize,specialize,fuse").run(module)
    check_random(module, arrays, data.draw(random_devices(module)),
                 "bufferize{use-blas blas-min-work=1}", tolerance=1e-2)
