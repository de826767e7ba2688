"""``outline-kernels``: every ``gpu.launch`` becomes a ``gpu.func`` of ``gpu.module @kernels``
and a ``gpu.launch_func``; the values a body reads from outside become arguments (constants are
copied in), kernels are named by what they do, results do not change, and a body reading what a
kernel cannot take is an error naming it."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects.gpu import GpuFuncOp, GpuModuleOp, LaunchFuncOp, LaunchOp
from lowering.ir.pass_manager import PassError, PassManager
from lowering.passes.gpu.outline_kernels import OutlineKernels

from .map_to_gpu_helpers import (GPU, device_loops, launches, mapped, module_of, round_trips,
                                 same_results)
from .placement_cases import LOGISTIC_REGRESSION

TWO_KERNELS = '''
func.func @f(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>)
    attributes {lowering.arg_devices = ["cuda", "cuda"]} {
  %e = "tensor.exp"(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = "tensor.sum"(%x) {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  %t = "tensor.add"(%s, %y) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %e, %t : tensor<?x?xf32>, tensor<?xf32>
}
'''


def kernels_of(module) -> GpuModuleOp:
    found = module.lookup("kernels")
    assert isinstance(found, GpuModuleOp)
    return found


def test_each_launch_becomes_a_named_kernel_and_a_launch_of_it():
    module = device_loops(TWO_KERNELS)
    outlined = mapped(module)
    sizes = [(launch.grid_sizes, launch.block_sizes) for launch in launches(outlined)]
    OutlineKernels().apply(outlined)
    round_trips(outlined)
    assert not any(isinstance(op, LaunchOp) for op in outlined.walk())
    calls = launches(outlined)
    assert [c.kernel for c in calls] == ["exp_0", "sum_1", "add_2"]
    kernels = kernels_of(outlined)
    assert [k.sym_name for k in kernels.kernels] == ["exp_0", "sum_1", "add_2"]
    assert all(k.is_kernel for k in kernels.kernels)
    # The gpu.module comes after the host function, in the builtin module.
    assert list(outlined.body.block.ops)[-1] is kernels
    for call, (grid, block) in zip(calls, sizes):
        assert [v.type for v in call.args] == list(call.callee().function_type.inputs)
        assert call.grid_sizes == grid and call.block_sizes == block
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    y = np.arange(4, dtype=np.float32)
    e, t = same_results(module, outlined, [x, y], rtol=1e-6)
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(t, x.sum(axis=1) + y, rtol=1e-5, atol=1e-6)


def test_arguments_are_device_buffers_and_scalars_and_constants_are_copied_in():
    module = module_of('''
    func.func @f(%x: !loops.buffer<?xf32, space="device">, %scale: f32, %n: index) {
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      %c32 = "scalar.constant"() {value = 32 : index} : () -> index
      %two = "scalar.constant"() {value = 2.0 : f32} : () -> f32
      "gpu.launch"(%c1, %c1, %c1, %c32, %c1, %c1) ({
        %i = "gpu.thread_id"() {dimension = "x"} : () -> index
        loops.for %j = %i to %n step %c32 {
          %v = loops.load %x[%j] : !loops.buffer<?xf32, space="device">
          %w = "scalar.mul"(%v, %scale) : (f32, f32) -> f32
          %z = "scalar.add"(%w, %two) : (f32, f32) -> f32
          loops.store %z, %x[%j] : !loops.buffer<?xf32, space="device">
          loops.yield
        }
        "gpu.terminator"() : () -> ()
      }) : (index, index, index, index, index, index) -> ()
      func.return
    }''')
    outlined = mapped(module, "outline-kernels")
    (call,) = launches(outlined)
    kernel = call.callee()
    assert kernel.sym_name == "kernel_0"  # no name given by map-to-gpu
    assert [a.name_hint for a in call.args] == ["n", "x", "scale"]
    assert [str(t) for t in kernel.function_type.inputs] == \
        ["index", '!loops.buffer<?xf32, space="device">', "f32"]
    constants = [op for op in kernel.body.block.ops if op.name == "scalar.constant"]
    assert sorted(str(op.attributes["value"]) for op in constants) == \
        ["2.000000e+00 : f32", "32 : index"]
    x = np.arange(40, dtype=np.float32)
    same_results(module, outlined, [x, np.float32(3), 37])


def test_an_existing_kernel_module_receives_the_kernels_under_free_names():
    module = module_of('''
    func.func @f(%x: !loops.buffer<4xf32, space="device">) {
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      %c4 = "scalar.constant"() {value = 4 : index} : () -> index
      "gpu.launch"(%c1, %c1, %c1, %c4, %c1, %c1) ({
        %i = "gpu.thread_id"() {dimension = "x"} : () -> index
        %v = loops.load %x[%i] : !loops.buffer<4xf32, space="device">
        %w = "scalar.neg"(%v) : (f32) -> f32
        loops.store %w, %x[%i] : !loops.buffer<4xf32, space="device">
        "gpu.terminator"() : () -> ()
      }) {kernel_name = "neg"} : (index, index, index, index, index, index) -> ()
      func.return
    }
    "gpu.module"() ({
      "gpu.func"() ({
        "gpu.return"() : () -> ()
      }) {sym_name = "neg_0", function_type = () -> (), kernel} : () -> ()
    }) {sym_name = "kernels"} : () -> ()''')
    outlined = mapped(module, "outline-kernels")
    assert [k.sym_name for k in kernels_of(outlined).kernels] == ["neg_0", "neg_1"]
    assert [c.kernel for c in launches(outlined)] == ["neg_1"]
    assert len([op for op in outlined.body.block.ops if isinstance(op, GpuModuleOp)]) == 1


def test_a_launch_reading_a_host_buffer_is_an_error_naming_it():
    module = module_of('''
    func.func @f(%h: !loops.buffer<4xf32>) {
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      "gpu.launch"(%c1, %c1, %c1, %c1, %c1, %c1) ({
        %d = loops.dim %h, 0 : !loops.buffer<4xf32>
        "gpu.terminator"() : () -> ()
      }) : (index, index, index, index, index, index) -> ()
      func.return
    }''')
    with pytest.raises(PassError, match=r"uses %h of type !loops\.buffer<4xf32>; a kernel takes "
                                        r"only device buffers"):
        PassManager("outline-kernels").run(module)


FUNCTION_NAMED_KERNELS = '''
    func.func @kernels(%x: !loops.buffer<f32, space="device">) {
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      "gpu.launch"(%c1, %c1, %c1, %c1, %c1, %c1) ({
        "gpu.terminator"() : () -> ()
      }) : (index, index, index, index, index, index) -> ()
      func.return
    }'''


def test_a_symbol_named_like_the_kernel_module_is_an_error():
    with pytest.raises(PassError, match="@kernels is a func.func, not a gpu.module"):
        PassManager("outline-kernels").run(module_of(FUNCTION_NAMED_KERNELS))
    module = module_of(FUNCTION_NAMED_KERNELS)
    PassManager("outline-kernels{module-name=gpu_kernels}").run(module)
    assert isinstance(module.lookup("gpu_kernels"), GpuModuleOp)


def test_a_module_without_launches_is_left_alone():
    module = device_loops(TWO_KERNELS.replace('attributes {lowering.arg_devices = ["cuda", "cuda"]} ', ''))
    before = [op.name for op in module.walk()]
    OutlineKernels().apply(module)
    assert [op.name for op in module.walk()] == before


def test_logistic_regression_on_the_device_keeps_its_results():
    module = device_loops(LOGISTIC_REGRESSION)
    outlined = mapped(module, GPU + ",outline-kernels")
    assert all(isinstance(op, (LaunchFuncOp,)) for op in launches(outlined))
    assert all(isinstance(k, GpuFuncOp) for k in kernels_of(outlined).kernels)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 4)).astype(np.float32)
    y = (rng.random(9) > 0.5).astype(np.float32)
    w = rng.standard_normal(4).astype(np.float32)
    b = np.array(0.25, np.float32)
    same_results(module, outlined, [x, y, w, b], rtol=1e-5, atol=1e-6)


PRODUCTS_AND_INDEXING = '''
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %i: tensor<?xi64>, %y: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<?xi64>)
    attributes {lowering.arg_devices = ["cuda", "cuda", "cuda", "cuda"]} {
  %p = "tensor.dot"(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = "tensor.max"(%p) {axes = [0, 1]} : (tensor<?x?xf32>) -> tensor<f32>
  %t = "tensor.advanced_inc_subtensor"(%p, %y, %i) {spec = [["array"]]}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %m = "tensor.argmax"(%a) {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xi64>
  func.return %p, %s, %t, %m : tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<?xi64>
}
'''


@pytest.mark.parametrize("text, bufferize", [
    (LOGISTIC_REGRESSION, "bufferize"),
    (PRODUCTS_AND_INDEXING, "bufferize{use-blas blas-min-work=0}")],
    ids=["logistic-regression", "products-and-indexing"])
def test_outlined_kernels_translate_to_ptx_that_ptxas_accepts(text, bufferize):
    from lowering.llvm.gpu.ptxas import assemble_ptx, ptxas_available
    from lowering.llvm.gpu.to_ptx import translate_gpu_module
    outlined = mapped(device_loops(text, bufferize=bufferize), "map-to-gpu,outline-kernels")
    ptx = translate_gpu_module(kernels_of(outlined), arch="sm_80")
    assert set(ptx.kernels) == {k.sym_name for k in kernels_of(outlined).kernels}
    if not ptxas_available():
        pytest.skip("ptxas is not installed")
    assemble_ptx(ptx.ptx, "sm_80")
