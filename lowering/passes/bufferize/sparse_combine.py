"""Bufferize the sparse ops on two sparse operands (``lowering.dialects.sparse.combine``) to
loops over their compressed storage.

``sparse.add``, ``sparse.mul`` and ``sparse.spmm`` build their result one outer slice at a time
with a dense workspace as long as the inner dimension (Gustavson's method, MLIR's "access
pattern expansion"): a ``marker`` per inner coordinate says whether the slice being built has
met it yet, and an accumulator holds its value. Two passes over the slices: the first counts
each slice's distinct coordinates (so positions are running sums and the coordinates and
values are allocated at their exact size), the second records each coordinate the first time
it is met and accumulates its value, then writes the slice's values. The slices share the
workspace, so the outer loop is sequential. The coordinates of a slice are in the order they
were first met.

``sparse.convert`` is a counting sort: count the entries of each inner coordinate, sum the
counts into positions, then deal every entry to its new slice in outer order (so each new
slice's coordinates rise).
"""
from __future__ import annotations

from typing import Callable

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp, ForOp, IfOp, LoadOp, StoreOp
from lowering.dialects.sparse import AddSparseOp, ConcatOp, ConvertOp, MulSparseOp, SpmmOp
from lowering.ir.builder import Builder
from lowering.ir.core import Value
from lowering.ir.types import I64, INDEX, TensorType

from .core import BUFFERIZE
from .sparse import SparseLowered, _for_entries, _load_index, storage

_I64_VECTOR = TensorType((None,), I64)

# visit(builder, inner coordinate, value, carried) -> the carried value after the entry
Visit = Callable[[Builder, Value, Value, Value], Value]
# source(builder, outer index, visit, carried) -> carried: calls visit on each contribution
Source = Callable[[Builder, Value, Visit, Value], Value]


def _ins(b: Builder, cls, *operands) -> Value:
    return b.insert(cls.build(*operands)).result


def _entries(ctx, sp: SparseLowered) -> Source:
    """The stored entries of an outer slice of ``sp``."""
    def source(b, o, visit, carried):
        [out] = _for_entries(ctx, b, sp, o, lambda bb, k, v, c: [visit(bb, k, v, c)],
                             [carried])
        return out
    return source


def _products(ctx, a: SparseLowered, bm: SparseLowered) -> Source:
    """For row ``i`` of ``a``: ``a[i, k] * b[k, j]`` at column ``j`` for each stored ``a[i, k]``
    and each stored entry of row ``k`` of ``b`` (both CSR)."""
    def source(b, i, visit, carried):
        def through_b(bb, k, va, c):
            [out] = _for_entries(ctx, bb, bm, k, lambda b3, j, vb, c3: [
                visit(b3, j, _ins(b3, scalar.MulOp, va, vb), c3)], [c])
            return out
        [out] = _for_entries(ctx, b, a, i, lambda bb, k, v, c: [through_b(bb, k, v, c)],
                             [carried])
        return out
    return source


class _Workspace:
    """The marker (i64, -1 at first) and accumulators over the inner dimension."""

    def __init__(self, ctx, inner, element, accumulators: int):
        self.ctx = ctx
        self.marker = ctx.alloc(_I64_VECTOR, [inner])
        self.acc = [ctx.alloc(TensorType((None,), element), [inner])
                    for _ in range(accumulators)]
        self.zero = ctx.constant(0, element)

    def reset(self):
        self.ctx.b.insert(FillOp.build(self.ctx.constant(-1, I64), self.marker))

    def stamp(self, b: Builder, o: Value, times: int = 1, plus: int = 0) -> Value:
        """The marker value of outer slice ``o`` (``o * times + plus``, i64)."""
        ix = self.ctx.arith(b)
        return ix.cast(ix.add(ix.mul(o, times), plus), I64)


def _count_pass(ctx, outer, positions: Value, sources, visits) -> Value:
    """positions[o + 1] = positions[o] + what the visits count in slice o; the total (i64)."""
    zero64 = ctx.constant(0, I64)
    ctx.b.insert(StoreOp.build(zero64, positions, [ctx.constant(0)]))

    def slice_(b, ivs, carried):
        o, count = ivs[0], zero64
        for source, visit in zip(sources, visits):
            count = source(b, o, lambda bb, k, v, c, visit=visit: visit(bb, o, k, v, c), count)
        total = _ins(b, scalar.AddOp, carried[0], count)
        b.insert(StoreOp.build(total, positions, [ctx.arith(b).add(o, 1)]))
        return [total]
    [total] = ctx.fold(ctx.b, [outer], [zero64], slice_)
    return total


def _fill_pass(ctx, outer, positions: Value, sources, visits, finish) -> None:
    """Each slice: the visits record coordinates from ``positions[o]`` on (carrying the next
    free place), then ``finish(b, p, coordinate)`` writes the value at each place ``p``."""
    def slice_(b, ivs, carried):
        o = ivs[0]
        start = _load_index(b, ctx, positions, o)
        p = start
        for source, visit in zip(sources, visits):
            p = source(b, o, lambda bb, k, v, c, visit=visit: visit(bb, o, k, v, c), p)
        b.insert(ForOp.build(start, p, ctx.constant(1), [], body=lambda bb, q: finish(bb, q)))
        return []
    ctx.fold(ctx.b, [outer], [], slice_)


def _record(ctx, coordinates: Value, b: Builder, first: Value, k: Value, p: Value,
            also: Callable[[Builder], None] = lambda bb: None) -> Value:
    """When ``first``: ``coordinates[p] = k`` (and ``also``); the next free place."""
    def store(bb):
        bb.insert(StoreOp.build(ctx.arith(bb).cast(k, I64), coordinates, [p]))
        also(bb)
    b.insert(IfOp.build(first, then_body=store))
    return _ins(b, scalar.AddOp, p, _ins(b, scalar.SelectOp, first, ctx.constant(1),
                                         ctx.constant(0)))


def _result(ctx, op, total64) -> tuple[Value, Value, Value]:
    """The number of stored values (from the count pass's i64 total), and the coordinates and
    values buffers of that size."""
    nnz = ctx.ix.cast(total64, INDEX)
    coordinates = ctx.alloc(_I64_VECTOR, [nnz])
    values = ctx.alloc(TensorType((None,), op.result.type.element), [nnz])
    return nnz, coordinates, values


def _union(ctx, op, sources, sizes, outer_dim: int) -> list[SparseLowered]:
    """The result storing every coordinate the sources reach in each slice, each value the
    sum of what reaches it."""
    outer, inner = sizes[outer_dim], sizes[1 - outer_dim]
    ws = _Workspace(ctx, inner, op.result.type.element, 1)
    [acc] = ws.acc
    positions = ctx.alloc(_I64_VECTOR, [ctx.ix.add(outer, 1)])
    ws.reset()

    def count(b, o, k, v, c):
        stamp = ws.stamp(b, o)
        new = _ins(b, scalar.NeOp, b.insert(LoadOp.build(ws.marker, [k])).result, stamp)
        b.insert(StoreOp.build(stamp, ws.marker, [k]))
        return _ins(b, scalar.AddOp, c, _ins(b, scalar.SelectOp, new, ctx.constant(1, I64),
                                             ctx.constant(0, I64)))

    total = _count_pass(ctx, outer, positions, sources, [count] * len(sources))
    nnz, coordinates, values = _result(ctx, op, total)
    ws.reset()

    def fill(b, o, k, v, p):
        stamp = ws.stamp(b, o)
        first = _ins(b, scalar.NeOp, b.insert(LoadOp.build(ws.marker, [k])).result, stamp)
        b.insert(StoreOp.build(stamp, ws.marker, [k]))
        old = _ins(b, scalar.SelectOp, first, ws.zero, b.insert(LoadOp.build(acc, [k])).result)
        b.insert(StoreOp.build(_ins(b, scalar.AddOp, old, v), acc, [k]))
        return _record(ctx, coordinates, b, first, k, p)

    def finish(b, q):
        k = _load_index(b, ctx, coordinates, q)
        b.insert(StoreOp.build(b.insert(LoadOp.build(acc, [k])).result, values, [q]))

    _fill_pass(ctx, outer, positions, sources, [fill] * len(sources), finish)
    return [SparseLowered(op.result.type, sizes=list(sizes), positions=positions,
                          coordinates=coordinates, values=values, nnz=nnz)]


def _check_same_sizes(ctx, a: SparseLowered, b: SparseLowered) -> None:
    for d in range(2):
        ctx.check(ctx.ix.eq(a.sizes[d], b.sizes[d]),
                  f"the operands' sizes in dimension {d} differ")


@BUFFERIZE.register(AddSparseOp)
def _lower_add(ctx, op):
    a, b = storage(ctx, op.lhs), storage(ctx, op.rhs)
    _check_same_sizes(ctx, a, b)
    return _union(ctx, op, [_entries(ctx, a), _entries(ctx, b)], a.sizes, a.outer)


@BUFFERIZE.register(SpmmOp)
def _lower_spmm(ctx, op):
    a, b = storage(ctx, op.lhs), storage(ctx, op.rhs)
    ctx.check(ctx.ix.eq(a.sizes[1], b.sizes[0]),
              "the first operand's columns and the second's rows differ in number")
    return _union(ctx, op, [_products(ctx, a, b)], [a.sizes[0], b.sizes[1]], 0)


@BUFFERIZE.register(MulSparseOp)
def _lower_mul(ctx, op):
    """The intersection: ``a``'s entries stamp their coordinates ``2o``; an entry of ``b``
    meeting ``2o`` records the coordinate and restamps it ``2o + 1``."""
    a, bm = storage(ctx, op.lhs), storage(ctx, op.rhs)
    _check_same_sizes(ctx, a, bm)
    sizes, outer_dim = a.sizes, a.outer
    outer, inner = sizes[outer_dim], sizes[1 - outer_dim]
    ws = _Workspace(ctx, inner, op.result.type.element, 2)
    acc_a, acc_b = ws.acc
    positions = ctx.alloc(_I64_VECTOR, [ctx.ix.add(outer, 1)])
    sources = [_entries(ctx, a), _entries(ctx, bm)]
    ws.reset()

    def mark_a(b, o, k, v, c):
        b.insert(StoreOp.build(ws.stamp(b, o, 2), ws.marker, [k]))
        return c

    def meet_b(b, o, k):
        """(first meeting of a stored ``a`` place, any meeting); restamps on the first."""
        seen = b.insert(LoadOp.build(ws.marker, [k])).result
        first = _ins(b, scalar.EqOp, seen, ws.stamp(b, o, 2))
        met = _ins(b, scalar.OrOp, first, _ins(b, scalar.EqOp, seen, ws.stamp(b, o, 2, 1)))
        b.insert(StoreOp.build(_ins(b, scalar.SelectOp, first, ws.stamp(b, o, 2, 1), seen),
                               ws.marker, [k]))
        return first, met

    def count_b(b, o, k, v, c):
        first, _ = meet_b(b, o, k)
        return _ins(b, scalar.AddOp, c, _ins(b, scalar.SelectOp, first, ctx.constant(1, I64),
                                             ctx.constant(0, I64)))

    total = _count_pass(ctx, outer, positions, sources, [mark_a, count_b])
    nnz, coordinates, values = _result(ctx, op, total)
    ws.reset()

    def fill_a(b, o, k, v, p):
        stamp = ws.stamp(b, o, 2)
        first = _ins(b, scalar.NeOp, b.insert(LoadOp.build(ws.marker, [k])).result, stamp)
        b.insert(StoreOp.build(stamp, ws.marker, [k]))
        old = _ins(b, scalar.SelectOp, first, ws.zero,
                   b.insert(LoadOp.build(acc_a, [k])).result)
        b.insert(StoreOp.build(_ins(b, scalar.AddOp, old, v), acc_a, [k]))
        return p

    def fill_b(b, o, k, v, p):
        first, met = meet_b(b, o, k)
        held = b.insert(LoadOp.build(acc_b, [k])).result
        old = _ins(b, scalar.SelectOp, first, ws.zero, held)
        new = _ins(b, scalar.SelectOp, met, _ins(b, scalar.AddOp, old, v), held)
        b.insert(StoreOp.build(new, acc_b, [k]))
        return _record(ctx, coordinates, b, first, k, p)

    def finish(b, q):
        k = _load_index(b, ctx, coordinates, q)
        product = _ins(b, scalar.MulOp, b.insert(LoadOp.build(acc_a, [k])).result,
                       b.insert(LoadOp.build(acc_b, [k])).result)
        b.insert(StoreOp.build(product, values, [q]))

    _fill_pass(ctx, outer, positions, sources, [fill_a, fill_b], finish)
    return [SparseLowered(op.result.type, sizes=list(sizes), positions=positions,
                          coordinates=coordinates, values=values, nnz=nnz)]


@BUFFERIZE.register(ConvertOp)
def _lower_convert(ctx, op):
    sp = storage(ctx, op.input)
    outer, inner = sp.sizes[sp.outer], sp.sizes[1 - sp.outer]
    one64 = ctx.constant(1, I64)
    positions = ctx.alloc(_I64_VECTOR, [ctx.ix.add(inner, 1)])
    ctx.b.insert(FillOp.build(ctx.constant(0, I64), positions))

    # Count each new slice's entries (at positions[k + 1]), then running sums.
    def count(b, ivs):
        def entry(bb, k, v):
            slot = [ctx.arith(bb).add(k, 1)]
            old = bb.insert(LoadOp.build(positions, slot)).result
            bb.insert(StoreOp.build(_ins(bb, scalar.AddOp, old, one64), positions, slot))
        _for_entries(ctx, b, sp, ivs[0], entry)
    ctx.loop_nest([outer], count, parallel=False)

    def running(b, ivs, carried):
        slot = [ctx.arith(b).add(ivs[0], 1)]
        total = _ins(b, scalar.AddOp, carried[0], b.insert(LoadOp.build(positions, slot)).result)
        b.insert(StoreOp.build(total, positions, slot))
        return [total]
    ctx.fold(ctx.b, [inner], [ctx.constant(0, I64)], running)

    # Deal the entries: next[k] is the next free place of new slice k.
    nxt = ctx.alloc(_I64_VECTOR, [inner])
    ctx.loop_nest([inner], lambda b, ivs: b.insert(StoreOp.build(
        b.insert(LoadOp.build(positions, ivs)).result, nxt, ivs)))
    coordinates = ctx.alloc(_I64_VECTOR, [sp.nnz])
    values = ctx.alloc(TensorType((None,), op.result.type.element), [sp.nnz])

    def deal(b, ivs):
        o64 = ctx.arith(b).cast(ivs[0], I64)

        def entry(bb, k, v):
            q64 = bb.insert(LoadOp.build(nxt, [k])).result
            q = ctx.arith(bb).cast(q64, INDEX)
            bb.insert(StoreOp.build(o64, coordinates, [q]))
            bb.insert(StoreOp.build(v, values, [q]))
            bb.insert(StoreOp.build(_ins(bb, scalar.AddOp, q64, one64), nxt, [k]))
        _for_entries(ctx, b, sp, ivs[0], entry)
    ctx.loop_nest([outer], deal, parallel=False)
    return [SparseLowered(op.result.type, sizes=list(sp.sizes), positions=positions,
                          coordinates=coordinates, values=values, nnz=sp.nnz)]


@BUFFERIZE.register(ConcatOp)
def _lower_concat(ctx, op):
    """The operands' storages one after the other: each one's positions shifted by the values
    stored before it."""
    parts = [storage(ctx, x) for x in op.operands]
    axis = op.axis
    inner = parts[0].sizes[1 - axis]
    for d, sp in enumerate(parts[1:], 1):
        ctx.check(ctx.ix.eq(sp.sizes[1 - axis], inner),
                  f"operand #{d} has another size in dimension {1 - axis} than operand #0")
    outer, nnz = 0, 0
    for sp in parts:
        outer, nnz = ctx.ix.add(outer, sp.sizes[axis]), ctx.ix.add(nnz, sp.nnz)
    positions = ctx.alloc(_I64_VECTOR, [ctx.ix.add(outer, 1)])
    coordinates = ctx.alloc(_I64_VECTOR, [nnz])
    values = ctx.alloc(TensorType((None,), op.result.type.element), [nnz])
    outer_at, nnz_at = 0, 0
    for sp in parts:
        shift = ctx.ix.cast(nnz_at, I64) if isinstance(nnz_at, Value) else \
            ctx.constant(nnz_at, I64)

        def position(b, ivs, sp=sp, shift=shift, outer_at=outer_at):
            p = b.insert(LoadOp.build(sp.positions, ivs)).result
            b.insert(StoreOp.build(_ins(b, scalar.AddOp, p, shift), positions,
                                   [ctx.arith(b).add(ivs[0], outer_at)]))

        def entry(b, ivs, sp=sp, nnz_at=nnz_at):
            at = [ctx.arith(b).add(ivs[0], nnz_at)]
            b.insert(StoreOp.build(b.insert(LoadOp.build(sp.coordinates, ivs)).result,
                                   coordinates, at))
            b.insert(StoreOp.build(b.insert(LoadOp.build(sp.values, ivs)).result, values, at))
        ctx.loop_nest([sp.sizes[axis]], position)
        ctx.loop_nest([sp.nnz], entry)
        outer_at, nnz_at = ctx.ix.add(outer_at, sp.sizes[axis]), ctx.ix.add(nnz_at, sp.nnz)
    total = ctx.ix.cast(nnz, I64) if isinstance(nnz, Value) else ctx.constant(nnz, I64)
    ctx.b.insert(StoreOp.build(total, positions, [ctx.ix.value(outer)]))
    sizes = [outer, inner] if axis == 0 else [inner, outer]
    return [SparseLowered(op.result.type, sizes=sizes, positions=positions,
                          coordinates=coordinates, values=values, nnz=nnz)]
