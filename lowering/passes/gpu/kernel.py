"""The building blocks of the kernels ``map-to-gpu`` writes, as loops, scalar and gpu ops.

A ``KernelBuilder`` fills the body of one ``gpu.launch`` (1-d grid and block unless said
otherwise). Control flow is what the loops dialect has:

- a **grid-stride loop** is ``loops.for %i = %global_id to %n step %thread_count``: every thread
  of the grid takes every ``thread_count``-th index, so any grid size covers any ``n``
  (``block_stride``: one block per index; ``thread_stride``: the threads of one block);
- a **branch** is a ``loops.for`` running 0 or 1 times (``when``; ``first_thread`` runs only on
  thread 0 of a block: ``loops.for %t = %tid to 1 step 1``);
- a **block tree reduction** stores each thread's value in shared memory and halves the number
  of active threads per step (``block_size`` a power of two, the steps unrolled), with a
  ``gpu.barrier`` after each, leaving the block's result in element 0.

Constants, thread and block ids and shared memory are made once at the top of the kernel; what
ends up unused is removed by ``finish``.

>>> from lowering.dialects.gpu import LaunchOp
>>> from lowering.dialects.loops import BufferType
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, INDEX
>>> n, x = Block([INDEX, BufferType((None,), F32, memory_space="device")]).args
>>> def body(b):
...     kb = KernelBuilder(b.insertion_point.block, block_size=32)
...     one = kb.const(1.0, F32)
...     kb.grid_stride(kb.b, n, lambda bb, i: bb.insert(StoreOp.build(one, x, [i])))
...     kb.finish()
>>> launch = LaunchOp.build([n, n, n], [n, n, n], body)
>>> [op.name for op in launch.body.block.ops]  # doctest: +NORMALIZE_WHITESPACE
['scalar.constant', 'gpu.thread_id', 'gpu.block_id', 'gpu.block_dim', 'gpu.grid_dim',
 'scalar.mul', 'scalar.add', 'scalar.mul', 'loops.for', 'gpu.terminator']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from lowering.dialects import scalar
from lowering.dialects.gpu import (BarrierOp, BlockDimOp, BlockIdOp, GridDimOp, SharedAllocOp,
                                   ThreadIdOp)
from lowering.dialects.loops import ForOp, LoadOp, ParallelOp, StoreOp, YieldOp
from lowering.ir.builder import Builder
from lowering.ir.core import PURE, TERMINATOR, Block, Operation, Value
from lowering.ir.types import INDEX, ScalarType

from ..bufferize.core import Arith
from ..bufferize.reductions import highest, lowest
from .nests import constant_int


def combiner(op: Operation) -> Callable:
    """``combine(builder, x, y)``: a copy of the combining op ``op`` (its class and
    attributes, e.g. ``fastmath``) on ``x`` and ``y``."""
    def combine(b: Builder, x: Value, y: Value) -> Value:
        return b.insert(type(op).create(operands=[x, y], result_types=[op.results[0].type],
                                        attributes=dict(op.attributes),
                                        location=op.location)).result
    return combine


def identity(op: Operation, t: ScalarType):
    """The value ``x`` with ``op(x, y) == y`` for every ``y`` of type ``t``.

    >>> from lowering.ir.types import F32, I1, I8
    >>> identity(scalar.MaximumOp.__new__(scalar.MaximumOp), F32), \\
    ...     identity(scalar.AndOp.__new__(scalar.AndOp), I8), \\
    ...     identity(scalar.AndOp.__new__(scalar.AndOp), I1)
    (-inf, -1, True)
    """
    cls = type(op)
    if cls is scalar.AddOp or cls is scalar.OrOp or cls is scalar.XorOp:
        return False if t.is_bool else 0
    if cls is scalar.MulOp:
        return 1
    if cls is scalar.MaximumOp:
        return lowest(t)
    if cls is scalar.MinimumOp:
        return highest(t)
    if cls is scalar.AndOp:
        return True if t.is_bool else highest(t) if t.name.startswith("ui") else -1
    raise ValueError(f"{op.name} is not a combining step of a reduction")


class ConstantsAtTop:
    """``scalar.constant``s made at the top of ``block``, one per value and type, so that every
    use below sees them.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> consts = ConstantsAtTop(Block([], [scalar.ConstantOp.build(7, INDEX)]))
    >>> consts(4) is consts(4), consts(4) is consts(4.0, F32)
    (True, False)
    >>> [str(op.attributes["value"]) for op in consts.block.ops]
    ['4.000000e+00 : f32', '4 : index', '7 : index']
    """

    def __init__(self, block: Block):
        self.block = block
        self._made: dict[tuple, Value] = {}

    def __call__(self, value, t: ScalarType = INDEX) -> Value:
        op = scalar.ConstantOp.build(value, t)
        key = (t.name, str(op.attributes["value"]))
        found = self._made.get(key)
        if found is None:
            self.block.insert_before(op, self.block.first_op)
            found = self._made[key] = op.result
        return found


class KernelBuilder:
    """Fills ``block``, the body of a ``gpu.launch`` whose blocks have ``block_size`` threads
    along x; ``b`` inserts at the end of the body."""

    def __init__(self, block: Block, block_size: int):
        self.block = block
        self.block_size = block_size
        self.b = Builder.at_end(block)
        self._consts = ConstantsAtTop(block)
        self.tid = self.b.insert(ThreadIdOp.build("x")).result
        self.bid = self.b.insert(BlockIdOp.build("x")).result
        self.bdim = self.b.insert(BlockDimOp.build("x")).result
        self.gdim = self.b.insert(GridDimOp.build("x")).result
        top = self.arith(self.b)
        self.global_id = top.add(top.mul(self.bid, self.bdim), self.tid)
        self.thread_count = top.mul(self.gdim, self.bdim)

    # -- values -------------------------------------------------------------------------------

    def const(self, value, t: ScalarType = INDEX) -> Value:
        """A ``scalar.constant`` at the top of the kernel (one per value and type)."""
        return self._consts(value, t)

    def arith(self, b: Builder) -> Arith:
        """Folding index and scalar arithmetic inserted with ``b``."""
        return Arith(b, self.const)

    def value(self, x, t: ScalarType = INDEX) -> Value:
        """``x`` as a Value: ints and index constants from the host become kernel constants."""
        x = constant_int(x)
        return self.const(x, t) if not isinstance(x, Value) else x

    def shared(self, shape, element: ScalarType) -> Value:
        """A ``gpu.shared_alloc`` at the top of the kernel."""
        op = SharedAllocOp.build(tuple(shape), element)
        self.block.insert_before(op, self.block.first_op)
        return op.result

    # -- control flow -------------------------------------------------------------------------

    def loop(self, b: Builder, lower, upper, step, inits=(), body: Callable | None = None):
        """``loops.for`` from ``lower`` to ``upper`` by ``step`` carrying ``inits``;
        ``body(builder, iv, carried)`` returns the next carried values. Returns the results."""
        loop = b.insert(ForOp.build(self.value(lower), self.value(upper), self.value(step),
                                    list(inits),
                                    body=lambda bb, iv, *carried: body(bb, iv, list(carried))))
        return list(loop.results)

    def when(self, b: Builder, cond, body: Callable) -> None:
        """``body(builder)`` where the i1 ``cond`` holds (a loop running 0 or 1 times)."""
        if isinstance(cond, bool):
            if cond:
                body(b)
            return
        trips = self.arith(b).select(cond, 1, 0)
        self.loop(b, 0, trips, 1, (), lambda bb, iv, carried: _nothing(body(bb)))

    def below(self, b: Builder, index, bound, body: Callable) -> None:
        """``body(builder, index)`` when ``index < bound``: ``loops.for %i = index to
        min(index + 1, bound)``, whose variable is ``index`` itself."""
        a = self.arith(b)
        self.loop(b, index, a.min(a.add(index, 1), bound), 1, (),
                  lambda bb, iv, carried: _nothing(body(bb, iv)))

    def first_thread(self, b: Builder, body: Callable) -> None:
        """``body(builder)`` on thread 0 of the block only."""
        self.loop(b, self.tid, 1, 1, (), lambda bb, iv, carried: _nothing(body(bb)))

    def grid_stride(self, b: Builder, total, body: Callable, inits=()):
        """``body(builder, i, carried)`` (or ``body(builder, i)`` without ``inits``) for this
        thread's share of ``[0, total)``: every ``thread_count``-th index from its global id."""
        return self._stride(b, self.global_id, total, self.thread_count, body, inits)

    def block_stride(self, b: Builder, total, body: Callable, inits=()):
        """Like ``grid_stride``, one index per block: ``[block_id, total)`` by ``grid_dim``."""
        return self._stride(b, self.bid, total, self.gdim, body, inits)

    def thread_stride(self, b: Builder, total, body: Callable, inits=()):
        """Like ``grid_stride`` within one block: ``[thread_id, total)`` by ``block_dim``."""
        return self._stride(b, self.tid, total, self.bdim, body, inits)

    def _stride(self, b, start, total, step, body, inits):
        if inits:
            return self.loop(b, start, total, step, inits, body)
        return self.loop(b, start, total, step, (),
                         lambda bb, iv, carried: _nothing(body(bb, iv)))

    # -- indices ------------------------------------------------------------------------------

    def unflatten(self, b: Builder, linear: Value, trips) -> list:
        """The row-major multi-index of ``linear`` in a space of ``trips`` (sizes)."""
        a = self.arith(b)
        indices = []
        rest = linear
        for k in range(len(trips) - 1, 0, -1):
            n = self.value(trips[k])
            indices.append(a.mod(rest, n))
            rest = a.floordiv(rest, n)
        indices.append(rest)
        return indices[::-1]

    def iteration_values(self, b: Builder, indices, levels) -> list:
        """``lower + index * step`` of each level for the 0-based ``indices``."""
        a = self.arith(b)
        return [self.value(a.add(constant_int(lv.lower), a.mul(i, constant_int(lv.step))))
                for i, lv in zip(indices, levels)]

    # -- reductions ---------------------------------------------------------------------------

    def tree_reduce(self, b: Builder, value: Value, combine: Callable,
                    group: "Group | None" = None) -> Value:
        """Combine ``value`` of every thread of the block, or of each ``group`` of threads;
        the shared buffer returned holds each group's result at its first thread's element
        (element 0 for the block) once the last barrier has passed. Every thread of the block
        runs every step (the barriers), whatever its group."""
        (cache,) = self.tree_reduce_many(
            b, [value], lambda bb, mine, other: [combine(bb, mine[0], other[0])], group)
        return cache

    def tree_reduce_many(self, b: Builder, values: list, combine: Callable,
                         group: "Group | None" = None) -> list:
        """``tree_reduce`` of several values combined together (an argmax's value and index):
        ``combine(builder, mine, other)`` takes and returns lists; one shared buffer each."""
        size = self.block_size
        caches = [self.shared([size], v.type) for v in values]
        for value, cache in zip(values, caches):
            b.insert(StoreOp.build(value, cache, [self.tid]))
        b.insert(BarrierOp.build())
        lane = self.tid if group is None else group.lane
        half = size // 2
        while half >= 1:
            def step(bb, s=half):
                a = self.arith(bb)
                mine = [bb.insert(LoadOp.build(c, [self.tid])).result for c in caches]
                other = [bb.insert(LoadOp.build(c, [a.add(self.tid, s)])).result
                         for c in caches]
                for result, cache in zip(combine(bb, mine, other), caches):
                    bb.insert(StoreOp.build(result, cache, [self.tid]))
            a = self.arith(b)
            active = a.lt(lane, half)
            if group is not None:  # the group has more than `half` threads
                active = a.and_(a.lt(half, group.size), active)
            self.when(b, active, step)
            b.insert(BarrierOp.build())
            half //= 2
        return caches

    def finish(self) -> None:
        """Remove what the kernel made but does not use (ids, constants, index arithmetic,
        loads)."""
        prune(self.block.parent_op)


def prune(root: Operation) -> None:
    """Erase the ops nested in ``root`` whose results nobody reads and that have no effect:
    pure ops, loads, and loops without results whose body is only their ``loops.yield``."""
    changed = True
    while changed:
        changed = False
        for op in list(root.walk(post_order=True)):
            if op is root or op.parent is None:
                continue
            if _removable(op) and not any(r.uses for r in op.results):
                op.erase()
                changed = True


def _removable(op: Operation) -> bool:
    if isinstance(op, LoadOp) or (PURE in op.traits and TERMINATOR not in op.traits):
        return True
    if isinstance(op, (ForOp, ParallelOp)) and not op.results:
        return all(isinstance(inner, YieldOp) for inner in op.regions[0].block.ops)
    return False


@dataclass
class Group:
    """The threads of a block working on one output: ``size`` of them (a power of two, an int
    or an index Value), this thread being number ``lane``; ``active``: whether the group has
    an output (an i1 Value or a bool)."""

    size: object
    lane: Value
    active: object


def _nothing(_result) -> None:
    """What a loop without carried values yields, whatever its body function returned."""
    return None


# ---------------------------------------------------------------------------------------------
# Host-side sizes


def trip_count(a: Arith, level):
    """The number of iterations of a nest level, computed with the host's ``a``: an int when
    known, an index Value otherwise."""
    lower, upper, step = (constant_int(v) for v in (level.lower, level.upper, level.step))
    span = a.sub(upper, lower)
    if not (isinstance(span, int) or _non_negative(span)):
        span = a.max(span, 0)
    elif isinstance(span, int):
        span = max(span, 0)
    if isinstance(step, int) and step == 1:
        return span
    return a.floordiv(a.add(span, a.sub(step, 1)), step)


def _non_negative(value: Value) -> bool:
    from lowering.dialects.loops import DimOp
    owner = getattr(value, "op", None)
    return isinstance(owner, DimOp)


def product(a: Arith, sizes):
    """The product of ``sizes`` (1 for none)."""
    total = 1
    for s in sizes:
        total = a.mul(total, s)
    return total


def blocks_for(a: Arith, work, per_block: int, max_blocks: int):
    """``min(max(ceil(work / per_block), 1), max_blocks)``: enough blocks for ``work`` items at
    ``per_block`` per block, at least one (CUDA launches no empty grid) and at most
    ``max_blocks`` (the grid-stride loops cover the rest)."""
    wanted = a.floordiv(a.add(work, per_block - 1), per_block)
    return a.min(a.max(wanted, 1), max_blocks)
