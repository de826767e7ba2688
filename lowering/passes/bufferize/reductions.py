"""Bufferize reductions: ``sum``, ``prod``, ``mean``, ``max``, ``min``, ``argmax``, ``argmin``.

Each reduction folds its input over ``axes`` with an accumulator:

- ``sum``/``prod`` accumulate in the result type (i64 for bool and signed integers, ui64 for
  unsigned, the float type itself; a sum of f16 in f32, rounded once), ``mean`` sums in f64 for
  integers and f32 for f16, then divides by the number of elements reduced (NaN for none, as
  NumPy);
- ``max``/``min`` start from the identity (-inf/+inf, the integer type's limits, or false/true
  for i1, where they are ``or``/``and``); NaN propagates; an empty reduced axis is an error
  (a ``loops.assert``), as in NumPy;
- ``argmax``/``argmin`` carry the best value and its index (the flattened index when reducing
  every axis); the first maximum wins and NaN counts as the maximum, as ``numpy.argmax`` has it;
  an empty input is an error.

Loop order: the outermost loop is a ``loops.parallel`` over the first kept dimension, then the
other dimensions in their order, so the last, contiguous one is innermost. When the reduced
dimensions are then all inside the kept ones the accumulator is a value carried by ``loops.for``
(``acc = acc + x``); otherwise (a kept dimension inside a reduced one, e.g. ``x.sum(axis=1)`` of
a 3-d ``x``) it lives in the result buffer, initialized with the identity, so the innermost loop
still walks contiguous memory.

A reduction to one element (no kept dimension) is split into at most ``PARTIAL_RESULTS``
contiguous chunks of its first dimension, reduced by a ``loops.parallel`` into a buffer of partial
results, which a short sequential loop then combines (unless its size is known to be below
``CHUNKED_MIN_SIZE``: then it is one sequential loop nest, except on a device, where a
sequential loop would run on one thread). On the host, a reduction keeping only the last
dimension (``x.sum(axis=0)`` of a matrix) runs over parallel tiles of that dimension with the rows
inside, accumulating in the result buffer, so the innermost loop stays contiguous; on a device it
is the ``loops.parallel`` over the columns with the rows carried inside, which ``map-to-gpu``
spreads over the whole grid (a thread per column) instead of at most ``PARTIAL_RESULTS`` blocks.

Order of operations: the combining step (``acc + x``, ``acc * x``, ``maximum(acc, x)``, ...) is
marked ``{fastmath = "reassoc"}`` (``scalar.allow_reassociation``), so the code generator may
regroup it: LLVM vectorizes a reduction loop and keeps several vector accumulators, summed at the
end. A float sum is then computed in an order close to NumPy's pairwise summation, not strictly
left to right, and its rounding differs from the interpreter's (which follows the IR in order)
by a few ulps of the sum of absolute values. Integer results are exact either way (wrapping
arithmetic is associative).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from lowering.dialects import scalar
from lowering.dialects.loops import FillOp, LoadOp
from lowering.dialects.tensor import ArgMaxOp, ArgMinOp, MaxOp, MeanOp, MinOp, ProdOp, SumOp
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.ir.types import F16, F32, F64, I64, ScalarType, TensorType

from .core import BUFFERIZE, Lowered


@dataclass
class Monoid:
    """How a reduction accumulates: the accumulator type and identity, ``prepare`` (an element
    to the accumulator type), ``combine`` (accumulator, prepared element) and ``finish`` (the
    accumulator to the result element)."""

    acc: ScalarType
    identity: object
    combine: Callable
    prepare: Callable | None = None
    finish: Callable | None = None

    def __post_init__(self):
        acc = self.acc
        self.prepare = self.prepare or (lambda a, x: a.cast(x, acc))
        self.finish = self.finish or (lambda a, v: v)


@dataclass(frozen=True)
class Reduce:
    """One reduction to lower: ``kind`` (sum, prod, mean, max, min) of values of ``element``
    over ``axes`` of a space of rank ``rank``, giving ``result`` (its type).

    >>> r = Reduce("sum", F32, (1,), True, 3, TensorType((None, 1, None), F32))
    >>> r.kept, r.result_sizes([2, 3, 4]), r.result_index({0: "i", 1: "j", 2: "k"}, 0)
    ([0, 2], [2, 1, 4], ['i', 0, 'k'])
    """

    kind: str
    element: ScalarType
    axes: tuple[int, ...]
    keepdims: bool
    rank: int
    result: TensorType

    @property
    def kept(self) -> list[int]:
        return [d for d in range(self.rank) if d not in self.axes]

    def result_index(self, ivs_by_dim: dict, zero) -> list:
        """The result element's indices for loop indices by dimension (0 for the reduced
        dimensions a ``keepdims`` result keeps)."""
        if not self.keepdims:
            return [ivs_by_dim[d] for d in self.kept]
        return [ivs_by_dim[d] if d in self.kept else zero for d in range(self.rank)]

    def result_sizes(self, sizes) -> list:
        if self.keepdims:
            return [sizes[d] if d in self.kept else 1 for d in range(self.rank)]
        return [sizes[d] for d in self.kept]


def lowest(t: ScalarType):
    """The identity of ``max`` for type ``t``.

    >>> from lowering.ir.types import I1, I8, F32
    >>> lowest(F32), lowest(I8), lowest(I1)
    (-inf, -128, False)
    """
    return -np.inf if t.is_float else False if t.is_bool else np.iinfo(t.dtype).min


def highest(t: ScalarType):
    """The identity of ``min`` for type ``t``.

    >>> from lowering.ir.types import UI16
    >>> highest(UI16)
    65535
    """
    return np.inf if t.is_float else True if t.is_bool else np.iinfo(t.dtype).max


def reassociable(cls) -> Callable:
    """The combining step ``cls(acc, x)`` marked reassociable (see the module docstring).

    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import Arith
    >>> from lowering.ir.builder import Builder
    >>> block = Block([F32, F32])
    >>> a = Arith(Builder.at_end(block), None)
    >>> total = reassociable(scalar.AddOp)(a, *block.args)
    >>> scalar.allows_reassociation(total.owner)
    True
    """
    return lambda a, acc, x: a.insert(scalar.allow_reassociation(a.build(cls, acc, x)))


def monoid(ctx, r: Reduce, sizes) -> Monoid:
    """How ``r`` accumulates (a mean divides by the product of the reduced ``sizes``).

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F16
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> m = monoid(ctx, Reduce("sum", F16, (0,), False, 1, TensorType((), F16)), [5])
    >>> str(m.acc), m.identity
    ('f32', 0)
    """
    element, out = r.element, r.result.element
    if r.kind == "sum":
        # f16 sums accumulate in f32 and round once (NumPy's contiguous sums do the same).
        acc = F32 if out == F16 else out
        return Monoid(acc, 0, reassociable(scalar.AddOp), finish=lambda a, s: a.cast(s, out))
    if r.kind == "prod":
        return Monoid(out, 1, reassociable(scalar.MulOp))
    if r.kind == "mean":
        acc = F32 if element == F16 else element if element.is_float or element.is_complex \
            else F64
        count = 1
        for axis in r.axes:
            count = ctx.ix.mul(count, sizes[axis])
        count = ctx.ix.cast(count, acc)
        return Monoid(acc, 0, reassociable(scalar.AddOp),
                      finish=lambda a, s: a.cast(a.apply(scalar.DivOp, s, count), out))
    if element.is_bool:
        combine = scalar.OrOp if r.kind == "max" else scalar.AndOp
    else:
        combine = scalar.MaximumOp if r.kind == "max" else scalar.MinimumOp
    identity = lowest(element) if r.kind == "max" else highest(element)
    return Monoid(element, identity, reassociable(combine))


def check_not_empty(ctx, r: Reduce, sizes, shape) -> None:
    """``max``/``min`` over an empty axis is an error, as in NumPy: a ``loops.assert`` unless
    the sizes are known to be non-zero.

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> check_not_empty(ctx, Reduce("max", F32, (0,), False, 1, TensorType((), F32)), [4], (4,))
    >>> len(ctx.block)
    0
    """
    if r.kind in ("max", "min") and r.axes:
        ctx.check(ctx.ix.all(ctx.ix.ne(sizes[a], 0) for a in r.axes),
                  f"cannot reduce over an empty axis (axes {list(r.axes)}) of an array of shape "
                  f"{format_shape(shape)}")


_KINDS = {SumOp: "sum", ProdOp: "prod", MeanOp: "mean", MaxOp: "max", MinOp: "min"}


@BUFFERIZE.register(SumOp, ProdOp, MeanOp, MaxOp, MinOp)
def _lower_reduction(ctx, op):
    x = op.input
    r = Reduce(_KINDS[type(op)], x.type.element, tuple(op.axes), bool(op.keepdims),
               x.type.rank, op.result.type)
    sizes = ctx.sizes(x)
    check_not_empty(ctx, r, sizes, x.type.shape)
    reader = ctx.reader(x, list(range(x.type.rank)))
    return [reduce_values(ctx, r, sizes, lambda b, ivs: reader.load(b, ivs))]


def reduce_values(ctx, r: Reduce, sizes, value_at) -> Lowered:
    """The reduction ``r`` of the values ``value_at(builder, ivs)`` gives at each index ``ivs``
    (in dimension order) of a space of ``sizes``: carried accumulators, or accumulators in
    memory when a kept dimension would otherwise be inside a reduced one.

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> r = Reduce("max", F32, (0,), False, 1, TensorType((), F32))
    >>> total = reduce_values(ctx, r, [3], lambda b, ivs: ctx.constant(1.5, F32))
    >>> total.scalar.owner.name
    'loops.for'
    """
    m = monoid(ctx, r, sizes)
    kept, axes = r.kept, r.axes
    # On a device a reduction to one element is always chunked: a sequential loop would run on
    # one GPU thread.
    if not kept and r.rank and (ctx.space == "device" or not _known_below(sizes, CHUNKED_MIN_SIZE)):
        return _reduce_in_chunks(ctx, r, m, sizes, value_at)
    # Column tiles block a CPU's cache; on a device they would cap the grid at their number, so
    # there the columns stay one parallel level (a thread per column, the rows inside).
    if kept == [r.rank - 1] and r.rank >= 2 and ctx.space != "device":
        return _reduce_into_column_tiles(ctx, r, m, sizes, value_at)
    if kept and needs_memory_accumulator(kept, axes):
        acc = Accumulator(ctx, r, m, sizes)
        zero = ctx.constant(0)

        def body(b, ivs_by_dim):
            acc.update(b, ivs_by_dim, value_at(b, [ivs_by_dim[d] for d in range(r.rank)]), zero)
        loop_in_order(ctx, sizes, kept[0], body)
        return acc.finish()

    def reduce_at(b, kept_ivs):
        def step(bb, reduced_ivs, carried):
            a = ctx.arith(bb)
            value = value_at(bb, _merge(kept, kept_ivs, axes, reduced_ivs))
            return [m.combine(a, carried[0], m.prepare(a, value))]
        init = ctx.constant(m.identity, m.acc)
        (total,) = ctx.fold(b, [sizes[a] for a in axes], [init], step)
        return m.finish(ctx.arith(b), total)

    return _store_per_kept(ctx, r, sizes, reduce_at)


# A reduction to one element is split into at most this many chunks (the partial results): enough
# for the threads of a machine to share the work evenly, few enough to combine in no time.
PARTIAL_RESULTS = 64
# Reductions of fewer elements than this, known at compile time, stay one sequential loop nest.
CHUNKED_MIN_SIZE = 1 << 15


def _known_below(sizes, limit: int) -> bool:
    total = 1
    for s in sizes:
        if not isinstance(s, int):
            return False
        total *= s
    return total < limit


def _reduce_in_chunks(ctx, r: Reduce, m: Monoid, sizes, value_at) -> Lowered:
    """A reduction of every dimension as ``chunks = min(n0, PARTIAL_RESULTS)`` reductions of
    contiguous ranges ``[c * n0 // chunks, (c + 1) * n0 // chunks)`` of the first dimension
    (``loops.parallel`` over the chunks, each storing its partial result), then one sequential
    loop combining the partial results in order."""
    ix = ctx.ix
    n0 = sizes[0]
    chunks = ix.min(n0, PARTIAL_RESULTS)
    partials = ctx.alloc(TensorType((None,), m.acc), [chunks])
    identity = ctx.constant(m.identity, m.acc)

    def chunk(b, ivs):
        a = ctx.arith(b)
        (c,) = ivs
        begin = a.floordiv(a.mul(c, n0), chunks)
        end = a.floordiv(a.mul(a.add(c, 1), n0), chunks)

        def step(bb, ivs_in_chunk, carried):
            aa = ctx.arith(bb)
            return [m.combine(aa, carried[0], m.prepare(aa, value_at(bb, ivs_in_chunk)))]
        (partial,) = ctx.fold(b, [end, *sizes[1:]], [identity], step,
                              lowers=[begin] + [0] * (r.rank - 1))
        ctx.store(b, partial, partials, [c])

    ctx.loop_nest([chunks], chunk)

    def combine(b, ivs, carried):
        a = ctx.arith(b)
        return [m.combine(a, carried[0], b.insert(LoadOp.build(partials, ivs)).result)]
    (total,) = ctx.fold(ctx.b, [chunks], [identity], combine)
    return Lowered(r.result, scalar=m.finish(ctx.arith(ctx.b), total),
                   sizes=r.result_sizes(sizes))


# Reductions keeping only the last dimension split it into tiles of at least this many elements.
COLUMN_TILE_MIN = 512


def _reduce_into_column_tiles(ctx, r: Reduce, m: Monoid, sizes, value_at) -> Lowered:
    """A reduction keeping only the last dimension (``x.sum(axis=0)`` of a matrix) with the
    last, contiguous dimension innermost: a ``loops.parallel`` over tiles of it (at most
    ``PARTIAL_RESULTS``, of at least ``COLUMN_TILE_MIN`` columns where there are enough), each
    adding every row's part into its accumulators in memory."""
    ix = ctx.ix
    last = r.rank - 1
    n = sizes[last]
    tiles = ix.min(ix.max(ix.floordiv(n, COLUMN_TILE_MIN), 1), PARTIAL_RESULTS)
    acc = Accumulator(ctx, r, m, sizes)
    zero = ctx.constant(0)

    def tile(b, ivs):
        a = ctx.arith(b)
        (t,) = ivs
        begin = a.floordiv(a.mul(t, n), tiles)
        end = a.floordiv(a.mul(a.add(t, 1), n), tiles)

        def step(bb, all_ivs, _carried):
            acc.update(bb, dict(enumerate(all_ivs)), value_at(bb, all_ivs), zero)
            return []
        ctx.fold(b, [*sizes[:last], end], [], step, lowers=[0] * last + [begin])

    ctx.loop_nest([tiles], tile)
    return acc.finish()


def needs_memory_accumulator(kept, axes) -> bool:
    """Whether, in the loop order (first kept dimension, then the rest in order), a kept
    dimension comes after a reduced one.

    >>> needs_memory_accumulator([0, 2], (1,)), needs_memory_accumulator([1], (0,))
    (True, False)
    """
    rest = [d for d in sorted([*kept, *axes]) if d != kept[0]]
    seen_reduced = False
    for d in rest:
        if d in axes:
            seen_reduced = True
        elif seen_reduced:
            return True
    return False


def loop_in_order(ctx, sizes, outer, body) -> None:
    """Loops over every index of ``sizes``: dimension ``outer`` outermost (``loops.parallel``;
    a sequential loop when ``outer`` is None), the others in order inside;
    ``body(builder, ivs_by_dim)``.

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> loop_in_order(ctx, [2, 3], 1, lambda b, ivs: None)
    >>> [op.name for op in ctx.block.ops if op.name.startswith("loops")]
    ['loops.parallel']
    """
    order = list(range(len(sizes)))
    if outer is not None:
        order = [outer] + [d for d in order if d != outer]
    ctx.loop_nest([sizes[d] for d in order],
                  lambda b, ivs: body(b, dict(zip(order, ivs))), parallel=outer is not None)


def _merge(kept, kept_ivs, axes, reduced_ivs) -> list:
    """Loop indices of kept and reduced dimensions, in dimension order."""
    ivs = dict(zip(kept, kept_ivs))
    ivs.update(zip(axes, reduced_ivs))
    return [ivs[d] for d in sorted(ivs)]


def _store_per_kept(ctx, r: Reduce, sizes, reduce_at) -> Lowered:
    """A loop nest over the kept dimensions storing ``reduce_at(builder, kept_ivs)``; without
    kept dimensions, the scalar ``reduce_at`` computes at the top level."""
    kept = r.kept
    out_sizes = r.result_sizes(sizes)
    if not kept:
        return Lowered(r.result, scalar=reduce_at(ctx.b, []), sizes=out_sizes)
    out = ctx.fresh(r.result, out_sizes)
    zero = ctx.constant(0)

    def body(b, ivs):
        where = r.result_index(dict(zip(kept, ivs)), zero)
        ctx.store(b, reduce_at(b, ivs), out.buffer, where)

    ctx.loop_nest([sizes[d] for d in kept], body)
    return out


class Accumulator:
    """The accumulators of reduction ``r`` in a buffer of the result's shape, filled with the
    identity; ``update`` combines one value in, ``finish`` gives the result (converting the
    accumulators in a second loop nest where their type or ``finish`` differs).

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> r = Reduce("mean", F32, (0,), False, 2, TensorType((None,), F32))
    >>> acc = Accumulator(ctx, r, monoid(ctx, r, [5, 4]), [5, 4])
    >>> str(acc.acc.buffer.type), acc.direct
    ('!loops.buffer<?xf32>', False)
    """

    def __init__(self, ctx, r: Reduce, m: Monoid, sizes):
        self.ctx, self.r, self.m = ctx, r, m
        out_sizes = r.result_sizes(sizes)
        self.out = ctx.fresh(r.result, out_sizes)
        self.direct = m.acc == r.result.element and r.kind != "mean"
        self.acc = self.out if self.direct else ctx.fresh(TensorType(r.result.shape, m.acc),
                                                          out_sizes)
        ctx.b.insert(FillOp.build(ctx.constant(m.identity, m.acc), self.acc.buffer))

    def update(self, b, ivs_by_dim: dict, value, zero) -> None:
        a = self.ctx.arith(b)
        where = self.r.result_index(ivs_by_dim, zero)
        current = b.insert(LoadOp.build(self.acc.buffer, where)).result
        self.ctx.store(b, self.m.combine(a, current, self.m.prepare(a, value)), self.acc.buffer,
                       where)

    def finish(self) -> Lowered:
        if self.direct:
            return self.out
        ctx, m = self.ctx, self.m

        def body(b, ivs):
            a = ctx.arith(b)
            value = m.finish(a, b.insert(LoadOp.build(self.acc.buffer, ivs)).result)
            ctx.store(b, value, self.out.buffer, ivs)

        ctx.loop_nest(self.out.sizes, body)
        return self.out


# ---------------------------------------------------------------------------------------------
# argmax, argmin


@BUFFERIZE.register(ArgMaxOp, ArgMinOp)
def _lower_arg_extremum(ctx, op):
    x, axes = op.input, tuple(op.axes)
    element, rank = x.type.element, x.type.rank
    sizes = ctx.sizes(x)
    total = 1
    for s in sizes:
        total = ctx.ix.mul(total, s)
    ctx.check(ctx.ix.ne(total, 0),
              f"cannot take the {op.name.split('.')[1]} of an empty array of shape "
              f"{format_shape(x.type.shape)}")
    better_cls = scalar.GtOp if isinstance(op, ArgMaxOp) else scalar.LtOp
    identity = lowest(element) if isinstance(op, ArgMaxOp) else highest(element)
    # Strides of the flattened index when every axis is reduced (row-major).
    strides, running = [], 1
    for a in reversed(axes):
        strides.insert(0, running)
        running = ctx.ix.mul(running, sizes[a])
    reader = ctx.reader(x, list(range(rank)))
    r = Reduce("arg", element, axes, bool(op.keepdims), rank, op.result.type)
    kept = r.kept

    def reduce_at(b, kept_ivs):
        def step(bb, reduced_ivs, carried):
            a = ctx.arith(bb)
            best, best_index = carried
            value = reader.load(bb, _merge(kept, kept_ivs, axes, reduced_ivs))
            index = 0
            for iv, stride in zip(reduced_ivs, strides):
                index = a.add(index, a.mul(iv, stride))
            better = a.apply(better_cls, value, best)
            if element.is_float:  # the first NaN wins, as in NumPy
                first_nan = a.and_(a.apply(scalar.IsNanOp, value),
                                   a.not_(a.apply(scalar.IsNanOp, best)))
                better = a.or_(better, first_nan)
            return [a.select(better, value, best),
                    a.select(better, a.cast(index, I64), best_index)]
        init = [ctx.constant(identity, element), ctx.constant(0, I64)]
        _, index = ctx.fold(b, [sizes[a] for a in axes], init, step)
        return index

    return [_store_per_kept(ctx, r, sizes, reduce_at)]
