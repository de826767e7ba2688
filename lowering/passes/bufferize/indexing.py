"""Bufferize indexing: ``subtensor``, ``set_subtensor``/``inc_subtensor`` and the advanced
(integer-array) forms.

Basic indexing is a ``loops.subview`` of the input, no copy: offsets, sizes and steps are
computed at run time (folded where static) with Python's slice rules (negative bounds count from
the end and are clamped; a step may be negative, not 0), an integer index drops its dimension
and must be in range (``-size <= i < size``, a ``loops.assert`` of kind ``index`` otherwise).

``set_subtensor``/``inc_subtensor`` copy ``x`` into a fresh result, take the same view of it and
write (or add) ``y`` into the view, broadcast with NumPy's rules.

Advanced indexing (``x[..., idx0, idx1, ...]`` with adjacent index arrays and slices around them)
takes the slices as a view first, then:

- the index arrays are broadcast together (NumPy's rules) to a shape ``B`` and checked in one
  sequential loop over ``B`` (each index in ``-size <= i < size``, one ``loops.assert`` after the
  loop, so no check is inside a loop);
- ``advanced_subtensor`` gathers into a fresh result of shape ``(before..., B..., after...)`` with
  a parallel loop nest, negative indices wrapping around;
- ``advanced_set_subtensor``/``advanced_inc_subtensor`` copy ``x`` and scatter ``y`` into the copy
  with sequential loops in row-major order, so that a repeated index is written last by the last
  occurrence (set) or accumulates every occurrence in order (inc, as ``numpy.add.at``).
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import LoadOp, SubviewOp
from lowering.dialects.tensor import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp,
                                      AdvancedSubtensorOp, IncSubtensorOp, SetSubtensorOp,
                                      SubtensorOp)
from lowering.dialects.tensor.indexing import DYN, ArrayIndex, Index, Slice
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.ir.types import I1, INDEX

from .core import BUFFERIZE, Lowered

# ---------------------------------------------------------------------------------------------
# Windows of basic indexing


def slice_window(ctx, size, start, stop, step, dim: int):
    """Offset, length and step of ``start:stop:step`` over a dimension of ``size`` (Python's
    ``slice.indices``); parts are ints, index Values or None (absent). All static, it folds:

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> slice_window(ctx, 10, None, None, -3, 0), slice_window(ctx, 4, 7, None, None, 0)
    ((9, 4, -3), (0, 0, 1))
    >>> len(ctx.block)
    0
    """
    ix = ctx.ix
    step = 1 if step is None else step
    ctx.check(ix.ne(step, 0), f"slice step cannot be zero (dimension {dim})")
    backward = ix.lt(step, 0)
    lower = ix.select(backward, -1, 0)
    upper = ix.when(backward, lambda: ix.sub(size, 1), lambda: size)

    def clamp(bound, default):
        if bound is None:
            return default

        def below():
            shifted = ix.add(bound, size)
            return ix.select(ix.lt(shifted, 0), lower, shifted)
        return ix.when(ix.lt(bound, 0), below,
                       lambda: ix.select(ix.ge(bound, size), upper, bound))

    first = clamp(start, ix.when(backward, lambda: ix.sub(size, 1), lambda: 0))
    last = clamp(stop, ix.select(backward, -1, size))

    def forward_length():
        return ix.when(ix.lt(first, last),
                       lambda: ix.add(ix.floordiv(ix.sub(ix.sub(last, first), 1), step), 1),
                       lambda: 0)

    def backward_length():
        # ceil((first - last) / -step) as (last + 1 - first) // step + 1: -step would overflow
        # for step = -2**63, and last + 1 - first lies in (-size, 0]
        return ix.when(ix.lt(last, first),
                       lambda: ix.add(ix.floordiv(ix.sub(ix.add(last, 1), first), step), 1),
                       lambda: 0)
    length = ix.when(backward, backward_length, forward_length)
    # An empty window starts at 0, so that the view stays inside the buffer; a window of one
    # element or none steps by 1 (its step is never used, and a step near the int64 limits
    # times the stride would overflow).
    short = ix.le(length, 1)
    return ix.select(ix.eq(length, 0), 0, first), length, ix.select(short, 1, step)


def _index_position(ctx, size, index, dim: int):
    """A checked, non-negative integer index into a dimension of ``size``."""
    ix = ctx.ix
    ctx.check(ix.and_(ix.ge(index, ix.neg(size)), ix.lt(index, size)),
              f"index out of range for dimension {dim} (of shape "
              f"{format_shape(ctx.op.operands[0].type.shape)})", kind="index")
    return ix.when(ix.lt(index, 0), lambda: ix.add(index, size), lambda: index)


def _basic_view(ctx, x, buffer, entries, operands):
    """The ``loops.subview`` of ``buffer`` (holding ``x``) for index ``entries``, and its sizes;
    the dimensions of index arrays are taken whole."""
    sizes = ctx.sizes(x)
    if not entries:
        return buffer, sizes
    dynamic = iter(operands)

    def part(p):
        return ctx.index(next(dynamic)) if p is DYN else p

    offsets, lengths, steps, drop = [], [], [], []
    for dim, size in enumerate(sizes):
        entry = entries[dim] if dim < len(entries) else Slice()
        if isinstance(entry, Slice) and entry.is_whole:
            offsets.append(0)
            lengths.append(size)
            steps.append(1)
        elif isinstance(entry, Index):
            offsets.append(_index_position(ctx, size, part(entry.value), dim))
            lengths.append(1)
            steps.append(1)
            drop.append(dim)
        elif isinstance(entry, Slice):
            start, stop, step = (part(p) for p in entry.parts)
            window = slice_window(ctx, size, start, stop, step, dim)
            for target, value in zip((offsets, lengths, steps), window):
                target.append(value)
        else:
            next(dynamic)
            offsets.append(0)
            lengths.append(size)
            steps.append(1)
    view = ctx.b.insert(SubviewOp.build(buffer, offsets, lengths, steps, drop)).result
    kept = [s for d, s in enumerate(lengths) if d not in drop]
    return view, kept


@BUFFERIZE.register(SubtensorOp)
def _lower_subtensor(ctx, op):
    view, sizes = _basic_view(ctx, op.input, ctx.buffer(op.input), op.entries, op.indices)
    return [Lowered(op.result.type, buffer=view, sizes=sizes)]


@BUFFERIZE.register(SetSubtensorOp, IncSubtensorOp)
def _lower_write_subtensor(ctx, op):
    x, rt = op.input, op.result.type
    out = ctx.fresh(rt, ctx.sizes(x))
    ctx.copy(x, out.buffer)
    view, sizes = _basic_view(ctx, x, out.buffer, op.entries, op.indices)
    reader = ctx.broadcast_reader(op.value, sizes)
    accumulate = isinstance(op, IncSubtensorOp)

    def body(b, ivs):
        value = reader.load(b, ivs)
        if accumulate:
            value = _combine(ctx.arith(b), b.insert(LoadOp.build(view, ivs)).result, value)
        ctx.store(b, value, view, ivs)

    ctx.loop_nest(sizes, body)
    return [out]


def _combine(arith, current, value):
    """``current + value`` (``or`` for i1, as NumPy adds booleans)."""
    return arith.apply(scalar.OrOp if value.type == I1 else scalar.AddOp, current, value)


# ---------------------------------------------------------------------------------------------
# Advanced indexing


class _Gather:
    """The pieces of ``x[spec]`` with index arrays: the sliced view of ``x``, where the index
    arrays go, their broadcast shape and readers, and the result's sizes."""

    def __init__(self, ctx, x, buffer, entries, operands, element, what="the result"):
        self.ctx = ctx
        self.view, view_sizes = _basic_view(ctx, x, buffer, entries, operands)
        positions = [d for d, e in enumerate(entries) if isinstance(e, ArrayIndex)]
        self.first, count = positions[0], len(positions)
        arrays = [v for e, v in zip(_operand_entries(entries), operands)
                  if isinstance(e, ArrayIndex)]
        self.targets = view_sizes[self.first:self.first + count]
        self.shape = _broadcast_sizes(ctx, arrays)
        self.before = view_sizes[:self.first]
        self.after = view_sizes[self.first + count:]
        self.sizes = self.before + self.shape + self.after
        self.readers = [ctx.broadcast_reader(a, self.shape, "an index array",
                                             first=len(self.before)) for a in arrays]
        # The index arrays broadcast together can outgrow the input and every index array: the
        # size is checked before the bounds, whose check visits every broadcast index.
        ctx.check_size(self.sizes, element, what)
        self._check_bounds()

    def _check_bounds(self) -> None:
        ctx = self.ctx
        first = len(self.before)

        lows = [ctx.ix.neg(size) for size in self.targets]

        def step(b, ivs, carried):
            a = ctx.arith(b)
            ivs = [None] * first + list(ivs)  # readers address the shape's dimensions only
            ok = carried[0]
            for reader, size, low in zip(self.readers, self.targets, lows):
                index = a.cast(reader.load(b, ivs), INDEX)
                ok = a.and_(ok, a.and_(a.ge(index, low), a.lt(index, size)))
            return [a.value(ok, I1)]

        (ok,) = ctx.fold(ctx.b, self.shape, [ctx.constant(True, I1)], step)
        dims = ", ".join(str(self.first + i) for i in range(len(self.targets)))
        ctx.check(ok, f"an index is out of range for dimension{'s' * (len(self.targets) > 1)} "
                      f"{dims} of the input of shape {format_shape(ctx.op.input.type.shape)}",
                  kind="index")

    def source_indices(self, b, ivs) -> list:
        """Indices into the view for result indices ``ivs``: index arrays read and wrapped."""
        a = self.ctx.arith(b)
        first, rank = len(self.before), len(self.shape)
        picked = []
        for reader, size in zip(self.readers, self.targets):
            index = a.cast(reader.load(b, ivs), INDEX)
            picked.append(a.value(a.select(a.lt(index, 0), a.add(index, size), index)))
        return list(ivs[:first]) + picked + list(ivs[first + rank:])


def _operand_entries(entries) -> list:
    """The entry each index operand belongs to, in operand order."""
    owners = []
    for e in entries:
        if isinstance(e, ArrayIndex):
            owners.append(e)
        elif isinstance(e, Index):
            owners.extend([e] * (e.value is DYN))
        else:
            owners.extend([e] * sum(p is DYN for p in e.parts))
    return owners


def _broadcast_sizes(ctx, arrays) -> list:
    """The shape index arrays broadcast to (NumPy's rules; the checks come with the readers)."""
    ix = ctx.ix
    rank = max(a.type.rank for a in arrays)
    shape = []
    for k in range(rank):
        size = 1
        for a in arrays:
            j = k - (rank - a.type.rank)
            if j < 0 or a.type.shape[j] == 1:
                continue
            s = ctx.size(a, j)
            size = ix.select(ix.eq(s, 1), size, s)
        shape.append(size)
    return shape


@BUFFERIZE.register(AdvancedSubtensorOp)
def _lower_advanced_subtensor(ctx, op):
    gather = _Gather(ctx, op.input, ctx.buffer(op.input), op.entries, op.indices,
                     op.result.type.element)
    out = ctx.fresh(op.result.type, gather.sizes)

    def body(b, ivs):
        value = b.insert(LoadOp.build(gather.view, gather.source_indices(b, ivs))).result
        ctx.store(b, value, out.buffer, ivs)

    ctx.loop_nest(out.sizes, body)
    return [out]


@BUFFERIZE.register(AdvancedSetSubtensorOp, AdvancedIncSubtensorOp)
def _lower_advanced_write(ctx, op):
    x, rt = op.input, op.result.type
    out = ctx.fresh(rt, ctx.sizes(x))
    ctx.copy(x, out.buffer)
    gather = _Gather(ctx, x, out.buffer, op.entries, op.indices, rt.element,
                     "the selection written")
    reader = ctx.broadcast_reader(op.value, gather.sizes)
    accumulate = isinstance(op, AdvancedIncSubtensorOp)

    def body(b, ivs):
        where = gather.source_indices(b, ivs)
        value = reader.load(b, ivs)
        if accumulate:
            value = _combine(ctx.arith(b), b.insert(LoadOp.build(gather.view, where)).result,
                             value)
        ctx.store(b, value, gather.view, where)

    # Sequential: repeated indices must be written in order.
    ctx.loop_nest(gather.sizes, body, parallel=False)
    return [out]
