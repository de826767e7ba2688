"""Canonicalization patterns of ``tensor.scan``: what ``canonicalize`` does to a loop.

- **Loop-invariant code motion** (``hoist_invariant_body_ops``): body ops that read only
  non-sequences (and constants) compute the same value at every step; they move before the
  scan, whose new non-sequences are their results. Non-sequences the body no longer reads are
  dropped.
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
from lowering.ir.core import PURE, Operation, Region, Value

from .base import ConstantOp
from .canonical import canonical
from .indexing import Index, Slice, SubtensorOp
from .scan import ScanOp, ScanYieldOp


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
