"""Matrix-vector products as loop nests that LLVM vectorizes: the form ``bufferize.dot`` gives
a product inside a loop body (a ``tensor.scan`` step) that is small at run time.

Why: inside a step a product runs once per iteration, and a CBLAS ``?gemv`` of a few thousand
multiply-adds costs its call, its layout checks and, with OpenBLAS, a hand-off to its threads
(from ``m * n`` of about 9,000 up), which costs more than the product itself. These loops need
neither, and keep the whole step in one thread.

- ``matrix . vector`` (``out[i] = sum_j a[i, j] * x[j]``): rows in blocks of ``ROW_BLOCK``, one
  ``loops.parallel`` iteration per block, whose sequential loop over ``j`` carries one sum per
  row; each sum's ``scalar.add`` is marked ``allow_reassociation`` so that LLVM keeps vector
  partial sums (one row's sum is split into lanes, as a vectorized reduction is). The block
  reads ``x[j]`` once for ``ROW_BLOCK`` rows. The rows left over run one at a time.
- ``vector . matrix`` (``out[j] = sum_i x[i] * b[i, j]``): ``out`` is zeroed, then for each
  block of ``ROW_BLOCK`` rows of ``b`` the innermost loop walks those rows along ``j``, adding
  their ``ROW_BLOCK`` products to ``out[j]`` (contiguous, vectorized with no reassociation).

>>> ROW_BLOCK
4
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp, LoadOp
from lowering.ir.builder import Builder

ROW_BLOCK = 4


def matvec_loops(ctx, b: Builder, lhs, rhs, out, k) -> None:
    """``out = lhs . rhs`` (one of them a matrix, the other a vector; ``out`` a fresh Lowered
    vector whose sizes are known) written by loops inserted with ``b``; ``k`` is the size of
    the contraction. Readers, sizes and buffers of the operands are made here: call it where
    the top level's values dominate ``b`` (they are made with ``ctx.b``)."""
    if lhs.type.rank == 2:
        _matrix_vector(ctx, b, lhs, rhs, out, k)
    else:
        _vector_matrix(ctx, b, lhs, rhs, out, k)


def _sum(b: Builder, acc, term):
    return b.insert(scalar.allow_reassociation(scalar.AddOp.build(acc, term))).result


def _matrix_vector(ctx, b: Builder, a, x, out, k) -> None:
    rows = out.sizes[0]
    read_a, read_x = ctx.reader(a, [0, 1]), ctx.reader(x, [1])
    element = out.type.element
    zero = ctx.constant(0, element)
    ix = ctx.arith(b)
    blocks = ix.floordiv(rows, ROW_BLOCK)

    def rows_from(bb, first, count):
        x_ = ctx.arith(bb)
        row_ids = [x_.add(first, r) for r in range(count)]

        def step(b2, ivs, carried):
            (j,) = ivs
            xj = read_x.load(b2, [None, j])
            x2 = ctx.arith(b2)
            return [_sum(b2, acc, x2.apply(scalar.MulOp, read_a.load(b2, [row, j]), xj))
                    for acc, row in zip(carried, row_ids)]
        totals = ctx.fold(bb, [k], [zero] * count, step)
        for total, row in zip(totals, row_ids):
            ctx.store(bb, total, out.buffer, [row])

    ctx.loop_nest([blocks], lambda bb, ivs: rows_from(bb, ctx.arith(bb).mul(ivs[0], ROW_BLOCK),
                                                      ROW_BLOCK), builder=b)
    done = ix.mul(blocks, ROW_BLOCK)
    ctx.loop_nest([ix.sub(rows, done)],
                  lambda bb, ivs: rows_from(bb, ctx.arith(bb).add(done, ivs[0]), 1),
                  parallel=False, builder=b)


def _vector_matrix(ctx, b: Builder, x, m, out, k) -> None:
    columns = out.sizes[0]
    read_m, read_x = ctx.reader(m, [0, 1]), ctx.reader(x, [0])
    b.insert(FillOp.build(ctx.constant(0, out.type.element), out.buffer))
    ix = ctx.arith(b)
    blocks = ix.floordiv(k, ROW_BLOCK)

    def rows_from(bb, first, count):
        x_ = ctx.arith(bb)
        row_ids = [x_.add(first, r) for r in range(count)]
        coefficients = [read_x.load(bb, [row]) for row in row_ids]

        def column(b2, ivs):
            (j,) = ivs
            x2 = ctx.arith(b2)
            total = b2.insert(LoadOp.build(out.buffer, [j])).result
            for c, row in zip(coefficients, row_ids):
                total = x2.apply(scalar.AddOp, total,
                                 x2.apply(scalar.MulOp, c, read_m.load(b2, [row, j])))
            ctx.store(b2, total, out.buffer, [j])
        ctx.loop_nest([columns], column, parallel=False, builder=bb)

    ctx.loop_nest([blocks], lambda bb, ivs: rows_from(bb, ctx.arith(bb).mul(ivs[0], ROW_BLOCK),
                                                      ROW_BLOCK), parallel=False, builder=b)
    done = ix.mul(blocks, ROW_BLOCK)
    ctx.loop_nest([ix.sub(k, done)],
                  lambda bb, ivs: rows_from(bb, ctx.arith(bb).add(done, ivs[0]), 1),
                  parallel=False, builder=b)
