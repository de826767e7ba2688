"""Bufferize ``tensor.random``: one loop nest computing each element from its position, and the
position of the current element in a fused body (``scalar.linear_index``); and ``tensor.check``,
the run-time check of a random variable's arguments: a ``loops.assert``."""
from __future__ import annotations

from lowering.dialects.scalar.philox import Emitter
from lowering.dialects.tensor import CheckOp, RandomOp
from lowering.ir.types import UI64

from .core import BUFFERIZE, Lowered
from .shapes import checked_dims


def linear_index(ctx, b, ivs, sizes):
    """The row-major position of loop indices ``ivs`` in a space of ``sizes``, as ``ui64``."""
    ix = ctx.arith(b)
    position = 0
    for iv, size in zip(ivs, sizes):
        position = ix.add(ix.mul(position, size), iv)
    return ix.cast(position, UI64)


@BUFFERIZE.register(RandomOp)
def _lower_random(ctx, op):
    rt = op.result.type
    sizes = checked_dims(ctx, op.dims, rt, "size dimension")
    key, counter = ctx.element(op.key), ctx.element(op.counter)

    def element(b, ivs):
        e = Emitter(b.insert, constant=ctx.constant)
        return op.emit_element(e, key, counter, linear_index(ctx, b, ivs, sizes))

    if rt.rank == 0:
        return [Lowered(rt, scalar=element(ctx.b, []))]
    out = ctx.fresh(rt, sizes)
    ctx.loop_nest(out.sizes, lambda b, ivs: ctx.store(b, element(b, ivs), out.buffer, ivs))
    return [out]


@BUFFERIZE.register(CheckOp)
def _lower_check(ctx, op):
    ctx.check(ctx.element(op.condition), op.message)
    return [ctx.lowered(op.input)]
