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

Large convolutions and their gradients go to ``bufferize.conv_gemm`` instead (im2col or col2im
and one BLAS product; see there for the measured threshold).
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp
from lowering.dialects.tensor import Conv2dGradFiltersOp, Conv2dGradInputsOp, Conv2dOp

from .conv_gemm import (lower_conv2d_gemm, lower_conv2d_grad_filters_gemm,
                        lower_conv2d_grad_inputs_gemm, use_gemm)
from .conv_geometry import ConvGeometry, for_range, load_at, valid_range
from .core import BUFFERIZE, AlwaysFails
from .reductions import reassociable


def _scatter_nest(ctx, geo, w_reader, source, target, where) -> None:
    """``parallel n, for o, i, c, a (rows that meet), b, j (columns that meet)``:
    ``target[where(...)] += source.load(...) * w[o, c, a', b']``, where ``source`` is read at
    ``where``'s other end: the input at ``(n, c, y, x)`` for the forward op, the output gradient
    at ``(n, o, i, j)`` for the input gradient (``where`` gives ``(read_at, write_at)``)."""

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
                    weight = w_reader.load(b3, [o, c, af, geo.tap(bcol, geo.kcols, ib)])

                    def column(bj, j):
                        s = ctx.arith(bj)
                        x_col = s.add(col_base, s.mul(j, geo.stride[1]))
                        read_at, write_at = where(n, o, i, j, c, y, x_col)
                        product = s.apply(scalar.MulOp, source.load(bj, read_at), weight)
                        total = s.apply(scalar.AddOp, load_at(bj, target, write_at), product)
                        ctx.store(bj, total, target, write_at)

                    for_range(ctx, b3, j_first, j_last, column)

                for_range(ctx, b2, 0, geo.kcols, per_tap_col)

            for_range(ctx, b1, a_first, a_last, per_tap_row)

        for_range(ctx, b0, 0, geo.channels, per_channel)

    ctx.loop_nest([geo.batch, geo.outputs, geo.out_rows], per_row)


def _zeroed(ctx, rt, sizes):
    out = ctx.fresh(rt, sizes)
    ctx.b.insert(FillOp.build(ctx.constant(0, rt.element), out.buffer))
    return out


def _conv_rule(gemm, *geometry_operands):
    """A bufferize rule for one of the convolution ops: the geometry of the op's operands named
    ``geometry_operands`` (an op that always fails lowers to unreachable code), the ``gemm``
    lowering where ``use_gemm`` chooses it, else the decorated function's loop nests
    ``direct(ctx, op, geo, rt)``."""

    def wrap(direct):
        def rule(ctx, op):
            rt = op.result.type
            try:
                geo = ConvGeometry(ctx, op, *[getattr(op, name) for name in geometry_operands])
            except AlwaysFails:
                return [ctx.unreachable(rt)]
            if use_gemm(ctx, geo, rt.element):
                return [gemm(ctx, op, geo)]
            return [direct(ctx, op, geo, rt)]
        return rule
    return wrap


@BUFFERIZE.register(Conv2dOp)
@_conv_rule(lower_conv2d_gemm, "input", "filters")
def _lower_conv2d(ctx, op, geo, rt):
    out = _zeroed(ctx, rt, [geo.batch, geo.outputs, geo.out_rows, geo.out_cols])

    def where(n, o, i, j, c, y, x_col):
        return [n, c, y, x_col], [n, o, i, j]

    _scatter_nest(ctx, geo, ctx.reader(op.filters, [0, 1, 2, 3]),
                  ctx.reader(op.input, [0, 1, 2, 3]), out.buffer, where)
    return out


@BUFFERIZE.register(Conv2dGradInputsOp)
@_conv_rule(lower_conv2d_grad_inputs_gemm, "input", "filters", "output_grad")
def _lower_conv2d_grad_inputs(ctx, op, geo, rt):
    gx = _zeroed(ctx, rt, [geo.batch, geo.channels, geo.rows, geo.cols])

    def where(n, o, i, j, c, y, x_col):
        return [n, o, i, j], [n, c, y, x_col]

    _scatter_nest(ctx, geo, ctx.reader(op.filters, [0, 1, 2, 3]),
                  ctx.reader(op.output_grad, [0, 1, 2, 3]), gx.buffer, where)
    return gx


@BUFFERIZE.register(Conv2dGradFiltersOp)
@_conv_rule(lower_conv2d_grad_filters_gemm, "input", "filters", "output_grad")
def _lower_conv2d_grad_filters(ctx, op, geo, rt):
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
    return gw
