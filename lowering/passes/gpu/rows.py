"""``map-to-gpu`` kernels for row programs: a group of threads (a whole block for long rows)
per point of a nest whose point body reduces its row several times and writes it, as softmax
(the maximum, the sum of exponentials, then every element) and argmax (the best value and its
index, then one store) do, instead of one thread walking each row.

A *row program* is a point body made of, in order:

- write-free ops without regions (loads, scalar and index arithmetic): every thread of the
  group computes them;
- **reductions** carrying one value (``nests.carried_reduction``, e.g. a maximum or a sum), or
  an **arg-reduction** carrying a best value and its index (what bufferize writes for argmax
  and argmin: ``select(better, x, best)``, ``select(better, i, best_index)``, ``better`` from
  ``x`` and ``best`` only): the group's threads each take every group-size-th element of the
  row, combine privately, then a shared-memory tree (``gpu.barrier`` after each halving)
  combines the group's values, which every thread of the group reads back (later steps use
  them). Pairs (value, index) combine by ``better`` with ties going to the lower index, which
  gives the first best element, NaN included, as the sequential loop;
- **independent loops** (a ``loops.for`` without carried values, or a ``loops.parallel`` of
  one variable, whose iterations write distinct elements): the group's threads share the
  iterations;
- stores at the point: the group's first thread runs them.

Memory a step writes may not be read by a later step (a barrier would be needed between).
A barrier ends each round of points, so the shared buffers are reused only once every thread
has read them. ``plan`` uses this mapping when the loads of the reductions walk contiguous
memory along the row, as for the single reductions of ``reductions.reduce_carried_per_point``.
"""
from __future__ import annotations

from dataclasses import dataclass

from lowering.dialects import scalar
from lowering.dialects.gpu import BarrierOp
from lowering.dialects.loops import ForOp, LoadOp, ParallelOp, StoreOp
from lowering.ir.captures import defined_inside
from lowering.ir.core import PURE, Operation, OpResult, Value

from ..buffer_analysis import root
from .kernel import combiner, product, trip_count
from .maps import clone_into
from .nests import (CarriedReduction, Level, Nest, analyze, body_ops, carried_reduction,
                    contiguous_walkers, extract_nest, is_write_free)
from .reductions import (bind_levels, group_partial, mapped_levels, per_output_groups,
                         prefers_block_per_point, threads_per_output)


@dataclass
class ArgReduction:
    """A loop carrying ``(best, best_index)``: each step ``better = cond(x, best)`` (the ops
    ``condition``), then ``select(better, x, best)`` and ``select(better, index, best_index)``."""

    op: ForOp
    level: Level
    body: list[Operation]
    best: Value            # the carried value
    x: Value               # the step's candidate value
    value_select: Operation
    index_select: Operation
    condition: list[Operation]  # the ops computing ``better`` from ``x`` and ``best``

    @property
    def kernel_name(self) -> str:
        compares = [op for op in self.condition if isinstance(op, (scalar.GtOp, scalar.LtOp))]
        return "argmin" if compares and isinstance(compares[0], scalar.LtOp) else "argmax"


@dataclass
class Step:
    """One step of a row program: ``kind`` is ``compute``, ``store``, ``reduce``, ``arg`` or
    ``loop``; ``detail`` the ``CarriedReduction`` or ``ArgReduction`` of a reduction."""

    kind: str
    op: Operation
    detail: object = None


def arg_reduction(op: Operation) -> ArgReduction | None:
    """``op`` as an ``ArgReduction`` when it is one (see the module docstring), else None."""
    if not isinstance(op, ForOp) or len(op.inits) != 2:
        return None
    ops = body_ops(op.body.block)
    if not all(is_write_free(o) and not o.regions for o in ops):
        return None
    best, best_index = op.carried
    yielded = list(op.body.block.last_op.operands)
    selects = [v.op if isinstance(v, OpResult) and isinstance(v.op, scalar.SelectOp) else None
               for v in yielded]
    if None in selects:
        return None
    value_select, index_select = selects
    better, x, kept = value_select.operands
    if index_select.operands[0] is not better or kept is not best \
            or index_select.operands[2] is not best_index:
        return None
    if any(use.op is not index_select for use in best_index.uses):
        return None
    condition = _cone(better, ops, {x, best})
    if condition is None or any(use.op is not value_select and use.op not in condition
                                for use in best.uses):
        return None
    level = Level(op.induction_var, op.lower, op.upper, op.step, False)
    return ArgReduction(op, level, ops, best, x, value_select, index_select, condition)


def _cone(value: Value, ops: list[Operation], leaves: set) -> list[Operation] | None:
    """The pure ops among ``ops`` that compute ``value`` from ``leaves`` and values defined
    outside them (in order), or None when it needs anything else from ``ops`` (the loop
    variable, the carried index)."""
    inside = {r: op for op in ops for r in op.results}
    needed: set = set()
    pending = [value]
    while pending:
        v = pending.pop()
        if v in leaves:
            continue
        op = inside.get(v)
        if op is None:
            if isinstance(v, Value) and getattr(v, "block", None) is not None and \
                    v.block is (ops[0].parent if ops else None):
                return None  # a block argument of the loop: its variable or carried values
            continue
        if op in needed:
            continue
        if PURE not in op.traits or op.regions:
            return None
        needed.add(op)
        pending.extend(op.operands)
    return [op for op in ops if op in needed]


def row_program(nest: Nest) -> list[Step] | None:
    """The steps of ``nest``'s point body when it is a row program whose reductions walk
    contiguous memory along the row (see the module docstring), else None."""
    steps: list[Step] = []
    for op in nest.body:
        if isinstance(op, StoreOp):
            steps.append(Step("store", op))
        elif not op.regions and is_write_free(op):
            steps.append(Step("compute", op))
        elif isinstance(op, ForOp) and op.inits:
            reduction = carried_reduction(op)
            if reduction is not None:
                if not prefers_block_per_point(reduction):
                    return None
                steps.append(Step("reduce", op, reduction))
                continue
            arg = arg_reduction(op)
            if arg is None or not _walks_row(arg):
                return None
            steps.append(Step("arg", op, arg))
        elif _independent_loop(op):
            steps.append(Step("loop", op))
        else:
            return None
    if not any(s.kind in ("reduce", "arg") for s in steps) or _reads_what_it_wrote(steps):
        return None
    return steps


def _walks_row(arg: ArgReduction) -> bool:
    mine, others = contiguous_walkers(arg.body, {arg.level.iv})
    return bool(mine) and mine >= others


def _independent_loop(op: Operation) -> bool:
    """A loop without carried values (one variable) whose iterations write distinct elements
    and nothing else, made of region-free ops."""
    if isinstance(op, ParallelOp):
        if len(op.induction_vars) != 1:
            return False
    elif not isinstance(op, ForOp) or op.inits:
        return False
    if any(inner.regions for inner in body_ops(op.body.block)):
        return False
    analysis = analyze(extract_nest(op))
    return not analysis.opaque and all(analysis.free_levels())


def _reads_what_it_wrote(steps: list[Step]) -> bool:
    """Whether a step reads memory an earlier step writes (other threads of the group may not
    have written it yet)."""
    written: set = set()
    for step in steps:
        for op in step.op.walk():
            if isinstance(op, LoadOp) and root(op.buffer) in written:
                return True
        for op in step.op.walk():
            if isinstance(op, StoreOp):
                written.add(root(op.buffer))
    return False


def map_rows(site, nest: Nest, steps: list[Step]) -> None:
    """The kernel of a row program: a group of threads per point of ``nest``."""
    a = site.host_arith()
    trips = [trip_count(a, lv) for lv in nest.levels]
    hoisted = [op for ops in nest.hoisted for op in ops]
    inside = defined_inside(nest.op)
    rows = [lv for s in steps if s.kind in ("reduce", "arg", "loop") for lv in _levels(s)]
    bounds = [v for lv in rows for v in (lv.lower, lv.upper, lv.step)]
    first = next(s for s in steps if s.kind in ("reduce", "arg"))
    threads = site.options.block_size if any(v in inside for v in bounds) else \
        threads_per_output(a, product(a, [trip_count(a, lv) for lv in _levels(first)]),
                           site.options.block_size)

    def output(kb, bb, vm, group, point):
        clone_into(bb, hoisted, vm)
        ka = kb.arith(bb)
        first_lane = ka.and_(group.active, ka.eq(group.lane, 0))
        for step in steps:
            if step.kind == "compute":
                clone_into(bb, [step.op], vm)
            elif step.kind == "store":
                kb.when(bb, first_lane, lambda b2, op=step.op: clone_into(b2, [op], dict(vm)))
            elif step.kind == "reduce":
                _reduce(kb, bb, vm, group, step.detail)
            elif step.kind == "arg":
                _arg_reduce(kb, bb, vm, group, step.detail)
            else:
                _share_loop(kb, bb, vm, group, step.op)
        bb.insert(BarrierOp.build())  # the next round writes the shared buffers read here

    names = [s.detail.kernel_name for s in steps if s.kind in ("reduce", "arg")]
    per_output_groups(site, "rows_" + "_".join(names), nest.levels, trips, product(a, trips),
                      threads, output)


def _levels(step: Step) -> list[Level]:
    if step.kind == "reduce":
        return step.detail.levels
    if step.kind == "arg":
        return [step.detail.level]
    op = step.op
    if isinstance(op, ParallelOp):
        return [Level(op.induction_vars[0], op.lowers[0], op.uppers[0], op.steps[0], True)]
    return [Level(op.induction_var, op.lower, op.upper, op.step, False)]


def _reduce(kb, bb, vm: dict, group, reduction: CarriedReduction) -> None:
    """A one-value reduction of the row: every thread of the group gets the result."""
    cache = group_partial(kb, bb, vm, group, reduction)
    total = bb.insert(LoadOp.build(cache, [kb.arith(bb).sub(kb.tid, group.lane)])).result
    init = vm.get(reduction.init, reduction.init)
    vm[reduction.op.results[0]] = combiner(reduction.combine)(bb, init, total)


def _arg_reduce(kb, bb, vm: dict, group, arg: ArgReduction) -> None:
    """An arg-reduction of the row: every thread of the group gets the best value and its
    index, the first best element's."""
    index_type = arg.op.carried[1].type
    (level,) = mapped_levels([arg.level], vm)
    ka = kb.arith(bb)
    count = trip_count(ka, level)

    def better(b2, candidate, best):
        inner = dict(vm)
        inner[arg.x], inner[arg.best] = candidate, best
        clone_into(b2, arg.condition, inner)
        return inner[arg.value_select.operands[0]]

    def step(b2, r, carried):
        inner = dict(vm)
        bind_levels(kb, b2, r, [level], [count], inner)
        inner[arg.best], inner[arg.op.carried[1]] = carried
        clone_into(b2, arg.body, inner)
        return [inner[arg.value_select.results[0]], inner[arg.index_select.results[0]]]

    def pair(b2, mine, other):
        a2 = kb.arith(b2)
        takes = a2.or_(better(b2, other[0], mine[0]),
                       a2.and_(a2.not_(better(b2, mine[0], other[0])),
                               a2.lt(other[1], mine[1])))
        return [a2.select(takes, other[0], mine[0]), a2.select(takes, other[1], mine[1])]

    # Partials start from the loop's initial value at an index losing every tie; the total
    # replaces the initial values only when better, as the sequential loop's first steps.
    init_value, init_index = (vm.get(v, v) for v in arg.op.inits)
    last = kb.const((1 << (index_type.bits - 1)) - 1, index_type)
    mine = kb.loop(bb, group.lane, ka.select(group.active, count, 0), group.size,
                   [init_value, last], step)
    caches = kb.tree_reduce_many(bb, mine, pair, group)
    total = [bb.insert(LoadOp.build(c, [ka.sub(kb.tid, group.lane)])).result for c in caches]
    takes = better(bb, total[0], init_value)
    vm[arg.op.results[0]] = ka.select(takes, total[0], init_value)
    vm[arg.op.results[1]] = ka.select(takes, total[1], init_index)


def _share_loop(kb, bb, vm: dict, group, op: Operation) -> None:
    """An independent loop whose iterations the group's threads share."""
    (level,) = mapped_levels(_levels(Step("loop", op)), vm)
    ka = kb.arith(bb)
    start = ka.add(kb.value(level.lower), ka.mul(group.lane, kb.value(level.step)))
    upper = ka.select(group.active, kb.value(level.upper), kb.value(level.lower))
    body = body_ops(op.body.block)

    def run(b2, iv, carried):
        inner = dict(vm)
        inner[level.iv] = iv
        clone_into(b2, body, inner)
    kb.loop(bb, start, upper, ka.mul(group.size, kb.value(level.step)), (), run)
