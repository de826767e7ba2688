"""Counted loops in LLVM IR, with loop-carried values and parallel-loop metadata.

``emit_loop`` builds the canonical shape LLVM's loop passes expect (a header with phis, a body,
one latch, one exit; the induction variable steps with ``add nsw`` so that trip counts are
computable). A loop whose iterations are independent (``loops.parallel``, and the loops of
``copy``/``fill``) gets an access group: every load and store in its body is tagged with it, and
the loop's ``llvm.loop`` metadata says ``llvm.loop.parallel_accesses`` for it, so the vectorizer
needs no run-time alias checks between the buffers.

>>> import llvmlite.ir as ir
>>> from .context import FunctionLowering, ModuleLowering, return_code
>>> state = ModuleLowering(num_threads=1, parallel_threshold=1)
>>> fn = ir.Function(state.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "count")
>>> fl = FunctionLowering(state, fn, return_code)
>>> (n,) = emit_loop(fl, i64(0), fn.args[0], i64(1), [i64(0)],
...                  lambda iv, acc: [fl.builder.add(acc[0], iv)])
>>> _ = fl.builder.ret(n)
>>> "phi" in str(state.module) and "llvm.loop.mustprogress" in str(state.module)
True
"""
from __future__ import annotations

from typing import Callable, Sequence

import llvmlite.ir as ir

from .context import DistinctMetadata, FunctionLowering, translation_error
from .scalar import MATH
from .values import I64, i64


def new_access_group(fl: FunctionLowering) -> DistinctMetadata:
    """A fresh access group (``distinct !{}``)."""
    return DistinctMetadata(fl.state.module)


# Innermost loops that evaluate vector math functions are latency-bound: each element is a long
# chain of dependent fma, and LLVM's cost model does not interleave bodies that large by itself.
# Working on this many vectors side by side made loops of exp, sin, tanh and log 1.3-2x faster
# (docs/performance.md).
MATH_INTERLEAVE = 4
# A body calling this many math functions or more already has as many independent chains per
# vector; interleaving it would multiply the code LLVM compiles (every copy holds each function
# inlined) for little gain, so it is left as it is (the logistic regression's training step,
# with two sigmoids and two softpluses, compiled in two thirds of the time).
MATH_CHAINS = 3


def interleave_count(block) -> int | None:
    """The interleave count to ask of LLVM for a loop whose body is ``block``: for an innermost
    loop (no loop inside) that calls vector math functions, ``MATH_INTERLEAVE``, or 1 when it
    calls ``MATH_CHAINS`` or more; else None (LLVM decides).

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> from lowering.dialects import scalar
    >>> block = Block([F32])
    >>> e = block.append(scalar.ExpOp.build(block.args[0]))
    >>> interleave_count(block)
    4
    >>> for _ in range(2):
    ...     e = block.append(scalar.SinOp.build(e.result))
    >>> interleave_count(block)
    1
    """
    calls = 0
    for op in block.ops:
        if op.regions:
            return None
        if getattr(op, "short", None) in MATH or getattr(op, "short", None) == "pow":
            calls += 1
    if not calls:
        return None
    return MATH_INTERLEAVE if calls < MATH_CHAINS else 1


def _loop_id(fl: FunctionLowering, group: DistinctMetadata | None,
             interleave: int | None = None) -> DistinctMetadata:
    module = fl.state.module
    properties = [module.add_metadata(["llvm.loop.mustprogress"])]
    if group is not None:
        properties.append(module.add_metadata(["llvm.loop.parallel_accesses", group]))
    if interleave is not None:
        properties.append(module.add_metadata(["llvm.loop.interleave.count",
                                               ir.Constant(ir.IntType(32), interleave)]))
    loop_id = DistinctMetadata(module)
    loop_id.operands = (loop_id, *properties)
    return loop_id


def emit_loop(fl: FunctionLowering, lower: ir.Value, upper: ir.Value, step: ir.Value,
              carried: Sequence[ir.Value], body: Callable[[ir.Value, list], list],
              group: DistinctMetadata | None = None,
              interleave: int | None = None) -> list[ir.Value]:
    """``for (iv = lower; iv < upper; iv += step)`` (signed, ``step > 0``) carrying ``carried``.

    ``body(iv, values)`` emits one iteration at the builder and returns the next carried values;
    the result is the carried values after the loop. With ``group``, the loop is parallel over
    the accesses tagged with it; ``interleave`` asks LLVM for that interleave count.
    """
    b = fl.builder
    preheader = b.block
    header = fl.fn.append_basic_block("loop")
    body_block = fl.fn.append_basic_block("loop.body")
    exit_block = fl.fn.append_basic_block("loop.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(I64, name="iv")
    iv.add_incoming(lower, preheader)
    phis = []
    for value in carried:
        phi = b.phi(value.type)
        phi.add_incoming(value, preheader)
        phis.append(phi)
    b.cbranch(fl.icmp("<", iv, upper), body_block, exit_block)
    b.position_at_end(body_block)
    if group is not None:
        fl.access_groups.append(group)
    try:
        following = list(body(iv, list(phis)))
    finally:
        if group is not None:
            fl.access_groups.pop()
    next_iv = b.add(iv, step, flags=["nsw"])
    latch = b.block
    back = b.branch(header)
    back.set_metadata("llvm.loop", _loop_id(fl, group, interleave))
    iv.add_incoming(next_iv, latch)
    if len(following) != len(phis):
        raise ValueError(f"a loop body gave {len(following)} values for {len(phis)} carried")
    for phi, value in zip(phis, following):
        phi.add_incoming(value, latch)
    b.position_at_end(exit_block)
    return phis


def emit_loop_nest(fl: FunctionLowering, lowers: Sequence[ir.Value], uppers: Sequence[ir.Value],
                   steps: Sequence[ir.Value], body: Callable[[list], None],
                   group: DistinctMetadata | None = None,
                   interleave: int | None = None) -> None:
    """Nested loops, outermost first; ``body(ivs)`` emits the innermost iteration;
    ``interleave`` is asked of the innermost loop."""
    def level(d: int, ivs: list) -> None:
        if d == len(lowers):
            body(ivs)
            return
        emit_loop(fl, lowers[d], uppers[d], steps[d], [],
                  lambda iv, _: level(d + 1, [*ivs, iv]) or [], group,
                  interleave if d == len(lowers) - 1 else None)
    level(0, [])


def trip_count(fl: FunctionLowering, lower: ir.Value, upper: ir.Value, step: ir.Value) -> ir.Value:
    """How many times ``for iv = lower; iv < upper; iv += step`` runs (``step > 0``)."""
    if all(isinstance(v, ir.Constant) for v in (lower, upper, step)):
        return i64(max(0, -(-(upper.constant - lower.constant) // step.constant)))
    b = fl.builder
    span = b.sub(upper, lower)
    span = b.select(b.icmp_signed("<", span, i64(0)), i64(0), span)
    if isinstance(step, ir.Constant) and step.constant == 1:
        return span
    return b.sdiv(b.add(span, b.sub(step, i64(1))), step)


def check_positive_steps(fl: FunctionLowering, steps: Sequence[ir.Value], op) -> None:
    """Fail unless every step is positive (a constant step is checked by the translator)."""
    for step in steps:
        if isinstance(step, ir.Constant):
            if step.constant <= 0:
                raise translation_error(op, f"loop step must be positive, got {step.constant}")
            continue
        fl.check(fl.icmp(">", step, i64(0)), f"{op.name}: the loop step must be positive", op)
