"""Bufferizing ``tensor.scan``: one ``loops.for`` over the steps, writing into preallocated
buffers.

- Each output fed back from earlier steps keeps its steps in a *history* buffer of
  ``rows x state`` allocated before the loop: its initial rows are copied to the first
  ``depth`` rows, step ``t`` reads tap ``k`` at row ``(t + depth + k) mod rows`` and writes row
  ``(t + depth) mod rows``. With the whole history kept, ``rows = depth + n`` (the modulo does
  nothing) and the result is the view of rows ``depth ..``; with ``last_only`` the buffer is a
  ring of ``depth + 1`` rows, so a recurrence read only at its end holds two states
  (double-buffering) whatever the number of steps.
- An output not fed back is written at row ``t`` of its result (row 0 with ``last_only``).
- Sequences are read through views of their row (``loops.subview``), rank-0 rows by one load.
- The body's tensor ops are lowered by their own rules into the loop body; then every
  allocation, size and index computation that does not depend on the step is moved before the
  loop (``hoist_invariants``), so the loop allocates nothing per step: each step's
  temporaries are the same buffers, rewritten.
- With ``until``, the loop is a ``loops.while`` carrying the step number; it runs while the step
  is below ``n_steps`` and the condition the body computed is false, and the results are the
  views of the rows written.

On a GPU (an op placed on a device) there is no rule: ``DEVICE_BUFFERIZE`` declares the op
unsupported, since its step's kernels would have to be launched from a host loop, which the GPU
backend does not do yet; bufferize stops with that reason, and docs/ops.md shows the gap.

Run-time checks (``n_steps`` at least 0, sequences long enough, initial states with enough
rows) are asserts before the loop; checks of the body's ops, and that each fed-back step keeps
its state's shape, are asserts in the loop body, at its top level.
"""
from __future__ import annotations

from dataclasses import replace

from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.dialects.loops import (AllocOp, ConstantOp as BufferConstantOp, CopyOp, DimOp,
                                     ForOp, LoadOp, StoreOp, StrideOp, SubviewOp, YieldOp)
from lowering.dialects.loops.control import WhileOp
from lowering.dialects.tensor.elementwise import ElementwiseOp
from lowering.dialects.tensor.fused import FusedOp
from lowering.dialects.tensor.scan import ScanOp, ScanYieldOp
from lowering.ir.builder import Builder
from lowering.ir.core import PURE, Block, Operation
from lowering.ir.passes import PassFailure
from lowering.ir.types import I1, INDEX

from ..gpu.place_on_device import op_device
from .core import BUFFERIZE, DEVICE_BUFFERIZE, AlwaysFails, FunctionLowering, Lowered
from .device import DEVICE_SPACE, confine_to_device


class BodyLowering(FunctionLowering):
    """Lowers a scan body into a loop body: constants go to the function's top (the
    ``parent``'s), everything else to the loop body."""

    def __init__(self, parent: FunctionLowering, block: Block):
        self.parent = parent
        super().__init__(block, parent.options, parent.error_codes)
        self.value_map = dict(parent.value_map)
        # Yielded values that a map can write straight into their history row:
        # value -> (output, make the row's view, the state's sizes); those written so.
        self.destinations: dict = {}
        self.written_in_place: set = set()
        self.scan: Operation | None = None
        # A scan placed on a device runs its step's ops there: kernels the host loop launches.
        self.space = parent.space
        self.context = op_device(parent.op) if parent.space == DEVICE_SPACE else None

    def constant(self, value, type=INDEX):
        return self.parent.constant(value, type)

    def fresh(self, type, sizes) -> Lowered:
        """The history row as the destination of an elementwise map computing a fed-back
        step (no temporary, no copy), its sizes checked to be the state's first."""
        op = self.op
        if op is not None and len(op.results) == 1 and op.result in self.destinations \
                and type == op.result.type and _is_map(op):
            k, make_view, state_sizes = self.destinations.pop(op.result)
            self.op = self.scan  # the check is the scan's
            for d, (got, want) in enumerate(zip(sizes, state_sizes)):
                self.check(self.ix.eq(got, want), f"output #{k} changes shape in dimension "
                                                  f"{d + 1} from one step to the next")
            self.op = op
            self.written_in_place.add(op.result)
            return Lowered(type, buffer=make_view(), sizes=list(state_sizes))
        return super().fresh(type, sizes)


def _is_map(op: Operation) -> bool:
    """Whether ``op``'s lowering allocates exactly its one result (an elementwise map)."""
    if isinstance(op, FusedOp):
        return all(r is None for r in op.reduction_list())
    return isinstance(op, ElementwiseOp)


def _lower_body_op(ctx: "BodyLowering", op: Operation) -> None:
    on_device = ctx.space == DEVICE_SPACE
    lower = (DEVICE_BUFFERIZE if on_device else BUFFERIZE).lookup(op, PassFailure)
    ctx.op = op
    before = ctx.block.last_op
    try:
        results = lower(ctx, op)
    except AlwaysFails:
        results = [ctx.unreachable(res.type) for res in op.results]
    if on_device:
        results = confine_to_device(ctx, before, results, ctx.context)
    for res, lowered in zip(op.results, results):
        ctx.bind(res, lowered)


def _row_view(ctx: FunctionLowering, b: Builder, buffer, row, sizes, rows: int = 1,
              drop: bool = True):
    """A view of ``rows`` rows of ``buffer`` from ``row`` (the first dimension dropped)."""
    rank = buffer.type.rank
    offsets = [row] + [0] * (rank - 1)
    lengths = [rows] + list(sizes)
    view = SubviewOp.build(buffer, [ctx.ix.value(o) if not isinstance(o, int) else o
                                    for o in offsets],
                           [s if isinstance(s, int) else ctx.ix.value(s) for s in lengths],
                           [1] * rank, [0] if drop else [])
    return b.insert(view).result


def _step_value(ctx: FunctionLowering, b: Builder, type, buffer, row, sizes) -> Lowered:
    """The value of one row of ``buffer`` inside the loop: a load for rank-0 rows, a view
    otherwise."""
    if type.rank == 0 and ctx.space != DEVICE_SPACE:
        zero = [ctx.constant(0)] * (buffer.type.rank - 1)
        return Lowered(type, scalar=b.insert(LoadOp.build(buffer, [row, *zero])).result)
    return Lowered(type, buffer=_row_view(ctx, b, buffer, row, sizes), sizes=list(sizes),
                   space=ctx.space)




@BUFFERIZE.register(ScanOp)
def lower_scan(ctx: FunctionLowering, op: ScanOp) -> list[Lowered]:
    layout = op.layout
    ix = ctx.ix
    seqs, inits, non_seqs = op.split_operands()
    n = ctx.index(op.n_steps)
    ctx.check(ix.ge(n, 0), "n_steps must be at least 0")
    seq_lengths = []
    for k, seq in enumerate(seqs):
        length = ctx.size(seq, 0)
        need = ix.add(n, layout.span(k))
        ctx.check(ix.ge(length, need), f"sequences[{k}] is shorter than n_steps plus the "
                                       f"span of its taps {list(layout.sequence_taps[k])}")
        seq_lengths.append(length)
    last_only = op.kept_last()
    until = op.flag("until")

    # History buffers of the fed-back outputs, their initial rows copied in.
    histories = {}
    for k, init in zip(layout.fed_back, inits):
        depth = layout.depth(k)
        init_sizes = ctx.sizes(init)
        ctx.check(ix.ge(init_sizes[0], depth), f"the initial state of output #{k} "
                                                f"(outputs_info[{k}]) has fewer than the {depth} "
                                                f"rows its taps read")
        state_sizes = init_sizes[1:]
        rows = depth + 1 if last_only[k] else ix.add(n, depth)
        history_t = op.results[k].type
        buffer = ctx.alloc(history_t, [rows, *state_sizes])
        first = _row_view(ctx, ctx.b, ctx.buffer(init), 0, state_sizes, rows=depth, drop=False)
        ctx.b.insert(CopyOp.build(first, _row_view(ctx, ctx.b, buffer, 0, state_sizes,
                                                   rows=depth, drop=False)))
        histories[k] = (buffer, rows, state_sizes)

    c0, c1 = ctx.constant(0), ctx.constant(1)
    if until:
        loop = WhileOp.build([c0], [INDEX])
        t = loop.body.block.args[0]
    else:
        loop = ForOp.build(c0, ix.value(n), c1)
        t = loop.induction_var
    body_block = loop.body.block
    body = BodyLowering(ctx, body_block)
    body.scan = op
    b = body.b
    bix = body.ix

    # The body's arguments: sequence rows, earlier steps, non-sequences.
    args = iter(op.body.block.args)
    backwards = op.flag("go_backwards")
    for k, (seq, length) in enumerate(zip(seqs, seq_lengths)):
        sizes = ctx.sizes(seq)[1:]
        for tap in layout.sequence_taps[k]:
            row = bix.add(t, tap - min(layout.sequence_taps[k]))
            if backwards:
                row = bix.sub(bix.sub(length, 1), row)
            arg = next(args)
            body.bind(arg, _step_value(body, b, arg.type, ctx.buffer(seq), row, sizes))
    for k in layout.fed_back:
        buffer, rows, sizes = histories[k]
        for tap in layout.output_taps[k]:
            row = bix.mod(bix.add(t, layout.depth(k) + tap), rows)
            arg = next(args)
            body.bind(arg, _step_value(body, b, arg.type, buffer, row, sizes))
    for arg, value in zip(args, non_seqs):
        body.bind(arg, replace(ctx.lowered(value), sizes=ctx.sizes(value)))
    for k in layout.fed_back:
        value = op.yielded[k]
        owner = getattr(value, "op", None)
        if value.type.rank and value not in body.destinations and owner is not None \
                and owner.parent is op.body.block:
            buffer, rows, sizes = histories[k]
            row = bix.mod(bix.add(t, layout.depth(k)), rows)
            body.destinations[value] = (k, lambda buffer=buffer, row=row, sizes=sizes:
                                        _row_view(body, b, buffer, row, sizes), sizes)

    for inner in op.body.block.ops:
        if isinstance(inner, ScanYieldOp):
            break
        _lower_body_op(body, inner)
    yielded = op.yielded
    body.op = op
    yield_sizes = [body.sizes(v) for v in yielded[:len(op.results)]]
    # Each fed-back step keeps its state's shape (checked already where it was written in
    # place).
    for k in layout.fed_back:
        if yielded[k] in body.written_in_place:
            continue
        sizes = histories[k][2]
        for d, (got, want) in enumerate(zip(yield_sizes[k], sizes)):
            body.check(bix.eq(got, want), f"output #{k} changes shape in dimension {d + 1} "
                                          f"from one step to the next")
    hoist_invariants(body_block, ctx.b)

    # Outputs not fed back: their sizes are known before the loop once invariants are hoisted.
    results: list[Lowered] = [None] * len(op.results)
    direct = {}
    for k, res in enumerate(op.results):
        if k in histories:
            continue
        sizes = yield_sizes[k]
        if any(not isinstance(s, int) and not _defined_before(s, body_block) for s in sizes):
            raise PassFailure(f"bufferize: {ctx.where()}: output #{k} has a shape that changes "
                              f"from step to step, which compiled code does not support "
                              f"(the interpreter runs it)", op)
        rows = 1 if last_only[k] else n
        direct[k] = (ctx.alloc(res.type, [rows, *sizes]), sizes)

    # The step writes each output's row.
    for k, value in enumerate(yielded[:len(op.results)]):
        if value in body.written_in_place and k == _first_output(yielded, value):
            continue
        if k in histories:
            buffer, rows, sizes = histories[k]
            row = bix.mod(bix.add(t, layout.depth(k)), rows)
        else:
            buffer, sizes = direct[k]
            row = 0 if last_only[k] else t
        _store_step(body, b, value, buffer, row, sizes)

    if until:
        stop = _stop_flag(body, b, yielded[-1])
        if stop.type != I1:
            stop = bix.ne(stop, bix.cast(0, stop.type))
        following = bix.add(t, 1)
        go_on = bix.and_(bix.lt(following, n), bix.not_(stop))
        b.insert(YieldOp.build([bix.value(go_on, I1), following]))
        # Nothing runs when n_steps is 0: the loop sits in a loop of min(n, 1) iterations.
        guard = ForOp.build(c0, ix.value(ix.min(n, 1)), c1, [c0])
        Builder.at_end(guard.body.block).insert(loop)
        guard.body.block.append(YieldOp.build([loop.results[0]]))
        ctx.b.insert(guard)
        steps = guard.results[0]
    else:
        body_block.append(YieldOp.build())
        ctx.b.insert(loop)
        steps = n

    for k, res in enumerate(op.results):
        kept = ix.min(steps, 1) if last_only[k] else steps
        if k in histories:
            buffer, rows, sizes = histories[k]
            depth = layout.depth(k)
            first = ix.mod(ix.add(ix.sub(steps, 1), depth), rows) if last_only[k] else depth
            first = ix.select(ix.gt(steps, 0), first, 0) if last_only[k] else first
            view = _row_view(ctx, ctx.b, buffer, first, sizes, rows=kept, drop=False)
            results[k] = Lowered(res.type, buffer=view, sizes=[kept, *sizes])
        else:
            buffer, sizes = direct[k]
            whole = not last_only[k] and not until
            view = buffer if whole else _row_view(ctx, ctx.b, buffer, 0, sizes, rows=kept,
                                                  drop=False)
            results[k] = Lowered(res.type, buffer=view, sizes=[kept, *sizes], owned=whole)
    return results


def _stop_flag(body: "BodyLowering", b: Builder, value):
    """The element of ``until``'s condition for the host loop: on a device, copied to the host
    (the one transfer a step of a ``while`` loop makes: the host decides whether to go on)."""
    if body.space != DEVICE_SPACE:
        return body.element(value)
    flag = b.insert(ToHostOp.build(body.buffer(value), body.context)).result
    return b.insert(LoadOp.build(flag, [])).result


def _first_output(yielded, value) -> int:
    return next(k for k, v in enumerate(yielded) if v is value)


def _store_step(body: FunctionLowering, b: Builder, value, buffer, row, sizes) -> None:
    target_rank = buffer.type.rank - 1
    if target_rank == 0 and body.space != DEVICE_SPACE:
        zero = []
        element = body.element(value)
        b.insert(StoreOp.build(element, buffer, [body.ix.value(row), *zero]))
        return
    target = _row_view(body, b, buffer, row, sizes)
    body.copy(value, target)


def _defined_before(value, loop_block: Block) -> bool:
    """Whether ``value`` is defined outside ``loop_block`` (so before the loop)."""
    owner = value.op if hasattr(value, "op") else value.block.parent_op
    block = value.op.parent if hasattr(value, "op") else value.block
    while block is not None:
        if block is loop_block:
            return False
        parent = block.parent_op
        block = parent.parent if parent is not None else None
    del owner
    return True


_HOISTABLE = (AllocOp, DimOp, StrideOp, BufferConstantOp)


def _is_invariant_upload(op: Operation) -> bool:
    """A constant's copy to the device: made once before the loop, not once per step."""
    return isinstance(op, ToDeviceOp) and isinstance(getattr(op.operands[0], "op", None),
                                                     BufferConstantOp)


def hoist_invariants(loop_block: Block, before: Builder) -> int:
    """Move the ops at the top of ``loop_block`` that do not depend on the iteration (pure
    scalar and view ops, sizes, allocations, all of whose operands are defined outside the
    loop) to where ``before`` inserts; returns how many moved.

    An allocation moved out is one buffer every iteration rewrites instead of a new one per
    iteration (a fresh buffer's contents are undefined, so no step can tell)."""
    moved = 0
    inside = set(loop_block.args)
    for op in list(loop_block.ops):
        invariant = (not op.regions and not any(v in inside for v in op.operands)
                     and (_is_invariant_upload(op) or (
                         (PURE in op.traits or isinstance(op, _HOISTABLE))
                         and op.name.split(".")[0] in ("scalar", "loops"))))
        if invariant:
            op.detach()
            before.insert(op)
            moved += 1
        else:
            inside.update(op.results)
    return moved
