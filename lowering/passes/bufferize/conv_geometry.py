"""What the direct and the im2col lowerings of ``tensor.conv2d`` and its gradients share: the
geometry of one convolution (sizes, paddings, the run-time checks) and the valid ranges of the
loops over filter taps and output positions.

>>> from lowering.passes.bufferize.core import Arith
>>> valid_range(Arith(None, None), -1, 1, 4, 3)
(1, 3)
"""
from __future__ import annotations

from lowering.dialects.loops import ForOp, LoadOp, YieldOp
from lowering.ir.builder import Builder

from .core import format_sizes


def valid_range(ix, base, step, length, limit):
    """``[first, last)``: the loop indices ``t`` in ``[0, limit)`` with ``base + t*step`` in
    ``[0, length)`` (``base`` may be negative; ``step`` is positive).

    >>> from lowering.passes.bufferize.core import Arith
    >>> valid_range(Arith(None, None), -2, 1, 5, 9), valid_range(Arith(None, None), 3, 2, 6, 9)
    ((2, 7), (0, 2))
    """
    first = ix.floordiv(ix.add(ix.max(0, ix.neg(base)), step - 1), step)
    last = ix.min(limit, ix.floordiv(ix.add(ix.max(0, ix.sub(length, base)), step - 1), step))
    return first, ix.max(first, last)


def for_range(ctx, b: Builder, lower, upper, body) -> None:
    """``loops.for t = lower to upper``, calling ``body(builder, t)`` inside."""
    loop = b.insert(ForOp.build(ctx.ix.value(lower), ctx.ix.value(upper), ctx.constant(1)))
    inner = Builder.at_end(loop.body.block)
    body(inner, loop.induction_var)
    loop.body.block.append(YieldOp.build())


class ConvGeometry:
    """The sizes of one convolution (ints or index Values) and its run-time checks."""

    def __init__(self, ctx, op, x, w, g=None):
        ix = ctx.ix
        self.op = op
        self.batch, self.channels, self.rows, self.cols = ctx.sizes(x)
        self.outputs, filter_channels, self.krows, self.kcols = ctx.sizes(w)
        self.stride = tuple(op.subsample)
        self.dilation = tuple(op.dilation)
        self.pads = []
        for d, kernel in enumerate((self.krows, self.kcols)):
            mode = op.border_mode
            self.pads.append(0 if mode == "valid" else op.pad[d] if mode == "explicit" else
                             ix.mul(op.dilation[d], ix.sub(kernel, 1)) if mode == "full" else
                             ix.mul(op.dilation[d], ix.floordiv(kernel, 2)))
        ctx.check(ix.eq(self.channels, filter_channels),
                  "the filters' input channels differ from the input's channels")
        out = []
        for d, (size, kernel) in enumerate(((self.rows, self.krows), (self.cols, self.kcols))):
            span = ix.add(ix.mul(self.dilation[d], ix.sub(kernel, 1)), 1)
            room = ix.sub(ix.add(size, ix.mul(2, self.pads[d])), span)
            ctx.check(ix.ge(room, 0), "the filters do not fit the padded input")
            out.append(ix.add(ix.floordiv(ix.max(room, 0), self.stride[d]), 1))
        self.out_rows, self.out_cols = out
        if g is not None:
            expected = [self.batch, self.outputs, self.out_rows, self.out_cols]
            for d, size in enumerate(ctx.sizes(g)):
                ctx.check(ix.eq(size, expected[d]),
                          f"the output gradient's shape differs from the convolution's result "
                          f"{format_sizes(expected)} in dimension {d}")

    def tap(self, a, kernel, ix):
        """The filter index tap ``a`` reads (flipped with ``filter_flip``)."""
        return ix.sub(ix.sub(kernel, 1), a) if self.op.filter_flip else a

    def rows_of_tap(self, ix, i):
        """The tap rows meeting output row ``i``, and the input row of tap row 0."""
        base = ix.sub(ix.mul(i, self.stride[0]), self.pads[0])
        return valid_range(ix, base, self.dilation[0], self.rows, self.krows), base

    def cols_of_tap(self, ix, b):
        """The output columns tap column ``b`` meets, and the input column of output column 0."""
        base = ix.sub(ix.mul(b, self.dilation[1]), self.pads[1])
        return valid_range(ix, base, self.stride[1], self.cols, self.out_cols), base


def load_at(b: Builder, buffer, indices):
    """The element of ``buffer`` at ``indices``, loaded where ``b`` inserts."""
    return b.insert(LoadOp.build(buffer, list(indices))).result
