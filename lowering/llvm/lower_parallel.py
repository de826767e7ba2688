"""Multi-threaded ``loops.parallel``: outlining, and a call into the process's thread pool.

The loop's body becomes ``void body(i64 begin, i64 end, i8* ctx)``, which runs the iterations
``begin <= k < end`` of the outermost dimension (``iv0 = lower0 + k * step0``; the inner
dimensions are loops inside it). Every value the body uses from outside is stored in a context
struct ``{i32 error, ...}`` on the caller's stack and loaded back in the body (constants are not
stored: the body uses them directly, so static sizes and unit strides stay visible to LLVM).

At run time the caller estimates the work, ``trips of the parallel loop x trips of the loops
nested in it`` (of several loops side by side the largest counts). A nested loop's bounds known
before the parallel loop are used as they are; bounds the body computes with scalar ops from
those and the parallel indices (a chunk of a reduction, ``[c * n // k, (c + 1) * n // k)``) are
evaluated for the first iteration; other bounds count as one iteration. At or above
``parallel_threshold`` and with at least two iterations, the loop runs on the process's thread
pool (``thread_pool``: ``lowering_parallel_for``, workers created once and kept, iterations
claimed in chunks by the caller and the workers); below it the caller calls
``body(0, trips, ctx)`` itself.

A failing check inside the body frees what the body allocated, stores its code in ``ctx.error``
and returns; once the loop is over the caller fails with that code.

>>> POOL_FUNCTION
'lowering_parallel_for'
"""
from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from lowering.dialects.loops import ForOp, ParallelOp
from lowering.dialects.scalar import ConstantOp, ScalarOp
from lowering.ir.core import Operation, Value

from .lower_context import FunctionLowering, ModuleLowering
from .lower_loops import (emit_loop, emit_loop_nest, interleave_count, new_access_group,
                          trip_count)
from .lower_scalar import ScalarEmitter
from .lower_values import DOUBLE, I32, I64, I8P, VOID, constant, flatten, i64, rebuild
from .thread_pool import BODY_TYPE, POOL_FUNCTION


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


def _at_first_iteration(fl: FunctionLowering, op: ParallelOp, lowers: list[ir.Value]):
    """``value(v)``: the LLVM value ``v`` has in the first iteration of ``op``, computed before
    the loop, or None when that takes more than scalar ops on values known before the loop and
    on the loop's indices."""
    first = dict(zip(op.induction_vars, lowers))
    memo: dict[Value, ir.Value | None] = {}

    def value(v: Value) -> ir.Value | None:
        if v in fl.values:
            return fl.get(v)
        if v in first:
            return first[v]
        if v in memo:
            return memo[v]
        memo[v] = None  # (guards against cycles)
        owner = getattr(v, "owner", None)
        result = None
        if isinstance(owner, ConstantOp):
            result = constant(owner.result.type, owner.numpy_value)
        elif isinstance(owner, ScalarOp) and _inside(owner, op):
            args = [value(a) for a in owner.operands]
            if all(a is not None for a in args):
                try:
                    result = ScalarEmitter(fl.builder).emit(
                        type(owner), args, [a.type for a in owner.operands], owner.result.type)
                except ValueError:  # an op the emitter has no rule for: no estimate from it
                    result = None
        memo[v] = result
        return result
    return value


def _inside(inner: Operation, op: Operation) -> bool:
    parent = inner.parent_op
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op
    return False


def _estimated_work(fl: FunctionLowering, op: ParallelOp, trips: list[ir.Value],
                    lowers: list[ir.Value]) -> ir.Value:
    """A ``double`` estimate of the innermost iterations the parallel loop runs."""
    b = fl.builder
    first_value = _at_first_iteration(fl, op, lowers)

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
                known = [first_value(v) for v in (lo, hi, st)]
                if all(v is not None for v in known):
                    n = as_double(trip_count(fl, *known))
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
    """Outline ``op``'s body and run it on the thread pool, or on this thread when the work is
    small or the module is built for one thread (outlined all the same: the loop is then the
    same machine code whatever the number of threads, and so are its results)."""
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
    if state.num_threads == 1:
        b.call(body_fn, [i64(0), trips[0], ctx_bytes])
    else:
        work = _estimated_work(fl, op, trips, lowers)
        threaded = b.and_(
            b.fcmp_ordered(">=", work, ir.Constant(DOUBLE, float(state.parallel_threshold))),
            fl.icmp(">=", trips[0], i64(2)))
        with b.if_else(threaded) as (on_threads, inline):
            with on_threads:
                b.call(parallel_for_function(state),
                       [body_fn, trips[0], ctx_bytes, i64(state.num_threads)])
            with inline:
                b.call(body_fn, [i64(0), trips[0], ctx_bytes])
    error = b.load(error_ptr)
    fl.fail_if(b.icmp_signed("!=", error, ir.Constant(I32, 0)), error)


def _outline(state: ModuleLowering, op: ParallelOp, captured: list[Value], parts: list,
             ctx_type: ir.LiteralStructType, lower_body: Callable) -> ir.Function:
    fn = ir.Function(state.module, BODY_TYPE, state.unique_name("lowering.parallel_body"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    # Called directly below the threshold and through the pool above it: inlining the direct
    # call would compile (and vectorize) the whole loop nest twice.
    fn.attributes.add("noinline")
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
    interleave = interleave_count(op.body.block)

    def outer(k: ir.Value, _carried) -> list:
        iv0 = child.add(lowers[0], child.mul(k, steps[0]))
        emit_loop_nest(child, lowers[1:], uppers[1:], steps[1:],
                       lambda ivs: lower_body(child, op.body.block, [iv0, *ivs]), group,
                       interleave)
        return []

    emit_loop(child, begin, end, i64(1), [], outer, group, interleave if rank == 1 else None)
    b.ret_void()
    return fn


# ---------------------------------------------------------------------------------------------
# The thread pool (one per process, see ``thread_pool``)


def parallel_for_function(state: ModuleLowering) -> ir.Function:
    """The declaration of ``void lowering_parallel_for(body, i64 trips, i8* ctx, i64 threads)``:
    run ``body`` over ``[0, trips)`` on up to ``threads`` threads of the process's pool."""
    fn = state.function(POOL_FUNCTION, ir.FunctionType(
        VOID, [BODY_TYPE.as_pointer(), I64, I8P, I64]))
    fn.attributes.add("nounwind")
    return fn
