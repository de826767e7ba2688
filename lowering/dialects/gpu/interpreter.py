"""Running kernels in the interpreter: ``gpu.launch_func``, ``gpu.launch`` and ``run_kernel``.

A launch runs the kernel body once for every thread of every block, blocks one after the other
(x fastest, then y, then z) and, within a block, threads in the same order. Each thread has its
own ``ThreadInterpreter`` (its SSA values and ids); buffers are NumPy arrays all threads see.

- A kernel without ``gpu.barrier`` runs its threads one after the other.
- A kernel with a ``gpu.barrier`` anywhere in its body (loops included) runs the threads of a
  block together, one Python thread each, so that every thread reaches a barrier before any
  passes it. A thread that finishes while others wait at a barrier raises
  BarrierDivergenceError instead of hanging; when a thread fails, the launch raises its error.

Launch sizes follow CUDA's limits: every size at least 1, at most 1024 threads per block
(z at most 64), grid y and z at most 65535.
"""
from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from lowering.ir.captures import captured_values
from lowering.ir.core import Region, Value, VerifyError
from lowering.ir.interpreter import INTERPRETER, InterpreterError
from lowering.ir.types import ScalarType

from lowering.dialects.loops.runtime import as_buffer, as_index
from lowering.dialects.loops.types import BufferType

from .kernels import GpuFuncOp, LaunchFuncOp, LaunchOp, resolve_kernel
from .sync import BarrierOp
from .threads import (BlockBarrier, BlockState, LaunchState, ThreadAborted, ThreadInterpreter,
                      Triple)

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_Z = 64
MAX_GRID_YZ = 65535


def launch_sizes(sizes, what: str) -> Triple:
    """``sizes`` (an int or up to three ints) as an (x, y, z) triple, checked against CUDA's
    limits (a ValueError says which is broken).

    >>> launch_sizes(128, "block"), launch_sizes((4, 2), "grid")
    ((128, 1, 1), (4, 2, 1))
    """
    triple = [sizes] if isinstance(sizes, (int, np.integer)) else list(sizes)
    if not 1 <= len(triple) <= 3:
        raise ValueError(f"{what} size takes 1 to 3 dimensions (x, y, z), got {sizes!r}")
    triple = tuple(int(s) for s in triple) + (1,) * (3 - len(triple))
    if any(s < 1 for s in triple):
        raise ValueError(f"{what} sizes must be at least 1 (CUDA rejects empty launches), got "
                         f"{triple}")
    if what == "block":
        if triple[0] * triple[1] * triple[2] > MAX_THREADS_PER_BLOCK or triple[2] > MAX_BLOCK_Z:
            raise ValueError(f"a block has at most {MAX_THREADS_PER_BLOCK} threads and z at most "
                             f"{MAX_BLOCK_Z}, got block {triple}")
    elif triple[1] > MAX_GRID_YZ or triple[2] > MAX_GRID_YZ:
        raise ValueError(f"grid y and z are at most {MAX_GRID_YZ}, got grid {triple}")
    return triple


def _positions(dims: Triple):
    x, y, z = dims
    return [(i, j, k) for k in range(z) for j in range(y) for i in range(x)]


def has_barrier(region: Region) -> bool:
    """Whether a ``gpu.barrier`` appears anywhere in ``region`` (nested regions included)."""
    return any(isinstance(op, BarrierOp)
               for block in region.blocks for top in block.ops for op in top.walk())


def run_grid(region: Region, args: list, base_env: dict[Value, object], grid: Triple,
             block: Triple) -> None:
    """Run ``region`` (a kernel body; ``args`` bind its entry block) once per thread of
    ``grid`` x ``block``; every thread starts from ``base_env`` (the values it may read from
    outside the body)."""
    launch = LaunchState(grid, block)
    threads = _positions(block)
    with_barriers = has_barrier(region)
    for block_id in _positions(grid):
        if with_barriers:
            _run_block_together(region, args, base_env, launch, block_id, threads)
        else:
            state = BlockState(block_id)
            for thread_id in threads:
                ThreadInterpreter(launch, state, thread_id, dict(base_env)).run_region(region, args)


def _run_block_together(region, args, base_env, launch, block_id, threads) -> None:
    barrier = BlockBarrier(len(threads), block_id)
    state = BlockState(block_id, barrier)
    errors: list[tuple[Triple, BaseException]] = []

    def run(thread_id: Triple) -> None:
        try:
            ThreadInterpreter(launch, state, thread_id, dict(base_env)).run_region(region, args)
        except BaseException as exc:  # noqa: BLE001 - handed to the launching thread below
            errors.append((thread_id, exc))
            barrier.abort(f"thread {thread_id} of block {block_id} failed: {exc}")
        else:
            barrier.exit(thread_id)

    workers = [threading.Thread(target=run, args=(t,), daemon=True,
                                name=f"gpu-thread-{block_id}-{t}") for t in threads]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        # The first failure is the cause; threads released from a barrier because of it only
        # report that it happened.
        causes = [e for _, e in errors if not isinstance(e, ThreadAborted)]
        raise (causes or [errors[0][1]])[0]


def _kernel_argument(value, t, index: int):
    if isinstance(t, BufferType):
        return as_buffer(value, t, f"kernel argument #{index}")
    if isinstance(t, ScalarType):
        return np.int64(as_index(value)) if t.name == "index" else t.dtype.type(value)
    raise ValueError(f"kernel argument #{index} has type {t}, which a kernel cannot take")


def run_kernel(func_op: GpuFuncOp, grid, block, args: Sequence) -> None:
    """Run the kernel ``func_op`` on a ``grid`` of ``block``-sized blocks (ints or up to three
    ints each) with ``args``: NumPy arrays for buffers (written in place), numbers for scalars.

    >>> from lowering.ir.types import F32, INDEX
    >>> from lowering.dialects.loops import BufferType, StoreOp
    >>> from .ids import BlockDimOp, BlockIdOp, ThreadIdOp
    >>> from lowering.dialects import scalar
    >>> def body(b, out):
    ...     tid = b.insert(ThreadIdOp.build("x")).result
    ...     bid = b.insert(BlockIdOp.build("x")).result
    ...     dim = b.insert(BlockDimOp.build("x")).result
    ...     i = b.insert(scalar.AddOp.build(b.insert(scalar.MulOp.build(bid, dim)).result, tid))
    ...     value = b.insert(scalar.CastOp.build(i.result, F32)).result
    ...     b.insert(StoreOp.build(value, out, [i.result]))
    >>> kernel = GpuFuncOp.build("iota", [BufferType((8,), F32, memory_space="device")], body)
    >>> out = np.zeros(8, np.float32)
    >>> run_kernel(kernel, 2, 4, [out])
    >>> out
    array([0., 1., 2., 3., 4., 5., 6., 7.], dtype=float32)
    """
    inputs = list(func_op.function_type.inputs)
    if len(args) != len(inputs):
        raise ValueError(f"kernel @{func_op.sym_name} takes {len(inputs)} argument(s), got "
                         f"{len(args)}")
    values = [_kernel_argument(v, t, i) for i, (v, t) in enumerate(zip(args, inputs))]
    run_grid(func_op.body, values, {}, launch_sizes(grid, "grid"), launch_sizes(block, "block"))


def _sizes(args) -> tuple[Triple, Triple]:
    return (launch_sizes([as_index(a) for a in args[0:3]], "grid"),
            launch_sizes([as_index(a) for a in args[3:6]], "block"))


@INTERPRETER.register(LaunchFuncOp)
def _launch_func(interp, op, args):
    try:
        kernel = resolve_kernel(op)
    except VerifyError as exc:
        raise InterpreterError(f"{op.name} at {op.location.short()}: {exc.message}", op) from exc
    grid, block = _sizes(args)
    inputs = list(kernel.function_type.inputs)
    if len(args) - 6 != len(inputs):
        raise ValueError(f"@{op.module}::@{op.kernel} takes {len(inputs)} argument(s), got "
                         f"{len(args) - 6}")
    values = [_kernel_argument(v, t, i) for i, (v, t) in enumerate(zip(args[6:], inputs))]
    run_grid(kernel.body, values, {}, grid, block)
    return []


@INTERPRETER.register(LaunchOp)
def _launch(interp, op, args):
    grid, block = _sizes(args)
    base_env = {v: interp.value(v) for v in captured_values(op)}
    run_grid(op.body, [], base_env, grid, block)
    return []
