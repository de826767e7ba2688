"""Bufferize ``tensor.pool2d`` and ``tensor.pool2d_grad`` as direct loop nests.

- ``pool2d``: ``loops.parallel`` over the first dimension, ``for`` the other leading dimensions
  and the output rows and columns; each output element folds over its window's rows and
  columns inside the input (the padding is never read: the window is clipped), then divides by
  the window's count for the averages (``average_inc_pad`` counts the padding).
- ``pool2d_grad`` gathers instead of scattering, so every thread writes only its own elements:
  a loop nest over the input's elements, each summing over the windows that hold it (the
  windows ``r`` with ``r*stride <= y + pad < r*stride + ws``) the output gradient, times
  ``1/count`` for the averages, or where the input equals the window's maximum for ``max``.

The sizes are checked at run time where they are not known: with ``ignore_border`` the window
fits the padded input, and the gradient's operands have the result's shape.
"""
from __future__ import annotations

import numpy as np

from lowering.dialects import scalar
from lowering.dialects.tensor import Pool2dGradOp, Pool2dOp
from lowering.ir.types import I64

from .core import BUFFERIZE, AlwaysFails, format_sizes


class PoolGeometry:
    """The sizes of one pooling (ints or index Values) and its run-time checks."""

    def __init__(self, ctx, op):
        ix = ctx.ix
        self.op = op
        sizes = ctx.sizes(op.input)
        self.lead, self.spatial = sizes[:-2], sizes[-2:]
        self.ws, self.stride, self.pad = tuple(op.ws), tuple(op.stride), tuple(op.pad)
        self.out = []
        for d, size in enumerate(self.spatial):
            padded = ix.add(size, 2 * self.pad[d])
            if op.ignore_border:
                ctx.check(ix.ge(padded, self.ws[d]),
                          f"the window ws={self.ws} is larger than the padded input "
                          f"(ignore_border=True)")
                count = ix.add(ix.floordiv(ix.max(ix.sub(padded, self.ws[d]), 0),
                                           self.stride[d]), 1)
            elif self.stride[d] >= self.ws[d]:
                count = ix.add(ix.floordiv(ix.max(ix.sub(padded, 1), 0), self.stride[d]), 1)
            else:  # Theano's count of the windows starting inside the input
                count = ix.add(ix.floordiv(ix.max(ix.sub(ix.add(padded, self.stride[d] - 1),
                                                         self.ws[d]), 0), self.stride[d]), 1)
            # An empty input has no windows.
            self.out.append(ix.select(ix.eq(size, 0), 0, count) if not isinstance(size, int)
                            else (0 if size == 0 else count))
        self.out_sizes = list(self.lead) + self.out

    def window(self, ix, d, r):
        """Window ``r``'s rows (``d = 0``) or columns inside the input, ``[lo, hi)``, and its
        element count (the averages' divisor)."""
        start = ix.sub(ix.mul(r, self.stride[d]), self.pad[d])
        size = self.spatial[d]
        lo, hi = ix.max(start, 0), ix.min(ix.add(start, self.ws[d]), size)
        if self.op.mode == "average_inc_pad":
            count = ix.sub(ix.min(ix.add(start, self.ws[d]), ix.add(size, self.pad[d])), start)
        else:
            count = ix.sub(hi, lo)
        return lo, ix.max(lo, hi), count


def _float_count(ix, count0, count1, element):
    return ix.cast(ix.cast(ix.mul(count0, count1), I64), element)


def _lowest(element):
    return -np.inf if element.is_float else np.iinfo(element.dtype).min


@BUFFERIZE.register(Pool2dOp)
def _lower_pool2d(ctx, op):
    rt = op.result.type
    try:
        geo = PoolGeometry(ctx, op)
    except AlwaysFails:
        return [ctx.unreachable(rt)]
    out = ctx.fresh(rt, geo.out_sizes)
    rank, element, mode = rt.rank, rt.element, op.mode
    x = ctx.reader(op.input, list(range(rank)))
    combine = scalar.MaximumOp if mode == "max" else scalar.AddOp
    init = ctx.constant(_lowest(element) if mode == "max" else 0, element)

    def element_at(b, ivs):
        ix = ctx.arith(b)
        lo0, hi0, count0 = geo.window(ix, 0, ivs[-2])
        lo1, hi1, count1 = geo.window(ix, 1, ivs[-1])

        def step(bb, window_ivs, carried):
            a = ctx.arith(bb)
            return [a.apply(combine, carried[0], x.load(bb, list(ivs[:-2]) + list(window_ivs)))]

        (value,) = ctx.fold(b, [hi0, hi1], [init], step, lowers=[lo0, lo1])
        if mode.startswith("average"):
            value = ix.apply(scalar.DivOp, value, _float_count(ix, count0, count1, element))
        ctx.store(b, value, out.buffer, ivs)

    ctx.loop_nest(geo.out_sizes, element_at)
    return [out]


@BUFFERIZE.register(Pool2dGradOp)
def _lower_pool2d_grad(ctx, op):
    rt = op.result.type
    try:
        geo = PoolGeometry(ctx, op)
        for what, v in (("result", op.output), ("output gradient", op.output_grad)):
            for d, size in enumerate(ctx.sizes(v)):
                ctx.check(ctx.ix.eq(size, geo.out_sizes[d]),
                          f"the pooling's {what} differs from the shape "
                          f"{format_sizes(geo.out_sizes)} in dimension {d}")
    except AlwaysFails:
        return [ctx.unreachable(rt)]
    sizes = ctx.sizes(op.input)
    gx = ctx.fresh(rt, sizes)
    rank, element, mode = rt.rank, rt.element, op.mode
    x = ctx.reader(op.input, list(range(rank)))
    out = ctx.reader(op.output, list(range(rank)))
    g = ctx.reader(op.output_grad, list(range(rank)))
    zero = ctx.constant(0, element)

    def element_at(b, ivs):
        ix = ctx.arith(b)
        lead, here = list(ivs[:-2]), list(ivs[-2:])
        # Windows holding padded position y + pad: r*stride <= y + pad < r*stride + ws.
        ranges = [_windows_holding(ix, here[d], geo, d) for d in range(2)]
        value_here = x.load(b, ivs) if mode == "max" else None

        def step(bb, window_ivs, carried):
            a = ctx.arith(bb)
            where = lead + list(window_ivs)
            grad = g.load(bb, where)
            if mode == "max":
                hit = a.apply(scalar.EqOp, value_here, out.load(bb, where))
                grad = a.apply(scalar.SelectOp, hit, grad, zero)
            elif mode.startswith("average"):
                count0 = geo.window(a, 0, window_ivs[0])[2]
                count1 = geo.window(a, 1, window_ivs[1])[2]
                grad = a.apply(scalar.DivOp, grad, _float_count(a, count0, count1, element))
            return [a.apply(scalar.AddOp, carried[0], grad)]

        (total,) = ctx.fold(b, [ranges[0][1], ranges[1][1]], [zero], step,
                            lowers=[ranges[0][0], ranges[1][0]])
        ctx.store(b, total, gx.buffer, ivs)

    ctx.loop_nest(sizes, element_at)
    return [gx]


def _windows_holding(ix, y, geo, d):
    """``[first, last)``: the windows along dimension ``d`` that hold input position ``y``."""
    at = ix.add(y, geo.pad[d])
    first = ix.floordiv(ix.add(ix.max(ix.sub(at, geo.ws[d] - 1), 0), geo.stride[d] - 1),
                        geo.stride[d])
    last = ix.min(geo.out[d], ix.add(ix.floordiv(at, geo.stride[d]), 1))
    return first, ix.max(first, last)
