"""``map-to-gpu`` kernels for the CBLAS calls bufferize makes (``loops.call @cblas_?dot``,
``@cblas_?gemv``, ``@cblas_?gemm``) when their buffers are on the device.

The arguments follow ``lowering.dialects.loops.externals``: a buffer stands for the address of
its first element, and the call says how to walk from there (sizes, leading dimension ``ld``,
increments, order 101 row-major / 102 column-major, transpose flags 111 / 112). A kernel reads
elements through the buffer's own indices instead, so each buffer must lie in memory the way
the call walks it, which is how bufferize passes them:

- a vector of ``L`` elements with increment ``inc``: a rank-1 buffer of at least ``L`` elements
  whose stride is ``inc`` (``inc >= 1``, any when ``L <= 1``); element ``i`` is ``v[i]``;
- a matrix of ``R x C`` elements stored row by row with leading dimension ``ld``: a rank-2
  buffer that is either that matrix (``strides = [ld, 1]``, element ``(r, c)`` is ``a[r, c]``)
  or its transpose (``strides = [1, ld]``, ``a[c, r]``); which one is read off the run-time
  strides once on the host (a column-major matrix is the row-major transpose).

A ``loops.assert`` (kind "value") checks that before the launch, so a call that walks memory
otherwise stops with an error naming the call instead of computing something else.

Kernels:

- **dot**: a reduction to one value (every thread a grid-strided share of the products, a
  shared-memory tree per block, ``gpu.atomic_rmw add`` of each block's sum into a rank-0 device
  buffer set to 0 first);
- **gemv** ``y = alpha * op(A) x + beta * y``: a group of threads per element of ``y`` (the
  whole block for long rows, several rows per block for short ones), its threads summing
  strided products along the row of ``op(A)``, a tree reduction, and its first thread writing
  ``alpha * sum + beta * y[i]`` (``y`` is not read when ``beta`` is 0: a NaN
  there does not leak, as in BLAS);
- **gemm** ``C = alpha * op(A) op(B) + beta * C``: ``tile x tile`` output tiles, one per block
  (block-strided, blocks of ``tile x tile`` threads): for each slice of ``tile`` along the
  contraction the block stages a tile of ``op(A)`` and one of ``op(B)`` in shared memory
  (``gpu.shared_alloc``, zeros beyond the edges), waits (``gpu.barrier``), and each thread adds
  the ``tile`` products of its output element, then waits again before the next slice.
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.gpu import AtomicRmwOp, BarrierOp, ThreadIdOp
from lowering.dialects.loops import CallOp, DimOp, LoadOp, StoreOp, StrideOp
from lowering.ir.core import Value
from lowering.ir.passes import PassFailure

from .nests import constant_int
from .reductions import block_partial, leader, one_value, per_output_groups, threads_per_output

ROW_MAJOR, COL_MAJOR, NO_TRANS, TRANS = 101, 102, 111, 112


def map_blas_call(site, call: CallOp, slot: Value | None) -> None:
    """Replace ``call`` (on device buffers) by its kernel; a dot's result goes to ``slot``."""
    callee = call.callee
    kind = callee[len("cblas_") + 1:] if callee.startswith("cblas_") else ""
    if callee[len("cblas_"):len("cblas_") + 1] not in ("s", "d") or \
            kind not in ("dot", "gemv", "gemm"):
        raise PassFailure(f"map-to-gpu: no device kernel for {call.name} @{callee} at "
                          f"{call.location.short()} (known: cblas_sdot/ddot, cblas_sgemv/dgemv, "
                          f"cblas_sgemm/dgemm)", call)
    {"dot": _dot, "gemv": _gemv, "gemm": _gemm}[kind](site, call, slot)


class _Layouts:
    """Host-side checks and flags of the call's buffers."""

    def __init__(self, site, call: CallOp):
        self.site, self.call = site, call
        self.a = site.host_arith()
        self.conditions: list = []

    def _dim(self, buffer: Value, axis: int):
        static = buffer.type.shape[axis]
        return static if static is not None else \
            self.site.host.insert(DimOp.build(buffer, axis)).result

    def _stride(self, buffer: Value, axis: int):
        static = buffer.type.layout_strides[axis]
        return static if static is not None else \
            self.site.host.insert(StrideOp.build(buffer, axis)).result

    def _rank(self, buffer: Value, rank: int, what: str) -> None:
        if buffer.type.rank != rank:
            raise PassFailure(f"map-to-gpu: {what} of {self.call.name} @{self.call.callee} at "
                              f"{self.call.location.short()} is a rank-{buffer.type.rank} "
                              f"buffer; a device kernel reads a rank-{rank} one", self.call)

    def vector(self, buffer: Value, length, inc, what: str) -> None:
        """Check that ``buffer[i]`` is the call's element ``i``."""
        a = self.a
        self._rank(buffer, 1, what)
        length, inc = constant_int(length), constant_int(inc)
        walks = a.and_(a.eq(self._stride(buffer, 0), inc), a.ge(inc, 1))
        self.conditions.append(a.and_(a.ge(self._dim(buffer, 0), length),
                                      a.or_(a.le(length, 1), walks)))

    def matrix(self, buffer: Value, rows, cols, ld, column_major, what: str):
        """Check that the call's ``rows x cols`` matrix (``ld``, order) is ``buffer`` or its
        transpose; returns ``as_is``: true where element ``(r, c)`` is ``buffer[r, c]``
        (``buffer[c, r]`` otherwise)."""
        a = self.a
        self._rank(buffer, 2, what)
        rows, cols, ld = constant_int(rows), constant_int(cols), constant_int(ld)
        # The same matrix stored row by row: column-major R x C is row-major C x R transposed.
        r = a.select(column_major, cols, rows)
        c = a.select(column_major, rows, cols)
        d0, d1 = self._dim(buffer, 0), self._dim(buffer, 1)
        s0, s1 = self._stride(buffer, 0), self._stride(buffer, 1)
        direct = a.all([a.ge(d0, r), a.ge(d1, c), a.or_(a.le(r, 1), a.eq(s0, ld)),
                        a.or_(a.le(c, 1), a.eq(s1, 1))])
        flipped = a.all([a.ge(d0, c), a.ge(d1, r), a.or_(a.le(c, 1), a.eq(s0, 1)),
                         a.or_(a.le(r, 1), a.eq(s1, ld))])
        empty = a.eq(a.mul(r, c), 0)  # nothing is read: any layout will do
        self.conditions.append(a.or_(empty, a.or_(direct, flipped)))
        return _xor(a, direct, column_major)

    def flag(self, value, yes: int, no: int):
        """The i1 (or bool) ``value == yes``, checking that it is ``yes`` or ``no``."""
        a = self.a
        value = constant_int(value)
        self.conditions.append(a.or_(a.eq(value, yes), a.eq(value, no)))
        return a.eq(value, yes)

    def check(self) -> None:
        self.site.check(self.a.all(self.conditions),
                        f"{self.call.name} @{self.call.callee} at {self.call.location.short()}: "
                        f"a buffer does not lie in device memory the way the call walks it "
                        f"(a vector: stride = increment >= 1; a matrix: strides [ld, 1] or "
                        f"[1, ld]), or a flag is not a CBLAS one")


def _xor(a, x, y):
    if isinstance(x, bool) and isinstance(y, bool):
        return x != y
    if isinstance(x, bool):
        return a.not_(y) if x else y
    if isinstance(y, bool):
        return a.not_(x) if y else x
    return a.apply(scalar.XorOp, x, y)


def _element(kb, b, buffer: Value, as_is, i, j) -> Value:
    """``buffer[i, j]`` where ``as_is`` holds, ``buffer[j, i]`` elsewhere."""
    ka = kb.arith(b)
    first = ka.select(as_is, i, j)
    second = ka.select(as_is, j, i)
    return b.insert(LoadOp.build(buffer, [kb.value(first), kb.value(second)])).result


def _scaled(kb, b, alpha, beta, total, current_of) -> Value:
    """``alpha * total + beta * current`` (just ``alpha * total`` where ``beta`` is 0)."""
    element = total.type
    mul = lambda x, y: b.insert(scalar.MulOp.build(x, y)).result  # noqa: E731
    scaled = mul(alpha, total)
    current = current_of(b)
    both = b.insert(scalar.AddOp.build(scaled, mul(beta, current))).result
    zero = b.insert(scalar.EqOp.build(beta, kb.const(0, element))).result
    return b.insert(scalar.SelectOp.build(zero, scaled, both)).result


def _dot(site, call: CallOp, slot: Value) -> None:
    n, x, incx, y, incy = call.args
    layouts = _Layouts(site, call)
    layouts.vector(x, n, incx, "x")
    layouts.vector(y, n, incy, "y")
    layouts.check()
    element = call.outs[0].type

    def zero(kb):
        kb.b.insert(StoreOp.build(kb.const(0, element), slot, []))
    site.launch("init", 1, 1, zero)

    def product(kb, b, i, values):
        xi = b.insert(LoadOp.build(x, [i])).result
        yi = b.insert(LoadOp.build(y, [i])).result
        return b.insert(scalar.MulOp.build(xi, yi)).result

    def write(kb, b, total, values, atomic):
        if atomic:
            b.insert(AtomicRmwOp.build(atomic, total, slot, []))
        else:
            b.insert(StoreOp.build(total, slot, []))

    add = lambda b, p, q: b.insert(scalar.AddOp.build(p, q)).result  # noqa: E731
    one_value(site, "dot", n, product, add, 0, element, "add", write)


def _gemv(site, call: CallOp, slot) -> None:
    order, trans, m, n, alpha, matrix, lda, x, incx, beta, y, incy = call.args
    layouts = _Layouts(site, call)
    a = layouts.a
    column_major = layouts.flag(order, COL_MAJOR, ROW_MAJOR)
    transposed = layouts.flag(trans, TRANS, NO_TRANS)
    m, n = constant_int(m), constant_int(n)
    rows = a.select(transposed, n, m)
    length = a.select(transposed, m, n)
    as_is = layouts.matrix(matrix, m, n, lda, column_major, "A")
    as_is = _xor(a, as_is, transposed)  # op(A)[i, j] is the stored (i, j) or (j, i)
    layouts.vector(x, length, incx, "x")
    layouts.vector(y, rows, incy, "y")
    layouts.check()
    element = alpha.type
    add = lambda b, p, q: b.insert(scalar.AddOp.build(p, q)).result  # noqa: E731

    def row(kb, bb, values, group, i):
        def product(b2, j):
            aij = _element(kb, b2, matrix, as_is, i, j)
            xj = b2.insert(LoadOp.build(x, [j])).result
            return b2.insert(scalar.MulOp.build(aij, xj)).result
        cache = block_partial(kb, bb, length, product, add, kb.const(0, element), group)

        def finish(b3, total):
            value = _scaled(kb, b3, alpha, beta, total,
                            lambda b4: b4.insert(LoadOp.build(y, [i])).result)
            b3.insert(StoreOp.build(value, y, [i]))
        leader(kb, bb, cache, group, finish)

    per_output_groups(site, "gemv", [], [], rows,
                      threads_per_output(a, length, site.options.block_size), row)


def _gemm(site, call: CallOp, slot) -> None:
    (order, transa, transb, m, n, k, alpha, lhs, lda, rhs, ldb, beta, out, ldc) = call.args
    layouts = _Layouts(site, call)
    a = layouts.a
    column_major = layouts.flag(order, COL_MAJOR, ROW_MAJOR)
    ta = layouts.flag(transa, TRANS, NO_TRANS)
    tb = layouts.flag(transb, TRANS, NO_TRANS)
    m, n, k = (constant_int(v) for v in (m, n, k))
    a_as_is = _xor(a, layouts.matrix(lhs, a.select(ta, k, m), a.select(ta, m, k), lda,
                                     column_major, "A"), ta)
    b_as_is = _xor(a, layouts.matrix(rhs, a.select(tb, n, k), a.select(tb, k, n), ldb,
                                     column_major, "B"), tb)
    c_as_is = layouts.matrix(out, m, n, ldc, column_major, "C")
    layouts.check()
    tile = site.options.tile_size
    element = alpha.type
    tiles_n = a.floordiv(a.add(n, tile - 1), tile)
    tiles = a.mul(a.floordiv(a.add(m, tile - 1), tile), tiles_n)

    def fill(kb):
        tx, ty = kb.tid, kb.b.insert(ThreadIdOp.build("y")).result
        lhs_tile = kb.shared([tile, tile], element)
        rhs_tile = kb.shared([tile, tile], element)
        zero = kb.const(0, element)

        def stage(b, buffer, as_is, i, j, rows_, cols_, staged):
            """``staged[ty, tx] = op(M)[i, j]``, 0 outside the ``rows_ x cols_`` matrix."""
            sa = kb.arith(b)
            inside = sa.and_(sa.lt(i, rows_), sa.lt(j, cols_))
            value = _element(kb, b, buffer, as_is, kb.value(sa.min(i, sa.sub(rows_, 1))),
                             kb.value(sa.min(j, sa.sub(cols_, 1))))
            b.insert(StoreOp.build(sa.select(inside, value, zero), staged, [ty, tx]))

        def tile_at(bb, t):
            ta_ = kb.arith(bb)
            row = ta_.add(ta_.mul(ta_.floordiv(t, tiles_n), tile), ty)
            col = ta_.add(ta_.mul(ta_.mod(t, tiles_n), tile), tx)

            def slice_(b2, kt, carried):
                sa = kb.arith(b2)
                stage(b2, lhs, a_as_is, row, sa.add(kt, tx), m, k, lhs_tile)
                stage(b2, rhs, b_as_is, sa.add(kt, ty), col, k, n, rhs_tile)
                b2.insert(BarrierOp.build())

                def multiply(b3, p, acc):
                    u = b3.insert(LoadOp.build(lhs_tile, [ty, p])).result
                    v = b3.insert(LoadOp.build(rhs_tile, [p, tx])).result
                    w = b3.insert(scalar.MulOp.build(u, v)).result
                    return [b3.insert(scalar.AddOp.build(acc[0], w)).result]
                (total,) = kb.loop(b2, 0, tile, 1, carried, multiply)
                b2.insert(BarrierOp.build())
                return [total]
            (total,) = kb.loop(bb, 0, k, tile, [zero], slice_)

            def write(b4):
                value = _scaled(kb, b4, alpha, beta, total,
                                lambda b5: _element(kb, b5, out, c_as_is, row, col))
                wa = kb.arith(b4)
                b4.insert(StoreOp.build(value, out, [kb.value(wa.select(c_as_is, row, col)),
                                                     kb.value(wa.select(c_as_is, col, row))]))
            wa = kb.arith(bb)
            kb.when(bb, wa.and_(wa.lt(row, m), wa.lt(col, n)), write)
        kb.block_stride(kb.b, tiles, tile_at)

    site.launch("gemm", a.min(a.max(tiles, 1), site.options.max_blocks), (tile, tile), fill)

