"""``map-to-gpu`` kernels whose iterations are independent: loop nests, ``loops.fill``,
``loops.copy``, and the single-thread kernel for what cannot be split.

A nest's levels (or a buffer's dimensions) are flattened into one index space of ``total``
points, walked by a grid-stride loop: each thread takes one point per step and recovers the
loop indices by division and remainder (row-major). The grid has ``ceil(total / block_size)``
blocks, at least 1 and at most ``max_blocks``.

**Several points per step.** Where the point body is straight-line code, each thread handles
``elements_per_thread`` points per step, unrolled, spaced by the number of threads in the grid:
each load instruction of a warp still reads neighbouring elements, and a thread has several
independent loads in flight; a grid-stride loop does what is left after the whole rounds.

**Flat addressing.** Where every access of the point body reads or writes element
``[i0, ..., iN]`` of a contiguous buffer whose sizes are the nest's trip counts (plain
elementwise work, fills and copies of contiguous buffers), the buffers are viewed as 1-d
(``loops.reshape_view``, made on the host) and the point's flat index addresses them directly:
no division at all. Elsewhere (broadcasting reads, strided or transposed buffers) the indices
are recovered by division and remainder.

**No vector loads.** The loops dialect has no vector type, and the buffers' offsets are
run-time values, so a code generator cannot prove the 16-byte alignment that ``ld.global.v4``
needs; giving a thread consecutive elements instead would leave the loads scalar and spread
each warp's access over more cache lines, so points are spaced a grid apart.

A nest whose levels cannot all be proven independent runs its leading independent levels in
parallel and the rest sequentially in each thread; a nest with no such level, or any other
construct that cannot be split, runs on one thread (grid 1, block 1): slow, but on the device
and correct.
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import (CopyOp, DimOp, FillOp, ForOp, LoadOp, ParallelOp,
                                     ReshapeViewOp, StoreOp)
from lowering.ir.builder import Builder
from lowering.ir.core import Operation, Value
from lowering.ir.passes import PassFailure
from lowering.ir.types import INDEX

from .kernel import blocks_for, product, trip_count
from .nests import Nest, constant_int


def clone_into(b: Builder, ops, value_map: dict) -> None:
    """Copies of ``ops`` inserted with ``b``, reading ``value_map``'s values; ``loops.fill`` and
    ``loops.copy`` become loop nests (a kernel runs them element by element)."""
    for op in ops:
        new = b.insert(op.clone(value_map))
        for inner in list(new.walk()):
            if isinstance(inner, (FillOp, CopyOp)):
                expand_fill_or_copy(Builder.before(inner), inner)
                inner.erase()


def expand_fill_or_copy(b: Builder, op: Operation) -> None:
    """``op`` (a fill or a copy) as a sequential loop nest inserted with ``b``."""
    source, target = op.operands
    rank = target.type.rank
    sizes = [b.insert(DimOp.build(target, d)).result for d in range(rank)]
    zero = b.insert(scalar.ConstantOp.build(0, INDEX)).result
    one = b.insert(scalar.ConstantOp.build(1, INDEX)).result

    def level(bb: Builder, d: int, ivs: list) -> None:
        if d == rank:
            value = source if isinstance(op, FillOp) else \
                bb.insert(LoadOp.build(source, ivs)).result
            bb.insert(StoreOp.build(value, target, ivs))
            return
        bb.insert(ForOp.build(zero, sizes[d], one,
                              body=lambda b2, iv: level(b2, d + 1, ivs + [iv])))
    level(b, 0, [])


# ---------------------------------------------------------------------------------------------
# Nests


def map_nest(site, nest: Nest, count: int, name: str) -> None:
    """Run ``nest`` with its first ``count`` levels flattened over the grid and the rest
    sequentially in each thread (``count`` 0: one thread runs it all)."""
    if count == 0:
        single_thread(site, [nest.op], name)
        return
    loops_taken, levels = loops_covering(nest, count)
    ops = [o for hoisted in nest.hoisted[:loops_taken] for o in hoisted]
    ops += nest.body if loops_taken == len(nest.loops) else [nest.loops[loops_taken]]
    a = site.host_arith()
    trips = [trip_count(a, lv) for lv in levels]
    total = product(a, trips)
    flat = collapsible_accesses(site, nest, ops) if count == len(nest.levels) else None
    if flat is not None:
        views = {buf: flat_view(site, buf, total) for buf in flat}
        _flat_kernel(site, name, total, ops, nest, views)
        return

    def point(kb, bb, linear, values):
        indices = kb.unflatten(bb, linear, trips)
        vm = dict(values)
        vm.update(zip((lv.iv for lv in levels), kb.iteration_values(bb, indices, levels)))
        clone_into(bb, ops, vm)

    # Several points per step where a point is straight-line code (no loop to copy each time).
    width = 1 if any(op.regions for op in ops) else site.options.elements_per_thread
    emit_flat(site, name, total, point, width)


def loops_covering(nest: Nest, count: int) -> tuple[int, list]:
    """How many of the nest's loop ops hold its first ``count`` levels, and those levels."""
    taken = levels = 0
    for loop in nest.loops:
        if levels >= count:
            break
        levels += loop.rank if isinstance(loop, ParallelOp) else 1
        taken += 1
    return taken, nest.levels[:levels]


def collapsible_accesses(site, nest: Nest, ops) -> list[Value] | None:
    """The buffers of the point body when each access is element ``[iv0, ..., ivN]`` (every
    level's variable, in order) of a contiguous buffer whose sizes are the trip counts, and the
    variables are used for nothing else; None otherwise."""
    ivs = nest.ivs
    if any(constant_int(lv.lower) != 0 or constant_int(lv.step) != 1 for lv in nest.levels):
        return None
    buffers: list[Value] = []
    for op in ops:
        if op.regions:
            return None
        if isinstance(op, (LoadOp, StoreOp)):
            if list(op.indices) != ivs or not op.buffer.type.is_contiguous:
                return None
            if not all(site.same_size(op.buffer, d, lv.upper)
                       for d, lv in enumerate(nest.levels)):
                return None
            if op.buffer not in buffers:
                buffers.append(op.buffer)
        elif any(v in ivs for v in op.operands):
            return None
    return buffers or None


def flat_view(site, buffer: Value, total) -> Value:
    """``buffer`` (contiguous) seen as 1-d with ``total`` elements, made on the host."""
    if buffer.type.rank == 1:
        return buffer
    size = total if isinstance(total, int) else site.host_arith().value(total)
    return site.host.insert(ReshapeViewOp.build(buffer, [size])).result


def _flat_kernel(site, name: str, total, ops, nest: Nest, views: dict) -> None:
    """The point body over a flat space addressed by one index (see "Flat addressing")."""
    def point(kb, bb, linear, values):
        vm = dict(values)
        for op in ops:
            if isinstance(op, LoadOp):
                vm[op.result] = bb.insert(LoadOp.build(views[op.buffer], [linear])).result
            elif isinstance(op, StoreOp):
                bb.insert(StoreOp.build(vm.get(op.value, op.value), views[op.buffer], [linear]))
            else:
                bb.insert(op.clone(vm))

    emit_flat(site, name, total, point, site.options.elements_per_thread)


def emit_flat(site, name: str, total, point, width: int) -> None:
    """A kernel running ``point(kb, builder, flat_index, kernel_values)`` for every index of
    ``[0, total)``: rounds of ``width`` indices per thread, spaced by the number of threads
    (each load of a warp coalesced, ``width`` independent ones in flight), then the rest one
    per thread and step."""
    a = site.host_arith()
    size = site.options.block_size
    width = max(1, width)

    def fill(kb):
        values = site.kernel_values(kb)
        if width == 1:
            kb.grid_stride(kb.b, total, lambda bb, i: point(kb, bb, i, values))
            return
        ka = kb.arith(kb.b)
        span = ka.mul(kb.thread_count, width)
        whole = ka.mul(ka.floordiv(kb.value(total), span), span)  # indices in whole rounds

        def round_(bb, base, carried):
            ra = kb.arith(bb)
            for e in range(width):
                point(kb, bb, kb.value(ra.add(base, ra.mul(kb.thread_count, e))), values)
        kb.loop(kb.b, kb.global_id, whole, span, (), round_)
        kb.loop(kb.b, ka.add(whole, kb.global_id), total, kb.thread_count, (),
                lambda bb, i, carried: point(kb, bb, i, values))

    site.launch(name, blocks_for(a, total, size * width, site.options.max_blocks),
                small_block(total, size), fill)


def small_block(total, size: int) -> int:
    """The block size for ``total`` independent points: ``size``, or fewer threads when
    ``total`` is known to be smaller (one thread for one point)."""
    return min(size, max(total, 1)) if isinstance(total, int) else size


# ---------------------------------------------------------------------------------------------
# Fill, copy, single thread


def map_fill_or_copy(site, op: Operation) -> None:
    """``loops.fill`` / ``loops.copy`` of device buffers as an elementwise kernel."""
    target = op.operands[1]
    a = site.host_arith()
    rank = target.type.rank
    sizes = [site.size(target, d) for d in range(rank)]
    total = product(a, sizes)
    is_fill = isinstance(op, FillOp)
    buffers = [target] if is_fill else [op.source, target]
    name = "fill" if is_fill else "copy"
    if rank == 0 or all(b.type.is_contiguous for b in buffers):
        views = {b: flat_view(site, b, total) if rank else b for b in buffers}

        def point(kb, bb, linear, values):
            where = [linear] if rank else []
            value = values.get(op.operands[0], op.operands[0]) if is_fill else \
                bb.insert(LoadOp.build(views[op.source], where)).result
            bb.insert(StoreOp.build(value, views[target], where))
        emit_flat(site, name, total, point, site.options.elements_per_thread if rank else 1)
        return

    def point(kb, bb, linear, values):
        indices = kb.unflatten(bb, linear, sizes)
        value = values.get(op.operands[0], op.operands[0]) if is_fill else \
            bb.insert(LoadOp.build(op.source, indices)).result
        bb.insert(StoreOp.build(value, target, indices))
    emit_flat(site, name, total, point, 1)


def single_thread(site, ops, name: str, results_to=None) -> None:
    """One thread (grid 1, block 1) runs ``ops`` as they are; ``results_to`` pairs results of
    theirs with rank-0 device buffers to store them into."""
    for op in ops:
        for inner in op.walk():
            if inner.name == "loops.call":
                raise PassFailure(f"map-to-gpu: {inner.name} @{inner.callee} at "
                                  f"{inner.location.short()} cannot be called from inside a "
                                  f"kernel", inner)

    def fill(kb):
        vm = site.kernel_values(kb)
        clone_into(kb.b, ops, vm)
        for value, slot in results_to or ():
            kb.b.insert(StoreOp.build(vm[value], slot, []))

    site.launch(name, 1, 1, fill)
