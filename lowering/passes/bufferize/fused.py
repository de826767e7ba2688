"""Bufferize ``tensor.fused``: one loop nest over the iteration space running the scalar body.

The body's ops are copied into the innermost loop, reading one element of each input (Theano's
broadcasting, as for elementwise ops, with the same run-time size checks); its
``scalar.constant`` ops become constants at the top of the function.

- results without a reduction are stored into fresh buffers, in a loop nest like an
  elementwise op's;
- a single reduced result lowers like the reduction op of its kind (``bufferize.reductions``),
  with the body computing the values it reduces;
- several results with reductions share one pass: each reduced result accumulates in a buffer of
  its shape (finished in a second loop nest where needed), the outermost loop is a
  ``loops.parallel`` over a dimension none of them reduces, or sequential if there is none.
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.tensor import FusedOp

from lowering.dialects.scalar.position import LinearIndexOp

from .core import BUFFERIZE, Lowered
from .random import linear_index
from .reductions import Accumulator, Reduce, check_not_empty, loop_in_order, monoid, reduce_values


@BUFFERIZE.register(FusedOp)
def _lower_fused(ctx, op):
    space = op.space
    rank = space.rank
    sizes = ctx.broadcast_sizes(op.operands, space.shape, what="input")
    unreduced = [res.type.element for res, r in zip(op.results, op.reduction_list()) if r is None]
    if unreduced:
        widest = max(unreduced, key=lambda e: e.dtype.itemsize)
        ctx.check_broadcast_size(op.operands, sizes, widest)
    readers = [ctx.reader(v, [None if v.type.shape[d] == 1 else d for d in range(rank)])
               for v in op.operands]
    block = op.body.block

    def compute(b, ivs) -> list:
        """The body's yielded values at loop indices ``ivs``, computed with ``b``."""
        values = {arg: r.load(b, ivs) for arg, r in zip(block.args, readers)}
        terminator = block.last_op  # scalar.yield (the verifier makes sure)
        for inner in block.ops:
            if inner is terminator:
                break
            if isinstance(inner, scalar.ConstantOp):
                values[inner.result] = ctx.constant(inner.numpy_value, inner.result.type)
            elif isinstance(inner, LinearIndexOp):
                values[inner.result] = linear_index(ctx, b, ivs, sizes)
            else:
                b.insert(inner.clone(values))
        return [values[v] for v in terminator.operands]

    reductions = [None if r is None else
                  Reduce(r.kind, y.type, r.axes, r.keepdims, rank, res.type)
                  for r, y, res in zip(op.reduction_list(), op.yielded, op.results)]
    for r in reductions:
        if r is not None:
            check_not_empty(ctx, r, sizes, space.shape)
    if len(reductions) == 1 and reductions[0] is not None:
        return [reduce_values(ctx, reductions[0], sizes, lambda b, ivs: compute(b, ivs)[0])]
    if all(r is None for r in reductions):
        return _maps(ctx, op, sizes, compute)
    return _one_pass(ctx, op, reductions, sizes, compute)


def _maps(ctx, op, sizes, compute) -> list[Lowered]:
    """Results without reductions: one loop nest storing every yielded value."""
    if op.space.rank == 0:
        return [Lowered(res.type, scalar=v) for res, v in zip(op.results, compute(ctx.b, []))]
    outs = [ctx.fresh(res.type, sizes) for res in op.results]

    def body(b, ivs):
        for out, value in zip(outs, compute(b, ivs)):
            ctx.store(b, value, out.buffer, ivs)

    ctx.loop_nest(sizes, body)
    return outs


def _one_pass(ctx, op, reductions, sizes, compute) -> list[Lowered]:
    """Several results, some reduced, in one pass over the space."""
    rank = op.space.rank
    outs = []
    for res, r in zip(op.results, reductions):
        outs.append(ctx.fresh(res.type, sizes) if r is None
                    else Accumulator(ctx, r, monoid(ctx, r, sizes), sizes))
    reduced = {a for r in reductions if r is not None for a in r.axes}
    outer = next((d for d in range(rank) if d not in reduced), None)
    zero = ctx.constant(0)

    def body(b, ivs_by_dim):
        values = compute(b, [ivs_by_dim[d] for d in range(rank)])
        for out, value in zip(outs, values):
            if isinstance(out, Accumulator):
                out.update(b, ivs_by_dim, value, zero)
            else:
                ctx.store(b, value, out.buffer, [ivs_by_dim[d] for d in range(rank)])

    loop_in_order(ctx, sizes, outer, body)
    return [out.finish() if isinstance(out, Accumulator) else out for out in outs]
