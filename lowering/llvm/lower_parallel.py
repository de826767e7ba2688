"""Multi-threaded ``loops.parallel``: outlining and a fork-join runtime over pthreads.

The loop's body becomes ``void body(i64 begin, i64 end, i8* ctx)``, which runs the iterations
``begin <= k < end`` of the outermost dimension (``iv0 = lower0 + k * step0``; the inner
dimensions are loops inside it). Every value the body uses from outside is stored in a context
struct ``{i32 error, ...}`` on the caller's stack and loaded back in the body (constants are not
stored: the body uses them directly, so static sizes and unit strides stay visible to LLVM).

At run time the caller estimates the work, ``trips of the parallel loop x trips of the loops
nested in it`` (a nested loop counts only if its bounds are known before the parallel loop, else
as one iteration; of several loops side by side the largest counts). At or above
``parallel_threshold`` and with at least two iterations, ``lowering.parallel_for`` splits the
outer iterations into ``min(num_threads, trips)`` contiguous chunks: chunk 0 runs on the calling
thread, the others on threads made with ``pthread_create`` and joined with ``pthread_join`` (a
chunk whose thread cannot be created runs on the calling thread). Below the threshold the caller
calls ``body(0, trips, ctx)`` itself.

A failing check inside the body frees what the body allocated, stores its code in ``ctx.error``
and returns; after the join the caller fails with that code.

>>> RUNTIME_FUNCTION, TASK_FUNCTION
('lowering.parallel_for', 'lowering.parallel_task')
"""
from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from lowering.dialects.loops import ForOp, ParallelOp
from lowering.ir.core import Operation, Value

from .lower_context import FunctionLowering, ModuleLowering
from .lower_loops import emit_loop, emit_loop_nest, new_access_group, trip_count
from .lower_values import DOUBLE, I1, I32, I64, I8P, VOID, flatten, i64, rebuild

RUNTIME_FUNCTION = "lowering.parallel_for"
TASK_FUNCTION = "lowering.parallel_task"
BODY_TYPE = ir.FunctionType(VOID, [I64, I64, I8P])
TASK_TYPE = ir.LiteralStructType([BODY_TYPE.as_pointer(), I64, I64, I8P])


# ---------------------------------------------------------------------------------------------
# What the body uses from outside


def captured_values(op: Operation) -> list[Value]:
    """The values used inside ``op``'s regions but defined outside ``op``, in first-use order."""
    inside: set[int] = set()
    nested = [o for o in op.walk() if o is not op]
    for o in [op, *nested]:
        for region in o.regions:
            for block in region.blocks:
                inside.update(id(a) for a in block.args)
    inside.update(id(r) for o in nested for r in o.results)
    seen: set[int] = set()
    captured: list[Value] = []
    for o in nested:
        for v in o.operands:
            if id(v) not in inside and id(v) not in seen:
                seen.add(id(v))
                captured.append(v)
    return captured


def _estimated_work(fl: FunctionLowering, op: ParallelOp, trips: list[ir.Value]) -> ir.Value:
    """A ``double`` estimate of the innermost iterations the parallel loop runs."""
    b = fl.builder

    def as_double(v: ir.Value) -> ir.Value:
        if isinstance(v, ir.Constant):
            return ir.Constant(DOUBLE, float(v.constant))
        return b.sitofp(v, DOUBLE)

    def nested(block) -> ir.Value:
        best: ir.Value = ir.Constant(DOUBLE, 1.0)
        for inner in block.ops:
            if not isinstance(inner, (ForOp, ParallelOp)):
                continue
            if isinstance(inner, ForOp):
                bounds = [(inner.lower, inner.upper, inner.step)]
            else:
                bounds = list(zip(inner.lowers, inner.uppers, inner.steps))
            work = nested(inner.body.block)
            for lo, hi, st in bounds:
                if all(v in fl.values for v in (lo, hi, st)):
                    n = as_double(trip_count(fl, fl.get(lo), fl.get(hi), fl.get(st)))
                    work = b.fmul(work, n)
            if isinstance(best, ir.Constant) and best.constant == 1.0:
                best = work
            else:
                best = b.select(b.fcmp_ordered(">", work, best), work, best)
        return best

    total = nested(op.body.block)
    for n in trips:
        total = b.fmul(total, as_double(n))
    return total


# ---------------------------------------------------------------------------------------------
# Outlining


def run_parallel(fl: FunctionLowering, op: ParallelOp, lowers, uppers, steps,
                 lower_body: Callable) -> None:
    """Outline ``op``'s body and run it on all threads, or inline when the work is small."""
    state = fl.state
    b = fl.builder
    captured = captured_values(op)
    parts = [x for v in captured for x in flatten(fl.get(v))] + [*lowers, *uppers, *steps]
    stored = [p for p in parts if not isinstance(p, ir.Constant)]
    ctx_type = ir.LiteralStructType([I32, *(p.type for p in stored)])
    body_fn = _outline(state, op, captured, parts, ctx_type, lower_body)

    ctx = fl.alloca(ctx_type, name="parallel.ctx")
    error_ptr = b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    b.store(ir.Constant(I32, 0), error_ptr)
    for index, value in enumerate(stored, start=1):
        b.store(value, b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True))
    ctx_bytes = b.bitcast(ctx, I8P)
    trips = [trip_count(fl, lo, hi, st) for lo, hi, st in zip(lowers, uppers, steps)]
    work = _estimated_work(fl, op, trips)
    threaded = b.and_(
        b.fcmp_ordered(">=", work, ir.Constant(DOUBLE, float(state.parallel_threshold))),
        fl.icmp(">=", trips[0], i64(2)))
    with b.if_else(threaded) as (on_threads, inline):
        with on_threads:
            b.call(parallel_for_function(state), [body_fn, trips[0], ctx_bytes])
        with inline:
            b.call(body_fn, [i64(0), trips[0], ctx_bytes])
    error = b.load(error_ptr)
    fl.fail_if(b.icmp_signed("!=", error, ir.Constant(I32, 0)), error)


def _outline(state: ModuleLowering, op: ParallelOp, captured: list[Value], parts: list,
             ctx_type: ir.LiteralStructType, lower_body: Callable) -> ir.Function:
    fn = ir.Function(state.module, BODY_TYPE, state.unique_name("lowering.parallel_body"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    begin, end, ctx_arg = fn.args
    error_slot: list[ir.Value] = []

    def on_failure(child: FunctionLowering, code: ir.Value) -> None:
        child.builder.store_atomic(code, error_slot[0], "monotonic", 4)
        child.builder.ret_void()

    child = FunctionLowering(state, fn, on_failure, outlined=True)
    b = child.builder
    ctx = b.bitcast(ctx_arg, ctx_type.as_pointer())
    error_slot.append(b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True))
    loaded = []
    index = 1
    for part in parts:
        if isinstance(part, ir.Constant):
            loaded.append(part)
        else:
            field = b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True)
            loaded.append(b.load(field))
            index += 1
    values = iter(loaded)
    for v in captured:
        child.bind(v, rebuild(b, v.type, values))
    rank = op.rank
    bounds = list(values)
    lowers, uppers, steps = bounds[:rank], bounds[rank:2 * rank], bounds[2 * rank:]
    group = new_access_group(child)

    def outer(k: ir.Value, _carried) -> list:
        iv0 = child.add(lowers[0], child.mul(k, steps[0]))
        emit_loop_nest(child, lowers[1:], uppers[1:], steps[1:],
                       lambda ivs: lower_body(child, op.body.block, [iv0, *ivs]), group)
        return []

    emit_loop(child, begin, end, i64(1), [], outer, group)
    b.ret_void()
    return fn


# ---------------------------------------------------------------------------------------------
# The fork-join runtime (one copy per module)


def _task_function(state: ModuleLowering) -> ir.Function:
    existing = state.module.globals.get(TASK_FUNCTION)
    if existing is not None:
        return existing
    fn = ir.Function(state.module, ir.FunctionType(I8P, [I8P]), TASK_FUNCTION)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    task = b.bitcast(fn.args[0], TASK_TYPE.as_pointer())
    fields = [b.load(b.gep(task, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True))
              for i in range(4)]
    b.call(fields[0], fields[1:])
    b.ret(ir.Constant(I8P, None))
    return fn


def parallel_for_function(state: ModuleLowering) -> ir.Function:
    """``void lowering.parallel_for(body, i64 trips, i8* ctx)``: run ``body`` over ``[0, trips)``
    split into ``min(num_threads, trips)`` chunks, one per thread."""
    existing = state.module.globals.get(RUNTIME_FUNCTION)
    if existing is not None:
        return existing
    threads = state.num_threads
    fn = ir.Function(state.module, ir.FunctionType(VOID, [BODY_TYPE.as_pointer(), I64, I8P]),
                     RUNTIME_FUNCTION)
    fn.linkage = "internal"
    body, trips, ctx = fn.args
    create = state.function("pthread_create", ir.FunctionType(
        I32, [I64.as_pointer(), I8P, ir.FunctionType(I8P, [I8P]).as_pointer(), I8P]))
    join = state.function("pthread_join", ir.FunctionType(I32, [I64, I8P.as_pointer()]))
    task_fn = _task_function(state)

    rt = FunctionLowering(state, fn, lambda *_: None)
    b = rt.builder
    tids = rt.alloca(ir.ArrayType(I64, threads), name="threads")
    tasks = rt.alloca(ir.ArrayType(TASK_TYPE, threads), name="tasks")
    created = rt.alloca(ir.ArrayType(I1, threads), name="created")
    limit = i64(threads)
    count = b.select(b.icmp_signed("<", trips, limit), trips, limit)
    chunk = b.sdiv(trips, count)
    extra = b.srem(trips, count)

    def start(t: ir.Value) -> ir.Value:  # t * chunk + min(t, extra)
        return b.add(b.mul(t, chunk), b.select(b.icmp_signed("<", t, extra), t, extra))

    def at(array, t, *more) -> ir.Value:
        return b.gep(array, [ir.Constant(I32, 0), t, *more], inbounds=True)

    def spawn(t: ir.Value, _carried) -> list:
        lo, hi = start(t), start(b.add(t, i64(1)))
        task = at(tasks, t)
        for i, value in enumerate((body, lo, hi, ctx)):
            b.store(value, at(tasks, t, ir.Constant(I32, i)))
        rc = b.call(create, [at(tids, t), ir.Constant(I8P, None), task_fn, b.bitcast(task, I8P)])
        ok = b.icmp_signed("==", rc, ir.Constant(I32, 0))
        b.store(ok, at(created, t))
        with b.if_then(b.not_(ok)):
            b.call(body, [lo, hi, ctx])
        return []

    def wait(t: ir.Value, _carried) -> list:
        with b.if_then(b.load(at(created, t))):
            b.call(join, [b.load(at(tids, t)), ir.Constant(I8P.as_pointer(), None)])
        return []

    emit_loop(rt, i64(1), count, i64(1), [], spawn)
    b.call(body, [i64(0), start(i64(1)), ctx])
    emit_loop(rt, i64(1), count, i64(1), [], wait)
    b.ret_void()
    return fn
