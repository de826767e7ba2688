"""Bufferize ``tensor.softmax`` and ``tensor.log_softmax``, numerically stable.

For each line along the axis (a ``loops.parallel`` over the other dimensions, or over the axis
itself for a vector), three passes over the line: the maximum ``m`` (NaN propagates), the sum of
``exp(x - m)``, then ``exp(x - m) / sum`` or ``(x - m) - log(sum)``: NumPy's formula, as the
interpreter's rule computes it. Large inputs give finite results; a line holding NaN or +inf,
or all -inf, is all NaN (``inf - inf``).
"""
from __future__ import annotations

import numpy as np

from lowering.dialects import scalar
from lowering.dialects.tensor import LogSoftmaxOp, SoftmaxOp

from .core import BUFFERIZE


@BUFFERIZE.register(SoftmaxOp, LogSoftmaxOp)
def _lower_softmax(ctx, op):
    x, rt = op.input, op.result.type
    axis, rank, element = op.normalized_axis, rt.rank, rt.element
    sizes = ctx.sizes(x)
    out = ctx.fresh(rt, sizes)
    others = [d for d in range(rank) if d != axis]
    reader = ctx.reader(x, list(range(rank)))
    take_log = isinstance(op, LogSoftmaxOp)

    def line(b, other_ivs):
        def at(i):
            by_dim = dict(zip(others, other_ivs))
            by_dim[axis] = i
            return [by_dim[d] for d in range(rank)]

        def peak_step(bb, ivs, carried):
            a = ctx.arith(bb)
            return [a.apply(scalar.MaximumOp, carried[0], reader.load(bb, at(ivs[0])))]

        (shift,) = ctx.fold(b, [sizes[axis]], [ctx.constant(-np.inf, element)], peak_step)
        a = ctx.arith(b)

        def sum_step(bb, ivs, carried):
            s = ctx.arith(bb)
            shifted = s.apply(scalar.SubOp, reader.load(bb, at(ivs[0])), shift)
            return [s.apply(scalar.AddOp, carried[0], s.apply(scalar.ExpOp, shifted))]

        (total,) = ctx.fold(b, [sizes[axis]], [ctx.constant(0, element)], sum_step)
        log_total = a.apply(scalar.LogOp, total) if take_log else None

        def store(bb, ivs):
            s = ctx.arith(bb)
            where = at(ivs[0])
            shifted = s.apply(scalar.SubOp, reader.load(bb, where), shift)
            if take_log:
                value = s.apply(scalar.SubOp, shifted, log_total)
            else:
                value = s.apply(scalar.DivOp, s.apply(scalar.ExpOp, shifted), total)
            ctx.store(bb, value, out.buffer, where)

        ctx.loop_nest([sizes[axis]], store, parallel=not others, builder=b)

    ctx.loop_nest([sizes[d] for d in others], line)
    return [out]
