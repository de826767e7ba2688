"""The process's thread pool (``lowering_parallel_for``): every iteration runs exactly once, on
any number of threads, over many calls, from several Python threads at once, after a fork; the
workers really take part."""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np
import pytest

from lowering.llvm.jit import JitLibrary, compile_object
from lowering.llvm.cpu.thread_pool import POOL_FUNCTION, install_thread_pool, thread_pool_ir
from lowering.llvm.cpu.runtime import register_runtime_symbols

# count(begin, end, ctx): ctx = {i64* counts, i64* owners}: counts[i] += 1 (atomically) and
# owners[i] = pthread_self() for each iteration. drive(ctx, trips, threads) runs it on the pool.
# meet(begin, end, ctx): ctx = {i64 entered, i64 limit, i64 met}: each chunk counts itself in,
# then waits (up to `limit` polls) until two chunks are in; met = 1 when the first chunk saw a
# second one come in while it waited, which only another thread can do.
DRIVER = f'''
declare void @"{POOL_FUNCTION}"(void (i64, i64, i8*)*, i64, i8*, i64)
declare i64 @pthread_self()
declare i32 @sched_yield()

define internal void @count(i64 %begin, i64 %end, i8* %ctx) {{
entry:
  %fields = bitcast i8* %ctx to i64**
  %counts = load i64*, i64** %fields
  %owners.slot = getelementptr i64*, i64** %fields, i64 1
  %owners = load i64*, i64** %owners.slot
  %self = call i64 @pthread_self()
  %empty = icmp sge i64 %begin, %end
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [%begin, %entry], [%next, %loop]
  %c = getelementptr i64, i64* %counts, i64 %i
  %old = atomicrmw add i64* %c, i64 1 monotonic
  %o = getelementptr i64, i64* %owners, i64 %i
  store i64 %self, i64* %o
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %end
  br i1 %more, label %loop, label %exit
exit:
  ret void
}}

define void @drive(i8* %ctx, i64 %trips, i64 %threads) {{
  call void @"{POOL_FUNCTION}"(void (i64, i64, i8*)* @count, i64 %trips, i8* %ctx, i64 %threads)
  ret void
}}

define internal void @meet(i64 %begin, i64 %end, i8* %ctx) {{
entry:
  %entered = bitcast i8* %ctx to i64*
  %limit.slot = getelementptr i64, i64* %entered, i64 1
  %limit = load i64, i64* %limit.slot
  %before = atomicrmw add i64* %entered, i64 1 seq_cst
  br label %poll
poll:
  %k = phi i64 [0, %entry], [%k1, %wait]
  %now = load atomic i64, i64* %entered seq_cst, align 8
  %met = icmp sge i64 %now, 2
  %late = icmp sge i64 %k, %limit
  %stop = or i1 %met, %late
  br i1 %stop, label %exit, label %wait
wait:
  %y = call i32 @sched_yield()
  %k1 = add i64 %k, 1
  br label %poll
exit:
  %first = icmp eq i64 %before, 0
  %both = and i1 %first, %met
  br i1 %both, label %record, label %done
record:
  %met.slot = getelementptr i64, i64* %entered, i64 2
  store i64 1, i64* %met.slot
  br label %done
done:
  ret void
}}

define void @drive_meet(i8* %ctx, i64 %trips, i64 %threads) {{
  call void @"{POOL_FUNCTION}"(void (i64, i64, i8*)* @meet, i64 %trips, i8* %ctx, i64 %threads)
  ret void
}}
'''

_library = None


def _driver():
    global _library
    if _library is None:
        register_runtime_symbols()
        _library = JitLibrary(compile_object(DRIVER, opt=1))
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
    return (signature(_library.address("drive")), signature(_library.address("drive_meet")))


def _run(trips: int, threads: int):
    drive, _ = _driver()
    counts = np.zeros(max(trips, 1), np.int64)
    owners = np.zeros(max(trips, 1), np.int64)
    ctx = (ctypes.c_void_p * 2)(counts.ctypes.data, owners.ctypes.data)
    drive(ctypes.addressof(ctx), trips, threads)
    return counts[:trips], owners[:trips]


def test_the_pool_is_installed_once_and_its_ir_is_plain_llvm():
    assert install_thread_pool() == install_thread_pool()
    text = thread_pool_ir("x86_64-unknown-linux-gnu")
    assert "llvm.x86.sse2.pause" in text
    assert "llvm.x86" not in thread_pool_ir("aarch64-unknown-linux-gnu")


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("trips", [0, 1, 2, 3, 63, 64, 65, 1000, 100_003])
def test_every_iteration_runs_exactly_once(trips, threads):
    counts, _ = _run(trips, threads)
    assert np.array_equal(counts, np.ones(trips, np.int64))


def test_many_calls_in_a_row():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        trips = int(rng.integers(0, 5000))
        counts, _ = _run(trips, int(rng.integers(1, 5)))
        assert counts.sum() == trips and (trips == 0 or counts.max() == 1)


def test_workers_take_part():
    _, meet = _driver()
    ctx = np.array([0, 200_000, 0], np.int64)  # entered, polls before giving up, met
    meet(ctx.ctypes.data, 8, 2)
    assert ctx[0] == 8 and ctx[2] == 1


def test_loops_from_several_python_threads_at_once():
    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            trips = int(rng.integers(0, 20_000))
            counts, _ = _run(trips, 3)
            if counts.sum() != trips or (trips and counts.max() != 1):
                failures.append((seed, trips))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_parallel_loops():
    _run(10_000, 2)  # workers exist in the parent
    pid = os.fork()
    if pid == 0:  # the child: no workers until it asks for them
        ok = False
        try:
            ok = all(np.array_equal(_run(n, 2)[0], np.ones(n, np.int64))
                     for n in (1, 1000, 100_000))
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    counts, _ = _run(10_000, 2)
    assert np.array_equal(counts, np.ones(10_000, np.int64))
