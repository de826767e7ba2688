"""``map-to-gpu`` for nests that split their work into a few independent pieces (tiles): a
``loops.parallel`` over the pieces whose body is an inner nest with bounds that depend on the
piece, as bufferize writes reductions keeping only the last axis on the host (``x.sum(axis=0)``:
column tiles, each adding every row into its columns; on a device it leaves the columns one
parallel level instead, so they never reach this mapping from the tensor level).

A thread per piece would leave the GPU nearly idle (there are at most 64 such tiles, often one).
Instead each piece gets a block (a block-stride loop over the pieces), and the block's threads
share the piece's inner nest:

- an inner nest whose levels are all independent: its flattened space, every ``block_size``-th
  point per thread;
- an inner nest accumulating into memory at indices naming some of its levels (the columns of
  the tile): every ``block_size``-th kept point per thread, each thread combining its point over
  the reduced levels in order (neighbouring threads walk neighbouring columns).

>>> from lowering.ir.parser import parse_module
>>> from lowering.passes.gpu.map_to_gpu import MapToGpu
>>> m = parse_module('''
... func.func @f(%x: !loops.buffer<?x?xf32, space="device">,
...              %c: !loops.buffer<?xf32, space="device">) {
...   %c0 = "scalar.constant"() {value = 0 : index} : () -> index
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %c2 = "scalar.constant"() {value = 2 : index} : () -> index
...   %m = loops.dim %x, 0 : !loops.buffer<?x?xf32, space="device">
...   %n = loops.dim %x, 1 : !loops.buffer<?x?xf32, space="device">
...   loops.parallel (%t) = (%c0) to (%c2) step (%c1) {
...     %a = "scalar.mul"(%t, %n) : (index, index) -> index
...     %begin = "scalar.floordiv"(%a, %c2) : (index, index) -> index
...     %t1 = "scalar.add"(%t, %c1) : (index, index) -> index
...     %b = "scalar.mul"(%t1, %n) : (index, index) -> index
...     %end = "scalar.floordiv"(%b, %c2) : (index, index) -> index
...     loops.for %i = %c0 to %m step %c1 {
...       loops.for %j = %begin to %end step %c1 {
...         %v = loops.load %x[%i, %j] : !loops.buffer<?x?xf32, space="device">
...         %s = loops.load %c[%j] : !loops.buffer<?xf32, space="device">
...         %r = "scalar.add"(%s, %v) : (f32, f32) -> f32
...         loops.store %r, %c[%j] : !loops.buffer<?xf32, space="device">
...         loops.yield
...       }
...       loops.yield
...     }
...     loops.yield
...   }
...   func.return
... }''')
>>> MapToGpu(block_size=32).apply(m)
>>> [op.get_attr("kernel_name") for op in m.functions[0].body.block.ops if op.name == "gpu.launch"]
['sum']
"""
from __future__ import annotations

from lowering.dialects.loops import LoadOp, StoreOp

from .kernel import combiner, product, trip_count
from .maps import clone_into
from .nests import Analysis, Nest, StoreInfo
from .reductions import bind_levels, mapped_levels, per_block


def map_pieces(site, nest: Nest, count: int, taken: int, inner: Nest, analysis: Analysis,
               name: str) -> bool:
    """Map ``nest`` with its first ``count`` levels (held by its first ``taken`` loop ops) as
    blocks and the inner nest ``inner`` (the loop op after them, with ``analysis``) over each
    block's threads; False (nothing done) when the inner nest is neither independent nor one
    accumulation keeping some of its levels."""
    if analysis.opaque:
        return False
    accumulation = None
    if not all(analysis.free_levels()):
        if not analysis.all_accumulate() or len(analysis.stores) != 1 \
                or not analysis.stores[0].levels:
            return False
        accumulation = analysis.stores[0]
        name = accumulation.accumulation.kernel_name
    outer = nest.levels[:count]
    outer_ops = [op for ops in nest.hoisted[:taken] for op in ops]
    a = site.host_arith()
    trips = [trip_count(a, lv) for lv in outer]

    def output(kb, b, vm):
        clone_into(b, outer_ops, vm)
        if accumulation is None:
            _share_points(kb, b, vm, inner)
        else:
            _share_outputs(kb, b, vm, inner, accumulation)

    per_block(site, name, outer, trips, product(a, trips), output)
    return True


def _share_points(kb, b, vm: dict, inner: Nest) -> None:
    """The block's threads take every ``block_size``-th point of ``inner``."""
    levels = mapped_levels(inner.levels, vm)
    ka = kb.arith(b)
    trips = [trip_count(ka, lv) for lv in levels]

    def point(bb, linear):
        here = dict(vm)
        bind_levels(kb, bb, linear, levels, trips, here)
        clone_into(bb, inner.point_ops(), here)
    kb.thread_stride(b, product(ka, trips), point)


def _share_outputs(kb, b, vm: dict, inner: Nest, info: StoreInfo) -> None:
    """The block's threads take every ``block_size``-th kept point of the accumulation
    ``info`` and combine it over the reduced levels, in order."""
    acc, store = info.accumulation, info.op
    levels = mapped_levels(inner.levels, vm)
    kept = [lv for k, lv in enumerate(levels) if k in info.levels]
    reduced = [lv for k, lv in enumerate(levels) if k not in info.levels]
    skip = {acc.load, acc.combine, store}
    ops = [op for op in inner.point_ops() if op not in skip]
    combine = combiner(acc.combine)
    ka = kb.arith(b)
    kept_trips = [trip_count(ka, lv) for lv in kept]
    red_trips = [trip_count(ka, lv) for lv in reduced]

    def output(bb, o):
        here = dict(vm)
        bind_levels(kb, bb, o, kept, kept_trips, here)
        where = [here.get(v, v) for v in store.indices]
        current = bb.insert(LoadOp.build(store.buffer, where)).result

        def step(b2, r, carried):
            inside = dict(here)
            bind_levels(kb, b2, r, reduced, red_trips, inside)
            clone_into(b2, ops, inside)
            return [combine(b2, carried[0], inside.get(acc.value, acc.value))]
        (total,) = kb.loop(bb, 0, product(kb.arith(bb), red_trips), 1, [current], step)
        bb.insert(StoreOp.build(total, store.buffer, where))
    kb.thread_stride(b, product(ka, kept_trips), output)
