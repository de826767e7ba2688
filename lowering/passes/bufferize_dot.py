"""Bufferize ``tensor.dot`` (the four shape combinations) and ``tensor.gemv``/``tensor.gemm``
(``beta * acc + alpha * product``), as loop nests or CBLAS calls.

The contraction sizes (the last dimension of the left operand, the first of the right one) are
checked to be equal at run time by a ``loops.assert`` naming the op, the user's line and both
shapes.

Loop nests (the default): each result element sums its products in order of the contraction
index, in the element type (integers wrap, as NumPy's do); f16 accumulates in f32 and rounds
once, as NumPy does.

- vector . vector: one sequential loop carrying the sum; the result is a scalar;
- matrix . vector: ``loops.parallel`` over rows, each summing along its (contiguous) row;
- vector . matrix: ``loops.parallel`` over columns, each summing down its column;
- matrix . matrix: the result is zeroed, then ``loops.parallel`` over rows ``i``, ``for k``,
  ``for j``: ``c[i, j] += a[i, k] * b[k, j]``, so the innermost loop walks rows of ``b`` and ``c``
  contiguously (f16: ``for j`` then a carried sum over ``k`` instead).

CBLAS (pass option ``use-blas``): an f32/f64 product calls ``cblas_sgemm``/``cblas_dgemm``,
``cblas_?gemv`` or ``cblas_?dot`` through ``loops.call``, with the convention of
``lowering.dialects.loops.externals`` (a buffer is the pointer to its first element; sizes,
leading dimensions and increments are explicit ``index`` arguments; row-major order 101,
no-transpose 111, transpose 112). Operands whose buffer type is not contiguous (function
arguments, transposed or strided views) are copied into contiguous buffers first; results are
zeroed before the call so that an empty contraction gives zeros (``gemv``/``gemm`` start from
``beta * acc`` instead, and the call adds ``alpha * product``). Choice rule: a product whose
sizes are all static with ``m * n * k`` below the option ``blas-min-work`` stays a loop nest (the
call and copies cost more than the arithmetic); any other f32/f64 product calls CBLAS.
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import CallOp, FillOp, ForOp, LoadOp, YieldOp
from lowering.dialects.tensor import DotOp, GemmOp, GemvOp
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.ir.builder import Builder
from lowering.ir.types import F16, F32, F64

from .bufferize_core import Lowered, lowers

CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS = 101, 111, 112


@lowers(DotOp)
def _lower_dot(ctx, op):
    a, b, rt = op.lhs, op.rhs, op.result.type
    sa, sb = ctx.sizes(a), ctx.sizes(b)
    ctx.check(ctx.ix.eq(sa[-1], sb[0]),
              f"contraction sizes differ: shapes {format_shape(a.type.shape)} and "
              f"{format_shape(b.type.shape)}")
    k = sb[0] if isinstance(sb[0], int) else sa[-1]
    m = sa[0] if a.type.rank == 2 else 1
    n = sb[1] if b.type.rank == 2 else 1
    if _use_blas(ctx, rt.element, m, n, k):
        return [_lower_dot_blas(ctx, op, k)]
    return [_lower_dot_loops(ctx, op.lhs, op.rhs, op.result.type, k)]


def _use_blas(ctx, element, m, n, k) -> bool:
    if not ctx.options.use_blas or element not in (F32, F64):
        return False
    sizes = (m, n, k)
    return not all(isinstance(s, int) for s in sizes) or m * n * k >= ctx.options.blas_min_work


# ---------------------------------------------------------------------------------------------
# Loop nests


def _lower_dot_loops(ctx, a, b, rt, k) -> Lowered:
    """``a . b`` (result type ``rt``, contraction size ``k``) as a loop nest."""
    element = rt.element
    acc = F32 if element == F16 else element
    ranks = (a.type.rank, b.type.rank)
    # Loop indices: the result's dimensions first, then the contraction index.
    out_rank = rt.rank
    ra = ctx.reader(a, [0, out_rank] if ranks[0] == 2 else [out_rank])
    rb = ctx.reader(b, [out_rank, out_rank - 1] if ranks[1] == 2 else [out_rank])

    def dot_at(builder, out_ivs):
        def step(bb, ivs, carried):
            x = ctx.arith(bb)
            ivs = list(out_ivs) + list(ivs)
            product = x.apply(scalar.MulOp, x.cast(ra.load(bb, ivs), acc),
                              x.cast(rb.load(bb, ivs), acc))
            return [x.apply(scalar.AddOp, carried[0], product)]
        (total,) = ctx.fold(builder, [k], [ctx.constant(0, acc)], step)
        return ctx.arith(builder).cast(total, element)

    if out_rank == 0:
        return Lowered(rt, scalar=dot_at(ctx.b, []))
    sizes = ([ctx.size(a, 0)] if ranks[0] == 2 else []) + ([ctx.size(b, 1)] if ranks[1] == 2
                                                            else [])
    out = ctx.fresh(rt, sizes)
    if ranks == (2, 2) and acc == element:
        _matrix_product(ctx, a, b, out, k)
        return out
    ctx.loop_nest(out.sizes, lambda bb, ivs: ctx.store(bb, dot_at(bb, ivs), out.buffer, ivs))
    return out


def _matrix_product(ctx, a, b, out, k) -> None:
    """``out = a . b`` in i-k-j order: the innermost loop runs along rows of ``b`` and ``out``."""
    m, n = out.sizes
    ctx.b.insert(FillOp.build(ctx.constant(0, out.type.element), out.buffer))
    ra = ctx.reader(a, [0, 1])
    rb = ctx.reader(b, [0, 1])

    def row(bi, ivs):
        (i,) = ivs

        def over_k(bk, kvs):
            (kk,) = kvs
            aik = ra.load(bk, [i, kk])

            def over_j(bj, jvs):
                (j,) = jvs
                x = ctx.arith(bj)
                current = bj.insert(LoadOp.build(out.buffer, [i, j])).result
                product = x.apply(scalar.MulOp, aik, rb.load(bj, [kk, j]))
                ctx.store(bj, x.apply(scalar.AddOp, current, product), out.buffer, [i, j])
            ctx.loop_nest([n], over_j, parallel=False, builder=bk)
        ctx.loop_nest([k], over_k, parallel=False, builder=bi)

    ctx.loop_nest([m], row)


# ---------------------------------------------------------------------------------------------
# CBLAS calls


def _lower_dot_blas(ctx, op, k) -> Lowered:
    a, b, rt = op.lhs, op.rhs, op.result.type
    element = rt.element
    one, zero = ctx.constant(1.0, element), ctx.constant(0.0, element)
    if (a.type.rank, b.type.rank) == (1, 1):
        unit = ctx.constant(1)
        args = [ctx.ix.value(k), _contiguous(ctx, a), unit, _contiguous(ctx, b), unit]
        call = CallOp.build(f"cblas_{_prefix(element)}dot", args, [element])
        return Lowered(rt, scalar=ctx.b.insert(call).result)
    sizes = ([ctx.size(a, 0)] if a.type.rank == 2 else []) + ([ctx.size(b, 1)]
                                                              if b.type.rank == 2 else [])
    out = ctx.fresh(rt, sizes)
    # Zeros first: with an empty contraction BLAS may return without writing the result.
    ctx.b.insert(FillOp.build(zero, out.buffer))
    _blas_product(ctx, a, b, out, k, one, zero)
    return out


def _prefix(element) -> str:
    return "s" if element == F32 else "d"


def _blas_product(ctx, a, b, out, k, alpha, beta) -> None:
    """``out = alpha * (a . b) + beta * out`` by ``cblas_?gemm`` or ``cblas_?gemv`` (``a`` or
    ``b`` of rank 2, ``out`` a fresh contiguous buffer)."""
    ix = ctx.ix
    prefix = _prefix(out.type.element)
    order, no, yes = (ctx.constant(c) for c in (CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS))
    unit = ctx.constant(1)
    abuf, bbuf = _contiguous(ctx, a), _contiguous(ctx, b)
    kv = ix.value(k)
    ranks = (a.type.rank, b.type.rank)
    if ranks == (2, 2):
        m, n = (ix.value(s) for s in out.sizes)
        lda, ldb = ix.value(ix.max(k, 1)), ix.value(ix.max(out.sizes[1], 1))
        args = [order, no, no, m, n, kv, alpha, abuf, lda, bbuf, ldb, beta, out.buffer, ldb]
        ctx.b.insert(CallOp.build(f"cblas_{prefix}gemm", args))
    elif ranks == (2, 1):
        m = ix.value(out.sizes[0])
        args = [order, no, m, kv, alpha, abuf, ix.value(ix.max(k, 1)), bbuf, unit, beta,
                out.buffer, unit]
        ctx.b.insert(CallOp.build(f"cblas_{prefix}gemv", args))
    else:  # vector . matrix = matrix^T . vector
        n = ix.value(out.sizes[0])
        args = [order, yes, kv, n, alpha, bbuf, ix.value(ix.max(out.sizes[0], 1)), abuf, unit,
                beta, out.buffer, unit]
        ctx.b.insert(CallOp.build(f"cblas_{prefix}gemv", args))


def _contiguous(ctx, value):
    """A buffer with ``value`` in row-major order without gaps (a copy unless it has one)."""
    buf = ctx.buffer(value)
    if buf.type.is_contiguous:
        return buf
    copy = ctx.alloc(value.type, ctx.sizes(value))
    ctx.copy(value, copy)
    return copy



# ---------------------------------------------------------------------------------------------
# gemv, gemm: beta * acc + alpha * (lhs . rhs)


@lowers(GemvOp, GemmOp)
def _lower_scaled_product(ctx, op):
    """``beta * acc + alpha * (lhs . rhs)``, as NumPy computes it: the product (a loop nest, or
    a CBLAS call accumulating into ``beta * acc``), scaled by ``alpha``, then ``beta * acc``
    added, with ``acc`` read only when ``beta`` is not 0 (a loop running 0 or 1 times)."""
    a, b, acc, rt = op.lhs, op.rhs, op.acc, op.result.type
    ix, element = ctx.ix, rt.element
    sa, sb = ctx.sizes(a), ctx.sizes(b)
    ctx.check(ix.eq(sa[-1], sb[0]),
              f"contraction sizes differ: shapes {format_shape(a.type.shape)} and "
              f"{format_shape(b.type.shape)}")
    k = sb[0] if isinstance(sb[0], int) else sa[-1]
    sizes = [sa[0]] + ([sb[1]] if b.type.rank == 2 else [])
    alpha, beta = ctx.element(op.alpha), ctx.element(op.beta)
    zero = ctx.constant(0, element)
    beta_is_zero = ix.apply(scalar.EqOp, beta, zero)
    sizes_fit = ix.all(ix.eq(s, t) for s, t in zip(ctx.sizes(acc), sizes))
    ctx.check(ix.or_(beta_is_zero, sizes_fit),
              f"the accumulator of shape {format_shape(acc.type.shape)} does not fit the "
              f"product of shapes {format_shape(a.type.shape)} and {format_shape(b.type.shape)}")
    once_unless_zero = ix.select(beta_is_zero, 0, 1)
    acc_reader = ctx.reader(acc, list(range(rt.rank)))
    m, n = sizes[0], sizes[-1] if b.type.rank == 2 else 1
    if _use_blas(ctx, element, m, n, k):
        out = ctx.fresh(rt, sizes)
        ctx.b.insert(FillOp.build(zero, out.buffer))

        def scaled_acc(bb, ivs):
            x = ctx.arith(bb)
            ctx.store(bb, x.apply(scalar.MulOp, beta, acc_reader.load(bb, ivs)), out.buffer, ivs)
        _when(ctx, once_unless_zero, lambda bb: ctx.loop_nest(out.sizes, scaled_acc,
                                                              builder=bb))
        _blas_product(ctx, a, b, out, k, alpha, ctx.constant(1.0, element))
        return [out]
    out = _lower_dot_loops(ctx, a, b, rt, k)

    def scale(bb, ivs):
        x = ctx.arith(bb)
        value = bb.insert(LoadOp.build(out.buffer, ivs)).result
        ctx.store(bb, x.apply(scalar.MulOp, alpha, value), out.buffer, ivs)

    def accumulate(bb, ivs):
        x = ctx.arith(bb)
        value = bb.insert(LoadOp.build(out.buffer, ivs)).result
        scaled = x.apply(scalar.MulOp, beta, acc_reader.load(bb, ivs))
        ctx.store(bb, x.apply(scalar.AddOp, scaled, value), out.buffer, ivs)

    ctx.loop_nest(out.sizes, scale)
    _when(ctx, once_unless_zero, lambda bb: ctx.loop_nest(out.sizes, accumulate, builder=bb))
    return [out]


def _when(ctx, trips, build) -> None:
    """``build(builder)`` inside a ``loops.for`` running ``trips`` (0 or 1) times: a branch."""
    if isinstance(trips, int):
        if trips:
            build(ctx.b)
        return
    loop = ctx.b.insert(ForOp.build(ctx.constant(0), trips, ctx.constant(1)))
    build(Builder.at_end(loop.body.block))
    loop.body.block.append(YieldOp.build())
