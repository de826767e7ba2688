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

On a device (an op placed there by ``place-on-device``) a vector . vector product is a sum
reduction of the products (``bufferize.reductions``): its scalar result stays in device memory.

CBLAS (pass option ``use-blas``): an f32/f64 product calls ``cblas_sgemm``/``cblas_dgemm``,
``cblas_?gemv`` or ``cblas_?dot`` through ``loops.call`` (a complex<f32>/complex<f64> one
``cblas_cgemm``/``cblas_zgemm``, ``cblas_?gemv`` or ``cblas_?dotu_sub``, whose ``alpha``,
``beta`` and dot result are passed by address: rank-0 buffers), with the convention of
``lowering.dialects.loops.externals`` (a buffer is the pointer to its first element; sizes,
leading dimensions and increments are explicit ``index`` arguments; row-major order 101,
no-transpose 111, transpose 112).

- **Operands as they lie in memory.** A contiguous operand is passed as is. Otherwise the
  strides are read at run time (``loops.stride``): a matrix whose rows are contiguous is passed
  with its row stride as the leading dimension, one whose columns are contiguous as its
  transpose (the other CBLAS transpose flag, the column stride as leading dimension), a vector
  with a positive stride as the increment; a transposed contiguous matrix is known to be one
  without any check. Only an operand BLAS cannot address (gaps in both directions, a stride of
  0 or a negative one) is copied, into a contiguous buffer allocated with size 0 unless it is
  needed; the call is made once per combination of layouts, each under its condition (a
  ``loops.for`` running 0 or 1 times).
- **Results.** An empty contraction gives zeros (filled only when ``k`` is 0). ``gemv``/``gemm``
  write ``beta * acc`` first, element for element, and the call adds ``alpha * product``; the
  accumulator is not read when ``beta`` is 0, and a ``beta`` known at compile time needs no
  branch (a non-zero one makes the accumulator's size check unconditional). Written this way,
  ``w <- beta * w + alpha * (x.T . g)`` can be computed in ``w``'s own buffer (``inplace``):
  Theano's ``CGemv{inplace}``. Every copy an operand needs is made before the result is written.

Choice rule: a product whose sizes are all static with ``m * n * k`` (multiply-adds) below the
option ``blas-min-work`` (1024) stays a loop nest; any other f32/f64 product calls CBLAS (sizes
known only at run time: CBLAS, whose call costs about 1 us more than loops at the smallest
sizes). The threshold is where the two cross, measured on the CPU this was written on (x86-64,
AVX-512, NumPy's OpenBLAS 0.3.31 on one thread, static shapes, native call path; time per call):

===============  ======  ==========  ==========  =================================
product          work    f32 loops   f32 BLAS    f64 loops / BLAS
===============  ======  ==========  ==========  =================================
dot 128          128     0.74 us     2.43 us     0.76 / 2.42 us
dot 1024         1024    1.98 us     1.55 us     1.97 / 1.50 us
dot 4096         4096    6.1 us      1.6 us      6.1 / 2.5 us
gemv 16x16       256     0.98 us     1.42 us     0.92 / 1.31 us
gemv 32x32       1024    1.67 us     1.40 us     1.69 / 1.64 us
gemv 64x64       4096    5.3 us      2.0 us      5.2 / 2.4 us
gemm 8x8x8       512     0.69 us     1.59 us     1.18 / 1.61 us
gemm 10x10x10    1000    1.62 us     1.50 us     1.31 / 1.57 us
gemm 12x12x12    1728    3.0 us      1.4 us      2.9 / 1.9 us
gemm 32x32x32    32768   49 us       2.9 us      39 / 3.3 us
===============  ======  ==========  ==========  =================================

Below about 1000 multiply-adds the generated loops win (no call, no layout checks); from there
BLAS wins, by 2x to 17x for gemm.

Inside a ``tensor.scan`` step, a matrix-vector product whose sizes are known only at run time
is lowered both ways, each in a branch: the vectorized loops of ``bufferize.matvec`` when the
matrix has at most ``STEP_MATVEC_LOOPS_MAX`` (65,536) elements, CBLAS otherwise. A step repeats
its product every iteration, and at these sizes OpenBLAS's call and the hand-off to its threads
cost more than the product (a 128-unit recurrence: see docs/performance.md).
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass

from lowering.dialects import scalar
from lowering.dialects.loops import (CallOp, DimOp, FillOp, ForOp, LoadOp, StoreOp, StrideOp,
                                     TransposeViewOp, YieldOp)
from lowering.dialects.tensor import DotOp, GemmOp, GemvOp
from lowering.dialects.tensor.scan import ScanOp
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.ir.builder import Builder
from lowering.ir.core import OpResult, Value
from lowering.ir.types import C64, C128, F16, F32, F64, TensorType

from .core import BUFFERIZE, Lowered
from .matvec import matvec_loops
from .reductions import Reduce, reduce_values

# The largest matrix (in elements) whose product with a vector in a loop body runs as loops
# rather than a CBLAS call: see bufferize.matvec.
STEP_MATVEC_LOOPS_MAX = 1 << 16

CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS = 101, 111, 112


@BUFFERIZE.register(DotOp)
def _lower_dot(ctx, op):
    a, b, rt = op.lhs, op.rhs, op.result.type
    sa, sb = ctx.sizes(a), ctx.sizes(b)
    ctx.check(ctx.ix.eq(sa[-1], sb[0]),
              f"contraction sizes differ: shapes {format_shape(a.type.shape)} and "
              f"{format_shape(b.type.shape)}")
    k = sb[0] if isinstance(sb[0], int) else sa[-1]
    m = sa[0] if a.type.rank == 2 else 1
    n = sb[1] if b.type.rank == 2 else 1
    if rt.rank == 0 and ctx.space == "device":
        return [_lower_dot_as_sum(ctx, a, b, rt, k)]
    if _use_blas(ctx, rt.element, m, n, k):
        if _matvec_in_step(op) and ctx.space == "host":
            out = ctx.fresh(rt, _product_sizes(ctx, a, b, rt))
            layouts = [_layouts(ctx, a), _layouts(ctx, b)]

            def by_blas():
                _when(ctx, ctx.ix.select(ctx.ix.eq(k, 0), 1, 0),
                      lambda bb: bb.insert(FillOp.build(ctx.constant(0.0, rt.element),
                                                        out.buffer)))
                _blas_product(ctx, a, b, out, k, ctx.constant(1.0, rt.element),
                              ctx.constant(0.0, rt.element), layouts)
            _loops_when_small(ctx, a, b, out, k, lambda: None, by_blas)
            return [out]
        return [_lower_dot_blas(ctx, op, k)]
    return [_lower_dot_loops(ctx, op.lhs, op.rhs, op.result.type, k)]


def _matvec_in_step(op) -> bool:
    """Whether ``op`` is a matrix-vector product, of sizes known only at run time, inside a
    loop body (a ``tensor.scan`` step): the products ``_loops_when_small`` lowers."""
    a, b = op.lhs, op.rhs
    if (a.type.rank, b.type.rank) not in ((2, 1), (1, 2)):
        return False
    if all(s is not None for s in a.type.shape + b.type.shape):
        return False
    parent = op.parent_op
    while parent is not None:
        if isinstance(parent, ScanOp):
            return True
        parent = parent.parent_op
    return False


def _loops_when_small(ctx, a, b, out, k, finish_loops, by_blas) -> None:
    """``out = a . b`` (a matrix and a vector) by the vectorized loops of ``bufferize.matvec``
    followed by ``finish_loops()`` when the matrix has at most ``STEP_MATVEC_LOOPS_MAX``
    elements, and by ``by_blas()`` otherwise; both run in a branch, building with ``ctx.b``.
    Everything either reads from the top level (buffers, sizes) is made before the branches."""
    ix = ctx.ix
    for v in (a, b):
        ctx.buffer(v)
    rows, cols = ctx.sizes(a if a.type.rank == 2 else b)
    small = ix.le(ix.mul(rows, cols), STEP_MATVEC_LOOPS_MAX)
    def loops():
        matvec_loops(ctx, ctx.b, a, b, out, k)
        finish_loops()
    for trips, build in ((ix.select(small, 1, 0), loops), (ix.select(small, 0, 1), by_blas)):
        with _branch(ctx, trips):
            build()


@contextmanager
def _branch(ctx, trips):
    """Lower into a ``loops.for`` of ``trips`` (0 or 1) iterations: ``ctx.b`` builds there,
    with arithmetic of its own (values made inside stay inside)."""
    loop = ctx.b.insert(ForOp.build(ctx.constant(0), ctx.ix.value(trips), ctx.constant(1)))
    saved = ctx.b, ctx.ix
    ctx.b = Builder.at_end(loop.body.block)
    ctx.ix = ctx.arith(ctx.b)
    try:
        yield
    finally:
        loop.body.block.append(YieldOp.build())
        ctx.b, ctx.ix = saved


def _use_blas(ctx, element, m, n, k) -> bool:
    if not ctx.options.use_blas or element not in _PREFIXES:
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
    sizes = _product_sizes(ctx, a, b, rt)
    out = ctx.fresh(rt, sizes)
    if ranks == (2, 2) and acc == element:
        _matrix_product(ctx, a, b, out, k)
        return out
    ctx.loop_nest(out.sizes, lambda bb, ivs: ctx.store(bb, dot_at(bb, ivs), out.buffer, ivs))
    return out


def _lower_dot_as_sum(ctx, a, b, rt, k) -> Lowered:
    """``a . b`` of two vectors on a device: a sum reduction of the products (partial sums in
    parallel), whose result stays in device memory; a loop carrying the sum at the top level,
    or ``cblas_?dot`` returning it, would hand it to the host."""
    element = rt.element
    acc = F32 if element == F16 else element
    ra, rb = ctx.reader(a, [0]), ctx.reader(b, [0])

    def product(builder, ivs):
        x = ctx.arith(builder)
        return x.apply(scalar.MulOp, x.cast(ra.load(builder, ivs), acc),
                       x.cast(rb.load(builder, ivs), acc))

    return reduce_values(ctx, Reduce("sum", acc, (0,), False, 1, rt), [k], product)


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
    if (a.type.rank, b.type.rank) == (1, 1):
        total = _blas_dot(ctx, a, b, k)
        return Lowered(rt, scalar=total)
    out = ctx.fresh(rt, _product_sizes(ctx, a, b, rt))
    # An empty contraction: BLAS may return without writing the result.
    _when(ctx, ctx.ix.select(ctx.ix.eq(k, 0), 1, 0),
          lambda bb: bb.insert(FillOp.build(ctx.constant(0.0, element), out.buffer)))
    _blas_product(ctx, a, b, out, k, ctx.constant(1.0, element), ctx.constant(0.0, element))
    return out


def _product_sizes(ctx, a, b, rt) -> list:
    """The sizes of ``a . b`` (result type ``rt``), checked to fit where there are two: the rows
    of one by the columns of the other can make a result larger than both (a single size is a
    dimension of an input that exists)."""
    sizes = ([ctx.size(a, 0)] if a.type.rank == 2 else []) + \
        ([ctx.size(b, 1)] if b.type.rank == 2 else [])
    if len(sizes) == 2:
        ctx.check_size(sizes, rt.element, "the result")
    return sizes


_PREFIXES = {F32: "s", F64: "d", C64: "c", C128: "z"}


def _prefix(element) -> str:
    return _PREFIXES[element]


def _by_address(ctx, value: Value, element) -> Value:
    """A scalar argument as CBLAS takes it: a real one as it is, a complex one by address (a
    rank-0 buffer holding it)."""
    if not element.is_complex:
        return value
    cell = ctx.alloc(TensorType((), element), [])
    ctx.b.insert(StoreOp.build(value, cell, []))
    return cell


@dataclass
class _Layout:
    """One way to hand an operand to BLAS: when ``condition`` holds (an i1 Value or a Python
    bool), pass ``buffer`` (the operand's own, or a contiguous copy) with leading dimension or
    increment ``step``; a matrix stored transposed (column-major) has ``transposed`` true."""

    condition: object
    buffer: Value
    step: object
    transposed: object = False


def _layouts(ctx, value) -> list[_Layout]:
    """The ways to pass ``value`` (a matrix or vector) to BLAS without copying where its
    run-time layout allows it, and with a copy otherwise (made here, under its condition)."""
    ix = ctx.ix
    buf = ctx.buffer(value)
    sizes = ctx.sizes(value)
    t = buf.type
    if t.is_contiguous:
        step = 1 if t.rank == 1 else ix.max(sizes[1], 1)
        return [_Layout(True, buf, step)]
    source = buf.op.source if isinstance(buf, OpResult) and isinstance(buf.op, TransposeViewOp) \
        and buf.op.int_list("pattern") == (1, 0) else None
    if source is not None and source.type.is_contiguous:  # a transposed contiguous matrix
        columns = source.type.shape[1]
        step = ix.max(columns if columns is not None else
                      ctx.b.insert(DimOp.build(source, 1)).result, 1)
        return [_Layout(True, source, step, transposed=True)]
    strides = [s if s is not None else ctx.b.insert(StrideOp.build(buf, d)).result
               for d, s in enumerate(t.strides)]
    if t.rank == 1:
        (n,), (s,) = sizes, strides
        short = ix.le(n, 1)
        direct = [_Layout(ix.or_(short, ix.ge(s, 1)), buf, ix.select(short, 1, s))]
    else:
        (rows, cols), (s0, s1) = sizes, strides
        one_row, one_col = ix.le(rows, 1), ix.le(cols, 1)
        by_rows = ix.and_(ix.or_(one_col, ix.eq(s1, 1)),
                          ix.or_(one_row, ix.ge(s0, ix.max(cols, 1))))
        by_cols = ix.and_(ix.or_(one_row, ix.eq(s0, 1)),
                          ix.or_(one_col, ix.ge(s1, ix.max(rows, 1))))
        row_step = ix.select(one_row, ix.max(cols, 1), s0)
        col_step = ix.select(one_col, ix.max(rows, 1), s1)
        direct = [_Layout(ix.or_(by_rows, by_cols), buf, ix.select(by_rows, row_step, col_step),
                          ix.not_(by_rows))]
    fits = direct[0].condition
    if fits is True:
        return direct
    # The rest: a contiguous copy, allocated with size 0 where it is not needed.
    copy_sizes = [s if fits is False else ix.select(fits, 0, s) for s in sizes]
    copy = ctx.alloc(value.type, copy_sizes)
    reader = ctx.reader(value, list(range(t.rank)))
    _when(ctx, 1 if fits is False else ix.select(fits, 0, 1), lambda bb: ctx.loop_nest(
        sizes, lambda b2, ivs: ctx.store(b2, reader.load(b2, ivs), copy, ivs), builder=bb))
    step = 1 if t.rank == 1 else ix.max(sizes[1], 1)
    contiguous = _Layout(True if fits is False else ix.not_(fits), copy, step)
    return [contiguous] if fits is False else direct + [contiguous]


def _each_layout(ctx, layouts, prepare) -> None:
    """For each combination of the operands' layouts (one list per operand, from
    ``_layouts``): ``prepare(chosen)`` makes the scalars the call needs (at the top level) and
    returns ``emit(builder)``, which runs under the combination's condition: in a branch unless
    it is known at compile time."""
    ix = ctx.ix
    for combination in itertools.product(*layouts):
        condition = ix.all(layout.condition for layout in combination)
        if condition is False:
            continue
        emit = prepare(combination)
        if condition is True:
            emit(ctx.b)
        else:
            _when(ctx, ix.select(condition, 1, 0), emit)


def _flag(ctx, transposed):
    """The CBLAS transpose flag: 112 where ``transposed`` holds, 111 otherwise."""
    return ctx.ix.value(ctx.ix.select(transposed, CBLAS_TRANS, CBLAS_NO_TRANS))


def _blas_dot(ctx, a, b, k) -> Value:
    """``a . b`` of two vectors by ``cblas_?dot``; where the layouts are known only at run
    time, the branch taken leaves the sum in a rank-0 buffer."""
    element = a.type.element
    ix = ctx.ix
    if element.is_complex:
        return _blas_complex_dot(ctx, a, b, k)
    callee = f"cblas_{_prefix(element)}dot"
    layouts = [_layouts(ctx, a), _layouts(ctx, b)]

    def prepare(chosen, total=None):
        x, y = chosen
        args = [ix.value(k), x.buffer, ix.value(x.step), y.buffer, ix.value(y.step)]

        def emit(bb):
            value = bb.insert(CallOp.build(callee, args, [element])).result
            if total is not None:
                bb.insert(StoreOp.build(value, total, []))
            return value
        return emit

    if all(len(ls) == 1 and ls[0].condition is True for ls in layouts):
        return prepare([layouts[0][0], layouts[1][0]])(ctx.b)
    total = ctx.alloc(TensorType((), element), [])
    _each_layout(ctx, layouts, lambda chosen: prepare(chosen, total))
    return ctx.b.insert(LoadOp.build(total, [])).result


def _blas_complex_dot(ctx, a, b, k) -> Value:
    """``a . b`` of two complex vectors by ``cblas_?dotu_sub``, which writes the sum into a
    rank-0 buffer (an empty contraction writes 0)."""
    element, ix = a.type.element, ctx.ix
    total = ctx.alloc(TensorType((), element), [])

    def prepare(chosen):
        x, y = chosen
        args = [ix.value(k), x.buffer, ix.value(x.step), y.buffer, ix.value(y.step), total]
        return lambda bb: bb.insert(CallOp.build(f"cblas_{_prefix(element)}dotu_sub", args))

    _each_layout(ctx, [_layouts(ctx, a), _layouts(ctx, b)], prepare)
    return ctx.b.insert(LoadOp.build(total, [])).result


def _blas_product(ctx, a, b, out, k, alpha, beta, layouts=None) -> None:
    """``out = alpha * (a . b) + beta * out`` by ``cblas_?gemm`` or ``cblas_?gemv`` (``a`` or
    ``b`` of rank 2, ``out`` a fresh contiguous buffer), passing each operand as it lies in
    memory where BLAS can address it (rows or columns contiguous) and a copy otherwise
    (``layouts``: the operands' ``_layouts``, made here unless given)."""
    ix = ctx.ix
    layouts = layouts or [_layouts(ctx, a), _layouts(ctx, b)]
    prefix = _prefix(out.type.element)
    alpha, beta = (_by_address(ctx, v, out.type.element) for v in (alpha, beta))
    order = ctx.constant(CBLAS_ROW_MAJOR)
    unit = ctx.constant(1)
    kv = ix.value(k)
    ranks = (a.type.rank, b.type.rank)
    if ranks == (2, 2):
        m, n = (ix.value(s) for s in out.sizes)
        ldc = ix.value(ix.max(out.sizes[1], 1))

        def gemm(chosen):
            la, lb = chosen
            args = [order, _flag(ctx, la.transposed), _flag(ctx, lb.transposed), m, n, kv,
                    alpha, la.buffer, ix.value(la.step), lb.buffer, ix.value(lb.step), beta,
                    out.buffer, ldc]
            return lambda bb: bb.insert(CallOp.build(f"cblas_{prefix}gemm", args))
        _each_layout(ctx, layouts, gemm)
        return
    # y = op(M) x, with M stored as rows x cols (its transpose where it lies by columns):
    # a . x is M = a; x . b is M = b transposed.
    matrix = a if ranks == (2, 1) else b
    wanted_transposed = ranks == (1, 2)
    rows, cols = ctx.sizes(matrix)

    def gemv(chosen):
        lm, lv = chosen if ranks == (2, 1) else chosen[::-1]
        flipped = lm.transposed
        stored_rows = ix.value(ix.select(flipped, cols, rows))
        stored_cols = ix.value(ix.select(flipped, rows, cols))
        trans = ix.not_(flipped) if wanted_transposed else flipped
        args = [order, _flag(ctx, trans), stored_rows, stored_cols, alpha, lm.buffer,
                ix.value(lm.step), lv.buffer, ix.value(lv.step), beta, out.buffer, unit]
        return lambda bb: bb.insert(CallOp.build(f"cblas_{prefix}gemv", args))
    _each_layout(ctx, layouts, gemv)


# ---------------------------------------------------------------------------------------------
# gemv, gemm: beta * acc + alpha * (lhs . rhs)


@BUFFERIZE.register(GemvOp, GemmOp)
def _lower_scaled_product(ctx, op):
    """``beta * acc + alpha * (lhs . rhs)``, as NumPy computes it, with ``acc`` read only when
    ``beta`` is not 0: with BLAS, ``beta * acc`` is written first, element for element, and the
    call adds ``alpha * product`` to it; as loops, the product is scaled by ``alpha`` and then
    ``beta * acc`` added. A ``beta`` known at compile time needs no branch; a non-zero one makes
    the accumulator's size check unconditional."""
    a, b, acc, rt = op.lhs, op.rhs, op.acc, op.result.type
    ix, element = ctx.ix, rt.element
    sa, sb = ctx.sizes(a), ctx.sizes(b)
    ctx.check(ix.eq(sa[-1], sb[0]),
              f"contraction sizes differ: shapes {format_shape(a.type.shape)} and "
              f"{format_shape(b.type.shape)}")
    k = sb[0] if isinstance(sb[0], int) else sa[-1]
    sizes = [sa[0]] + ([sb[1]] if b.type.rank == 2 else [])
    if len(sizes) == 2:  # the rows of a by the columns of b can outgrow both
        ctx.check_size(sizes, element, "the result")
    alpha, beta = ctx.element(op.alpha), ctx.element(op.beta)
    zero = ctx.constant(0, element)
    fixed = _constant(beta)
    beta_is_zero = ix.apply(scalar.EqOp, beta, zero) if fixed is None else bool(fixed == 0)
    sizes_fit = ix.all(ix.eq(s, t) for s, t in zip(ctx.sizes(acc), sizes))
    ctx.check(ix.or_(beta_is_zero, sizes_fit),
              f"the accumulator of shape {format_shape(acc.type.shape)} does not fit the "
              f"product of shapes {format_shape(a.type.shape)} and {format_shape(b.type.shape)}")
    once_unless_zero = ix.select(beta_is_zero, 0, 1)
    acc_reader = ctx.reader(acc, list(range(rt.rank)))

    def scaled_acc(out, value_of=None):
        def body(bb, ivs):
            x = ctx.arith(bb)
            value = acc_reader.load(bb, ivs)
            value = value if fixed == 1 else x.apply(scalar.MulOp, beta, value)
            if value_of is not None:
                value = x.apply(scalar.AddOp, value, value_of(bb, ivs))
            ctx.store(bb, value, out.buffer, ivs)
        _when(ctx, once_unless_zero, lambda bb: ctx.loop_nest(out.sizes, body, builder=bb))

    def finish_loops(out):
        """``out`` holds the product: scale it and add ``beta * acc``."""
        def scale(bb, ivs):
            x = ctx.arith(bb)
            value = bb.insert(LoadOp.build(out.buffer, ivs)).result
            ctx.store(bb, x.apply(scalar.MulOp, alpha, value), out.buffer, ivs)

        if _constant(alpha) != 1:
            ctx.loop_nest(out.sizes, scale)
        scaled_acc(out, lambda bb, ivs: bb.insert(LoadOp.build(out.buffer, ivs)).result)

    m, n = sizes[0], sizes[-1] if b.type.rank == 2 else 1
    if _use_blas(ctx, element, m, n, k):
        layouts = [_layouts(ctx, a), _layouts(ctx, b)]  # copies first: then the result is
        out = ctx.fresh(rt, sizes)                       # written by the last ops only

        def by_blas():
            if beta_is_zero is True:
                _when(ctx, ctx.ix.select(ctx.ix.eq(k, 0), 1, 0),
                      lambda bb: bb.insert(FillOp.build(zero, out.buffer)))
                _blas_product(ctx, a, b, out, k, alpha, zero, layouts)
                return
            if beta_is_zero is not False:
                _when(ctx, ctx.ix.select(beta_is_zero, 1, 0),
                      lambda bb: bb.insert(FillOp.build(zero, out.buffer)))
            scaled_acc(out)
            _blas_product(ctx, a, b, out, k, alpha, ctx.constant(1.0, element), layouts)

        if _matvec_in_step(op) and ctx.space == "host":
            ctx.sizes(acc)
            _loops_when_small(ctx, a, b, out, k, lambda: finish_loops(out), by_blas)
        else:
            by_blas()
        return [out]
    out = _lower_dot_loops(ctx, a, b, rt, k)
    finish_loops(out)
    return [out]


def _constant(value):
    """The number a scalar Value always holds, or None."""
    if isinstance(value, OpResult) and isinstance(value.op, scalar.ConstantOp):
        return value.op.numpy_value
    return None


def _when(ctx, trips, build) -> None:
    """``build(builder)`` inside a ``loops.for`` running ``trips`` (0 or 1) times: a branch."""
    if isinstance(trips, int):
        if trips:
            build(ctx.b)
        return
    loop = ctx.b.insert(ForOp.build(ctx.constant(0), trips, ctx.constant(1)))
    build(Builder.at_end(loop.body.block))
    loop.body.block.append(YieldOp.build())
