"""The interpreter's model of GPU threads: per-launch, per-block and per-thread state, and the
barrier that holds the threads of a block together.

Each GPU thread runs in its own ``ThreadInterpreter``: its own environment of SSA values, its
thread and block ids, and the state it shares with the other threads of its block (shared memory,
the barrier) and of its launch (the lock that makes atomics atomic). Buffers are NumPy arrays that
every thread sees.

>>> launch = LaunchState(grid_dim=(2, 1, 1), block_dim=(4, 1, 1))
>>> t = ThreadInterpreter(launch, BlockState((1, 0, 0)), (3, 0, 0), {})
>>> t.thread_id, t.block_id, t.block_dim, t.grid_dim
((3, 0, 0), (1, 0, 0), (4, 1, 1), (2, 1, 1))
"""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from lowering.ir.core import Operation
from lowering.ir.interpreter import Interpreter, InterpreterError

Triple = tuple[int, int, int]


class BarrierDivergenceError(InterpreterError):
    """Threads of one block disagree about a ``gpu.barrier``: some wait at it while others have
    left the kernel (on a GPU: a hang or undefined behaviour)."""


class LaunchState:
    """What all threads of one launch share: the grid and block sizes and the atomics' lock."""

    def __init__(self, grid_dim: Triple, block_dim: Triple):
        self.grid_dim = grid_dim
        self.block_dim = block_dim
        self.lock = threading.Lock()

    @property
    def threads_per_block(self) -> int:
        x, y, z = self.block_dim
        return x * y * z


class BlockState:
    """What the threads of one block share: its id, its shared memory (one array per
    ``gpu.shared_alloc`` op) and, for kernels with barriers, the barrier."""

    def __init__(self, block_id: Triple, barrier: "BlockBarrier | None" = None):
        self.block_id = block_id
        self.barrier = barrier
        self._shared: dict[Operation, np.ndarray] = {}
        self._lock = threading.Lock()

    def shared_array(self, op: Operation, make: Callable[[], np.ndarray]) -> np.ndarray:
        """The block's array for ``op``, made by ``make()`` for the first thread that asks."""
        array = self._shared.get(op)
        if array is None:
            with self._lock:
                array = self._shared.get(op)
                if array is None:
                    array = self._shared[op] = make()
        return array


class BlockBarrier:
    """``__syncthreads`` for the ``n`` threads of a block run as Python threads.

    No thread passes ``wait`` until all ``n`` have reached it. A thread that leaves the kernel
    while others wait (or arrives after one has left) breaks the barrier: every waiting thread
    raises BarrierDivergenceError instead of hanging. ``abort`` breaks it when a thread failed.
    """

    def __init__(self, n: int, block_id: Triple):
        self.n = n
        self.block_id = block_id
        self._cond = threading.Condition()
        self._arrived = 0
        self._generation = 0
        self._waiting_at: Operation | None = None
        self._exited: list[Triple] = []
        self._broken: str | None = None
        self._failed = False

    def wait(self, op: Operation, thread_id: Triple) -> None:
        with self._cond:
            self._check(op)
            if self._exited:
                self._break(f"thread {thread_id} reached {_where(op)} after thread(s) "
                            f"{_threads(self._exited)} finished the kernel")
                self._check(op)
            self._arrived += 1
            if self._arrived == self.n:
                self._arrived = 0
                self._generation += 1
                self._waiting_at = None
                self._cond.notify_all()
                return
            if self._waiting_at is None:
                self._waiting_at = op
            generation = self._generation
            while generation == self._generation and self._broken is None:
                self._cond.wait()
            if generation == self._generation:
                self._check(op)

    def exit(self, thread_id: Triple) -> None:
        """``thread_id`` finished the kernel."""
        with self._cond:
            self._exited.append(thread_id)
            if self._arrived and self._broken is None:
                self._break(f"thread {thread_id} finished the kernel while {self._arrived} "
                            f"thread(s) wait at {_where(self._waiting_at)}")

    def abort(self, reason: str) -> None:
        """Release every waiting thread because another one failed."""
        with self._cond:
            if self._broken is None:
                self._failed = True
                self._broken = reason
                self._cond.notify_all()

    def _break(self, reason: str) -> None:
        self._broken = f"barrier divergence in block {self.block_id}: {reason}"
        self._cond.notify_all()

    def _check(self, op: Operation) -> None:
        if self._broken is not None:
            error = ThreadAborted if self._failed else BarrierDivergenceError
            raise error(self._broken, op)


class ThreadAborted(InterpreterError):
    """A thread stopped at a barrier because another thread of its block failed; the launch
    reports that thread's error instead."""


def _where(op: Operation | None) -> str:
    return "gpu.barrier" if op is None else f"gpu.barrier at {op.location.short()}"


def _threads(ids: list[Triple]) -> str:
    shown = ", ".join(map(str, ids[:4]))
    return shown + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")


class ThreadInterpreter(Interpreter):
    """The interpreter of one GPU thread: its own SSA environment, its ids, and the state shared
    with its block and its launch."""

    def __init__(self, launch: LaunchState, block: BlockState, thread_id: Triple, env: dict):
        super().__init__()
        self.env = env
        self.launch = launch
        self.block = block
        self.thread_id = thread_id

    @property
    def block_id(self) -> Triple:
        return self.block.block_id

    @property
    def block_dim(self) -> Triple:
        return self.launch.block_dim

    @property
    def grid_dim(self) -> Triple:
        return self.launch.grid_dim


def current_thread(interp: Interpreter, op: Operation) -> ThreadInterpreter:
    """``interp`` as the GPU thread running ``op`` (an InterpreterError outside a launch)."""
    if not isinstance(interp, ThreadInterpreter):
        raise InterpreterError(f"{op.name} at {op.location.short()} runs only in a kernel launched "
                               f"by gpu.launch_func, gpu.launch or run_kernel", op)
    return interp
