"""A persistent pool of worker threads for parallel loops, written in LLVM IR over pthreads.

Compiled code runs a parallel loop with one call::

    void lowering_parallel_for(void (*body)(i64 begin, i64 end, i8* ctx), i64 trips, i8* ctx,
                               i64 threads)

which runs ``body`` over ``[0, trips)`` on up to ``threads`` threads: the calling thread and
``threads - 1`` workers. The pool is one small LLVM module, compiled and loaded once per process
(``install_thread_pool``); its symbol is registered for the JIT, so every compiled module shares
the same workers.

How a call runs:

- The workers are created on the first call that asks for them and never exit. Between loops a
  worker spins on the job counter for about ``SPIN_CYCLES`` time-stamp cycles (tens of
  microseconds; a loop that follows soon starts without a system call), then sleeps on a
  condition variable until the next loop wakes it.
- The iterations are claimed in chunks of ``grain`` (about ``trips / (CHUNKS_PER_THREAD *
  threads)``) from one atomic counter, by the caller and by each worker that wakes up in time.
  A worker that is slow to start (a busy machine) simply gets fewer chunks, and the caller never
  waits for a worker that has not started a chunk: it waits only for chunks that are running.
- Job ``g`` is published by setting ``generation`` to the even number ``g``, after its fields;
  the caller closes it (``generation + 1``, odd) once every chunk is claimed, then waits until
  no worker is inside it (``active == 0``). A worker enters by incrementing ``active`` and
  checking that the job it saw is still open (both sequentially consistent), so no worker ever
  reads the fields of a job being set up.
- One loop runs on the pool at a time: a call that finds it busy (another Python thread's
  loop, or a loop inside a loop body) runs its loop on its own thread. After ``fork`` the
  child has no workers; the first call there starts new ones.

Errors inside ``body`` are the body's business (it records its code in ``ctx``); every chunk
still runs, as the sequential loop would have run every iteration.

>>> text = thread_pool_ir()
>>> f'define void @"{POOL_FUNCTION}"(' in text
True
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..jit import Loader, ProcessLibrary

POOL_FUNCTION = "lowering_parallel_for"
# Bump when the pool's code changes (it is part of the disk cache's description).
POOL_VERSION = 1
# How long an idle worker spins before it sleeps, in time-stamp counter cycles (~80 µs at 2.5
# GHz): calls made in a loop from Python find their workers awake.
SPIN_CYCLES = 200_000
# Each thread claims about this many chunks of a loop (more: better balance when a thread is
# slowed down by other processes; fewer: fewer atomic operations).
CHUNKS_PER_THREAD = 8
# Chunks of more iterations than this are rounded to a multiple of it (whole vectors).
GRAIN_ALIGN = 64

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
I8P = I8.as_pointer()
VOID = ir.VoidType()
BODY_TYPE = ir.FunctionType(VOID, [I64, I64, I8P])
# Room for a pthread_mutex_t / pthread_cond_t on every platform (40 and 48 bytes on glibc).
SYNC_BYTES = 128


class _Pool:
    """The pool's module under construction: its globals and the C functions it calls."""

    def __init__(self, triple: str):
        self.module = ir.Module(name="lowering.thread_pool")
        self.x86 = triple.startswith(("x86_64", "i386", "i686"))
        m = self.module
        self.generation = self._global("pool.generation", I32, 1)  # odd: no open job
        self.next = self._global("pool.next", I64, 0)
        self.active = self._global("pool.active", I32, 0)
        self.sleepers = self._global("pool.sleepers", I32, 0)
        self.busy = self._global("pool.busy", I32, 0)
        self.workers = self._global("pool.workers", I64, 0)
        self.pid = self._global("pool.pid", I32, 0)
        self.body = self._global("pool.body", BODY_TYPE.as_pointer(), None)
        self.ctx = self._global("pool.ctx", I8P, None)
        self.trips = self._global("pool.trips", I64, 0)
        self.grain = self._global("pool.grain", I64, 1)
        self.job_threads = self._global("pool.job_threads", I64, 1)
        self.mutex = self._global("pool.mutex", ir.ArrayType(I8, SYNC_BYTES), None)
        self.cond = self._global("pool.cond", ir.ArrayType(I8, SYNC_BYTES), None)

        def c(name, ret, *args):
            fn = ir.Function(m, ir.FunctionType(ret, list(args)), name)
            return fn
        self.mutex_init = c("pthread_mutex_init", I32, I8P, I8P)
        self.mutex_lock = c("pthread_mutex_lock", I32, I8P)
        self.mutex_unlock = c("pthread_mutex_unlock", I32, I8P)
        self.cond_init = c("pthread_cond_init", I32, I8P, I8P)
        self.cond_wait = c("pthread_cond_wait", I32, I8P, I8P)
        self.cond_broadcast = c("pthread_cond_broadcast", I32, I8P)
        self.worker_type = ir.FunctionType(I8P, [I8P])
        self.create = c("pthread_create", I32, I64.as_pointer(), I8P,
                        self.worker_type.as_pointer(), I8P)
        self.detach = c("pthread_detach", I32, I64)
        self.getpid = c("getpid", I32)
        self.sched_yield = c("sched_yield", I32)
        self.cycles = c("llvm.readcyclecounter", I64)
        self.pause = c("llvm.x86.sse2.pause", VOID) if self.x86 else None

    def _global(self, name: str, ty: ir.Type, value) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.module, ty, name)
        g.linkage = "internal"
        g.initializer = ir.Constant(ty, value)
        g.align = 64  # one cache line each: spinning readers do not slow the writers down
        return g

    # -- helpers -----------------------------------------------------------------------------

    def function(self, name: str, fnty: ir.FunctionType, internal: bool = True):
        fn = ir.Function(self.module, fnty, name)
        if internal:
            fn.linkage = "internal"
        fn.attributes.add("nounwind")
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    def relax(self, b: ir.IRBuilder) -> None:
        if self.pause is not None:
            b.call(self.pause, [])

    def i8p(self, b: ir.IRBuilder, g) -> ir.Value:
        return b.bitcast(g, I8P)

    # -- the claim loop, run by the caller and by each worker ---------------------------------

    def define_run_chunks(self) -> ir.Function:
        fn, b = self.function("pool.run_chunks", ir.FunctionType(VOID, []))
        body = b.load(self.body)
        ctx = b.load(self.ctx)
        trips = b.load(self.trips)
        grain = b.load(self.grain)
        loop = fn.append_basic_block("claim")
        run = fn.append_basic_block("run")
        done = fn.append_basic_block("done")
        b.branch(loop)
        b.position_at_end(loop)
        begin = b.atomic_rmw("add", self.next, grain, "monotonic")
        b.cbranch(b.icmp_signed("<", begin, trips), run, done)
        b.position_at_end(run)
        end = b.add(begin, grain)
        end = b.select(b.icmp_signed("<", end, trips), end, trips)
        b.call(body, [begin, end, ctx])
        b.branch(loop)
        b.position_at_end(done)
        b.ret_void()
        return fn

    # -- workers -------------------------------------------------------------------------------

    def define_worker(self, run_chunks: ir.Function) -> ir.Function:
        fn, b = self.function("pool.worker", self.worker_type)
        index = b.ptrtoint(fn.args[0], I64)
        seen_slot = b.alloca(I32)
        b.store(b.load_atomic(self.generation, "acquire", 4), seen_slot)
        wait = fn.append_basic_block("wait")
        spin = fn.append_basic_block("spin")
        spin_more = fn.append_basic_block("spin.more")
        sleep = fn.append_basic_block("sleep")
        sleep_check = fn.append_basic_block("sleep.check")
        sleep_wait = fn.append_basic_block("sleep.wait")
        sleep_done = fn.append_basic_block("sleep.done")
        woken = fn.append_basic_block("woken")
        enter = fn.append_basic_block("enter")
        inside = fn.append_basic_block("inside")
        participate = fn.append_basic_block("participate")
        leave = fn.append_basic_block("leave")
        b.branch(wait)

        # Spin until the generation changes or SPIN_CYCLES pass.
        b.position_at_end(wait)
        start = b.call(self.cycles, [])
        b.branch(spin)
        b.position_at_end(spin)
        seen = b.load(seen_slot)
        current = b.load_atomic(self.generation, "acquire", 4)
        b.cbranch(b.icmp_unsigned("!=", current, seen), woken, spin_more)
        b.position_at_end(spin_more)
        self.relax(b)
        elapsed = b.sub(b.call(self.cycles, []), start)
        b.cbranch(b.icmp_unsigned("<", elapsed, ir.Constant(I64, SPIN_CYCLES)), spin, sleep)

        # Sleep on the condition variable (a caller broadcasts when it sees sleepers).
        b.position_at_end(sleep)
        mutex, cond = self.i8p(b, self.mutex), self.i8p(b, self.cond)
        b.call(self.mutex_lock, [mutex])
        b.atomic_rmw("add", self.sleepers, ir.Constant(I32, 1), "seq_cst")
        b.branch(sleep_check)
        b.position_at_end(sleep_check)
        now = b.load_atomic(self.generation, "seq_cst", 4)
        b.cbranch(b.icmp_unsigned("!=", now, b.load(seen_slot)), sleep_done, sleep_wait)
        b.position_at_end(sleep_wait)
        b.call(self.cond_wait, [cond, mutex])
        b.branch(sleep_check)
        b.position_at_end(sleep_done)
        b.atomic_rmw("sub", self.sleepers, ir.Constant(I32, 1), "seq_cst")
        b.call(self.mutex_unlock, [mutex])
        b.branch(woken)

        # A new generation: join it if it is an open job that wants this worker.
        b.position_at_end(woken)
        g = b.load_atomic(self.generation, "acquire", 4)
        b.store(g, seen_slot)
        is_open = b.icmp_unsigned("==", b.and_(g, ir.Constant(I32, 1)), ir.Constant(I32, 0))
        b.cbranch(is_open, enter, wait)
        b.position_at_end(enter)
        b.atomic_rmw("add", self.active, ir.Constant(I32, 1), "seq_cst")
        still = b.load_atomic(self.generation, "seq_cst", 4)
        b.cbranch(b.icmp_unsigned("==", still, g), inside, leave)
        b.position_at_end(inside)
        wanted = b.icmp_signed("<", b.add(index, ir.Constant(I64, 1)), b.load(self.job_threads))
        b.cbranch(wanted, participate, leave)
        b.position_at_end(participate)
        b.call(run_chunks, [])
        b.branch(leave)
        b.position_at_end(leave)
        b.atomic_rmw("sub", self.active, ir.Constant(I32, 1), "release")
        b.branch(wait)
        return fn

    def define_start_workers(self, worker: ir.Function) -> ir.Function:
        """``i64 pool.start(i64 wanted)``: (re)initialize after a fork, create workers up to
        ``wanted``; returns how many exist. Called with the pool held."""
        fn, b = self.function("pool.start", ir.FunctionType(I64, [I64]))
        (wanted,) = fn.args
        pid = b.call(self.getpid, [])
        fresh = b.icmp_signed("!=", pid, b.load(self.pid))
        with b.if_then(fresh, likely=False):
            # First use in this process (or the child of a fork): no workers, fresh sync state.
            b.store(pid, self.pid)
            b.store(ir.Constant(I64, 0), self.workers)
            b.store(ir.Constant(I32, 0), self.sleepers)
            b.store(ir.Constant(I32, 0), self.active)
            b.store(ir.Constant(I32, 1), self.generation)
            b.call(self.mutex_init, [self.i8p(b, self.mutex), ir.Constant(I8P, None)])
            b.call(self.cond_init, [self.i8p(b, self.cond), ir.Constant(I8P, None)])
        tid = b.alloca(I64)
        check = fn.append_basic_block("check")
        create = fn.append_basic_block("create")
        created = fn.append_basic_block("created")
        done = fn.append_basic_block("done")
        b.branch(check)
        b.position_at_end(check)
        have = b.load(self.workers)
        b.cbranch(b.icmp_signed("<", have, wanted), create, done)
        b.position_at_end(create)
        rc = b.call(self.create, [tid, ir.Constant(I8P, None), worker, b.inttoptr(have, I8P)])
        b.cbranch(b.icmp_signed("==", rc, ir.Constant(I32, 0)), created, done)
        b.position_at_end(created)
        b.call(self.detach, [b.load(tid)])
        b.store(b.add(have, ir.Constant(I64, 1)), self.workers)
        b.branch(check)
        b.position_at_end(done)
        b.ret(b.load(self.workers))
        return fn

    # -- the entry point -----------------------------------------------------------------------

    def define_parallel_for(self, run_chunks: ir.Function, start: ir.Function) -> ir.Function:
        fn, b = self.function(POOL_FUNCTION, ir.FunctionType(
            VOID, [BODY_TYPE.as_pointer(), I64, I8P, I64]), internal=False)
        body, trips, ctx, threads = fn.args
        inline = fn.append_basic_block("inline")
        try_pool = fn.append_basic_block("try.pool")
        acquired = fn.append_basic_block("acquired")
        release_inline = fn.append_basic_block("release.inline")
        run = fn.append_basic_block("run")
        b.cbranch(b.and_(b.icmp_signed(">", threads, ir.Constant(I64, 1)),
                         b.icmp_signed(">", trips, ir.Constant(I64, 1))), try_pool, inline)

        b.position_at_end(inline)
        b.call(body, [ir.Constant(I64, 0), trips, ctx])
        b.ret_void()

        b.position_at_end(try_pool)
        pair = b.cmpxchg(self.busy, ir.Constant(I32, 0), ir.Constant(I32, 1), "acquire",
                         "monotonic")
        b.cbranch(b.extract_value(pair, 1), acquired, inline)

        b.position_at_end(acquired)
        workers = b.call(start, [b.sub(threads, ir.Constant(I64, 1))])
        count = b.add(workers, ir.Constant(I64, 1))
        count = b.select(b.icmp_signed("<", count, threads), count, threads)
        b.cbranch(b.icmp_signed(">", count, ir.Constant(I64, 1)), run, release_inline)

        b.position_at_end(release_inline)
        b.store_atomic(ir.Constant(I32, 0), self.busy, "release", 4)
        b.branch(inline)

        b.position_at_end(run)
        pieces = b.mul(count, ir.Constant(I64, CHUNKS_PER_THREAD))
        grain = b.sdiv(b.add(trips, b.sub(pieces, ir.Constant(I64, 1))), pieces)
        align = ir.Constant(I64, GRAIN_ALIGN)
        rounded = b.mul(b.sdiv(b.add(grain, ir.Constant(I64, GRAIN_ALIGN - 1)), align), align)
        grain = b.select(b.icmp_signed(">", grain, align), rounded, grain)
        b.store(body, self.body)
        b.store(ctx, self.ctx)
        b.store(trips, self.trips)
        b.store(grain, self.grain)
        b.store(count, self.job_threads)
        b.store_atomic(ir.Constant(I64, 0), self.next, "monotonic", 8)
        closed = b.load_atomic(self.generation, "monotonic", 4)
        opened = b.add(closed, ir.Constant(I32, 1))
        b.store_atomic(opened, self.generation, "seq_cst", 4)
        sleeping = b.load_atomic(self.sleepers, "seq_cst", 4)
        with b.if_then(b.icmp_signed(">", sleeping, ir.Constant(I32, 0))):
            mutex = self.i8p(b, self.mutex)
            b.call(self.mutex_lock, [mutex])
            b.call(self.cond_broadcast, [self.i8p(b, self.cond)])
            b.call(self.mutex_unlock, [mutex])
        b.call(run_chunks, [])
        # Every chunk is claimed: close the job, wait for the workers still running one.
        b.store_atomic(b.add(opened, ir.Constant(I32, 1)), self.generation, "seq_cst", 4)
        spins = b.alloca(I64)
        b.store(ir.Constant(I64, 0), spins)
        wait = fn.append_basic_block("wait")
        relax = fn.append_basic_block("relax")
        done = fn.append_basic_block("done")
        b.branch(wait)
        b.position_at_end(wait)
        inside = b.load_atomic(self.active, "seq_cst", 4)
        b.cbranch(b.icmp_signed("==", inside, ir.Constant(I32, 0)), done, relax)
        b.position_at_end(relax)
        self.relax(b)
        n = b.add(b.load(spins), ir.Constant(I64, 1))
        b.store(n, spins)
        # A worker preempted in the middle of a chunk: let it have this core.
        with b.if_then(b.icmp_unsigned("==", b.and_(n, ir.Constant(I64, 1023)),
                                       ir.Constant(I64, 0))):
            b.call(self.sched_yield, [])
        b.branch(wait)
        b.position_at_end(done)
        b.store_atomic(ir.Constant(I32, 0), self.busy, "release", 4)
        b.ret_void()
        return fn


def thread_pool_ir(triple: str | None = None) -> str:
    """The LLVM IR of the pool for the target ``triple`` (default: this process's).

    >>> "pool.worker" in thread_pool_ir("x86_64-unknown-linux-gnu")
    True
    """
    if triple is None:
        import llvmlite.binding as llvm
        triple = llvm.get_process_triple()
    pool = _Pool(triple)
    run_chunks = pool.define_run_chunks()
    worker = pool.define_worker(run_chunks)
    start = pool.define_start_workers(worker)
    pool.define_parallel_for(run_chunks, start)
    return str(pool.module)


def thread_pool_description() -> str:
    """What determines the pool's code (a key for caches of its object code)."""
    return f"lowering thread pool v{POOL_VERSION} spin={SPIN_CYCLES} " \
           f"chunks={CHUNKS_PER_THREAD} align={GRAIN_ALIGN}"


def install_thread_pool(load: Loader | None = None) -> int:
    """Compile and load the pool once per process, register ``POOL_FUNCTION`` for the JIT and
    return its address. ``load(description, produce_ir, opt)`` gives a loaded library (with
    ``address(name)``) for the IR ``produce_ir()`` returns, e.g. from a disk cache; by default
    the IR is compiled here. The library stays loaded for the life of the process (its workers
    run its code).

    >>> install_thread_pool() == install_thread_pool()
    True
    """
    return _POOL.install(load)


_POOL = ProcessLibrary(POOL_FUNCTION, thread_pool_description, thread_pool_ir, opt=0)
