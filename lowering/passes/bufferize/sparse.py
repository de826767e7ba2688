"""Bufferize the sparse dialect: a sparse tensor becomes its compressed storage, three buffers
(as MLIR's sparsifier lowers ``#csr``/``#csc``), and each op loops over them.

A ``#csr`` matrix of shape (m, n) is ``positions`` (m + 1 entries, i64), ``coordinates`` (one
column per stored value, i64) and ``values``; row ``i``'s entries are ``positions[i]`` to
``positions[i + 1]``. ``#csc`` is the same with columns and rows swapped. The outer dimension's
loop is a ``loops.parallel`` wherever iterations write disjoint places (rows of a CSR product,
the entries of a row), and each row's entries a ``loops.for`` from ``positions[i]`` to
``positions[i + 1]``:

- ``sparse.assemble`` takes its argument buffers as they are (checking their sizes against the
  shape); ``sparse.disassemble`` hands them out (the return copies what it does not own);
- ``sparse.from_dense`` counts each outer slice's nonzeros, sums the counts into positions,
  allocates exactly that many coordinates and values, and fills them;
- ``sparse.matmul`` of CSR by a dense matrix adds ``value * d[column, :]`` into each result row
  (the inner loop runs along contiguous rows, so it vectorizes), by a vector accumulates one
  dot product per row; a CSC operand scatters its columns, sequentially;
- ``sparse.to_dense``, ``sparse.add_dense`` scatter-add the stored values into a dense result;
  ``sparse.mul_dense`` and ``sparse.sample`` make new values over the same positions and
  coordinates; ``sparse.sum`` reduces the values.

A GPU cannot run them: ``DEVICE_BUFFERIZE`` declares every sparse op unsupported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp, ForOp, IfOp, LoadOp, StoreOp
from lowering.dialects.sparse import (AddDenseOp, AssembleOp, DisassembleOp, FromDenseOp,
                                      MatmulOp, MulDenseOp, SampleOp, SparseOp, SumOp,
                                      ToDenseOp, TransposeOp)
from lowering.ir.builder import Builder
from lowering.ir.core import Value
from lowering.ir.types import I64, INDEX, TensorType

from .core import BUFFERIZE, DEVICE_BUFFERIZE, FunctionLowering, Lowered

_INDEX_VECTOR = TensorType((None,), I64)


@dataclass
class SparseLowered(Lowered):
    """A sparse value's storage: ``positions``, ``coordinates`` and ``values`` buffers;
    ``sizes`` are (rows, columns) and ``nnz`` the number of stored values."""

    positions: Value | None = None
    coordinates: Value | None = None
    values: Value | None = None
    nnz: object = None

    @property
    def outer(self) -> int:
        """The dimension the positions run over (0 for CSR, 1 for CSC)."""
        return self.type.encoding.outer


def storage(ctx: FunctionLowering, value: Value) -> SparseLowered:
    return ctx.lowered(value)


def _load_index(b: Builder, ctx: FunctionLowering, buffer: Value, index) -> Value:
    """``buffer[index]`` (an i64 buffer) as an index."""
    loaded = b.insert(LoadOp.build(buffer, [ctx.ix.value(index)])).result
    return ctx.arith(b).cast(loaded, INDEX)


def _for_entries(ctx: FunctionLowering, b: Builder, sp: SparseLowered, outer_index: Value,
                 body: Callable, inits=()) -> list[Value]:
    """A ``loops.for`` over the stored entries of outer slice ``outer_index`` (a row of a CSR
    matrix): ``body(builder, inner_index, value, *carried)`` returns the carried values; the
    loop's index, the entry's position in the storage, is ``builder.position``."""
    ix = ctx.arith(b)
    lo = _load_index(b, ctx, sp.positions, outer_index)
    hi = _load_index(b, ctx, sp.positions, ix.add(outer_index, 1))

    def entry(bb: Builder, p: Value, *carried):
        bb.position = p
        inner = _load_index(bb, ctx, sp.coordinates, p)
        value = bb.insert(LoadOp.build(sp.values, [p])).result
        return body(bb, inner, value, *carried)

    loop = b.insert(ForOp.build(lo, hi, ctx.constant(1), list(inits), body=entry))
    return list(loop.results)


def _place(sp: SparseLowered, outer_index: Value, inner_index: Value) -> list[Value]:
    """The (row, column) of an entry from its outer and inner indices."""
    return [outer_index, inner_index] if sp.outer == 0 else [inner_index, outer_index]


def _zero(ctx: FunctionLowering, element) -> Value:
    return ctx.constant(0, element)


# ---------------------------------------------------------------------------------------------
# Storage


@BUFFERIZE.register(AssembleOp)
def _lower_assemble(ctx, op):
    t = op.result.type
    rows, cols = (ctx.ix.cast(v, INDEX) if isinstance(v, Value) else v
                  for v in ctx.vector(op.shape))
    sizes = [t.shape[0] if t.shape[0] is not None else rows,
             t.shape[1] if t.shape[1] is not None else cols]
    outer = (rows, cols)[t.encoding.outer]
    n_positions = ctx.size(op.positions, 0)
    nnz = ctx.size(op.values, 0)
    ctx.check(ctx.ix.eq(n_positions, ctx.ix.add(outer, 1)),
              f"{t.encoding} storage of shape (rows, columns) needs one more position than "
              f"the {'rows' if t.encoding.outer == 0 else 'columns'}")
    ctx.check(ctx.ix.eq(ctx.size(op.coordinates, 0), nnz),
              "there must be one coordinate per stored value")
    positions = ctx.buffer(op.positions)
    last = _load_index(ctx.b, ctx, positions, outer)
    ctx.check(ctx.ix.eq(last, nnz), "the last position must be the number of stored values")
    return [SparseLowered(t, sizes=sizes, positions=positions,
                          coordinates=ctx.buffer(op.coordinates), values=ctx.buffer(op.values),
                          nnz=nnz)]


@BUFFERIZE.register(DisassembleOp)
def _lower_disassemble(ctx, op):
    sp = storage(ctx, op.input)
    outer = sp.sizes[sp.outer]
    shape = ctx.alloc(TensorType((2,), I64), [2])
    for d, size in enumerate(sp.sizes):
        ctx.b.insert(StoreOp.build(ctx.ix.cast(size, I64), shape, [ctx.constant(d)]))
    return [Lowered(op.positions.type, buffer=sp.positions, sizes=[ctx.ix.add(outer, 1)]),
            Lowered(op.coordinates.type, buffer=sp.coordinates, sizes=[sp.nnz]),
            Lowered(op.values.type, buffer=sp.values, sizes=[sp.nnz]),
            Lowered(op.shape.type, buffer=shape, sizes=[2], owned=True)]


@BUFFERIZE.register(TransposeOp)
def _lower_transpose(ctx, op):
    sp = storage(ctx, op.input)
    return [SparseLowered(op.result.type, sizes=sp.sizes[::-1], positions=sp.positions,
                          coordinates=sp.coordinates, values=sp.values, nnz=sp.nnz)]


# ---------------------------------------------------------------------------------------------
# Conversions


@BUFFERIZE.register(ToDenseOp)
def _lower_to_dense(ctx, op):
    sp = storage(ctx, op.input)
    out = ctx.fresh(op.result.type, sp.sizes)
    ctx.b.insert(FillOp.build(_zero(ctx, op.result.type.element), out.buffer))
    _scatter_add(ctx, sp, out.buffer)
    return [out]


def _scatter_add(ctx: FunctionLowering, sp: SparseLowered, target: Value) -> None:
    """``target[place] += value`` for every stored entry; outer slices in parallel (they write
    disjoint rows, or columns)."""

    def outer_body(b, ivs):
        def add(bb, inner, value):
            place = _place(sp, ivs[0], inner)
            old = bb.insert(LoadOp.build(target, place)).result
            new = bb.insert(scalar.AddOp.build(old, value)).result
            bb.insert(StoreOp.build(new, target, place))
        _for_entries(ctx, b, sp, ivs[0], add)

    ctx.loop_nest([sp.sizes[sp.outer]], outer_body)


@BUFFERIZE.register(FromDenseOp)
def _lower_from_dense(ctx, op):
    t = op.result.type
    element = t.element
    sizes = ctx.sizes(op.input)
    dense = ctx.buffer(op.input)
    outer_dim = t.encoding.outer
    outer, inner = sizes[outer_dim], sizes[1 - outer_dim]
    zero, c0 = _zero(ctx, element), ctx.constant(0)
    one64, zero64 = ctx.constant(1, I64), ctx.constant(0, I64)
    positions = ctx.alloc(_INDEX_VECTOR, [ctx.ix.add(outer, 1)])

    def at(o, k):
        return [o, k] if outer_dim == 0 else [k, o]

    def nonzero(b, o, k):
        value = b.insert(LoadOp.build(dense, at(o, k))).result
        return value, b.insert(scalar.NeOp.build(value, zero)).result

    # Pass 1: positions[o + 1] = the number of nonzeros of outer slice o.
    def count(b, ivs):
        o = ivs[0]

        def step(bb, k, n):
            _, nz = nonzero(bb, o, k)
            return [bb.insert(scalar.AddOp.build(
                n, bb.insert(scalar.SelectOp.build(nz, one64, zero64)).result)).result]
        [n] = ctx.fold(b, [inner], [zero64], lambda bb, ks, carried: step(bb, ks[0], *carried))
        b.insert(StoreOp.build(n, positions, [ctx.arith(b).add(o, 1)]))

    ctx.loop_nest([outer], count)
    # Pass 2: running sums make the counts positions.
    ctx.b.insert(StoreOp.build(zero64, positions, [c0]))

    def running(b, ivs, carried):
        slot = [ctx.arith(b).add(ivs[0], 1)]
        total = b.insert(scalar.AddOp.build(
            carried[0], b.insert(LoadOp.build(positions, slot)).result)).result
        b.insert(StoreOp.build(total, positions, slot))
        return [total]
    [nnz64] = ctx.fold(ctx.b, [outer], [zero64], running)
    nnz = ctx.ix.cast(nnz64, INDEX)
    coordinates = ctx.alloc(_INDEX_VECTOR, [nnz])
    values = ctx.alloc(TensorType((None,), element), [nnz])

    # Pass 3: each outer slice writes its nonzeros from its own position on.
    def fill(b, ivs):
        o = ivs[0]

        def step(bb, k, p):
            value, nz = nonzero(bb, o, k)

            def store(bbb):
                bbb.insert(StoreOp.build(ctx.arith(bbb).cast(k, I64), coordinates, [p]))
                bbb.insert(StoreOp.build(value, values, [p]))
            bb.insert(IfOp.build(nz, then_body=store))
            return [bb.insert(scalar.AddOp.build(
                p, bb.insert(scalar.SelectOp.build(nz, ctx.constant(1), c0)).result)).result]
        start = _load_index(b, ctx, positions, o)
        ctx.fold(b, [inner], [start], lambda bb, ks, carried: step(bb, ks[0], *carried))

    ctx.loop_nest([outer], fill)
    return [SparseLowered(t, sizes=list(sizes), positions=positions, coordinates=coordinates,
                          values=values, nnz=nnz)]


# ---------------------------------------------------------------------------------------------
# Products and elementwise ops with a dense operand


@BUFFERIZE.register(MatmulOp)
def _lower_matmul(ctx, op):
    sp = storage(ctx, op.lhs)
    rt = op.result.type
    d_sizes = ctx.sizes(op.rhs)
    ctx.check(ctx.ix.eq(sp.sizes[1], d_sizes[0]),
              "the sparse operand's columns and the dense operand's rows differ in number")
    dense = ctx.buffer(op.rhs)
    out = ctx.fresh(rt, [sp.sizes[0], *d_sizes[1:]])
    vector = rt.rank == 1
    if sp.outer == 0 and vector:
        _csr_matvec(ctx, sp, dense, out.buffer, rt.element)
        return [out]
    ctx.b.insert(FillOp.build(_zero(ctx, rt.element), out.buffer))
    n = None if vector else d_sizes[1]

    def outer_body(b, ivs):
        o = ivs[0]

        def add(bb, inner, value):
            row, k = _place(sp, o, inner)  # the result row and the dense operand's row

            def update(b3, col):
                index = [row] if col is None else [row, col]
                d_index = [k] if col is None else [k, col]
                d = b3.insert(LoadOp.build(dense, d_index)).result
                old = b3.insert(LoadOp.build(out.buffer, index)).result
                product = b3.insert(scalar.MulOp.build(value, d)).result
                b3.insert(StoreOp.build(b3.insert(scalar.AddOp.build(old, product)).result,
                                        out.buffer, index))
            if n is None:
                update(bb, None)
            else:
                ctx.loop_nest([n], lambda b3, cols: update(b3, cols[0]), parallel=False,
                              builder=bb)
        _for_entries(ctx, b, sp, o, add)

    # CSR rows write their own result rows; CSC columns scatter into any row.
    ctx.loop_nest([sp.sizes[sp.outer]], outer_body, parallel=sp.outer == 0)
    return [out]


def _csr_matvec(ctx, sp: SparseLowered, dense: Value, out: Value, element) -> None:
    """``out[i] = sum of value * dense[column]`` over row ``i``'s entries, rows in parallel."""

    def row(b, ivs):
        def add(bb, column, value, acc):
            d = bb.insert(LoadOp.build(dense, [column])).result
            return [bb.insert(scalar.AddOp.build(
                acc, bb.insert(scalar.MulOp.build(value, d)).result)).result]
        [total] = _for_entries(ctx, b, sp, ivs[0], add, [_zero(ctx, element)])
        b.insert(StoreOp.build(total, out, [ivs[0]]))

    ctx.loop_nest([sp.sizes[0]], row)


def _dense_reader(ctx, sp: SparseLowered, dense_value: Value):
    """The dense operand's buffer and a function giving its index at an entry's place
    (dimensions typed 1 read at 0), after checking that its other sizes are the sparse
    operand's."""
    shape = dense_value.type.shape
    sizes = ctx.sizes(dense_value)
    for d in range(2):
        if shape[d] != 1:
            ctx.check(ctx.ix.eq(sizes[d], sp.sizes[d]),
                      f"the dense operand's dimension {d} does not match the sparse operand's")
    buffer = ctx.buffer(dense_value)
    zero = ctx.constant(0)
    return buffer, lambda place: [zero if shape[d] == 1 else place[d] for d in range(2)]


@BUFFERIZE.register(AddDenseOp)
def _lower_add_dense(ctx, op):
    sp = storage(ctx, op.lhs)
    buffer, index = _dense_reader(ctx, sp, op.rhs)
    out = ctx.fresh(op.result.type, sp.sizes)
    ctx.loop_nest(sp.sizes, lambda b, ivs: b.insert(StoreOp.build(
        b.insert(LoadOp.build(buffer, index(ivs))).result, out.buffer, ivs)))
    _scatter_add(ctx, sp, out.buffer)
    return [out]


def _lower_structured(combine):
    """A rule making new values over the sparse operand's structure: ``combine(builder,
    stored value, dense entry)``."""

    def lower(ctx, op):
        sp = storage(ctx, op.lhs)
        buffer, index = _dense_reader(ctx, sp, op.rhs)
        values = ctx.alloc(TensorType((None,), op.result.type.element), [sp.nnz])

        def outer_body(b, ivs):
            def entry(bb, inner, value):
                d = bb.insert(LoadOp.build(buffer, index(_place(sp, ivs[0], inner)))).result
                bb.insert(StoreOp.build(combine(bb, value, d), values, [bb.position]))
            _for_entries(ctx, b, sp, ivs[0], entry)

        ctx.loop_nest([sp.sizes[sp.outer]], outer_body)
        return [SparseLowered(op.result.type, sizes=list(sp.sizes), positions=sp.positions,
                              coordinates=sp.coordinates, values=values, nnz=sp.nnz)]
    return lower


BUFFERIZE.register(MulDenseOp)(_lower_structured(
    lambda b, value, d: b.insert(scalar.MulOp.build(value, d)).result))
BUFFERIZE.register(SampleOp)(_lower_structured(lambda b, value, d: d))


# ---------------------------------------------------------------------------------------------
# Sums


@BUFFERIZE.register(SumOp)
def _lower_sum(ctx, op):
    sp = storage(ctx, op.input)
    rt = op.result.type
    zero = _zero(ctx, rt.element)
    if op.axis is None:
        def add(b, ivs, carried):
            value = b.insert(LoadOp.build(sp.values, [ivs[0]])).result
            return [b.insert(scalar.AddOp.build(carried[0], value)).result]
        [total] = ctx.fold(ctx.b, [sp.nnz], [zero], add)
        return [Lowered(rt, scalar=total)]
    out = ctx.fresh(rt, [sp.sizes[1 - op.axis]])
    if op.axis != sp.outer:  # one total per outer slice: slices in parallel
        def per_slice(b, ivs):
            def add(bb, inner, value, acc):
                return [bb.insert(scalar.AddOp.build(acc, value)).result]
            [total] = _for_entries(ctx, b, sp, ivs[0], add, [zero])
            b.insert(StoreOp.build(total, out.buffer, [ivs[0]]))
        ctx.loop_nest([sp.sizes[sp.outer]], per_slice)
        return [out]
    ctx.b.insert(FillOp.build(zero, out.buffer))

    def scatter(b, ivs):
        def add(bb, inner, value):
            old = bb.insert(LoadOp.build(out.buffer, [inner])).result
            bb.insert(StoreOp.build(bb.insert(scalar.AddOp.build(old, value)).result,
                                    out.buffer, [inner]))
        _for_entries(ctx, b, sp, ivs[0], add)

    ctx.loop_nest([sp.sizes[sp.outer]], scatter, parallel=False)
    return [out]


DEVICE_BUFFERIZE.unsupported(SparseOp, "sparse tensors run on the CPU only: a GPU has no "
                                       "lowering of their compressed storage")
