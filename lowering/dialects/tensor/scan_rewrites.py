"""Canonicalization patterns of ``tensor.scan``: what ``canonicalize`` does to a loop.

- **Loop-invariant code motion** (``hoist_invariant_body_ops``): body ops that read only
  non-sequences (and constants) compute the same value at every step; they move before the
  scan, whose new non-sequences are their results. Non-sequences the body no longer reads are
  dropped.
- **Products over whole sequences** (``push_out_sequence_products``): ``dot(A, x_t)`` of a
  loop-invariant ``A`` and a sequence's row becomes a row of one matrix product computed
  before the loop.
- **Maps over whole sequences** (``push_out_sequence_maps``): an elementwise op of sequence
  rows and loop-invariant values (``U x_t + b``) becomes a row of the same op over the whole
  sequences, before the loop.
- **Sums after the loop** (``sum_accumulators_after_the_loop``): an output that only adds a
  per-step outer product or vector (a gradient summed over the steps) becomes one matrix
  product (or sum) of the steps' factors after the loop.
- **Keeping only the last step** (``keep_only_last_step``): an output whose history nobody
  reads (every use is ``out[-1]``, or there is none) is marked ``last_only``, so that
  bufferization keeps one step of it (two for a recurrence: a ring of ``depth + 1`` rows)
  instead of ``n_steps``.

>>> from lowering.dialects.tensor.scan import ScanOp
>>> hoist_invariant_body_ops in ScanOp.canonicalization_patterns()
True
"""
from __future__ import annotations

from lowering.ir.attributes import ArrayAttr, BoolAttr
from lowering.ir.core import PURE, BlockArgument, Operation, Region, Value, VerifyError
from lowering.ir.location import default_location
from lowering.ir.types import I64, TensorType

from .base import ConstantOp
from .canonical import canonical
from .elementwise import AddOp, CastOp, ElementwiseOp, MulOp, SubOp
from .fused import _detached_ops
from .indexing import Index, Slice, SubtensorOp
from .linalg import DotOp
from .reduction import SumOp
from .scan import ScanLayout, ScanOp, ScanYieldOp, _int_lists, history_type, state_types
from .shape_ops import DimShuffleOp, ShapeIOp, scalar_constant


def _invariant_ops(op: ScanOp) -> tuple[list[Operation], set[Value]]:
    """The body ops to move out (in order), and the values invariant across steps."""
    block = op.body.block
    count = op.layout.num_non_sequences
    invariant: set[Value] = set(block.args[len(block.args) - count:]) if count else set()
    reads_outside = set(invariant)
    moving = []
    for inner in block.ops:
        if isinstance(inner, ScanYieldOp):
            break
        if isinstance(inner, ConstantOp):
            invariant.update(inner.results)
            continue
        if inner.regions or PURE not in inner.traits:
            continue
        if all(v in invariant for v in inner.operands) and \
                any(v in reads_outside for v in inner.operands):
            moving.append(inner)
            invariant.update(inner.results)
            reads_outside.update(inner.results)
    return moving, invariant


@canonical(ScanOp)
def hoist_invariant_body_ops(op: ScanOp, rewriter) -> bool:
    """Move the body's loop-invariant ops before the scan (see the module docstring)."""
    moving, _ = _invariant_ops(op)
    block = op.body.block
    count = op.layout.num_non_sequences
    non_seq_args = list(block.args[len(block.args) - count:]) if count else []
    unused = [a for a in non_seq_args if not a.uses]
    if not moving and not unused:
        return False
    outer: dict[Value, Value] = dict(zip(non_seq_args, op.operands[len(op.operands) - count:]))
    # Clone the moving ops (and the constants they read) before the scan.
    for inner in moving:
        for v in inner.operands:
            if v not in outer and isinstance(getattr(v, "op", None), ConstantOp):
                clone = v.op.clone()
                rewriter.insert_op_before(clone, op)
                outer[v] = clone.result
        clone = inner.clone({v: outer[v] for v in inner.operands})
        rewriter.insert_op_before(clone, op)
        outer.update(zip(inner.results, clone.results))
    moved = set(moving)
    # Values computed by moved ops that the remaining body reads become new non-sequences.
    needed: list[Value] = []
    for inner in block.ops:
        if inner in moved:
            continue
        for v in inner.operands:
            owner = getattr(v, "op", None)
            if owner in moved and v not in needed:
                needed.append(v)
    for v in needed:
        arg = block.add_arg(v.type, v.name_hint)
        v.replace_all_uses_with(arg)
        outer[arg] = outer[v]
    for inner in reversed(moving):
        inner.erase()
    # Drop the non-sequences nobody reads any more.
    kept_args = [a for a in block.args[len(block.args) - count - len(needed):] if a.uses]
    for arg in list(block.args[len(block.args) - count - len(needed):]):
        if not arg.uses:
            block.erase_arg(arg)
    fixed = list(op.operands[:len(op.operands) - count])
    operands = fixed + [outer[a] for a in kept_args]
    body = Region()
    block.parent.blocks.remove(block)
    block.parent = None
    body.add_block(block)
    new = ScanOp.create(operands, [r.type for r in op.results], dict(op.attributes), [body],
                        location=op.location)
    rewriter.insert_op_before(new, op)
    rewriter.replace_op(op, list(new.results))
    return True


def _reads_last_row(user: Operation, value: Value) -> bool:
    """Whether ``user`` is ``value[-1]`` (the last step, every other dimension whole)."""
    if not isinstance(user, SubtensorOp) or user.operands[0] is not value or \
            len(user.operands) != 1:
        return False
    entries = user.entries
    return (bool(entries) and entries[0] == Index(-1)
            and all(e == Slice(None, None, None) for e in entries[1:]))


@canonical(ScanOp)
def keep_only_last_step(op: ScanOp, rewriter) -> bool:
    """Mark outputs read only at their last step ``last_only`` (see the module docstring)."""
    last = op.kept_last()
    changed = False
    for k, res in enumerate(op.results):
        if not last[k] and all(_reads_last_row(use.op, res) for use in res.uses):
            last[k] = changed = True
    if changed:
        rewriter.set_attribute(op, "last_only", ArrayAttr(tuple(BoolAttr(b) for b in last)))
    return changed


# ---------------------------------------------------------------------------------------------
# Work on whole sequences instead of one row per step


def _insert_arg(block, index: int, type) -> BlockArgument:
    arg = BlockArgument(type, block, index, None)
    block.args.insert(index, arg)
    for i, a in enumerate(block.args):
        a.index = i
    return arg


def _rebuilt(op: ScanOp, rewriter, operands, sequence_taps, output_taps, last_only,
             results_from_old, replace: bool = True) -> ScanOp:
    """A scan like ``op`` over ``operands`` with these attributes, taking over its body block
    (already changed to match); old result ``i`` is replaced by new result
    ``results_from_old[i]`` (None: it must have no uses left)."""
    block = op.body.block
    block.parent.blocks.remove(block)
    block.parent = None
    attributes = dict(op.attributes)
    attributes["sequence_taps"] = _int_lists(sequence_taps)
    attributes["output_taps"] = _int_lists(output_taps)
    attributes.pop("last_only", None)
    if any(last_only):
        attributes["last_only"] = ArrayAttr(tuple(BoolAttr(b) for b in last_only))
    yielded = [v.type for v in block.last_op.operands]
    layout = ScanLayout(tuple(map(tuple, sequence_taps)), tuple(map(tuple, output_taps)), 0)
    fixed = 1 + layout.num_sequences + len(layout.fed_back)
    layout = ScanLayout(layout.sequence_taps, layout.output_taps, len(operands) - fixed)
    types = [history_type(t) for t in state_types(layout, [v.type for v in operands], yielded,
                                                  until=op.flag("until"))]
    new = ScanOp.create(operands, types, attributes, [Region([block])], location=op.location)
    rewriter.insert_op_before(new, op)
    if replace:
        _replace_results(op, new, rewriter, results_from_old)
    return new


def _replace_results(op: ScanOp, new: ScanOp, rewriter, results_from_old) -> None:
    rewriter.replace_op(op, [new.results[i] if i is not None else None
                             for i in results_from_old])


def _sequence_arg_positions(op: ScanOp) -> dict:
    """Body argument -> (sequence index, tap) for the sequences' row arguments."""
    positions, index = {}, 0
    block = op.body.block
    for k, taps in enumerate(op.layout.sequence_taps):
        for tap in taps:
            positions[block.args[index]] = (k, tap)
            index += 1
    return positions


@canonical(ScanOp)
def push_out_sequence_products(op: ScanOp, rewriter) -> bool:
    """``dot(A, x_t)`` (or ``dot(x_t, A)``) of a loop-invariant matrix ``A`` and a sequence's
    row becomes a row of one product over the whole sequence, computed before the loop (one
    matrix product instead of a matrix-vector product per step)."""
    layout = op.layout
    if op.flag("until"):
        return False
    block = op.body.block
    rows = _sequence_arg_positions(op)
    _, invariant = _invariant_ops(op)
    non_seq_start = len(block.args) - layout.num_non_sequences
    outer = dict(zip(block.args[non_seq_start:], op.operands[len(op.operands)
                                                             - layout.num_non_sequences:]))
    for inner in block.ops:
        if not isinstance(inner, DotOp) or inner.result.type.rank != 1:
            continue
        a, b = inner.operands
        if b in rows and a in outer and a.type.rank == 2 and b.type.rank == 1:
            row, matrix, row_first = b, outer[a], False
        elif a in rows and b in outer and b.type.rank == 2 and a.type.rank == 1:
            row, matrix, row_first = a, outer[b], True
        else:
            continue
        k, tap = rows[row]
        seqs, _, _ = op.split_operands()
        sequence = seqs[k]
        with default_location(inner.location):
            right = matrix if row_first else DimShuffleOp.build(matrix, [1, 0]).result
            product = DotOp.build(sequence, right)
            ops = [o for o in (right.op if right is not matrix else None, product) if o]
            shift = tap - min(layout.sequence_taps[k])
            whole = product.result
            if shift:
                key = (slice(None, -shift),) if op.flag("go_backwards") else (slice(shift, None),)
                shifted = SubtensorOp.build(whole, key)
                ops.append(shifted)
                whole = shifted.result
        for new_op in ops:
            rewriter.insert_op_before(new_op, op)
        # The new sequence comes after the others, read at tap 0.
        position = sum(len(t) for t in layout.sequence_taps)
        arg = _insert_arg(block, position, TensorType(whole.type.shape[1:], whole.type.element))
        inner.result.replace_all_uses_with(arg)
        inner.erase()
        operands = list(op.operands)
        operands.insert(1 + layout.num_sequences, whole)
        _rebuilt(op, rewriter, operands, [*layout.sequence_taps, (0,)], layout.output_taps,
                 op.kept_last(), list(range(len(op.results))))
        return True
    return False


def _outer_factors(value: Value):
    """``(a, b)`` when ``value`` is ``a[:, None] * b[None, :]`` (an outer product of vectors)."""
    owner = getattr(value, "op", None)
    if not isinstance(owner, MulOp) or value.type.rank != 2:
        return None
    factors = []
    for operand, pattern in zip(owner.operands, ([0, -1], [-1, 0])):
        shuffle = getattr(operand, "op", None)
        if not isinstance(shuffle, DimShuffleOp) or list(shuffle.pattern) != pattern:
            return None
        factors.append(shuffle.operands[0])
    return tuple(factors)


@canonical(ScanOp)
def sum_accumulators_after_the_loop(op: ScanOp, rewriter) -> bool:
    """An output that only sums a per-step term (``acc + g``, read only at its last step, the
    sum of a gradient over the steps) is computed after the loop: an outer product
    ``a[:, None] * b[None, :]`` per step becomes one matrix product of the steps' ``a`` and
    ``b``, a vector term the sum of its steps; the loop no longer carries the sum."""
    layout = op.layout
    if op.flag("until"):
        return False
    block = op.body.block
    yielded = op.yielded
    last = op.kept_last()
    state_args, index = {}, sum(len(t) for t in layout.sequence_taps)
    for k in layout.fed_back:
        for _ in layout.output_taps[k]:
            state_args.setdefault(k, []).append(block.args[index])
            index += 1
    _, inits, _ = op.split_operands()
    init_of = dict(zip(layout.fed_back, inits))
    for k in layout.fed_back:
        if layout.output_taps[k] != (-1,) or not last[k]:
            continue
        (state,) = state_args[k]
        total = yielded[k]
        add = getattr(total, "op", None)
        if not isinstance(add, AddOp) or state not in add.operands or len(state.uses) != 1 \
                or len(total.uses) != 1 or add.parent is not block:
            continue
        term = add.operands[1] if add.operands[0] is state else add.operands[0]
        if term.type != total.type:
            continue
        factors = _outer_factors(term)
        if factors is None and term.type.rank > 1:
            continue
        if not op.results[k].uses or not all(_reads_last_row(use.op, op.results[k])
                                             for use in op.results[k].uses):
            continue
        steps_values = list(factors) if factors is not None else [term]
        # Outputs: each per-step value, not fed back.
        terminator = block.last_op
        values = list(terminator.operands)
        del values[k]
        cond = values.pop() if op.flag("until") else None
        values += steps_values
        if cond is not None:
            values.append(cond)
        terminator.set_operands(values)
        add.erase()
        block.erase_arg(state)
        operands = list(op.operands)
        operands.remove(init_of[k])
        output_taps = [t for i, t in enumerate(layout.output_taps) if i != k] + \
            [()] * len(steps_values)
        kept = [b for i, b in enumerate(last) if i != k] + [False] * len(steps_values)
        uses = [use.op for use in op.results[k].uses]
        mapping = [None if i == k else i - (i > k) for i in range(len(op.results))]
        new = _rebuilt(op, rewriter, operands, layout.sequence_taps, output_taps, kept, mapping,
                       replace=False)
        histories = new.results[len(new.results) - len(steps_values):]
        with default_location(add.location):
            initial = SubtensorOp.build(init_of[k], (0,))
            made = [initial]
            if factors is not None:
                left = DimShuffleOp.build(histories[0], [1, 0])
                product = DotOp.build(left.result, histories[1])
                made += [left, product]
                summed = product.result
            else:
                reduced = SumOp.build(histories[0], axes=[0])
                made.append(reduced)
                summed = reduced.result
            final = AddOp.build(initial.result, summed)
            made.append(final)
        anchor = uses[0]
        for new_op in made:
            rewriter.insert_op_before(new_op, anchor)
        for user in uses:
            rewriter.replace_op(user, [final.result])
        _replace_results(op, new, rewriter, mapping)
        return True
    return False


@canonical(ScanOp)
def drop_unused_sequences(op: ScanOp, rewriter) -> bool:
    """A sequence none of whose rows the body reads any more (its work moved before the loop)
    is no longer an operand; another sequence or ``n_steps`` still gives the number of steps."""
    layout = op.layout
    block = op.body.block
    index, unused = 0, []
    for k, taps in enumerate(layout.sequence_taps):
        args = block.args[index:index + len(taps)]
        index += len(taps)
        if not any(a.uses for a in args):
            unused.append((k, args))
    if not unused:
        return False
    dropped = {k for k, _ in unused}
    for _, args in unused:
        for arg in args:
            block.erase_arg(arg)
    seqs, _, _ = op.split_operands()
    operands = [v for i, v in enumerate(op.operands) if i < 1 or i > len(seqs)
                or (i - 1) not in dropped]
    taps = [t for k, t in enumerate(layout.sequence_taps) if k not in dropped]
    _rebuilt(op, rewriter, operands, taps, layout.output_taps, op.kept_last(),
             list(range(len(op.results))))
    return True


def _whole_rows(op: ScanOp, k: int, tap: int) -> list[Operation]:
    """The new ops slicing sequence ``k`` to the ``n_steps`` rows that tap ``tap`` reads, in
    reading order (the last op's result is the slice)."""
    layout = op.layout
    seqs, _, _ = op.split_operands()
    n = op.n_steps
    if n.type.element != I64:
        n = CastOp.build(n, I64).result
    shift = scalar_constant(tap - min(layout.sequence_taps[k]), I64)
    if op.flag("go_backwards"):
        stop = SubOp.build(ShapeIOp.build(seqs[k], 0).result, shift).result
        key = (slice(SubOp.build(stop, n).result, stop),)
    else:
        key = (slice(shift, AddOp.build(n, shift).result),)
    return _detached_ops([SubtensorOp.build(seqs[k], key).result])


@canonical(ScanOp)
def push_out_sequence_maps(op: ScanOp, rewriter) -> bool:
    """An elementwise op of sequence rows and loop-invariant values (``U x_t + b``) becomes a
    row of the same op over the whole sequences, computed before the loop."""
    layout = op.layout
    if op.flag("until"):
        return False
    block = op.body.block
    rows = _sequence_arg_positions(op)
    count = layout.num_non_sequences
    outer = dict(zip(block.args[len(block.args) - count:],
                     op.operands[len(op.operands) - count:])) if count else {}
    for inner in block.ops:
        if not isinstance(inner, ElementwiseOp) or inner.attributes or \
                not any(v in rows for v in inner.operands):
            continue
        if not all(v in rows or v in outer or isinstance(getattr(v, "op", None), ConstantOp)
                   for v in inner.operands):
            continue
        made, operands = [], []
        with default_location(inner.location):
            for v in inner.operands:
                if v in rows:
                    sliced = _whole_rows(op, *rows[v])
                    made += sliced
                    operands.append(sliced[-1].result)
                    continue
                value = outer.get(v)
                if value is None:  # a constant of the body
                    clone = v.op.clone()
                    made.append(clone)
                    value = clone.result
                shuffle = DimShuffleOp.build(value, ["x", *range(value.type.rank)])
                made.append(shuffle)
                operands.append(shuffle.result)
            try:
                whole = type(inner).build(*operands)
            except VerifyError:
                continue
            made.append(whole)
        for new_op in made:
            rewriter.insert_op_before(new_op, op)
        position = sum(len(t) for t in layout.sequence_taps)
        arg = _insert_arg(block, position, TensorType(whole.result.type.shape[1:],
                                                      whole.result.type.element))
        if arg.type != inner.result.type:
            block.args.remove(arg)
            for i, a in enumerate(block.args):
                a.index = i
            for new_op in reversed(made):
                new_op.erase()
            continue
        inner.result.replace_all_uses_with(arg)
        inner.erase()
        operands = list(op.operands)
        operands.insert(1 + layout.num_sequences, whole.result)
        _rebuilt(op, rewriter, operands, [*layout.sequence_taps, (0,)], layout.output_taps,
                 op.kept_last(), list(range(len(op.results))))
        return True
    return False


@canonical(ScanOp)
def forward_sequence_rows(op: ScanOp, rewriter) -> bool:
    """An output that is a sequence's row at each step (not fed back) is that sequence's rows:
    its readers read the slice of the sequence instead. Only where ``n_steps`` is that
    sequence's length (the scan would check nothing more)."""
    layout = op.layout
    if op.flag("until"):
        return False
    rows = _sequence_arg_positions(op)
    seqs, _, _ = op.split_operands()
    for k, value in enumerate(op.yielded[:len(layout.output_taps)]):
        result = op.results[k]
        if layout.output_taps[k] or value not in rows or not result.uses:
            continue
        sequence, tap = rows[value]
        if not _is_length_of(op.n_steps, seqs[sequence]) or layout.span(sequence):
            continue
        with default_location(op.location):
            made = _whole_rows(op, sequence, tap)
            if op.flag("go_backwards"):  # the rows in the order the steps read them
                made += _detached_ops([SubtensorOp.build(made[-1].result,
                                                         (slice(None, None, -1),)).result])
            if op.kept_last()[k]:  # the last row, as a history of at most one row
                last = made[-1].result
                made += _detached_ops([SubtensorOp.build(last, (slice(-1, None),)).result])
        if made[-1].result.type != result.type:
            continue
        for new_op in made:
            rewriter.insert_op_before(new_op, op)
        rewriter.replace_all_uses_with(result, made[-1].result)
        return True
    return False


def _is_length_of(n: Value, sequence: Value) -> bool:
    owner = getattr(n, "op", None)
    if isinstance(owner, CastOp):
        owner = getattr(owner.operands[0], "op", None)
    return isinstance(owner, ShapeIOp) and owner.operands[0] is sequence and owner.axis == 0


@canonical(ScanOp)
def drop_unused_outputs(op: ScanOp, rewriter) -> bool:
    """Outputs that are not fed back and that nothing reads are not computed."""
    layout = op.layout
    dead = [k for k, taps in enumerate(layout.output_taps)
            if not taps and not op.results[k].uses]
    if not dead:
        return False
    terminator = op.body.block.last_op
    values = [v for k, v in enumerate(terminator.operands) if k not in dead]
    terminator.set_operands(values)
    taps = [t for k, t in enumerate(layout.output_taps) if k not in dead]
    kept = [b for k, b in enumerate(op.kept_last()) if k not in dead]
    mapping, index = [], 0
    for k in range(len(op.results)):
        mapping.append(None if k in dead else index)
        index += k not in dead
    _rebuilt(op, rewriter, list(op.operands), layout.sequence_taps, taps, kept, mapping)
    return True
