"""How ``map-to-gpu`` maps one top-level loop: the choice between the kernels of
``gpu.maps`` and ``gpu.reductions``, from what ``gpu.nests`` finds.

For a nest (a ``loops.parallel``, or a ``loops.for`` without carried values):

1. its only store accumulates into memory: a reduction kernel (``reduce_into_memory``), or,
   at computed indices, atomic combining (``scatter_atomically``);
2. several stores, each a map store or an accumulation read by nothing else: the nest is split
   into one nest per accumulation, then one for all map stores (last: the accumulations may
   read elements the map stores overwrite), each a copy of the original with the other stores
   removed (and whatever only they needed), each mapped on its own;
3. every level independent: if the point body is write-free ops, one carried reduction whose
   loads walk contiguous memory along the reduction, then anything, a group of threads per
   point (``reduce_carried_per_point``); if it is a row program (several reductions of the row,
   an argmax's value and index, loops writing the row: softmax, argmax), a group of threads
   per point too (``rows.map_rows``); otherwise the flattened nest, one point per thread and
   step;
4. otherwise, when the rest of the nest after the leading independent levels is itself a nest
   that is independent or one accumulation keeping some of its levels (pieces of work, such
   as the host's column tiles), a block per point of the leading levels and its threads over
   the inner nest (``map_pieces``); else the leading independent levels are flattened and
   each thread runs the rest of the nest sequentially; with no independent level, one thread
   runs it all.

A top-level ``loops.for`` with one carried value that is a reduction becomes a reduction to
one value; with several (``argmax`` of a whole array: the best value and its index), one
thread runs it.

>>> from lowering.dialects import scalar
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> x, y = Block([F32, F32]).args
>>> kernel_name([scalar.ExpOp.build(x)]), kernel_name([scalar.ExpOp.build(x),
...                                                    scalar.AddOp.build(x, y)])
('exp', 'fused')
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.loops import ForOp, LoadOp, StoreOp
from lowering.ir.core import Operation
from lowering.ir.types import INDEX

from ..buffer_analysis import root
from .kernel import prune
from .maps import loops_covering, map_nest, single_thread
from .nests import (Analysis, Nest, analyze, carried_reduction, extract_nest,
                    indices_are_ivs_or_outside, is_write_free)
from .reductions import (atomic_kind, prefers_block_per_point, reduce_carried_per_point,
                         reduce_carried_to_slot, reduce_into_memory, scatter_atomically)
from .rows import map_rows, row_program
from .tiles import map_pieces


def map_loop(site, op: Operation, slots) -> None:
    """Replace the top-level loop ``op`` by kernels; ``slots`` are rank-0 device buffers for
    its results (a loop carrying values)."""
    if isinstance(op, ForOp) and op.inits:
        reduction = carried_reduction(op)
        if reduction is not None:
            reduce_carried_to_slot(site, reduction, slots[0])
        else:
            single_thread(site, [op], "serial", results_to=list(zip(op.results, slots)))
        return
    map_nest_op(site, op)


def map_nest_op(site, op: Operation) -> None:
    """Replace the nest ``op`` by kernels (see the module docstring)."""
    nest = extract_nest(op)
    analysis = analyze(nest)
    if analysis.all_accumulate() and len(analysis.stores) == 1:
        reduce_into_memory(site, nest, analysis.stores[0])
        return
    scatter = scatter_kind(analysis)
    if scatter is not None:
        scatter_atomically(site, nest, analysis.stores[0], scatter)
        return
    groups = store_groups(analysis)
    if groups is not None and len(groups) > 1:
        split(site, nest, groups)
        return
    free = analysis.free_levels()
    if all(free):
        found = carried_in_body(nest)
        if found is not None and prefers_block_per_point(found[1]):
            before, reduction, after = found
            reduce_carried_per_point(site, nest, reduction, before, after)
            return
        steps = row_program(nest) if found is None else None
        if steps is not None:
            map_rows(site, nest, steps)
            return
        map_nest(site, nest, len(nest.levels), kernel_name(nest.point_ops()))
        return
    count = 0
    while free[count]:
        count += 1
    if count:
        taken = loops_covering(nest, count)[0]
        if taken < len(nest.loops):
            inner = extract_nest(nest.loops[taken])
            if map_pieces(site, nest, count, taken, inner, analyze(inner),
                          kernel_name(inner.point_ops())):
                return
    map_nest(site, nest, count, "loop" if count else "serial")


def scatter_kind(analysis: Analysis) -> str | None:
    """The atomic kind when the nest's only store accumulates at computed indices (and
    ``gpu.atomic_rmw`` does that combining step on its element type), else None."""
    if analysis.opaque or len(analysis.stores) != 1:
        return None
    (info,) = analysis.stores
    if info.kind != "accumulate" or not info.at_point \
            or indices_are_ivs_or_outside(info.op, analysis.nest):
        return None
    return atomic_kind(info.accumulation.atomic_kind, info.op.value.type)


def store_groups(analysis: Analysis) -> list[list] | None:
    """The stores of a nest split into groups that may run as separate nests (all map stores
    together, each accumulation alone), or None when they may not."""
    if analysis.opaque or len(analysis.stores) < 2:
        return None
    maps = [s for s in analysis.stores if s.kind == "map"]
    accumulations = [s for s in analysis.stores if s.kind == "accumulate"]
    if len(maps) + len(accumulations) != len(analysis.stores):
        return None
    if any(not s.at_point or not indices_are_ivs_or_outside(s.op, analysis.nest)
           for s in accumulations):
        return None
    # An accumulator read by anything but its own accumulation would see a different value
    # once the nest is split.
    own = {s.accumulation.load for s in accumulations}
    accumulators = {root(s.op.buffer) for s in accumulations}
    for top in analysis.nest.point_ops():
        for op in top.walk():
            if isinstance(op, LoadOp) and op not in own and root(op.buffer) in accumulators:
                return None
    # The map stores last: the accumulations may read (their iteration's) old elements of what
    # the map stores overwrite.
    return [[s] for s in accumulations] + ([maps] if maps else [])


def split(site, nest: Nest, groups) -> None:
    """Map one copy of the nest per group of stores, each without the other stores."""
    op = nest.op
    for group in groups:
        copy = op.clone({})
        site.host.insert(copy)
        new_of = dict(zip(op.walk(), copy.walk()))
        keep = {new_of[s.op] for s in group}
        for old in op.walk():
            if isinstance(old, StoreOp) and new_of[old] not in keep:
                new_of[old].erase()
        prune(copy)
        map_nest_op(type(site)(site.mapper, copy), copy)
        copy.erase()


def carried_in_body(nest: Nest):
    """``(before, reduction, after)`` when the point body is write-free ops without regions,
    one carried reduction, then anything; else None."""
    body = nest.body
    with_regions = [k for k, op in enumerate(body) if op.regions]
    if len(with_regions) != 1:
        return None
    k = with_regions[0]
    reduction = carried_reduction(body[k])
    if reduction is None or not all(is_write_free(op) for op in body[:k]):
        return None
    return body[:k], reduction, body[k + 1:]


def kernel_name(ops) -> str:
    """A name for an elementwise kernel running ``ops``: the one scalar function it computes
    (``exp``), ``copy`` when it only moves data, ``fused`` for several."""
    names = []
    for top in ops:
        for op in top.walk():
            if op.name.startswith("scalar.") and not isinstance(op, scalar.ConstantOp) \
                    and op.results and op.results[0].type != INDEX \
                    and not (isinstance(op, scalar.SelectOp) and op.operands[1].type == INDEX):
                names.append(op.name.split(".", 1)[1])
    unique = sorted(set(names))
    return "copy" if not unique else unique[0] if len(unique) == 1 else "fused"
