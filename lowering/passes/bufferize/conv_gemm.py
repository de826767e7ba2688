"""Bufferize a large ``tensor.conv2d`` and its two gradients with im2col (or col2im) and one
BLAS product.

With ``P = out_rows * out_cols`` and ``K = channels * krows * kcols``:

1. the filters, flipped where ``filter_flip`` says, are copied into a contiguous ``(O, K)``
   matrix;
2. im2col: a ``(K, N * P)`` matrix whose row ``(c, a, b)`` holds, for every image and output
   position, the input element tap ``(a, b)`` of channel ``c`` meets (zero in the padding: the
   matrix is zeroed first unless the padding is statically none). ``loops.parallel`` over the
   batch, the innermost loop along an output row, over the valid ranges as the direct nest does;
3. ``cblas_?gemm``: ``(O, K) . (K, N * P)``, one call;
4. the ``(O, N * P)`` product is copied into the ``(N, O, out_rows, out_cols)`` result
   (``loops.parallel`` over the batch, contiguous rows).

The filter gradient is the same product the other way round: the output gradient as an
``(O, N * P)`` matrix times the transposed column matrix gives the ``(O, K)`` gradient, copied
back into the filters' shape (flipped where the filters were). The input gradient is the
transposed filter matrix times that gradient matrix: the gradient of the column matrix, whose
elements col2im adds back into the input elements they were read from (``loops.parallel`` over
the batch, so no two threads write one element).

The product does all of the multiply-adds at BLAS speed; the price is the two copies and the
memory of the column matrix (``K`` times the output of one filter).


Choice rule: on the CPU with the ``use-blas`` pass option, an f32/f64 convolution whose
multiply-adds (``N * O * P * K``) are at least ``CONV_GEMM_MIN_WORK`` (2048), or not all known at
compile time, takes this path; a smaller one, one on a GPU (a kernel cannot call BLAS), or
another element type, the direct loop nest of ``bufferize.conv``. Measured on the machine this
was written on (x86-64, 2 cores shared with other work at a load average near 20, so noisy;
NumPy's OpenBLAS; f32, valid, 5x5 filters, 8 of them (20 for the last row), dynamic shapes; the
better of two processes' best of 9 calls):

====================  ===========  ============  ===========  ======================
input (N, C, H, W)    work (MAC)   direct loops  im2col+gemm  gemm, 1 BLAS thread
====================  ===========  ============  ===========  ======================
1 x 3 x 6 x 6         2,400        7.5 us        4.3 us
1 x 3 x 8 x 8         9,600        16.6 us       4.7 us
1 x 3 x 16 x 16       86,400       58.6 us       9.3 us
4 x 3 x 16 x 16       345,600      234 us        28.4 us
16 x 3 x 28 x 28      5,529,600    1.40 ms       18.3 ms      0.77 ms
32 x 3 x 28 x 28      11,059,200   2.90 ms       20.0 ms      1.14 ms
500 x 1 x 28 x 28     144,000,000  123 ms        96 ms        40.5 ms
====================  ===========  ============  ===========  ======================

The product wins from a few thousand multiply-adds. The middle rows' slow products are
OpenBLAS's threads waking on the overloaded machine (``OPENBLAS_NUM_THREADS=1`` gives the last
column), which the BLAS configuration, not this choice, decides.
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import CallOp, FillOp
from lowering.ir.types import F32, F64, TensorType

from .conv_geometry import for_range, load_at, valid_range
from .core import Lowered
from .dot import CBLAS_NO_TRANS, CBLAS_ROW_MAJOR, CBLAS_TRANS

CONV_GEMM_MIN_WORK = 2048


def use_gemm(ctx, geo, element) -> bool:
    """Whether the convolution of ``geo`` takes the im2col + BLAS path (see the module
    docstring's choice rule)."""
    if not getattr(ctx.options, "use_blas", False) or element not in (F32, F64) \
            or ctx.space == "device":
        return False
    sizes = (geo.batch, geo.outputs, geo.out_rows, geo.out_cols, geo.channels, geo.krows,
             geo.kcols)
    if not all(isinstance(s, int) for s in sizes):
        return True
    work = 1
    for s in sizes:
        work *= s
    return work >= CONV_GEMM_MIN_WORK


def _each_pair(ctx, geo, positions, visit) -> None:
    """Call ``visit(builder, input_index, column_index)`` for every element of the column
    matrix that holds an input element (``loops.parallel`` over the batch, innermost along an
    output row): im2col reads the input there, col2im adds back into the input gradient."""
    taps = ctx.ix.mul(geo.krows, geo.kcols)

    def per_image(b0, ivs):
        n, c, a = ivs
        ia = ctx.arith(b0)
        row_base = ia.sub(ia.mul(a, geo.dilation[0]), geo.pads[0])
        i_first, i_last = valid_range(ia, row_base, geo.stride[0], geo.rows, geo.out_rows)
        image_start = ia.mul(n, positions)

        def per_tap_col(b1, bcol):
            s1 = ctx.arith(b1)
            (j_first, j_last), col_base = geo.cols_of_tap(s1, bcol)
            k = s1.add(s1.mul(c, taps), s1.add(s1.mul(a, geo.kcols), bcol))

            def per_row(b2, i):
                s2 = ctx.arith(b2)
                y = s2.add(row_base, s2.mul(i, geo.stride[0]))
                row_start = s2.add(image_start, s2.mul(i, geo.out_cols))

                def per_col(b3, j):
                    s3 = ctx.arith(b3)
                    col = s3.add(col_base, s3.mul(j, geo.stride[1]))
                    visit(b3, [n, c, y, col], [k, s3.add(row_start, j)])

                for_range(ctx, b2, j_first, j_last, per_col)

            for_range(ctx, b1, i_first, i_last, per_row)

        for_range(ctx, b0, 0, geo.kcols, per_tap_col)

    ctx.loop_nest([geo.batch, geo.channels, geo.krows], per_image)


def _im2col(ctx, geo, op, element, depth, positions, columns):
    """The ``(K, N * P)`` column matrix of ``op``'s input (see the module docstring)."""
    x = ctx.reader(op.input, [0, 1, 2, 3])
    cols = ctx.alloc(TensorType((None, None), element), [depth, columns])
    if any(p != 0 for p in geo.pads):
        ctx.b.insert(FillOp.build(ctx.constant(0, element), cols))
    _each_pair(ctx, geo, positions,
               lambda b, at_input, at_cols: ctx.store(b, x.load(b, at_input), cols, at_cols))
    return cols


def _gemm(ctx, element, trans_a: bool, trans_b: bool, m, n, k, a, lda, b, ldb, c,
          ldc) -> None:
    """``c = op(a) . op(b)`` by ``cblas_?gemm`` (row-major; ``op`` transposes where
    ``trans_a``/``trans_b`` say); an empty contraction gives zeros."""
    ix = ctx.ix
    if isinstance(k, int) and k == 0:
        ctx.b.insert(FillOp.build(ctx.constant(0, element), c))
        return
    prefix = "s" if element == F32 else "d"
    args = [ctx.constant(CBLAS_ROW_MAJOR), ctx.constant(CBLAS_TRANS if trans_a else CBLAS_NO_TRANS),
            ctx.constant(CBLAS_TRANS if trans_b else CBLAS_NO_TRANS), ix.value(m), ix.value(n),
            ix.value(k), ctx.constant(1.0, element), a, ix.value(ix.max(lda, 1)), b,
            ix.value(ix.max(ldb, 1)), ctx.constant(0.0, element), c, ix.value(ix.max(ldc, 1))]
    ctx.b.insert(CallOp.build(f"cblas_{prefix}gemm", args))


def _matrix_sizes(ctx, geo, element):
    """``K``, ``P``, ``N * P``, with the size checks of the two large matrices."""
    ix = ctx.ix
    depth = ix.mul(geo.channels, ix.mul(geo.krows, geo.kcols))
    positions = ix.mul(geo.out_rows, geo.out_cols)
    columns = ix.mul(geo.batch, positions)
    ctx.check_size([depth, columns], element, "the im2col matrix")
    ctx.check_size([geo.outputs, columns], element, "the product")
    return depth, positions, columns


def _filter_index(ctx, geo, s, c, a, bcol):
    """The column of filter element ``(c, a, b)`` in the ``(O, K)`` filter matrix."""
    return s.add(s.mul(c, s.mul(geo.krows, geo.kcols)), s.add(s.mul(a, geo.kcols), bcol))


def _filter_matrix(ctx, geo, op, element, depth):
    """The filters, flipped where ``filter_flip`` says, as a contiguous ``(O, K)`` matrix."""
    w = ctx.reader(op.filters, [0, 1, 2, 3])
    filters = ctx.alloc(TensorType((None, None), element), [geo.outputs, depth])

    def filter_row(b, ivs):
        o, c, a, bcol = ivs
        s = ctx.arith(b)
        value = w.load(b, [o, c, geo.tap(a, geo.krows, s), geo.tap(bcol, geo.kcols, s)])
        ctx.store(b, value, filters, [o, _filter_index(ctx, geo, s, c, a, bcol)])

    ctx.loop_nest([geo.outputs, geo.channels, geo.krows, geo.kcols], filter_row)
    return filters


def _grad_matrix(ctx, geo, op, element, positions, columns):
    """The output gradient ``(N, O, rows, cols)`` as an ``(O, N * P)`` matrix."""
    g = ctx.reader(op.output_grad, [0, 1, 2, 3])
    grads = ctx.alloc(TensorType((None, None), element), [geo.outputs, columns])

    def grad_row(b, ivs):
        n, o, i = ivs
        s = ctx.arith(b)
        start = s.add(s.mul(n, positions), s.mul(i, geo.out_cols))

        def element_at(bj, j):
            sj = ctx.arith(bj)
            ctx.store(bj, g.load(bj, [n, o, i, j]), grads, [o, sj.add(start, j)])

        for_range(ctx, b, 0, geo.out_cols, element_at)

    ctx.loop_nest([geo.batch, geo.outputs, geo.out_rows], grad_row)
    return grads


def lower_conv2d_gemm(ctx, op, geo) -> Lowered:
    """The result of ``tensor.conv2d`` ``op`` by im2col and ``cblas_?gemm``."""
    rt = op.result.type
    element = rt.element
    matrix = TensorType((None, None), element)
    depth, positions, columns = _matrix_sizes(ctx, geo, element)

    filters = _filter_matrix(ctx, geo, op, element, depth)
    # im2col, then (O, K) . (K, N * P)
    cols = _im2col(ctx, geo, op, element, depth, positions, columns)
    product = ctx.alloc(matrix, [geo.outputs, columns])
    _gemm(ctx, element, False, False, geo.outputs, columns, depth, filters, depth, cols, columns,
          product, columns)

    # (O, N * P) -> (N, O, rows, cols)
    out = ctx.fresh(rt, [geo.batch, geo.outputs, geo.out_rows, geo.out_cols])

    def copy_row(b, ivs):
        n, o, i = ivs
        s = ctx.arith(b)
        start = s.add(s.mul(n, positions), s.mul(i, geo.out_cols))

        def element_at(bj, j):
            sj = ctx.arith(bj)
            value = load_at(bj, product, [o, sj.add(start, j)])
            ctx.store(bj, value, out.buffer, [n, o, i, j])

        for_range(ctx, b, 0, geo.out_cols, element_at)

    ctx.loop_nest([geo.batch, geo.outputs, geo.out_rows], copy_row)
    return out


def lower_conv2d_grad_filters_gemm(ctx, op, geo) -> Lowered:
    """The result of ``tensor.conv2d_grad_filters`` ``op``: the output gradient as an
    ``(O, N * P)`` matrix times the transposed column matrix of the input, one
    ``cblas_?gemm``, then scattered into the filters' shape (flipped back)."""
    rt = op.result.type
    element = rt.element
    matrix = TensorType((None, None), element)
    depth, positions, columns = _matrix_sizes(ctx, geo, element)

    grads = _grad_matrix(ctx, geo, op, element, positions, columns)
    cols = _im2col(ctx, geo, op, element, depth, positions, columns)
    product = ctx.alloc(matrix, [geo.outputs, depth])
    _gemm(ctx, element, False, True, geo.outputs, depth, columns, grads, columns, cols, columns,
          product, depth)

    gw = ctx.fresh(rt, [geo.outputs, geo.channels, geo.krows, geo.kcols])

    def filter_element(b, ivs):
        o, c, a, bcol = ivs
        s = ctx.arith(b)
        value = load_at(b, product, [o, _filter_index(ctx, geo, s, c, a, bcol)])
        ctx.store(b, value, gw.buffer, [o, c, geo.tap(a, geo.krows, s),
                                        geo.tap(bcol, geo.kcols, s)])

    ctx.loop_nest([geo.outputs, geo.channels, geo.krows, geo.kcols], filter_element)
    return gw


def lower_conv2d_grad_inputs_gemm(ctx, op, geo) -> Lowered:
    """The result of ``tensor.conv2d_grad_inputs`` ``op``: the transposed filter matrix times
    the output gradient as an ``(O, N * P)`` matrix, one ``cblas_?gemm`` giving the gradient of
    the column matrix, then col2im: each column-matrix element added back into the input
    element it was read from (parallel over the batch: no two threads write one element)."""
    rt = op.result.type
    element = rt.element
    depth, positions, columns = _matrix_sizes(ctx, geo, element)
    filters = _filter_matrix(ctx, geo, op, element, depth)
    grads = _grad_matrix(ctx, geo, op, element, positions, columns)
    cols = ctx.alloc(TensorType((None, None), element), [depth, columns])
    _gemm(ctx, element, True, False, depth, columns, geo.outputs, filters, depth, grads,
          columns, cols, columns)
    gx = ctx.fresh(rt, [geo.batch, geo.channels, geo.rows, geo.cols])
    ctx.b.insert(FillOp.build(ctx.constant(0, element), gx.buffer))

    def add_back(b, at_input, at_cols):
        s = ctx.arith(b)
        total = s.apply(scalar.AddOp, load_at(b, gx.buffer, at_input), load_at(b, cols, at_cols))
        ctx.store(b, total, gx.buffer, at_input)

    _each_pair(ctx, geo, positions, add_back)
    return gx
