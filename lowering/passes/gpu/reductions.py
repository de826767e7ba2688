"""``map-to-gpu`` kernels for reductions, in the two forms bufferize writes them:

- **accumulators in memory**: a buffer filled with the identity, then a nest whose point body
  does ``acc[p] = combine(acc[p], x)``; the levels ``p`` names are *kept*, the others
  *reduced*;
- **carried values**: ``%r = loops.for ... iter_args(%acc = %init)`` yielding
  ``combine(%acc, x)`` (possibly a chain of such loops), inside a nest over the kept levels or
  at the function's top level (a reduction to one value).

Mappings (``B`` threads per block):

- **block per output** (the reduced levels walk contiguous memory, e.g. row sums, gemv rows):
  each kept point gets a group of threads, the smallest power of two at least the number of
  values it reduces and at most ``B`` (a whole block for long rows, several rows per block for
  short ones); the groups take the kept points in rounds over the blocks; the threads of a
  group take every group-size-th value of the reduced space, each combining its share
  privately from the identity; a shared-memory tree reduction (``gpu.barrier`` after each
  halving, run by every thread of the block) combines the group's values, and its first
  thread combines the result into ``acc[p]`` (or, for a carried value, with the initial value,
  and runs what follows the loop: the stores);
- **thread per output** (a kept level walks contiguous memory, e.g. middle-axis sums): a grid-stride
  loop over the kept points, each thread reducing its point sequentially, in the original order;
- **scattered** (the accumulator's indices are computed, as ``inc_subtensor`` with index arrays
  makes): every point at once, combining into its element with ``gpu.atomic_rmw`` (``add``,
  ``max``, ``min`` on the types below; other steps run sequentially);
- **one value** (no kept level): every thread of the grid combines a grid-strided share, each
  block reduces its threads' values in shared memory, and thread 0 of each block combines the
  block's value into the result with ``gpu.atomic_rmw`` (``add``, ``max``, ``min`` on f32, f64,
  i32, i64, ui32, ui64; a carried result is first set to its initial value). Other combining
  steps (``mul``, ``and``, ``or``, ``xor``) and element types run as one block.

Which level walks contiguous memory is read off the loads of the point body: the loop variable
indexing their stride-1 dimension (the last one where the type does not say), weighted by the
buffer's rank. The combining steps are associative and commutative, so the order
changes float results by rounding only (bufferize marks them ``fastmath = "reassoc"``).
"""
from __future__ import annotations

from typing import Callable

from lowering.dialects.gpu import AtomicRmwOp
from lowering.dialects.loops import LoadOp, StoreOp
from lowering.ir.builder import Builder
from lowering.ir.core import Value
from lowering.ir.types import F32, F64, I32, I64, UI32, UI64

from .kernel import Group, blocks_for, combiner, identity, product, trip_count
from .maps import clone_into
from .nests import CarriedReduction, Level, Nest, StoreInfo, contiguous_walkers, defined_inside

ATOMIC_TYPES = (F32, F64, I32, I64, UI32, UI64)


def atomic_kind(kind: str | None, element) -> str | None:
    """``kind`` when ``gpu.atomic_rmw`` does it on ``element``, else None."""
    return kind if kind is not None and element in ATOMIC_TYPES else None


def mapped_levels(levels, vm: dict) -> list[Level]:
    return [Level(lv.iv, vm.get(lv.lower, lv.lower), vm.get(lv.upper, lv.upper),
                  vm.get(lv.step, lv.step), lv.parallel) for lv in levels]


def bind_levels(kb, b: Builder, linear, levels, trips, vm: dict) -> None:
    """Set ``vm``'s entries for ``levels``' variables at flat index ``linear``."""
    indices = kb.unflatten(b, linear, trips)
    vm.update(zip((lv.iv for lv in levels), kb.iteration_values(b, indices, levels)))


# ---------------------------------------------------------------------------------------------
# Shared kernel pieces


def block_partial(kb, b: Builder, count, step: Callable, combine: Callable, start,
                  group: Group | None = None) -> Value:
    """The threads of the block (of ``group``) combine ``step(builder, r)`` over their share
    of ``[0, count)`` from ``start`` (the identity), then reduce in shared memory: the returned
    shared buffer holds the value at the element of the first thread (read it with
    ``leader``)."""
    def body(bb, r, carried):
        return [combine(bb, carried[0], step(bb, r))]
    if group is None:
        (mine,) = kb.thread_stride(b, count, body, inits=[start])
    else:
        ka = kb.arith(b)
        (mine,) = kb.loop(b, group.lane, ka.select(group.active, count, 0), group.size,
                          [start], body)
    return kb.tree_reduce(b, mine, combine, group)


def leader(kb, b: Builder, cache: Value, group: Group | None, body: Callable) -> None:
    """``body(builder, total)`` on the first thread of the block (of ``group``, when it has an
    output), ``total`` read from the shared ``cache`` of ``block_partial``."""
    def run(bb):
        body(bb, bb.insert(LoadOp.build(cache, [kb.tid])).result)
    if group is None:
        kb.first_thread(b, run)
        return
    ka = kb.arith(b)
    kb.when(b, ka.and_(group.active, ka.eq(group.lane, 0)), run)


def threads_per_output(a, count, block_size: int):
    """The threads to give an output reducing ``count`` values: the smallest power of two at
    least ``count``, at most ``block_size`` (computed with the host's ``a``).

    >>> from lowering.passes.bufferize.core import Arith
    >>> host = Arith(None, None)  # folds ints without a builder
    >>> threads_per_output(host, 5, 256), threads_per_output(host, 900, 256)
    (8, 256)
    """
    threads = block_size
    half = block_size // 2
    while half >= 1:
        threads = a.select(a.le(count, half), half, threads)
        half //= 2
    return threads


def per_output_groups(site, name: str, levels, trips, count, threads, output: Callable) -> None:
    """A kernel giving each point of ``levels`` (``count`` of them) a group of ``threads``
    threads (a power of two dividing the block size; the block has ``block_size / threads``
    groups): ``output(kb, builder, values, group, point)`` with the levels' variables bound in
    ``values`` for the flat ``point``. All threads of a block go through the same rounds (their
    barriers meet); a group past the last point has ``active`` false and is bound to the last
    point."""
    a = site.host_arith()
    size = site.options.block_size
    per_block = a.floordiv(size, threads)
    grid = a.min(a.max(a.floordiv(a.add(count, a.sub(per_block, 1)), per_block), 1),
                 site.options.max_blocks)

    def fill(kb):
        values = site.kernel_values(kb)
        ka = kb.arith(kb.b)
        width = kb.value(threads)
        groups = kb.value(ka.floordiv(size, width))
        first, lane = ka.floordiv(kb.tid, width), ka.mod(kb.tid, width)

        def round_(bb, base, carried):
            ra = kb.arith(bb)
            point = ra.add(base, first)
            active = ra.lt(point, count)
            point = kb.value(ra.min(point, ra.sub(count, 1)))
            vm = dict(values)
            bind_levels(kb, bb, point, levels, trips, vm)
            output(kb, bb, vm, Group(width, lane, active), point)
        kb.loop(kb.b, ka.mul(kb.bid, groups), count, ka.mul(kb.gdim, groups), (), round_)

    site.launch(name, grid, size, fill)


def grid_partial(kb, b: Builder, count, step: Callable, combine: Callable, start) -> Value:
    """Like ``block_partial`` with every thread of the grid sharing ``[0, count)``."""
    (mine,) = kb.grid_stride(b, count, lambda bb, r, carried: [combine(bb, carried[0],
                                                                       step(bb, r))],
                             inits=[start])
    return kb.tree_reduce(b, mine, combine)


def one_value(site, name: str, count, step: Callable, combine: Callable, ident, element,
              kind: str | None, write: Callable) -> None:
    """A reduction of ``step(kb, builder, r, values)`` over ``[0, count)`` to one value:
    ``write(kb, builder, total, values, atomic)`` combines the total into its destination on
    thread 0 of each block (``atomic``: many blocks, use ``gpu.atomic_rmw`` of ``kind``; else
    there is one block)."""
    atomic = atomic_kind(kind, element)
    a = site.host_arith()
    size = site.options.block_size
    grid = blocks_for(a, count, size, site.options.max_blocks) if atomic else 1

    def fill(kb):
        values = site.kernel_values(kb)
        start = kb.const(ident, element)
        partial = grid_partial if atomic else block_partial
        cache = partial(kb, kb.b, count, lambda bb, r: step(kb, bb, r, values), combine, start)

        leader(kb, kb.b, cache, None, lambda bb, total: write(kb, bb, total, values, atomic))

    site.launch(name, grid, size, fill)


# ---------------------------------------------------------------------------------------------
# Accumulators in memory


def reduce_into_memory(site, nest: Nest, info: StoreInfo) -> None:
    """Map a nest whose only store is the accumulation ``info`` (see the module docstring)."""
    acc = info.accumulation
    store = info.op
    kept = [lv for k, lv in enumerate(nest.levels) if k in info.levels]
    reduced = [lv for k, lv in enumerate(nest.levels) if k not in info.levels]
    skip = {acc.load, acc.combine, store}
    ops = [op for op in nest.point_ops() if op not in skip]
    combine = combiner(acc.combine)
    element = store.value.type
    ident = identity(acc.combine, element)
    a = site.host_arith()
    kept_trips = [trip_count(a, lv) for lv in kept]
    red_trips = [trip_count(a, lv) for lv in reduced]
    nkept, nred = product(a, kept_trips), product(a, red_trips)
    name = acc.kernel_name

    def value_at(kb, bb, r, vm):
        vm = dict(vm)
        bind_levels(kb, bb, r, reduced, red_trips, vm)
        clone_into(bb, ops, vm)
        return vm.get(acc.value, acc.value)

    def where(vm):
        return [vm.get(v, v) for v in store.indices]

    if not kept:
        def write(kb, bb, total, vm, atomic):
            if atomic:
                bb.insert(AtomicRmwOp.build(atomic, total, store.buffer, where(vm)))
                return
            current = bb.insert(LoadOp.build(store.buffer, where(vm))).result
            bb.insert(StoreOp.build(combine(bb, current, total), store.buffer, where(vm)))
        one_value(site, name, nred, value_at, combine, ident, element, acc.atomic_kind, write)
        return

    mine, others = contiguous_walkers(nest.point_ops(), {lv.iv for lv in reduced})
    if mine and mine >= others:
        def output(kb, bb, vm, group, point):
            cache = block_partial(kb, bb, nred, lambda b2, r: value_at(kb, b2, r, vm), combine,
                                  kb.const(ident, element), group)

            def finish(b3, total):
                current = b3.insert(LoadOp.build(store.buffer, where(vm))).result
                b3.insert(StoreOp.build(combine(b3, current, total), store.buffer, where(vm)))
            leader(kb, bb, cache, group, finish)
        per_output_groups(site, name, kept, kept_trips, nkept,
                          threads_per_output(a, nred, site.options.block_size), output)
        return

    def fill(kb):
        values = site.kernel_values(kb)

        def point(bb, o):
            vm = dict(values)
            bind_levels(kb, bb, o, kept, kept_trips, vm)
            current = bb.insert(LoadOp.build(store.buffer, where(vm))).result
            (total,) = kb.loop(bb, 0, nred, 1, [current], lambda b2, r, carried: [
                combine(b2, carried[0], value_at(kb, b2, r, vm))])
            bb.insert(StoreOp.build(total, store.buffer, where(vm)))
        kb.grid_stride(kb.b, nkept, point)

    site.launch(name, blocks_for(a, nkept, site.options.block_size, site.options.max_blocks),
                site.options.block_size, fill)


def scatter_atomically(site, nest: Nest, info: StoreInfo, kind: str) -> None:
    """A nest whose only store is the accumulation ``info`` at computed (data-dependent)
    indices, as ``inc_subtensor`` with index arrays makes: every point at once, each combining
    its value into its element with ``gpu.atomic_rmw`` (repeated indices accumulate every
    occurrence, in some order)."""
    acc = info.accumulation
    store = info.op
    skip = {acc.load, acc.combine, store}
    ops = [op for op in nest.point_ops() if op not in skip]
    a = site.host_arith()
    trips = [trip_count(a, lv) for lv in nest.levels]
    total = product(a, trips)

    def fill(kb):
        values = site.kernel_values(kb)

        def point(bb, linear):
            vm = dict(values)
            bind_levels(kb, bb, linear, nest.levels, trips, vm)
            clone_into(bb, ops, vm)
            bb.insert(AtomicRmwOp.build(kind, vm.get(acc.value, acc.value), store.buffer,
                                        [vm.get(v, v) for v in store.indices]))
        kb.grid_stride(kb.b, total, point)

    site.launch(f"scatter_{kind}", blocks_for(a, total, site.options.block_size,
                                              site.options.max_blocks),
                site.options.block_size, fill)


def per_block(site, name: str, levels, trips, count, output: Callable) -> None:
    """A kernel with one block per point of ``levels`` (``count`` points, block-strided):
    ``output(kb, builder, values)`` with the levels' variables bound in ``values``."""
    a = site.host_arith()

    def fill(kb):
        values = site.kernel_values(kb)

        def point(bb, o):
            vm = dict(values)
            bind_levels(kb, bb, o, levels, trips, vm)
            output(kb, bb, vm)
        kb.block_stride(kb.b, count, point)

    site.launch(name, a.min(a.max(count, 1), site.options.max_blocks), site.options.block_size,
                fill)


# ---------------------------------------------------------------------------------------------
# Carried values


def prefers_block_per_point(reduction: CarriedReduction) -> bool:
    """Whether the loads of a carried reduction walk contiguous memory along the reduction
    (block per point) rather than along the points (thread per point)."""
    ops = reduction.hoisted + reduction.body
    mine, others = contiguous_walkers(ops, {lv.iv for lv in reduction.levels})
    return bool(mine) and mine >= others


def reduce_carried_per_point(site, nest: Nest, reduction: CarriedReduction, before, after
                             ) -> None:
    """A nest whose point body is ``before`` (write-free ops), the carried ``reduction``, then
    ``after``: one block per point reduces, and thread 0 runs ``after`` with the total."""
    a = site.host_arith()
    trips = [trip_count(a, lv) for lv in nest.levels]
    combine = combiner(reduction.combine)
    hoisted = [op for ops in nest.hoisted for op in ops]
    # Bounds known before the launch: as many threads per point as the reduction needs.
    inside = defined_inside(nest.op)
    bounds = [v for lv in reduction.levels for v in (lv.lower, lv.upper, lv.step)]
    threads = site.options.block_size if any(v in inside for v in bounds) else \
        threads_per_output(a, product(a, [trip_count(a, lv) for lv in reduction.levels]),
                           site.options.block_size)

    def output(kb, bb, vm, group, point):
        clone_into(bb, hoisted + before, vm)
        cache = group_partial(kb, bb, vm, group, reduction)

        def finish(b3, total):
            init = vm.get(reduction.init, reduction.init)
            done = dict(vm)
            done[reduction.op.results[0]] = combine(b3, init, total)
            clone_into(b3, after, done)
        leader(kb, bb, cache, group, finish)

    per_output_groups(site, reduction.kernel_name, nest.levels, trips, product(a, trips),
                      threads, output)


def group_partial(kb, b: Builder, vm: dict, group: Group, reduction: CarriedReduction
                  ) -> Value:
    """The carried ``reduction`` of one point (its variables bound in ``vm``) by the threads
    of ``group``: ``block_partial``'s shared buffer."""
    chain = mapped_levels(reduction.levels, vm)
    ka = kb.arith(b)
    chain_trips = [trip_count(ka, lv) for lv in chain]
    element = reduction.op.results[0].type

    def value_at(b2, r):
        inner = dict(vm)
        bind_levels(kb, b2, r, chain, chain_trips, inner)
        clone_into(b2, reduction.hoisted + reduction.body, inner)
        return inner.get(reduction.value, reduction.value)

    return block_partial(kb, b, product(ka, chain_trips), value_at,
                         combiner(reduction.combine),
                         kb.const(identity(reduction.combine, element), element), group)


def reduce_carried_to_slot(site, reduction: CarriedReduction, slot: Value) -> None:
    """A top-level carried reduction to one value, stored in the rank-0 device buffer
    ``slot`` (set to the initial value first when blocks combine atomically)."""
    a = site.host_arith()
    trips = [trip_count(a, lv) for lv in reduction.levels]
    element = reduction.op.results[0].type
    combine = combiner(reduction.combine)
    atomic = atomic_kind(reduction.atomic_kind, element)
    if atomic:
        def start(kb):
            values = site.kernel_values(kb)
            init = values.get(reduction.init, reduction.init)
            kb.b.insert(StoreOp.build(init, slot, []))
        site.launch("init", 1, 1, start)

    def value_at(kb, bb, r, vm):
        vm = dict(vm)
        bind_levels(kb, bb, r, reduction.levels, trips, vm)
        clone_into(bb, reduction.hoisted + reduction.body, vm)
        return vm.get(reduction.value, reduction.value)

    def write(kb, bb, total, vm, atomic_now):
        if atomic_now:
            bb.insert(AtomicRmwOp.build(atomic_now, total, slot, []))
            return
        init = vm.get(reduction.init, reduction.init)
        bb.insert(StoreOp.build(combine(bb, init, total), slot, []))

    one_value(site, reduction.kernel_name, product(a, trips), value_at, combine,
              identity(reduction.combine, element), element, reduction.atomic_kind, write)
