"""Bufferizing the ops that work on each line of a tensor along one axis: the running sums and
products (``tensor.cumsum``, ``tensor.cumprod``) and ``tensor.argsort``.

Both loop in parallel over the other dimensions (so each line is one GPU thread, or one piece of
the CPU's parallel loop). A running reduction is a sequential ``loops.for`` along the line
carrying the total; ``argsort`` gives each element its rank (how many elements of its line come
before it in the stable order) with a ``loops.for`` over the line, and stores its index at that
rank: every loop over the line's elements is independent, so it runs on a GPU unchanged, at a
cost quadratic in the length of the line.
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.tensor import ArgSortOp, CumProdOp, CumulativeOp
from lowering.ir.types import I64

from .core import BUFFERIZE


def _with_axis(outer_ivs: list, axis: int, position) -> list:
    """The indices of one element: the line's outer indices with ``position`` at ``axis``."""
    return list(outer_ivs[:axis]) + [position] + list(outer_ivs[axis:])


def _prepare(ctx, op):
    """The input's sizes, the fresh result and a reader of the input addressed by the loop
    indices of every dimension."""
    sizes = ctx.sizes(op.input)
    return sizes, ctx.fresh(op.result.type, sizes), ctx.reader(op.input, list(range(len(sizes))))


@BUFFERIZE.register(CumulativeOp)
def _lower_cumulative(ctx, op):
    axis, element = op.axis, op.input.type.element
    sizes, out, reader = _prepare(ctx, op)
    combine = scalar.MulOp if isinstance(op, CumProdOp) else scalar.AddOp
    identity = ctx.constant(1 if isinstance(op, CumProdOp) else 0, element)
    length = sizes[axis]

    def along_line(b, outer_ivs):
        def step(bb, ivs, carried):
            a = ctx.arith(bb)
            position = a.sub(a.sub(length, 1), ivs[0]) if op.reverse else ivs[0]
            at = _with_axis(outer_ivs, axis, position)
            total = a.apply(combine, carried[0], reader.load(bb, at))
            ctx.store(bb, total, out.buffer, at)
            return [total]
        ctx.fold(b, [length], [identity], step)

    ctx.loop_nest([s for d, s in enumerate(sizes) if d != axis], along_line)
    return [out]


def _comes_before(a, element, other, mine, other_is_earlier):
    """Whether ``other`` precedes ``mine`` in NumPy's stable ascending order, NaNs last."""
    less = a.apply(scalar.LtOp, other, mine)
    same = a.apply(scalar.EqOp, other, mine)
    if element.is_float:
        other_nan, mine_nan = a.apply(scalar.IsNanOp, other), a.apply(scalar.IsNanOp, mine)
        less = a.or_(less, a.and_(mine_nan, a.not_(other_nan)))
        same = a.or_(same, a.and_(mine_nan, other_nan))
    return a.or_(less, a.and_(same, other_is_earlier))


@BUFFERIZE.register(ArgSortOp)
def _lower_argsort(ctx, op):
    axis, element = op.axis, op.input.type.element
    sizes, out, reader = _prepare(ctx, op)
    zero, one = ctx.constant(0), ctx.constant(1)

    def place(b, ivs):
        mine = reader.load(b, ivs)
        i = ivs[axis]

        def count(bb, js, carried):
            a = ctx.arith(bb)
            other = reader.load(bb, _with_axis(ivs[:axis] + ivs[axis + 1:], axis, js[0]))
            before = _comes_before(a, element, other, mine, a.lt(js[0], i))
            return [a.add(carried[0], a.select(before, one, zero))]

        (rank,) = ctx.fold(b, [sizes[axis]], [zero], count)
        a = ctx.arith(b)
        ctx.store(b, a.cast(i, I64), out.buffer, _with_axis(ivs[:axis] + ivs[axis + 1:], axis,
                                                            rank))

    ctx.loop_nest(sizes, place)
    return [out]
