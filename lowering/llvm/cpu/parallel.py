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

Ctrl-C: a parallel loop that runs before the function's first write into an argument's memory
(a shared variable updated in place, a mutable input; ``inplace`` puts those writes last) is
cut into pieces of about ``POLL_WORK`` innermost iterations; each piece first compares the
process's SIGINT count (``interrupts``) with the one the function started with, and fails with
``INTERRUPT_CODE`` when they differ. So a call stops soon after Ctrl-C with every argument as it
was. Loops from the first such write on are not cut: they finish, and the call with them.

>>> POOL_FUNCTION
'lowering_parallel_for'
"""
from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from lowering.dialects.loops import ForOp, ParallelOp
from lowering.dialects.scalar import ConstantOp, ScalarOp
from lowering.ir.core import Operation, Value

from .context import FunctionLowering, ModuleLowering
from .loops import emit_loop, emit_loop_nest, interleave_count, new_access_group, trip_count
from .scalar import ScalarEmitter
from .values import DOUBLE, I32, I64, I8P, VOID, constant, flatten, i64, rebuild
from .interrupts import INTERRUPT_CODE, INTERRUPTS_FUNCTION
from .thread_pool import BODY_TYPE, POOL_FUNCTION

# Innermost iterations between two looks at the SIGINT count (well under a millisecond).
POLL_WORK = 1 << 18


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
    trips = [trip_count(fl, lo, hi, st) for lo, hi, st in zip(lowers, uppers, steps)]
    work = _estimated_work(fl, op, trips, lowers)
    polled = _may_stop_for_interrupts(fl, op)
    parts = [x for v in captured for x in flatten(fl.get(v))] + [*lowers, *uppers, *steps]
    if polled:
        parts += [_interrupts_at_start(fl), _piece_size(fl, trips[0], work)]
    stored = [p for p in parts if not isinstance(p, ir.Constant)]
    ctx_type = ir.LiteralStructType([I32, *(p.type for p in stored)])
    body_fn = _outline(state, op, captured, parts, ctx_type, lower_body, polled)

    ctx = fl.alloca(ctx_type, name="parallel.ctx")
    error_ptr = b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    b.store(ir.Constant(I32, 0), error_ptr)
    for index, value in enumerate(stored, start=1):
        b.store(value, b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True))
    ctx_bytes = b.bitcast(ctx, I8P)
    if state.num_threads == 1:
        b.call(body_fn, [i64(0), trips[0], ctx_bytes])
    else:
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
             ctx_type: ir.LiteralStructType, lower_body: Callable,
             polled: bool) -> ir.Function:
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
    lowers, uppers, steps = bounds[:rank], bounds[rank:2 * rank], bounds[2 * rank:3 * rank]
    if polled:  # sequential loops in the body poll too (see ``interrupt_mark``)
        child.__dict__["_interrupt_mark"] = bounds[3 * rank]
    group = new_access_group(child)
    interleave = interleave_count(op.body.block)

    def outer(k: ir.Value, _carried) -> list:
        iv0 = child.add(lowers[0], child.mul(k, steps[0]))
        emit_loop_nest(child, lowers[1:], uppers[1:], steps[1:],
                       lambda ivs: lower_body(child, op.body.block, [iv0, *ivs]), group,
                       interleave)
        return []

    inner_interleave = interleave if rank == 1 else None
    if not polled:
        emit_loop(child, begin, end, i64(1), [], outer, group, inner_interleave)
    else:
        at_start, piece = bounds[3 * rank:]

        def one_piece(start: ir.Value, _carried) -> list:
            now = child.builder.call(_interrupts_function(state), [])
            child.fail_if(child.builder.icmp_signed("!=", now, at_start),
                          ir.Constant(I32, INTERRUPT_CODE))
            stop = child.builder.add(start, piece)
            stop = child.builder.select(child.builder.icmp_signed("<", stop, end), stop, end)
            emit_loop(child, start, stop, i64(1), [], outer, group, inner_interleave)
            return []
        emit_loop(child, begin, end, piece, [], one_piece)
    child.builder.ret_void()
    return fn


# ---------------------------------------------------------------------------------------------
# Stopping for Ctrl-C (see ``interrupts``)


def _may_stop_for_interrupts(fl: FunctionLowering, op: ParallelOp) -> bool:
    """Whether ``op`` runs before the first op of its function that writes into an argument's
    memory (or may write anywhere), so that stopping in it leaves every argument unchanged."""
    from lowering.passes.buffer_analysis import effects, top_ancestor
    block = _function_block(op)
    if block is None:
        return False
    cache = fl.__dict__.setdefault("_before_argument_writes", {})
    if id(block) not in cache:
        arguments = set(block.args)
        before: set[int] = set()
        for top in block.ops:
            found = effects(top)
            if found.unknown or found.writes & arguments:
                break
            before.add(id(top))
        cache[id(block)] = before
    top = top_ancestor(op, block)
    return top is not None and id(top) in cache[id(block)]


# A sequential loop holding other loops looks at the SIGINT count every this many iterations.
POLL_ITERATIONS = 16


def interrupt_mark(fl: FunctionLowering, op: Operation) -> ir.Value | None:
    """The SIGINT count ``op`` (a loop) compares with to stop for Ctrl-C, or None where it may
    not stop (from the first write into an argument's memory on)."""
    if fl.outlined:
        return fl.__dict__.get("_interrupt_mark")
    return _interrupts_at_start(fl) if _may_stop_for_interrupts(fl, op) else None


def poll_interrupts(fl: FunctionLowering, iv: ir.Value, lower: ir.Value,
                    mark: ir.Value) -> None:
    """Every ``POLL_ITERATIONS`` iterations of the loop at ``iv`` (step 1), fail with
    ``INTERRUPT_CODE`` when a SIGINT arrived since ``mark`` was read."""
    b = fl.builder
    k = b.sub(iv, lower)
    due = b.icmp_signed("==", b.and_(k, i64(POLL_ITERATIONS - 1)), i64(0))
    with b.if_then(due, likely=False):
        now = b.call(_interrupts_function(fl.state), [])
        fl.fail_if(b.icmp_signed("!=", now, mark), ir.Constant(I32, INTERRUPT_CODE))


def _function_block(op: Operation):
    """The body block of the ``func.func`` holding ``op``."""
    parent = op.parent_op
    while parent is not None and parent.name != "func.func":
        parent = parent.parent_op
    return parent.regions[0].block if parent is not None else None


def _interrupts_function(state: ModuleLowering) -> ir.Function:
    fn = state.function(INTERRUPTS_FUNCTION, ir.FunctionType(I64, []))
    fn.attributes.add("nounwind")
    return fn


def _interrupts_at_start(fl: FunctionLowering) -> ir.Value:
    """The SIGINT count read once when the function starts (its entry block)."""
    cache = fl.__dict__
    if "_interrupts_at_start" not in cache:
        start = ir.IRBuilder(fl.entry_block)
        start.position_before(fl.entry_block.terminator)
        cache["_interrupts_at_start"] = start.call(_interrupts_function(fl.state), [])
    return cache["_interrupts_at_start"]


def _piece_size(fl: FunctionLowering, trips: ir.Value, work: ir.Value) -> ir.Value:
    """Iterations of the outermost dimension making about ``POLL_WORK`` innermost ones (at
    least 1, at most ``trips``)."""
    b = fl.builder
    trips_d = b.sitofp(trips, DOUBLE)
    one = ir.Constant(DOUBLE, 1.0)
    work = b.select(b.fcmp_ordered(">", work, one), work, one)
    size = b.fdiv(b.fmul(trips_d, ir.Constant(DOUBLE, float(POLL_WORK))), work)
    size = b.select(b.fcmp_ordered("<", size, trips_d), size, trips_d)
    size = b.select(b.fcmp_ordered(">", size, one), size, one)
    return b.fptosi(size, I64)


# ---------------------------------------------------------------------------------------------
# The thread pool (one per process, see ``thread_pool``)


def parallel_for_function(state: ModuleLowering) -> ir.Function:
    """The declaration of ``void lowering_parallel_for(body, i64 trips, i8* ctx, i64 threads)``:
    run ``body`` over ``[0, trips)`` on up to ``threads`` threads of the process's pool."""
    fn = state.function(POOL_FUNCTION, ir.FunctionType(
        VOID, [BODY_TYPE.as_pointer(), I64, I8P, I64]))
    fn.attributes.add("nounwind")
    return fn
