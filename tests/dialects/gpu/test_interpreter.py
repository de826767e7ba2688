"""The gpu dialect in the interpreter: kernels run thread by thread (or block by block with
barriers) and compared with NumPy; atomics, barrier divergence, transfers and copies."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lowering.dialects  # noqa: F401  (registers every dialect)
from lowering.dialects import scalar
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.gpu import (BarrierDivergenceError, BarrierOp, LaunchOp, MemcpyOp,
                                   SharedAllocOp, SyncOp, ThreadIdOp, ToDeviceOp, ToHostOp,
                                   captured_values, launch_sizes, run_kernel)
from lowering.dialects.loops import BufferIndexError, BufferType, DeallocOp, LoadOp, StoreOp
from lowering.ir.builder import Builder
from lowering.ir.interpreter import InterpreterError
from lowering.ir.types import F32, F64, INDEX, TensorType
from lowering.ir.verifier import verify

from .kernels import (atomic_kernel, block_sum_kernel, const, device, divergent_kernel,
                      grid_stride_kernel, host_module, ins)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), grid=st.integers(1, 3), block=st.sampled_from([1, 7, 32]))
def test_grid_stride_kernel_matches_numpy(n, grid, block):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    run_kernel(grid_stride_kernel(), grid, block, [x, out, n])
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)


def test_launch_func_runs_the_kernel_from_a_host_function():
    module = host_module(grid_stride_kernel(), grid=(4, 1, 1), block=(64, 1, 1))
    verify(module)
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros(1000, np.float32)
    run_function(module.lookup("main"), [x, out, np.int64(1000)])
    np.testing.assert_array_equal(out, 2 * x + 1)


@pytest.mark.parametrize("n, grid, block", [(1000, 4, 64), (5, 2, 8), (0, 1, 4), (4096, 3, 128)])
def test_block_tree_reduction_with_barriers_matches_numpy(n, grid, block):
    x = np.random.default_rng(n).random(n).astype(np.float32)
    partial = np.full(grid, np.nan, np.float32)
    kernel = block_sum_kernel(block)
    run_kernel(kernel, grid, block, [x, partial, n])
    np.testing.assert_allclose(partial.sum(), x.sum(dtype=np.float64), rtol=1e-5)
    # Each block summed exactly its grid-stride slice.
    for b in range(grid):
        rows = [x[i] for start in range(b * block, n, grid * block)
                for i in range(start, min(start + block, n))]
        np.testing.assert_allclose(partial[b], np.sum(rows, dtype=np.float64), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("with_barrier", [False, True])
def test_atomics_from_many_threads(with_barrier):
    grid, block = 3, 64
    total_threads = grid * block
    counter = np.zeros(1, np.int64)
    tickets = np.full(total_threads, -1, np.int64)
    maximum = np.full(1, -5, np.int64)
    total = np.zeros((), np.float32)
    run_kernel(atomic_kernel(with_barrier), grid, block, [counter, tickets, maximum, total])
    # Every thread got a different old value: the adds did not interleave.
    assert counter[0] == total_threads
    assert sorted(tickets.tolist()) == list(range(total_threads))
    assert maximum[0] == total_threads - 1
    assert total == pytest.approx(0.5 * total_threads)


def test_atomic_exch_and_min_return_the_old_value():
    from lowering.dialects.gpu import AtomicRmwOp, GpuFuncOp

    def body(b, buf, olds):
        tid = ins(b, ThreadIdOp.build("x"))
        value = ins(b, scalar.CastOp.build(tid, F64))
        zero, one = const(b, 0), const(b, 1)
        old = ins(b, AtomicRmwOp.build("exch", value, buf, [zero, zero]))
        ins(b, StoreOp.build(old, olds, [tid]))
        ins(b, AtomicRmwOp.build("min", value, buf, [zero, one]))
    kernel = GpuFuncOp.build("k", [device([1, 2], F64), device([4], F64)], body)
    buf = np.array([[-1.0, 10.0]])
    olds = np.zeros(4)
    run_kernel(kernel, 1, 4, [buf, olds])
    # Threads run in order: each sees the value the previous thread stored.
    assert olds.tolist() == [-1.0, 0.0, 1.0, 2.0]
    assert buf.tolist() == [[3.0, 0.0]]


def test_barrier_divergence_is_an_error_not_a_hang():
    # Depending on who comes first, thread 0 leaves while others wait, or a thread arrives
    # after thread 0 left; both name thread 0 and the barrier.
    with pytest.raises(BarrierDivergenceError, match=r"barrier divergence in block \(0, 0, 0\):"
                                                     r".*\(0, 0, 0\) finished the kernel"):
        run_kernel(divergent_kernel(), 1, 8, [np.zeros(1, np.float32)])


def test_a_failing_thread_releases_the_others_and_its_error_is_reported():
    from lowering.dialects.gpu import GpuFuncOp

    def body(b, x):
        tid = ins(b, ThreadIdOp.build("x"))
        ins(b, BarrierOp.build())
        ins(b, LoadOp.build(x, [tid]))  # out of bounds for threads >= 4
        ins(b, BarrierOp.build())
    kernel = GpuFuncOp.build("k", [device([4])], body)
    with pytest.raises(BufferIndexError, match="out of bounds"):
        run_kernel(kernel, 1, 16, [np.zeros(4, np.float32)])


def test_shared_memory_is_one_poisoned_array_per_block():
    from lowering.dialects.gpu import BlockIdOp, GpuFuncOp

    def body(b, seen, out):
        tid = ins(b, ThreadIdOp.build("x"))
        bid = ins(b, BlockIdOp.build("x"))
        cache = ins(b, SharedAllocOp.build((2,), F32))
        zero, one = const(b, 0), const(b, 1)
        # Thread 0 of each block reads before anyone wrote (poison), thread 1 reads what
        # thread 0 of the same block wrote.
        ins(b, StoreOp.build(ins(b, LoadOp.build(cache, [zero])), seen, [bid, tid]))
        ins(b, StoreOp.build(ins(b, scalar.CastOp.build(bid, F32)), cache, [zero]))
        ins(b, StoreOp.build(ins(b, LoadOp.build(cache, [one])), out, [bid, tid]))
    kernel = GpuFuncOp.build("k", [device([3, 2]), device([3, 2])], body)
    seen = np.zeros((3, 2), np.float32)
    out = np.zeros((3, 2), np.float32)
    run_kernel(kernel, 3, 2, [seen, out])
    assert np.isnan(seen[:, 0]).all()
    assert seen[:, 1].tolist() == [0.0, 1.0, 2.0]
    assert np.isnan(out).all()


def test_inline_launch_reads_values_from_above():
    x_type = BufferType((None,), F32, memory_space="device")
    host = FuncOp.build("main", [x_type, F32], [])
    b = Builder.at_end(host.body.block)
    x, scale = host.args
    one, four = const(b, 1), const(b, 4)

    def body(bb):
        tid = ins(bb, ThreadIdOp.build("x"))
        v = ins(bb, LoadOp.build(x, [tid]))
        ins(bb, StoreOp.build(ins(bb, scalar.MulOp.build(v, scale)), x, [tid]))
    launch = ins(b, LaunchOp.build([one, one, one], [four, one, one], body))
    ins(b, SyncOp.build())
    b.insert(ReturnOp.create([]))
    verify(ModuleOp.build([host]))
    assert captured_values(launch) == [x, scale]
    data = np.arange(4, dtype=np.float32)
    run_function(host, [data, np.float32(3)])
    assert data.tolist() == [0.0, 3.0, 6.0, 9.0]


def _transfer_function(arg_type):
    """main(h, dst): d = to_device(h); r = to_host(d); memcpy(d, dst_dev); memcpy(dst_dev, dst)."""
    host = FuncOp.build("main", [arg_type, BufferType((2, 3), F32)],
                        [BufferType((2, 3), F32), BufferType((2, 3), F32, memory_space="device")])
    b = Builder.at_end(host.body.block)
    h, dst = host.args
    d = ins(b, ToDeviceOp.build(h))
    r = ins(b, ToHostOp.build(d))
    d2 = ins(b, ToDeviceOp.build(r))
    ins(b, MemcpyOp.build(d, d2))
    ins(b, MemcpyOp.build(d2, dst))
    b.insert(ReturnOp.create([r, d]))
    verify(ModuleOp.build([host]))
    return host


def test_transfers_copy_into_fresh_contiguous_arrays():
    strided = BufferType((2, 3), F32, strides=(1, 2))
    host = _transfer_function(strided)
    source = np.arange(6, dtype=np.float32).reshape(3, 2).T  # a transposed view
    target = np.zeros((2, 3), np.float32)
    back, on_device = run_function(host, [source, target])
    for array in (back, on_device):
        np.testing.assert_array_equal(array, source)
        assert array.flags.c_contiguous
        assert not np.shares_memory(array, source)
    assert not np.shares_memory(back, on_device)
    np.testing.assert_array_equal(target, source)


def test_transfer_results_are_allocations_that_may_be_freed():
    host = FuncOp.build("main", [BufferType((3,), F32)], [])
    b = Builder.at_end(host.body.block)
    d = ins(b, ToDeviceOp.build(host.args[0]))
    ins(b, DeallocOp.build(d))
    ins(b, DeallocOp.build(d))
    b.insert(ReturnOp.create([]))
    with pytest.raises(InterpreterError, match="not a live allocation"):
        run_function(host, [np.zeros(3, np.float32)])


def test_memcpy_checks_run_time_shapes():
    t = BufferType((None,), F32)
    host = FuncOp.build("main", [t, BufferType((None,), F32, memory_space="device")], [])
    b = Builder.at_end(host.body.block)
    ins(b, MemcpyOp.build(*host.args))
    b.insert(ReturnOp.create([]))
    with pytest.raises(InterpreterError, match=r"source shape \(3,\) differs from target"):
        run_function(host, [np.zeros(3, np.float32), np.zeros(4, np.float32)])


def test_tensor_transfers_keep_the_value():
    t = TensorType((None, 2), F32)
    host = FuncOp.build("main", [t], [t])
    b = Builder.at_end(host.body.block)
    moved = ins(b, ToHostOp.build(ins(b, ToDeviceOp.build(host.args[0]))))
    b.insert(ReturnOp.create([moved]))
    verify(ModuleOp.build([host]))
    value = np.ones((3, 2), np.float32)
    (out,) = run_function(host, [value])
    np.testing.assert_array_equal(out, value)
    assert out is not value


def test_ids_outside_a_launch_are_an_interpreter_error():
    op = ThreadIdOp.build("x")
    from lowering.ir.interpreter import Interpreter
    with pytest.raises(InterpreterError, match="runs only in a kernel launched"):
        Interpreter().run_op(op)


def test_kernel_arguments_are_checked():
    kernel = grid_stride_kernel()
    with pytest.raises(ValueError, match="takes 3 argument"):
        run_kernel(kernel, 1, 1, [np.zeros(2, np.float32)])
    with pytest.raises(ValueError, match="kernel argument #0: dtype float64"):
        run_kernel(kernel, 1, 1, [np.zeros(2), np.zeros(2, np.float32), 2])


@pytest.mark.parametrize("grid, block, message", [
    (0, 1, "at least 1"), (1, 2048, "at most 1024 threads"), ((1, 70000), 1, "at most 65535"),
    (1, (1, 1, 65), "z at most 64"), ((1, 1, 1, 1), 1, "1 to 3 dimensions")])
def test_launch_sizes_follow_cuda_limits(grid, block, message):
    with pytest.raises(ValueError, match=message):
        run_kernel(grid_stride_kernel(), grid, block, [np.zeros(1, np.float32)] * 2 + [1])


def test_multidimensional_ids():
    from lowering.dialects.gpu import BlockDimOp, BlockIdOp, GpuFuncOp, GridDimOp

    def body(b, out):
        ids = [ins(b, cls.build(d)) for cls in (ThreadIdOp, BlockIdOp) for d in "xyz"]
        dims = [ins(b, cls.build(d)) for cls in (BlockDimOp, GridDimOp) for d in "xyz"]
        for k, v in enumerate(dims):
            ins(b, StoreOp.build(v, out, [*ids, const(b, k)]))
    kernel = GpuFuncOp.build("k", [device([2, 3, 1, 1, 2, 2, 6], INDEX)], body)
    out = np.full((2, 3, 1, 1, 2, 2, 6), -1, np.int64)
    run_kernel(kernel, (1, 2, 2), (2, 3, 1), [out])
    assert (out == np.array([2, 3, 1, 1, 2, 2])).all()


def test_launch_sizes_pad_to_three():
    assert launch_sizes([3], "grid") == (3, 1, 1)


def test_a_launch_of_four_blocks_of_sixty_four_threads_is_quick():
    import time
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(256, np.float32)
    start = time.perf_counter()
    run_kernel(grid_stride_kernel(), 4, 64, [x, out, 256])
    elapsed = time.perf_counter() - start
    np.testing.assert_array_equal(out, 2 * x + 1)
    assert elapsed < 5.0, f"256 threads of a 12-op kernel took {elapsed:.2f}s"


def test_a_kernel_argument_with_the_wrong_layout_is_rejected():
    t = BufferType((2, 2), F32, memory_space="device")
    from lowering.dialects.gpu import GpuFuncOp
    kernel = GpuFuncOp.build("k", [t], lambda b, x: None)
    with pytest.raises(ValueError, match="strides"):
        run_kernel(kernel, 1, 1, [np.zeros((2, 2), np.float32).T])
