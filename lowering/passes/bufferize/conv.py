"""Bufferize ``tensor.conv2d`` and its gradients as direct loop nests.

Every filter tap ``(a, b)`` meets a rectangle of the output: the rows ``i`` whose input row
``i*s0 + a*d0 - p0`` lies inside the input, and likewise the columns. The loops run over exactly
those ranges (``valid_range``), so no element test and no padded copy is needed; the ranges are
computed from the loop indices in the loop bodies (index arithmetic the code generator hoists).

- ``conv2d``: the result is zeroed, then ``loops.parallel`` over the batch, ``for`` output
  channel, output row, input channel, tap row, tap column, and innermost ``for`` output column:
  ``out[n, o, i, j] += x[n, c, y, j*s1 + b*d1 - p1] * w[o, c, a', b']``. The innermost loop walks
  a row of the output and (with ``s1 = 1``) of the input contiguously: it vectorizes.
- ``conv2d_grad_inputs``: the same nest with the roles turned round,
  ``gx[n, c, y, x] += g[n, o, i, j] * w[o, c, a', b']`` (parallel over the batch, so no two
  threads write one element).
- ``conv2d_grad_filters``: ``loops.parallel`` over output channels, ``for`` input channel and
  tap; each filter element sums ``g[n, o, i, j] * x[n, c, y, x]`` over the batch and its output
  rectangle, a carried sum marked reassociable so the innermost loop vectorizes.

Sizes known only at run time are checked: the channels of the input and the filters agree, the
filters fit the padded input, and a gradient op's output gradient has the forward result's shape.

Large forward convolutions and filter gradients go to ``bufferize.conv_gemm`` instead (im2col
and one BLAS product; see there for the measured threshold).
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp, ForOp, LoadOp, YieldOp
from lowering.dialects.tensor import Conv2dGradFiltersOp, Conv2dGradInputsOp, Conv2dOp
from lowering.ir.builder import Builder

from .core import BUFFERIZE, AlwaysFails, format_sizes
from .reductions import reassociable


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


def _scatter_nest(ctx, geo, w_reader, inner) -> None:
    """``parallel n, for o, i, c, a (rows that meet), b``: calls
    ``inner(builder, n, o, i, c, y, j_first, j_last, col_base, weight)``."""

    def per_row(b0, ivs):
        n, o, i = ivs
        ix = ctx.arith(b0)
        (a_first, a_last), row_base = geo.rows_of_tap(ix, i)

        def per_channel(b1, c):
            def per_tap_row(b2, a):
                ia = ctx.arith(b2)
                y = ia.add(row_base, ia.mul(a, geo.dilation[0]))
                af = geo.tap(a, geo.krows, ia)

                def per_tap_col(b3, bcol):
                    ib = ctx.arith(b3)
                    (j_first, j_last), col_base = geo.cols_of_tap(ib, bcol)
                    bf = geo.tap(bcol, geo.kcols, ib)
                    weight = w_reader.load(b3, [o, c, af, bf])
                    inner(b3, n, o, i, c, y, j_first, j_last, col_base, weight)

                for_range(ctx, b2, 0, geo.kcols, per_tap_col)

            for_range(ctx, b1, a_first, a_last, per_tap_row)

        for_range(ctx, b0, 0, geo.channels, per_channel)

    ctx.loop_nest([geo.batch, geo.outputs, geo.out_rows], per_row)


def load_at(b: Builder, buffer, indices):
    """The element of ``buffer`` at ``indices``, loaded where ``b`` inserts."""
    return b.insert(LoadOp.build(buffer, list(indices))).result


def _zeroed(ctx, rt, sizes):
    out = ctx.fresh(rt, sizes)
    ctx.b.insert(FillOp.build(ctx.constant(0, rt.element), out.buffer))
    return out


@BUFFERIZE.register(Conv2dOp)
def _lower_conv2d(ctx, op):
    rt = op.result.type
    try:
        geo = ConvGeometry(ctx, op, op.input, op.filters)
    except AlwaysFails:
        return [ctx.unreachable(rt)]
    from .conv_gemm import lower_conv2d_gemm, use_gemm  # the large sizes' path builds on this
    if use_gemm(ctx, geo, rt.element):
        return [lower_conv2d_gemm(ctx, op, geo)]
    out = _zeroed(ctx, rt, [geo.batch, geo.outputs, geo.out_rows, geo.out_cols])
    x = ctx.reader(op.input, [0, 1, 2, 3])
    w = ctx.reader(op.filters, [0, 1, 2, 3])

    def accumulate(b, n, o, i, c, y, j_first, j_last, col_base, weight):
        def column(bj, j):
            a = ctx.arith(bj)
            col = a.add(col_base, a.mul(j, geo.stride[1]))
            product = a.apply(scalar.MulOp, x.load(bj, [n, c, y, col]), weight)
            total = a.apply(scalar.AddOp, load_at(bj, out.buffer, [n, o, i, j]), product)
            ctx.store(bj, total, out.buffer, [n, o, i, j])

        for_range(ctx, b, j_first, j_last, column)

    _scatter_nest(ctx, geo, w, accumulate)
    return [out]


@BUFFERIZE.register(Conv2dGradInputsOp)
def _lower_conv2d_grad_inputs(ctx, op):
    rt = op.result.type
    try:
        geo = ConvGeometry(ctx, op, op.input, op.filters, op.output_grad)
    except AlwaysFails:
        return [ctx.unreachable(rt)]
    gx = _zeroed(ctx, rt, [geo.batch, geo.channels, geo.rows, geo.cols])
    g = ctx.reader(op.output_grad, [0, 1, 2, 3])
    w = ctx.reader(op.filters, [0, 1, 2, 3])

    def scatter(b, n, o, i, c, y, j_first, j_last, col_base, weight):
        def column(bj, j):
            a = ctx.arith(bj)
            col = a.add(col_base, a.mul(j, geo.stride[1]))
            product = a.apply(scalar.MulOp, g.load(bj, [n, o, i, j]), weight)
            total = a.apply(scalar.AddOp, load_at(bj, gx.buffer, [n, c, y, col]), product)
            ctx.store(bj, total, gx.buffer, [n, c, y, col])

        for_range(ctx, b, j_first, j_last, column)

    _scatter_nest(ctx, geo, w, scatter)
    return [gx]


@BUFFERIZE.register(Conv2dGradFiltersOp)
def _lower_conv2d_grad_filters(ctx, op):
    rt = op.result.type
    try:
        geo = ConvGeometry(ctx, op, op.input, op.filters, op.output_grad)
    except AlwaysFails:
        return [ctx.unreachable(rt)]
    from .conv_gemm import lower_conv2d_grad_filters_gemm, use_gemm
    if use_gemm(ctx, geo, rt.element):
        return [lower_conv2d_grad_filters_gemm(ctx, op, geo)]
    gw = ctx.fresh(rt, [geo.outputs, geo.channels, geo.krows, geo.kcols])
    x = ctx.reader(op.input, [0, 1, 2, 3])
    g = ctx.reader(op.output_grad, [0, 1, 2, 3])
    add = reassociable(scalar.AddOp)

    def element(b, ivs):
        o, c, a, bcol = ivs
        ix = ctx.arith(b)
        row_base = ix.sub(ix.mul(a, geo.dilation[0]), geo.pads[0])
        i_first, i_last = valid_range(ix, row_base, geo.stride[0], geo.rows, geo.out_rows)
        (j_first, j_last), col_base = geo.cols_of_tap(ix, bcol)

        def step(bb, ivs2, carried):
            n, i, j = ivs2
            s = ctx.arith(bb)
            y = s.add(row_base, s.mul(i, geo.stride[0]))
            col = s.add(col_base, s.mul(j, geo.stride[1]))
            product = s.apply(scalar.MulOp, g.load(bb, [n, o, i, j]), x.load(bb, [n, c, y, col]))
            return [add(s, carried[0], product)]

        (total,) = ctx.fold(b, [geo.batch, i_last, j_last], [ctx.constant(0, rt.element)], step,
                            lowers=[0, i_first, j_first])
        where = [o, c, geo.tap(a, geo.krows, ix), geo.tap(bcol, geo.kcols, ix)]
        ctx.store(b, total, gw.buffer, where)

    ctx.loop_nest([geo.outputs, geo.channels, geo.krows, geo.kcols], element)
    return [gw]
