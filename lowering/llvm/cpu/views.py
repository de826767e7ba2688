"""Views in LLVM IR: a new pointer, sizes and strides over the same memory, nothing copied.

The verifier has checked every static part of a view; what is known only at run time is checked
here, once per view (not per element), so that a wrong offset or size gives an error code
instead of reading outside the buffer:

- ``subview``: each window with a run-time part lies inside its dimension (an ``index`` error;
  its last element computed with overflow checks);
- ``reshape_view``: the element counts agree (computed with overflow checks) and no size is
  negative;
- ``broadcast_view``: no size is negative.

>>> [cls in CPU_LOWERING for cls in (SubviewOp, ReshapeViewOp, TransposeViewOp, BroadcastViewOp)]
[True, True, True, True]
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.dialects.loops import (DYNAMIC, BroadcastViewOp, ReshapeViewOp, SubviewOp,
                                     TransposeViewOp)
from lowering.dialects.loops.views import broadcast_dims

from .context import CPU_LOWERING, FunctionLowering, buffer_of
from .values import i64, make_buffer


def _window_in_bounds(fl: FunctionLowering, offset, size, step, dim) -> ir.Value:
    """``0 <= offset < dim`` and ``0 <= last < dim`` (``0 <= offset <= dim`` when empty).

    ``last = offset + (size - 1) * step`` is computed with overflow checks: a window whose last
    element lies beyond the int64 range is out of bounds, never one that wraps back inside it
    (and no ``nsw`` poison reaches the condition whatever the operands are)."""
    b = fl.builder
    size_less_one, _ = fl.add_overflows(size, i64(-1))  # exact where size >= 0, checked below
    span, span_overflows = fl.mul_overflows(size_less_one, step)
    last, last_overflows = fl.add_overflows(offset, span)
    nonempty_ok = fl.all_of([fl.negate(fl.any_of([span_overflows, last_overflows])),
                             fl.icmp(">=", offset, i64(0)), fl.icmp("<", offset, dim),
                             fl.icmp(">=", last, i64(0)), fl.icmp("<", last, dim)])
    empty_ok = fl.all_of([fl.icmp(">=", offset, i64(0)), fl.icmp("<=", offset, dim)])
    sized_ok = fl.all_of([fl.icmp(">=", size, i64(0)), fl.icmp("!=", step, i64(0))])
    is_empty = fl.icmp("==", size, i64(0))
    if isinstance(is_empty, ir.Constant):
        chosen = empty_ok if is_empty.constant else nonempty_ok
    else:
        chosen = b.select(is_empty, empty_ok, nonempty_ok)
    return fl.all_of([sized_ok, chosen])


@CPU_LOWERING.register(SubviewOp)
def _subview(fl: FunctionLowering, op):
    source = buffer_of(fl, op.source)
    dynamic = iter(fl.get(v) for v in op.dynamic)
    offsets, sizes, steps = ([next(dynamic) if x == DYNAMIC else i64(x) for x in static]
                             for static in op.statics())
    statics = op.statics()
    for d in range(source.rank):
        if DYNAMIC in (statics[0][d], statics[1][d], statics[2][d]) or \
                op.source.type.shape[d] is None:
            ok = _window_in_bounds(fl, offsets[d], sizes[d], steps[d], source.sizes[d])
            fl.check(ok, f"{op.name}: the window (offset, size, step) is out of bounds for "
                         f"dimension {d} of {op.source.type}", op, kind="index")
    start: ir.Value = i64(0)
    for offset, stride in zip(offsets, source.strides):
        start = fl.add(start, fl.mul(offset, stride))
    ptr = source.ptr
    if not (isinstance(start, ir.Constant) and start.constant == 0):
        ptr = fl.builder.gep(ptr, [start], inbounds=True)
    drop = set(op.int_list("drop_dims"))
    keep = [d for d in range(source.rank) if d not in drop]
    # A window of two elements or more has |step| < its dimension (checked above), so that
    # stride * step is an offset inside the source and fits; a window of one element or none
    # never uses its step, which may be anything: its product wraps rather than being an nsw
    # poison that would reach the addresses as 0 * stride.
    strides = [fl.mul_overflows(source.strides[d], steps[d])[0] for d in keep]
    return [make_buffer(fl.builder, op.result.type, ptr, [sizes[d] for d in keep], strides)]


@CPU_LOWERING.register(ReshapeViewOp)
def _reshape_view(fl: FunctionLowering, op):
    source = buffer_of(fl, op.source)
    t = op.result.type
    dynamic = iter(fl.get(v) for v in op.sizes)
    sizes = [next(dynamic) if d is None else i64(d) for d in t.shape]
    if None in t.shape or None in op.source.type.shape:
        nonnegative = [fl.icmp(">=", s, i64(0)) for s in sizes]
        new_count, overflow = fl.checked_product(sizes)
        old_count, _ = fl.checked_product(source.sizes)  # the source's elements exist
        ok = fl.all_of(nonnegative + [fl.negate(overflow), fl.icmp("==", new_count, old_count)])
        fl.check(ok, f"{op.name}: cannot view {op.source.type} as {t}: the numbers of elements "
                     f"differ", op)
    return [make_buffer(fl.builder, t, source.ptr, sizes)]


@CPU_LOWERING.register(TransposeViewOp)
def _transpose_view(fl: FunctionLowering, op):
    source = buffer_of(fl, op.source)
    pattern = op.int_list("pattern")
    sizes = [i64(1) if p == -1 else source.sizes[p] for p in pattern]
    strides = [i64(0) if p == -1 else source.strides[p] for p in pattern]
    return [make_buffer(fl.builder, op.result.type, source.ptr, sizes, strides)]


@CPU_LOWERING.register(BroadcastViewOp)
def _broadcast_view(fl: FunctionLowering, op):
    source = buffer_of(fl, op.source)
    t = op.result.type
    given = dict(zip(broadcast_dims(op.source.type, t), (fl.get(v) for v in op.sizes)))
    for d, size in given.items():
        fl.check(fl.icmp(">=", size, i64(0)), f"{op.name}: negative size for dimension {d}", op)
    sizes, strides = [], []
    for d, want in enumerate(t.shape):
        stretched = op.source.type.shape[d] == 1 and want != 1
        sizes.append(given.get(d, source.sizes[d] if want is None else i64(want)))
        strides.append(i64(0) if stretched else source.strides[d])
    return [make_buffer(fl.builder, t, source.ptr, sizes, strides)]
