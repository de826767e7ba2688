"""``loops.for``, ``loops.parallel`` and ``loops.assert`` in LLVM IR.

- ``loops.for`` is one counted loop whose carried values (scalars or buffers, flattened) are phis;
  a step that is not a positive constant is checked at run time.
- ``loops.parallel`` is a loop nest whose loops carry ``llvm.loop.parallel_accesses``. A parallel
  loop that is not inside another one is outlined, and run by the thread pool when the module
  is built for several threads and its work is large enough (``cpu.parallel``).
- ``loops.if`` is a conditional branch to one of two blocks that meet again; each result
  (flattened, as loop-carried values) is a phi of what the two branches yield. Buffers
  allocated in a branch and yielded stay live on the failure paths after the join.
- ``loops.assert`` branches to the failure path with the op's ``error_code`` when its condition
  is false.

>>> [cls.name for cls in (ForOp, ParallelOp, IfOp, AssertOp) if cls in CPU_LOWERING]
['loops.for', 'loops.parallel', 'loops.if', 'loops.assert']
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.dialects.loops import AssertOp, ForOp, IfOp, ParallelOp

from .context import CPU_LOWERING, FunctionLowering
from .loops import (check_positive_steps, emit_loop, emit_loop_nest, interleave_count,
                    new_access_group)
from .parallel import interrupt_mark, poll_interrupts, run_parallel
from .values import flatten, rebuild


def lower_body(fl: FunctionLowering, block, args) -> list:
    """Lower a loop body; allocations made in it are not live after it (the failure paths
    outside cannot see them). Returns the lowered values its terminator yields."""
    saved = list(fl.live)
    terminator = fl.lower_block(block, args)
    still_live = {id(a.value) for a in fl.live}
    fl.live = [a for a in saved if id(a.value) in still_live]
    return [fl.get(v) for v in terminator.operands] if terminator is not None else []


@CPU_LOWERING.register(ForOp)
def _for(fl: FunctionLowering, op):
    lower, upper, step = fl.get(op.lower), fl.get(op.upper), fl.get(op.step)
    check_positive_steps(fl, [step], op)
    inits = [x for v in op.inits for x in flatten(fl.get(v))]
    # A loop around other loops may stop for Ctrl-C between its iterations.
    mark = interrupt_mark(fl, op) if _holds_loops(op) and isinstance(step, ir.Constant) and \
        step.constant == 1 else None

    def body(iv: ir.Value, phis: list) -> list:
        if mark is not None:
            poll_interrupts(fl, iv, lower, mark)
        parts = iter(phis)
        carried = [rebuild(fl.builder, v.type, parts) for v in op.inits]
        yielded = lower_body(fl, op.body.block, [iv, *carried])
        return [x for value in yielded for x in flatten(value)]

    final = iter(emit_loop(fl, lower, upper, step, inits, body,
                           interleave=interleave_count(op.body.block)))
    return [rebuild(fl.builder, r.type, final) for r in op.outs]


def _holds_loops(op) -> bool:
    return any(inner.name in ("loops.for", "loops.parallel") for inner in op.walk()
               if inner is not op)


@CPU_LOWERING.register(ParallelOp)
def _parallel(fl: FunctionLowering, op):
    lowers = [fl.get(v) for v in op.lowers]
    uppers = [fl.get(v) for v in op.uppers]
    steps = [fl.get(v) for v in op.steps]
    check_positive_steps(fl, steps, op)
    if not fl.outlined:
        run_parallel(fl, op, lowers, uppers, steps, lower_body)
        return []
    emit_loop_nest(fl, lowers, uppers, steps,
                   lambda ivs: lower_body(fl, op.body.block, ivs), new_access_group(fl),
                   interleave_count(op.body.block))
    return []


@CPU_LOWERING.register(IfOp)
def _if(fl: FunctionLowering, op):
    b = fl.builder
    condition = fl.get(op.condition)
    then_block = fl.fn.append_basic_block("if.then")
    else_block = fl.fn.append_basic_block("if.else")
    join = fl.fn.append_basic_block("if.end")
    b.cbranch(condition, then_block, else_block)
    incoming = []
    for region, block in ((op.then_region, then_block), (op.else_region, else_block)):
        b.position_at_end(block)
        parts = [x for value in lower_body(fl, region.block, []) for x in flatten(value)]
        incoming.append((parts, b.block))
        b.branch(join)
    b.position_at_end(join)
    merged = []
    for k, part in enumerate(incoming[0][0]):
        phi = b.phi(part.type)
        for parts, pred in incoming:
            phi.add_incoming(parts[k], pred)
        merged.append(phi)
    final = iter(merged)
    results = [rebuild(b, r.type, final) for r in op.outs]
    for result, lowered in zip(op.outs, results):
        if op.yields_fresh_allocation(result.index):  # freed by a dealloc or a failure path
            fl.track(result, lowered.ptr)
    return results


@CPU_LOWERING.register(AssertOp)
def _assert(fl: FunctionLowering, op):
    code = fl.state.assert_code(op)
    condition = fl.get(op.condition)
    if isinstance(condition, ir.Constant) and condition.constant:
        return []
    fl.fail_if(fl.builder.not_(condition), code)
    return []
