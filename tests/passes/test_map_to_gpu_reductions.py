"""``map-to-gpu`` on reductions: over an axis (block tree reductions per output, or a thread per
output), to one value (grid-wide, atomics where they exist), several accumulators in one nest
(split into one nest each), argmax; compared with NumPy and with the interpreter before the
pass. A column sum (``x.sum(axis=0)``) on the device is a thread per column over the whole grid;
the host's column tiles, on device buffers, a block per tile."""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lowering.dialects.gpu import AtomicRmwOp, BarrierOp, LaunchOp
from lowering.dialects.loops import DimOp, ParallelOp
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.pass_manager import PassManager

from .map_to_gpu_helpers import (device_loops, kernel_ops, launches, mapped, module_of,
                                 run_on_copies, same_results)
from .placement_cases import producer

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NUMPY = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}

REDUCTION = '''
func.func @f(%x: tensor<?x?xf32>) -> tensor<RT> attributes {lowering.arg_devices = ["cuda"]} {
  %a = "tensor.abs"(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = "tensor.sqrt"(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = "tensor.KIND"(%s) {axes = AXES} : (tensor<?x?xf32>) -> tensor<RT>
  func.return %r : tensor<RT>
}
'''


def reduction(kind: str, axes: list[int]) -> str:
    result = {(0,): "?xf32", (1,): "?xf32", (0, 1): "f32"}[tuple(axes)]
    return REDUCTION.replace("KIND", kind).replace("AXES", str(axes)).replace("RT", result)


@SETTINGS
@given(kind=st.sampled_from(sorted(NUMPY)), axes=st.sampled_from([[0], [1], [0, 1]]),
       rows=st.integers(1, 7), cols=st.integers(1, 7), fuse=st.booleans(),
       blocks=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_reductions_match_numpy(kind, axes, rows, cols, fuse, blocks, seed):
    module = device_loops(reduction(kind, axes), optimize="fuse" if fuse else "")
    after = mapped(module, f"map-to-gpu{{block-size=16 max-blocks={blocks}}}")
    x = np.random.default_rng(seed).uniform(-2, 2, (rows, cols)).astype(np.float32)
    (got,) = same_results(module, after, [x], rtol=1e-5, atol=1e-5)
    want = NUMPY[kind](np.sqrt(np.abs(x)), axis=tuple(axes))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_sum_over_an_empty_axis_is_zero():
    module = device_loops(reduction("sum", [1]))
    after = mapped(module)
    (got,) = same_results(module, after, [np.zeros((3, 0), np.float32)])
    np.testing.assert_array_equal(got, np.zeros(3, np.float32))


def test_row_sums_reduce_each_row_in_one_block():
    module = device_loops(reduction("sum", [1]))
    after = mapped(module, "map-to-gpu{block-size=8 max-blocks=2}")
    (launch,) = [k for k in launches(after) if k.get_attr("kernel_name") == "sum"]
    ops = kernel_ops(launch)
    # log2(8) halvings, each followed by a barrier, after the threads' own partial sums.
    assert ops.count("gpu.barrier") == 4 and ops.count("gpu.shared_alloc") == 1
    x = np.arange(40, dtype=np.float32).reshape(5, 8) - 20
    (got,) = same_results(module, after, [x])
    np.testing.assert_allclose(got, np.sqrt(np.abs(x)).sum(axis=1), rtol=1e-6)


@pytest.mark.parametrize("rows, cols", [(50, 3), (7, 1), (9, 16), (3, 40)])
def test_short_rows_share_a_block_and_long_rows_fill_one(rows, cols):
    # Rows of 3 get groups of 4 threads (4 rows per block of 16), rows of 40 the whole block;
    # the last round of rows leaves groups without a row, which still meet every barrier.
    module = device_loops(reduction("max", [1]))
    after = mapped(module, "map-to-gpu{block-size=16 max-blocks=3}")
    x = np.random.default_rng(rows).uniform(-5, 5, (rows, cols)).astype(np.float32)
    (got,) = same_results(module, after, [x], rtol=0, atol=0)
    np.testing.assert_array_equal(got, np.sqrt(np.abs(x)).max(axis=1))


COLUMN_SUM = '''
func.func @f(%x: tensor<?x?xf32>) -> tensor<?xf32> attributes {lowering.arg_devices = ["cuda"]} {
  %r = "tensor.sum"(%x) {axes = [0]} : (tensor<?x?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
'''


def top_level_parallels(module) -> list:
    return [op for op in module.functions[0].body.block.ops if isinstance(op, ParallelOp)]


@contextmanager
def launch_grids():
    """The x sizes of the grids of the ``gpu.launch`` ops the interpreter runs in the block."""
    grids: list[int] = []
    launch = INTERPRETER.find(LaunchOp)

    def recording(interp, op, args):
        grids.append(int(args[0]))
        return launch(interp, op, args)
    with INTERPRETER.registered(LaunchOp, recording):
        yield grids


def test_host_column_sums_stay_in_cache_sized_tiles():
    module = module_of(COLUMN_SUM.replace(' attributes {lowering.arg_devices = ["cuda"]}', ""))
    PassManager("bufferize").run(module)
    (tiles,) = top_level_parallels(module)
    assert not isinstance(producer(tiles.uppers[0]), DimOp)  # min(max(n // 512, 1), 64)


@pytest.mark.parametrize("rows, cols", [(5, 37), (3, 1100), (0, 37), (4, 0)])
def test_device_column_sums_give_each_column_a_thread_across_the_grid(rows, cols):
    # On the device bufferize leaves out the CPU's column tiles (at most 64, one below 1024
    # columns, hence at most 64 blocks): the columns are the parallel level, each adding its
    # rows in order, and the grid covers them (a thread per column, grid-stride beyond).
    module = device_loops(COLUMN_SUM)
    (columns,) = top_level_parallels(module)
    dim = producer(columns.uppers[0])
    assert isinstance(dim, DimOp) and dim.axis == 1 and dim.buffer is module.functions[0].args[0]
    after = mapped(module, "map-to-gpu{block-size=32}")
    (launch,) = launches(after)
    assert "gpu.barrier" not in kernel_ops(launch) and "gpu.atomic_rmw" not in kernel_ops(launch)
    x = np.random.default_rng(rows * 100 + cols).uniform(-1, 1, (rows, cols)).astype(np.float32)
    with launch_grids() as grids:
        (got,) = same_results(module, after, [x], rtol=0, atol=0)
    np.testing.assert_allclose(got, x.sum(axis=0), rtol=1e-6, atol=1e-6)
    assert grids == [max(-(-cols // 32), 1)]


COLUMN_TILES = '''
func.func @f(%x: !loops.buffer<?x?xf32, space="device">,
             %c: !loops.buffer<?xf32, space="device">) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %c3 = "scalar.constant"() {value = 3 : index} : () -> index
  %m = loops.dim %x, 0 : !loops.buffer<?x?xf32, space="device">
  %n = loops.dim %x, 1 : !loops.buffer<?x?xf32, space="device">
  loops.parallel (%t) = (%c0) to (%c3) step (%c1) {
    %a = "scalar.mul"(%t, %n) : (index, index) -> index
    %begin = "scalar.floordiv"(%a, %c3) : (index, index) -> index
    %t1 = "scalar.add"(%t, %c1) : (index, index) -> index
    %b = "scalar.mul"(%t1, %n) : (index, index) -> index
    %end = "scalar.floordiv"(%b, %c3) : (index, index) -> index
    loops.for %i = %c0 to %m step %c1 {
      loops.for %j = %begin to %end step %c1 {
        %v = loops.load %x[%i, %j] : !loops.buffer<?x?xf32, space="device">
        %s = loops.load %c[%j] : !loops.buffer<?xf32, space="device">
        %r = "scalar.add"(%s, %v) : (f32, f32) -> f32
        loops.store %r, %c[%j] : !loops.buffer<?xf32, space="device">
        loops.yield
      }
      loops.yield
    }
    loops.yield
  }
  func.return
}
'''


def test_column_tiles_give_each_tile_a_block_and_its_columns_to_the_threads():
    # A loops.parallel over a few pieces of work (the host's column tiles of x.sum(axis=0), here
    # on device buffers): a block per tile, its threads taking every block_size-th column of the
    # tile and adding the rows in order.
    module = module_of(COLUMN_TILES)
    after = mapped(module, "map-to-gpu{block-size=8 max-blocks=2}")
    (launch,) = [k for k in launches(after) if k.get_attr("kernel_name") == "sum"]
    loops = [op for op in launch.walk() if op.name == "loops.for"]
    starts = [op.operands[0].owner.name for op in loops]
    assert starts[:2] == ["gpu.block_id", "gpu.thread_id"] and "gpu.barrier" not in \
        kernel_ops(launch)
    for rows, cols in [(6, 21), (2, 3), (0, 5)]:
        x = np.random.default_rng(cols).uniform(-1, 1, (rows, cols)).astype(np.float32)
        sums = np.zeros(cols, np.float32)
        _, (_, before_sums) = run_on_copies(module, [x, sums])
        _, (_, after_sums) = run_on_copies(after, [x, sums])
        np.testing.assert_array_equal(after_sums, before_sums)
        np.testing.assert_allclose(after_sums, x.sum(axis=0), rtol=1e-6, atol=1e-6)


MIDDLE_AXIS = '''
func.func @f(%x: tensor<?x?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>)
    attributes {lowering.arg_devices = ["cuda"]} {
  %s = "tensor.sum"(%x) {axes = [1]} : (tensor<?x?x?xf64>) -> tensor<?x?xf64>
  %m = "tensor.max"(%x) {axes = [1]} : (tensor<?x?x?xf64>) -> tensor<?x?xf64>
  func.return %s, %m : tensor<?x?xf64>, tensor<?x?xf64>
}
'''


def test_a_reduction_whose_kept_axis_is_contiguous_gives_each_output_one_thread():
    # Reducing the middle axis: the accumulators are in memory and the innermost, contiguous
    # axis is kept, so one thread per output walks the reduced axis (neighbouring threads read
    # neighbouring elements), in order: no barrier, and the exact sequential sum.
    module = device_loops(MIDDLE_AXIS)
    after = mapped(module)
    reductions = [k for k in launches(after) if k.get_attr("kernel_name") in ("sum", "max")]
    assert len(reductions) == 2
    assert all("gpu.barrier" not in kernel_ops(k) for k in reductions)
    x = np.random.default_rng(3).standard_normal((3, 5, 4))
    total, biggest = same_results(module, after, [x], rtol=0, atol=0)
    np.testing.assert_allclose(total, x.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(biggest, x.max(axis=1))


SEVERAL = '''
func.func @f(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<f32>, tensor<?xf32>, tensor<?x?xf32>)
    attributes {lowering.arg_devices = ["cuda"]} {
  %e = "tensor.exp"(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %a = "tensor.sum"(%e) {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>
  %b = "tensor.max"(%e) {axes = [0, 1]} : (tensor<?x?xf32>) -> tensor<f32>
  %c = "tensor.min"(%e) {axes = [0]} : (tensor<?x?xf32>) -> tensor<?xf32>
  func.return %a, %b, %c, %e : tensor<?xf32>, tensor<f32>, tensor<?xf32>, tensor<?x?xf32>
}
'''


@SETTINGS
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), seed=st.integers(0, 2 ** 16))
def test_a_nest_with_several_accumulators_is_split_into_one_nest_each(rows, cols, seed):
    module = device_loops(SEVERAL, optimize="fuse")
    after = mapped(module)
    names = [k.get_attr("kernel_name") for k in launches(after)]
    # The fused pass over exp(x) becomes three reductions and the elementwise result, each
    # computing exp itself.
    assert {"sum", "max", "min", "exp"} <= set(names)
    assert sum(kernel_ops(k).count("scalar.exp") for k in launches(after)) >= 4
    x = np.random.default_rng(seed).uniform(-1, 1, (rows, cols)).astype(np.float32)
    a, b, c, e = same_results(module, after, [x], rtol=1e-5)
    ex = np.exp(x)
    np.testing.assert_allclose(a, ex.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(b, ex.max(), rtol=1e-6)
    np.testing.assert_allclose(c, ex.min(axis=0), rtol=1e-6)
    np.testing.assert_allclose(e, ex, rtol=1e-6)


ACCUMULATE = '''
func.func @f(%x: !loops.buffer<?x?xT, space="device">) -> !loops.buffer<T, space="device"> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %init = "scalar.constant"() {value = INIT : T} : () -> T
  %m = loops.dim %x, 0 : !loops.buffer<?x?xT, space="device">
  %n = loops.dim %x, 1 : !loops.buffer<?x?xT, space="device">
  %acc = loops.alloc() : !loops.buffer<T, space="device">
  loops.fill %init, %acc : !loops.buffer<T, space="device">
  loops.for %i = %c0 to %m step %c1 {
    loops.for %j = %c0 to %n step %c1 {
      %v = loops.load %x[%i, %j] : !loops.buffer<?x?xT, space="device">
      %a = loops.load %acc[] : !loops.buffer<T, space="device">
      %s = "scalar.COMBINE"(%a, %v) : (T, T) -> T
      loops.store %s, %acc[] : !loops.buffer<T, space="device">
      loops.yield
    }
    loops.yield
  }
  func.return %acc : !loops.buffer<T, space="device">
}
'''


@pytest.mark.parametrize("combine, element, init, atomic", [
    ("add", "f32", "0.0", True), ("maximum", "f64", "-1.0e300", True),
    ("minimum", "i32", "1000", True), ("add", "i64", "0", True), ("mul", "f32", "1.0", False),
    ("add", "i16", "0", False)])
def test_a_reduction_to_one_value_combines_blocks_atomically_where_it_can(combine, element,
                                                                          init, atomic):
    module = module_of(ACCUMULATE.replace("COMBINE", combine).replace("INIT", init)
                       .replace("T", element))
    after = mapped(module, "map-to-gpu{block-size=8 max-blocks=4}")
    (launch,) = [k for k in launches(after) if k.get_attr("kernel_name") != "fill"]
    assert ("gpu.atomic_rmw" in kernel_ops(launch)) == atomic
    grid = launch.operands[0]
    # Without atomics one block does it all.
    assert (getattr(grid.owner, "name", "") == "scalar.constant") == (not atomic)
    dtype = np.dtype(module.functions[0].args[0].type.dtype)
    x = (np.arange(42).reshape(6, 7) % 5 + 1).astype(dtype)
    (got,) = same_results(module, after, [x], rtol=1e-6)
    want = {"add": np.sum, "maximum": np.max, "minimum": np.min, "mul": np.prod}[combine](x)
    if combine == "minimum":
        want = min(want, 1000)
    np.testing.assert_allclose(got, np.asarray(want).astype(dtype), rtol=1e-6)


def test_argmax_and_argmin_give_the_first_extreme_index():
    module = device_loops('''
    func.func @f(%x: tensor<?x?xf32>) -> (tensor<?xi64>, tensor<i64>)
        attributes {lowering.arg_devices = ["cuda"]} {
      %a = "tensor.argmax"(%x) {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xi64>
      %b = "tensor.argmin"(%x) {axes = [0, 1]} : (tensor<?x?xf32>) -> tensor<i64>
      func.return %a, %b : tensor<?xi64>, tensor<i64>
    }''')
    after = mapped(module)
    x = np.array([[1, 3, 3, 0], [2, 2, -1, -1], [5, 4, 5, 4]], dtype=np.float32)
    a, b = same_results(module, after, [x])
    np.testing.assert_array_equal(a, x.argmax(axis=1))
    assert b == x.argmin()


def test_atomic_combining_uses_the_reductions_kind():
    module = module_of(ACCUMULATE.replace("COMBINE", "maximum").replace("INIT", "-1.0e30")
                       .replace("T", "f32"))
    after = mapped(module)
    (atomic,) = [op for op in after.walk() if isinstance(op, AtomicRmwOp)]
    assert atomic.kind == "max"
    # Each block first reduces its threads' values in shared memory (tree steps and barriers).
    launch = atomic.ancestors()
    kernel = next(op for op in launch if op.name == "gpu.launch")
    assert any(isinstance(op, BarrierOp) for op in kernel.walk())
    x = np.random.default_rng(0).standard_normal((9, 13)).astype(np.float32)
    (got,), _ = run_on_copies(after, [x])
    assert got == x.max()
