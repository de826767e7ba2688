"""Matrix-vector products as loop nests that LLVM vectorizes: the form ``bufferize.dot`` gives
a product inside a loop body (a ``tensor.scan`` step) that is small at run time.

Why: inside a step a product runs once per iteration, and a CBLAS ``?gemv`` of a few thousand
multiply-adds costs its call, its layout checks and, with OpenBLAS, a hand-off to its threads
(from ``m * n`` of about 9,000 up), which costs more than the product itself. These loops need
neither, and keep the whole step in one thread: at these sizes (at most 65,536 multiply-adds,
some microseconds) handing rows to the thread pool every step would cost more than it saves.

- ``matrix . vector`` (``out[i] = sum_j a[i, j] * x[j]``): rows in blocks of ``ROW_BLOCK``,
  whose sequential loop over ``j`` carries one sum per row; each sum's ``scalar.add`` is marked ``allow_reassociation`` so that LLVM keeps vector
  partial sums (one row's sum is split into lanes, as a vectorized reduction is). The block
  reads ``x[j]`` once for ``ROW_BLOCK`` rows. The rows left over run one at a time.
- ``vector . matrix`` (``out[j] = sum_i x[i] * b[i, j]``): ``out`` is zeroed, then for each
  block of ``ROW_BLOCK`` rows of ``b`` the innermost loop walks those rows along ``j``, adding
  their ``ROW_BLOCK`` products to ``out[j]`` (contiguous, vectorized with no reassociation).
- A matrix that is a transposed view (``W.T . v``, as backpropagation through a step has it)
  is read as the matrix it views in the other form: ``W.T . v`` is ``v . W``.

>>> ROW_BLOCK
4
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp, LoadOp, TransposeViewOp
from lowering.ir.builder import Builder

from .core import Reader

ROW_BLOCK = 4


def matvec_loops(ctx, b: Builder, lhs, rhs, out, k) -> None:
    """``out = lhs . rhs`` (one of them a matrix, the other a vector; ``out`` a fresh Lowered
    vector whose sizes are known) written by loops inserted with ``b``; ``k`` is the size of
    the contraction. A matrix that is a transposed view is read as the matrix it views, in the
    other form, so that the innermost loop still walks contiguous rows. Readers of the operands
    are made here: their buffers and sizes must exist at the top level already."""
    zero = ctx.constant(0)
    if lhs.type.rank == 2:  # out[i] = sum_j a[i, j] x[j]
        matrix, read_x = lhs, ctx.reader(rhs, [0])
    else:                   # out[j] = sum_i x[i] b[i, j]
        matrix, read_x = rhs, ctx.reader(lhs, [0])
    source = _transposed_source(ctx.buffer(matrix))
    if source is None:
        read_m = ctx.reader(matrix, [0, 1])
    else:
        read_m = Reader(None, source, [0, 1], zero)
    rows_form = (lhs.type.rank == 2) == (source is None)
    if rows_form:  # out[i] = sum_j m[i, j] x[j]
        _rows_times_vector(ctx, b, read_m, read_x, out, k)
    else:          # out[j] = sum_i x[i] m[i, j]
        _vector_times_rows(ctx, b, read_x, read_m, out, k)


def _transposed_source(buffer):
    """The buffer a (1, 0) ``loops.transpose_view`` views, or None."""
    owner = getattr(buffer, "op", None)
    if isinstance(owner, TransposeViewOp) and owner.int_list("pattern") == (1, 0):
        return owner.source
    return None


def _sum(b: Builder, acc, term):
    return b.insert(scalar.allow_reassociation(scalar.AddOp.build(acc, term))).result


def _in_row_blocks(ctx, b: Builder, count, rows_from) -> None:
    """``rows_from(builder, first, n)`` over ``count`` rows: blocks of ``ROW_BLOCK`` rows, then
    the rows left over one at a time (serial loops: see the module doc)."""
    ix = ctx.arith(b)
    blocks = ix.floordiv(count, ROW_BLOCK)
    ctx.loop_nest([blocks], lambda bb, ivs: rows_from(bb, ctx.arith(bb).mul(ivs[0], ROW_BLOCK),
                                                      ROW_BLOCK), parallel=False, builder=b)
    done = ix.mul(blocks, ROW_BLOCK)
    ctx.loop_nest([ix.sub(count, done)],
                  lambda bb, ivs: rows_from(bb, ctx.arith(bb).add(done, ivs[0]), 1),
                  parallel=False, builder=b)


def _rows_times_vector(ctx, b: Builder, read_m: Reader, read_x: Reader, out, k) -> None:
    rows = out.sizes[0]
    zero = ctx.constant(0, out.type.element)

    def rows_from(bb, first, count):
        x_ = ctx.arith(bb)
        row_ids = [x_.add(first, r) for r in range(count)]

        def step(b2, ivs, carried):
            (j,) = ivs
            xj = read_x.load(b2, [j])
            x2 = ctx.arith(b2)
            return [_sum(b2, acc, x2.apply(scalar.MulOp, read_m.load(b2, [row, j]), xj))
                    for acc, row in zip(carried, row_ids)]
        totals = ctx.fold(bb, [k], [zero] * count, step)
        for total, row in zip(totals, row_ids):
            ctx.store(bb, total, out.buffer, [row])

    _in_row_blocks(ctx, b, rows, rows_from)


def _vector_times_rows(ctx, b: Builder, read_x: Reader, read_m: Reader, out, k) -> None:
    columns = out.sizes[0]
    b.insert(FillOp.build(ctx.constant(0, out.type.element), out.buffer))

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

    _in_row_blocks(ctx, b, k, rows_from)
