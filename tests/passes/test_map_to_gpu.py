"""``map-to-gpu`` on independent work: elementwise nests (broadcasting, strided and transposed
inputs, empty dimensions), fills and copies, indexing, work that must stay sequential, scalars
computed on the device, and the errors. Every case runs in the interpreter before and after the
pass (kernels thread by thread) and is compared with NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lowering.dialects.gpu import LaunchOp, ToHostOp
from lowering.dialects.loops import AssertOp, ReshapeViewOp, RuntimeCheckError
from lowering.ir.pass_manager import PassError, PassManager
from lowering.ir.passes import PassFailure, PipelineError
from lowering.passes.gpu.map_to_gpu import MapToGpu, check_memory_spaces

from .map_to_gpu_helpers import (GPU, device_loops, kernel_ops, launches, mapped, module_of,
                                 run_on_copies, same_results)

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

BROADCAST = '''
func.func @f(%x: tensor<?x?xf32>, %y: tensor<1x?xf32>) -> tensor<?x?xf32>
    attributes {lowering.arg_devices = ["cuda", "cuda"]} {
  %s = "tensor.add"(%x, %y) : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %e = "tensor.exp"(%s) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %m = "tensor.mul"(%e, %x) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}
'''


def top_level_names(module) -> list[str]:
    return [op.name for op in module.functions[0].body.block.ops]


@st.composite
def matrices(draw, rows=st.integers(0, 6), cols=st.integers(0, 6)):
    """A float32 matrix, possibly a transposed or strided view of a bigger one."""
    m, n = draw(rows), draw(cols)
    layout = draw(st.sampled_from(["c", "transposed", "strided"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    if layout == "transposed":
        return rng.standard_normal((n, m)).astype(np.float32).T
    if layout == "strided":
        return rng.standard_normal((2 * m, n + 1)).astype(np.float32)[::2, 1:]
    return rng.standard_normal((m, n)).astype(np.float32)


@SETTINGS
@given(x=matrices(), blocks=st.integers(1, 4), width=st.integers(1, 4), fuse=st.booleans())
def test_broadcasting_elementwise_work_matches_numpy(x, blocks, width, fuse):
    module = device_loops(BROADCAST, optimize="fuse" if fuse else "")
    after = mapped(module, f"map-to-gpu{{block-size=32 max-blocks={blocks} "
                           f"elements-per-thread={width}}}")
    y = np.linspace(-1, 1, x.shape[1], dtype=np.float32).reshape(1, -1)
    (got,) = same_results(module, after, [x, y])
    np.testing.assert_allclose(got, np.exp(x + y) * x, rtol=1e-6, atol=1e-6)
    assert all(isinstance(op, LaunchOp) or not op.regions for op in after.functions[0].walk()
               if op.parent is after.functions[0].body.block)


def test_contiguous_elementwise_work_takes_several_consecutive_elements_per_step():
    module = module_of('''
    func.func @f(%a: !loops.buffer<?x?xf32, space="device">) -> !loops.buffer<?x?xf32, space="device"> {
      %c0 = "scalar.constant"() {value = 0 : index} : () -> index
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      %m = loops.dim %a, 0 : !loops.buffer<?x?xf32, space="device">
      %n = loops.dim %a, 1 : !loops.buffer<?x?xf32, space="device">
      %b = loops.alloc(%m, %n) : !loops.buffer<?x?xf32, space="device">
      loops.parallel (%i) = (%c0) to (%m) step (%c1) {
        loops.for %j = %c0 to %n step %c1 {
          %v = loops.load %a[%i, %j] : !loops.buffer<?x?xf32, space="device">
          %w = "scalar.sqrt"(%v) : (f32) -> f32
          loops.store %w, %b[%i, %j] : !loops.buffer<?x?xf32, space="device">
          loops.yield
        }
        loops.yield
      }
      func.return %b : !loops.buffer<?x?xf32, space="device">
    }''')
    after = mapped(module, "map-to-gpu{block-size=32 max-blocks=2 elements-per-thread=4}")
    (launch,) = launches(after)
    # Both matrices seen as vectors (views made on the host): no division in the kernel, and a
    # step of 4 unrolled elements plus a loop over the rest.
    views = [op for op in after.functions[0].body.block.ops if isinstance(op, ReshapeViewOp)]
    assert len(views) == 2
    ops = kernel_ops(launch)
    assert ops.count("scalar.floordiv") == 1 and "scalar.mod" not in ops  # the whole steps
    assert ops.count("scalar.sqrt") == 5 and ops.count("loops.store") == 5
    assert launch.get_attr("kernel_name") == "sqrt"
    for shape in ((7, 9), (1, 3), (0, 4)):
        a = np.random.default_rng(0).random(shape).astype(np.float32)
        (got,) = same_results(module, after, [a])
        np.testing.assert_array_equal(got, np.sqrt(a))


def test_a_transposed_read_is_addressed_by_its_indices():
    module = device_loops('''
    func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {lowering.arg_devices = ["cuda"]} {
      %t = "tensor.dimshuffle"(%x) {pattern = [1, 0]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
      %y = "tensor.neg"(%t) : (tensor<?x?xf32>) -> tensor<?x?xf32>
      func.return %y : tensor<?x?xf32>
    }''')
    after = mapped(module)
    (launch,) = launches(after)
    assert "scalar.floordiv" in kernel_ops(launch) and "scalar.mod" in kernel_ops(launch)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (got,) = same_results(module, after, [x])
    np.testing.assert_array_equal(got, -x.T)


@pytest.mark.parametrize("shape", [(0, 3), (4, 0), (0, 0)])
def test_empty_spaces_launch_one_block_and_write_nothing(shape):
    module = device_loops(BROADCAST)
    after = mapped(module)
    x = np.zeros(shape, np.float32)
    y = np.zeros((1, shape[1]), np.float32)
    (got,) = same_results(module, after, [x, y])
    assert got.shape == shape


FILL_AND_COPY = '''
func.func @f(%x: !loops.buffer<?x?xf64, strides=[?, ?], offset=?, space="device">,
             %v: f64) -> (!loops.buffer<?x?xf64, space="device">, !loops.buffer<f64, space="device">) {
  %m = loops.dim %x, 0 : !loops.buffer<?x?xf64, strides=[?, ?], offset=?, space="device">
  %n = loops.dim %x, 1 : !loops.buffer<?x?xf64, strides=[?, ?], offset=?, space="device">
  %a = loops.alloc(%m, %n) : !loops.buffer<?x?xf64, space="device">
  loops.fill %v, %a : !loops.buffer<?x?xf64, space="device">
  %t = loops.transpose_view %a [1, 0] : !loops.buffer<?x?xf64, space="device"> -> !loops.buffer<?x?xf64, strides=[1, ?], space="device">
  %b = loops.alloc(%n, %m) : !loops.buffer<?x?xf64, space="device">
  loops.copy %t, %b : !loops.buffer<?x?xf64, strides=[1, ?], space="device">, !loops.buffer<?x?xf64, space="device">
  loops.copy %x, %a : !loops.buffer<?x?xf64, strides=[?, ?], offset=?, space="device">, !loops.buffer<?x?xf64, space="device">
  %s = loops.alloc() : !loops.buffer<f64, space="device">
  loops.fill %v, %s : !loops.buffer<f64, space="device">
  func.return %a, %s : !loops.buffer<?x?xf64, space="device">, !loops.buffer<f64, space="device">
}
'''


@SETTINGS
@given(x=matrices(), width=st.integers(1, 3))
def test_fills_and_copies_become_elementwise_kernels(x, width):
    module = module_of(FILL_AND_COPY)
    after = mapped(module, f"map-to-gpu{{block-size=32 max-blocks=2 elements-per-thread={width}}}")
    assert [k.get_attr("kernel_name") for k in launches(after)] == ["fill", "copy", "copy",
                                                                   "fill"]
    a, s = same_results(module, after, [x.astype(np.float64), 2.5])
    np.testing.assert_array_equal(a, x)
    assert s == 2.5


INDEXING = '''
func.func @f(%x: tensor<?x?xf32>, %y: tensor<?xf32>, %i: tensor<?xi64>, %j: tensor<?xi64>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
    attributes {lowering.arg_devices = ["cuda", "cuda", "cuda", "cuda"]} {
  %one = "tensor.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %set = "tensor.set_subtensor"(%x, %y, %one) {spec = [["index", "?"]]}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %inc = "tensor.inc_subtensor"(%x, %y, %one) {spec = [["slice", "?", "none", "none"]]}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %g = "tensor.advanced_subtensor"(%x, %i, %j) {spec = [["array"], ["array"]]}
      : (tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?xf32>
  %s = "tensor.advanced_inc_subtensor"(%x, %y, %i) {spec = [["array"]]}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %t = "tensor.advanced_set_subtensor"(%x, %y, %i) {spec = [["array"]]}
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  func.return %set, %inc, %g, %s, %t
      : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
'''


@SETTINGS
@given(data=st.data(), rows=st.integers(2, 5), cols=st.integers(1, 5), count=st.integers(0, 6))
def test_indexing_gathers_and_scatters_like_numpy(data, rows, cols, count):
    module = device_loops(INDEXING)
    after = mapped(module)
    names = [k.get_attr("kernel_name") for k in launches(after)]
    # inc_subtensor with an index array adds atomically; set_subtensor's last write must win:
    # one thread writes in order.
    assert names.count("scatter_add") == 1 and names[-1] == "serial"
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.standard_normal(cols).astype(np.float32)
    i = rng.integers(-rows, rows, count)
    j = rng.integers(-cols, cols, count)
    ys = rng.standard_normal(cols).astype(np.float32)
    set_, inc, gathered, scattered, assigned = same_results(module, after, [x, ys, i, j])
    want = x.copy()
    want[1] = ys
    np.testing.assert_array_equal(set_, want)
    want = x.copy()
    want[1:] += ys
    np.testing.assert_allclose(inc, want, rtol=1e-6)
    np.testing.assert_array_equal(gathered, x[i, j])
    want = x.copy()
    np.add.at(want, i, ys)
    np.testing.assert_allclose(scattered, want, rtol=1e-5, atol=1e-6)
    want = x.copy()
    for k in i:  # in order: the last occurrence of an index wins
        want[k] = ys
    np.testing.assert_array_equal(assigned, want)


PREFIX_SUMS = '''
func.func @f(%a: !loops.buffer<?x?xf32, space="device">, %v: !loops.buffer<?xf32, space="device">) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %m = loops.dim %a, 0 : !loops.buffer<?x?xf32, space="device">
  %n = loops.dim %a, 1 : !loops.buffer<?x?xf32, space="device">
  loops.parallel (%i) = (%c0) to (%m) step (%c1) {
    loops.for %j = %c1 to %n step %c1 {
      %k = "scalar.sub"(%j, %c1) : (index, index) -> index
      %p = loops.load %a[%i, %k] : !loops.buffer<?x?xf32, space="device">
      %q = loops.load %a[%i, %j] : !loops.buffer<?x?xf32, space="device">
      %s = "scalar.add"(%p, %q) : (f32, f32) -> f32
      loops.store %s, %a[%i, %j] : !loops.buffer<?x?xf32, space="device">
      loops.yield
    }
    loops.yield
  }
  %l = loops.dim %v, 0 : !loops.buffer<?xf32, space="device">
  loops.for %j = %c1 to %l step %c1 {
    %k = "scalar.sub"(%j, %c1) : (index, index) -> index
    %p = loops.load %v[%k] : !loops.buffer<?xf32, space="device">
    %q = loops.load %v[%j] : !loops.buffer<?xf32, space="device">
    %s = "scalar.add"(%p, %q) : (f32, f32) -> f32
    loops.store %s, %v[%j] : !loops.buffer<?xf32, space="device">
    loops.yield
  }
  func.return
}
'''


def test_loops_with_a_dependence_stay_sequential_on_the_device():
    module = module_of(PREFIX_SUMS)
    after = mapped(module)
    kernels = launches(after)
    # Rows are independent (loops.parallel), each thread runs its row in order; the prefix sum
    # of the vector runs on one thread.
    assert [k.get_attr("kernel_name") for k in kernels] == ["loop", "serial"]
    assert [int(v.op.numpy_value) for v in kernels[1].operands] == [1] * 6
    a = np.random.default_rng(1).random((4, 6)).astype(np.float32)
    v = np.arange(7, dtype=np.float32)
    _, (a_after, v_after) = run_on_copies(after, [a, v])
    np.testing.assert_allclose(a_after, np.cumsum(a, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(v_after, np.cumsum(v))


def test_a_level_every_store_names_is_independent_even_around_an_inner_loop():
    # Row i copies its first i + 1 elements: the inner loop's bounds depend on i, so it is not
    # a level of the nest, but each row writes only its own row: one thread per row.
    module = module_of('''
    func.func @f(%x: !loops.buffer<?x?xi32, space="device">) -> !loops.buffer<?x?xi32, space="device"> {
      %c0 = "scalar.constant"() {value = 0 : index} : () -> index
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      %m = loops.dim %x, 0 : !loops.buffer<?x?xi32, space="device">
      %n = loops.dim %x, 1 : !loops.buffer<?x?xi32, space="device">
      %zero = "scalar.constant"() {value = 0 : i32} : () -> i32
      %y = loops.alloc(%m, %n) : !loops.buffer<?x?xi32, space="device">
      loops.fill %zero, %y : !loops.buffer<?x?xi32, space="device">
      loops.for %i = %c0 to %m step %c1 {
        %end = "scalar.add"(%i, %c1) : (index, index) -> index
        %stop = "scalar.minimum"(%end, %n) : (index, index) -> index
        loops.for %k = %c0 to %stop step %c1 {
          %v = loops.load %x[%i, %k] : !loops.buffer<?x?xi32, space="device">
          loops.store %v, %y[%i, %k] : !loops.buffer<?x?xi32, space="device">
          loops.yield
        }
        loops.yield
      }
      func.return %y : !loops.buffer<?x?xi32, space="device">
    }''')
    after = mapped(module)
    assert [k.get_attr("kernel_name") for k in launches(after)] == ["fill", "copy"]
    x = np.arange(20, dtype=np.int32).reshape(4, 5) + 1
    (got,) = same_results(module, after, [x])
    np.testing.assert_array_equal(got, np.tril(x))


DEVICE_SCALAR = '''
func.func @f(%x: !loops.buffer<?xf32, space="device">, %out: !loops.buffer<?xf32, space="device">) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %zero = "scalar.constant"() {value = 0.0 : f32} : () -> f32
  %n = loops.dim %x, 0 : !loops.buffer<?xf32, space="device">
  %total = loops.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = loops.load %x[%i] : !loops.buffer<?xf32, space="device">
    %s = "scalar.add"(%acc, %v) : (f32, f32) -> f32
    loops.yield %s : f32
  }
  %half = "scalar.mul"(%total, %total) : (f32, f32) -> f32
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %x[%i] : !loops.buffer<?xf32, space="device">
    %w = "scalar.sub"(%v, %half) : (f32, f32) -> f32
    loops.store %w, %out[%i] : !loops.buffer<?xf32, space="device">
    loops.yield
  }
  CHECK
  func.return
}
'''
HOST_CHECK = '''%positive = "scalar.gt"(%total, %zero) : (f32, f32) -> i1
  loops.assert %positive, "the sum must be positive" {error_code = 1 : i64}'''


@pytest.mark.parametrize("host_reads", [False, True])
def test_a_scalar_computed_on_the_device_goes_to_the_host_only_where_a_host_op_reads_it(
        host_reads):
    module = module_of(DEVICE_SCALAR.replace("CHECK", HOST_CHECK if host_reads else ""))
    after = mapped(module)
    block_ops = list(after.functions[0].body.block.ops)
    names = [k.get_attr("kernel_name") for k in launches(after)]
    assert names == ["init", "sum", "sub"]  # set the sum to 0, add atomically, use it
    copies = [op for op in block_ops if isinstance(op, ToHostOp)]
    if host_reads:
        (copy,) = copies
        check = next(op for op in block_ops if isinstance(op, AssertOp))
        # The copy comes after every kernel, right before what reads it on the host.
        assert block_ops.index(copy) > max(block_ops.index(k) for k in launches(after))
        assert block_ops.index(copy) < block_ops.index(check)
    else:
        assert copies == []
    # The kernel using the scalar loads it from its device buffer and squares it itself.
    assert "scalar.mul" in kernel_ops(launches(after)[2])
    x = np.linspace(0.5, 2, 9, dtype=np.float32)
    out = np.zeros_like(x)
    _, (_, got) = run_on_copies(after, [x, out])
    np.testing.assert_allclose(got, x - np.sum(x) ** 2, rtol=1e-5)
    if host_reads:
        with pytest.raises(RuntimeCheckError, match="must be positive"):
            run_on_copies(after, [-x, out])


def test_mixing_host_and_device_memory_in_one_loop_is_an_error():
    module = module_of('''
    func.func @f(%h: !loops.buffer<4xf32>, %d: !loops.buffer<4xf32, space="device">) {
      %c0 = "scalar.constant"() {value = 0 : index} : () -> index
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      %c4 = "scalar.constant"() {value = 4 : index} : () -> index
      loops.parallel (%i) = (%c0) to (%c4) step (%c1) {
        %v = loops.load %h[%i] : !loops.buffer<4xf32>
        loops.store %v, %d[%i] : !loops.buffer<4xf32, space="device">
        loops.yield
      }
      func.return
    }''')
    with pytest.raises(PassError, match=r"loops\.parallel at .* both device memory and host "
                                        r"memory \(loops\.load"):
        PassManager(GPU).run(module)


def test_the_final_check_names_a_host_op_on_device_memory():
    module = module_of('''
    func.func @f(%d: !loops.buffer<f32, space="device">) -> f32 {
      %v = loops.load %d[] : !loops.buffer<f32, space="device">
      func.return %v : f32
    }''')
    with pytest.raises(PassFailure, match=r"loops\.load at .* device memory on the host"):
        check_memory_spaces(module.functions[0])
    # The pass itself reads such a value through a kernel and a copy to the host.
    after = mapped(module)
    assert [k.get_attr("kernel_name") for k in launches(after)] == ["load"]
    (got,) = run_on_copies(after, [np.array(1.5, np.float32)])[0]
    assert got == 1.5


@pytest.mark.parametrize("options, message", [
    ("block-size=48", "power of two"), ("block-size=2048", "block-size' of pass 'map-to-gpu' must be at most 1024"),
    ("max-blocks=0", "max-blocks"), ("elements-per-thread=0", "elements-per-thread"),
    ("tile-size=33", "tile-size")])
def test_bad_options_are_refused(options, message):
    # When the pipeline is read, before any pass runs.
    with pytest.raises(PipelineError, match=message):
        PassManager(f"map-to-gpu{{{options}}}")


def test_host_work_stays_on_the_host():
    module = module_of('''
    func.func @f(%x: !loops.buffer<?xf32>) {
      %c0 = "scalar.constant"() {value = 0 : index} : () -> index
      %c1 = "scalar.constant"() {value = 1 : index} : () -> index
      %n = loops.dim %x, 0 : !loops.buffer<?xf32>
      loops.parallel (%i) = (%c0) to (%n) step (%c1) {
        %v = loops.load %x[%i] : !loops.buffer<?xf32>
        %w = "scalar.exp"(%v) : (f32) -> f32
        loops.store %w, %x[%i] : !loops.buffer<?xf32>
        loops.yield
      }
      func.return
    }''')
    before = top_level_names(module)
    MapToGpu().apply(module)
    assert top_level_names(module) == before
