"""Bufferize shape ops: ``dimshuffle``, ``reshape``, ``shape``, ``shape_i``, ``make_vector``,
``alloc``, ``fill``, ``arange`` and ``concatenate``.

- ``dimshuffle`` is a ``loops.transpose_view`` (no copy); of a scalar or splat it stays a scalar.
- ``reshape`` is a ``loops.reshape_view`` of the input when its buffer type is contiguous, else of
  a contiguous copy (function arguments have run-time strides, so they are copied). The target
  sizes are computed at run time with NumPy's rules (one ``-1`` inferred) and checked.
- ``shape``/``make_vector`` store their few elements; ``shape_i`` is a scalar.
- ``alloc``/``fill`` of a scalar stay a scalar (a buffer is filled only if one is needed);
  otherwise a loop nest broadcasts the value with NumPy's rules.
- ``arange`` computes its length like NumPy (exactly for integers, ``ceil((stop - start) /
  step)`` in f64 for floats) and its elements like NumPy's fill (``start + i * delta`` in the
  element type, in f32 for f16).
- ``concatenate`` copies each input into a ``loops.subview`` of the result.
"""
from __future__ import annotations

from lowering.dialects import loops, scalar
from lowering.dialects.tensor import (AllocOp, ArangeOp, ConcatenateOp, DimShuffleOp, FillOp,
                                      MakeVectorOp, ReshapeOp, ShapeIOp, ShapeOp)
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.ir.sizes import MAX_ALLOCATION_BYTES
from lowering.ir.types import F16, F32, F64, I64, INDEX

from .core import BUFFERIZE, Lowered, format_sizes


@BUFFERIZE.register(DimShuffleOp)
def _lower_dimshuffle(ctx, op):
    x, rt, pattern = op.input, op.result.type, op.pattern
    lw = ctx.lowered(x)
    sizes = [1 if p == -1 else lw.sizes[p] for p in pattern]
    splat = ctx.splat(x)
    if splat is not None and all(s is not None for s in sizes):
        return [Lowered(rt, scalar=splat, sizes=sizes)]
    view = ctx.b.insert(loops.TransposeViewOp.build(ctx.buffer(x), pattern)).result
    return [Lowered(rt, buffer=view, sizes=sizes)]


@BUFFERIZE.register(ReshapeOp)
def _lower_reshape(ctx, op):
    x, rt, ix = op.input, op.result.type, ctx.ix
    sizes = reshape_sizes(ctx, ctx.sizes(x), ctx.vector(op.shape), rt.element.dtype.itemsize)
    for d, (declared, s) in enumerate(zip(rt.shape, sizes)):
        if declared is not None:
            ctx.check(ix.eq(s, declared), f"the new size of dimension {d} differs from its "
                                          f"type {format_shape(rt.shape)}")
            sizes[d] = declared
    splat = ctx.splat(x)
    if splat is not None:
        return [Lowered(rt, scalar=splat, sizes=sizes)]
    source = ctx.buffer(x)
    if not source.type.is_contiguous:
        source = ctx.alloc(x.type, ctx.sizes(x))
        ctx.copy(x, source)
    view = ctx.b.insert(loops.ReshapeViewOp.build(
        source, [d if d is not None else ix.value(s) for d, s in zip(rt.shape, sizes)])).result
    return [Lowered(rt, buffer=view, sizes=sizes)]


def reshape_sizes(ctx, input_sizes, target, itemsize: int = 1) -> list:
    """The sizes NumPy's ``reshape`` gives for ``target`` (one entry may be -1), with the checks
    that it is a valid target for ``input_sizes`` (and, as NumPy's, that an array of such
    sizes and ``itemsize`` could exist, even an empty one); static sizes fold:

    >>> import itertools
    >>> from lowering.ir.core import Block
    >>> from lowering.passes.bufferize.core import FunctionLowering
    >>> ctx = FunctionLowering(Block(), None, itertools.count(1))
    >>> reshape_sizes(ctx, [2, 6], [3, -1])
    [3, 4]
    """
    ix = ctx.ix
    total = 1
    for s in input_sizes:
        total = ix.mul(total, s)
    inferred = [ix.eq(t, -1) for t in target]
    ctx.check(ix.all(ix.ge(t, -1) for t in target),
              f"the target shape {format_sizes(target)} has a negative size")
    count = 0
    for neg in inferred:
        count = ix.add(count, ix.select(neg, 1, 0))
    ctx.check(ix.le(count, 1), f"the target shape {format_sizes(target)} has more than one -1")
    given = [ix.select(neg, 1, t) for t, neg in zip(target, inferred)]
    ctx.check(ix.product_fits(given, MAX_ALLOCATION_BYTES // max(itemsize, 1)),
              f"cannot reshape an array of shape {format_sizes(input_sizes)} into "
              f"{format_sizes(target)}: the new shape is too big")
    known = 1
    for size in given:
        known = ix.mul(known, size)
    some_inferred = False
    for neg in inferred:
        some_inferred = ix.or_(some_inferred, neg)
    fits_inferred = ix.and_(ix.ne(known, 0), ix.eq(ix.mod(total, known), 0))
    ctx.check(ix.select(some_inferred, fits_inferred, ix.eq(known, total)),
              f"cannot reshape an array of shape {format_sizes(input_sizes)} into "
              f"{format_sizes(target)}")
    size = ix.floordiv(total, known)
    return [ix.select(neg, size, t) for t, neg in zip(target, inferred)]


@BUFFERIZE.register(ShapeOp)
def _lower_shape(ctx, op):
    sizes = ctx.sizes(op.input)
    out = ctx.fresh(op.result.type, [len(sizes)])
    for i, s in enumerate(sizes):
        ctx.store(ctx.b, ctx.ix.cast(s, I64), out.buffer, [ctx.constant(i)])
    return [out]


@BUFFERIZE.register(ShapeIOp)
def _lower_shape_i(ctx, op):
    return [Lowered(op.result.type, scalar=ctx.ix.cast(ctx.size(op.input, op.axis), I64))]


@BUFFERIZE.register(MakeVectorOp)
def _lower_make_vector(ctx, op):
    out = ctx.fresh(op.result.type, [len(op.operands)])
    for i, v in enumerate(op.operands):
        ctx.store(ctx.b, ctx.element(v), out.buffer, [ctx.constant(i)])
    return [out]


def checked_dims(ctx, dims, rt, what: str = "dimension") -> list:
    """The sizes rank-0 ``dims`` give a result of type ``rt``, checked at run time: none
    negative, each equal to the type's static size where it has one, and the whole size
    allocatable."""
    ix = ctx.ix
    sizes = []
    for d, dim in enumerate(dims):
        size = ctx.index(dim)
        ctx.check(ix.ge(size, 0), f"{what} {d} is negative")
        if rt.shape[d] is not None:
            ctx.check(ix.eq(size, rt.shape[d]),
                      f"{what} {d} differs from the type {format_shape(rt.shape)}")
            size = rt.shape[d]
        sizes.append(size)
    ctx.check_size(sizes, rt.element, "the result")  # also when it stays a scalar
    return sizes


@BUFFERIZE.register(AllocOp)
def _lower_alloc(ctx, op):
    rt = op.result.type
    return [_broadcast_into(ctx, op.value, rt, checked_dims(ctx, op.dims, rt))]


@BUFFERIZE.register(FillOp)
def _lower_fill(ctx, op):
    return [_broadcast_into(ctx, op.value, op.result.type, ctx.sizes(op.model))]


def _broadcast_into(ctx, value, rt, sizes) -> Lowered:
    """``value`` broadcast (NumPy's rules) to ``sizes``: a scalar stays a scalar, anything else
    is written into a fresh buffer by a loop nest."""
    reader = ctx.broadcast_reader(value, sizes)
    if reader.scalar is not None:
        return Lowered(rt, scalar=reader.scalar, sizes=list(sizes))
    out = ctx.fresh(rt, sizes)
    ctx.loop_nest(out.sizes, lambda b, ivs: ctx.store(b, reader.load(b, ivs), out.buffer, ivs))
    return out


@BUFFERIZE.register(ArangeOp)
def _lower_arange(ctx, op):
    rt, ix = op.result.type, ctx.ix
    element = rt.element
    start, stop, step = (ctx.element(v) for v in (op.start, op.stop, op.step))
    zero = ctx.constant(0, element)
    ctx.check(ix.apply(scalar.NeOp, step, zero), "step must not be zero")
    if element.is_float:
        start64, stop64, step64 = (ix.cast(v, F64) for v in (start, stop, step))
        span = ix.apply(scalar.DivOp, ix.apply(scalar.SubOp, stop64, start64), step64)
        ctx.check(ix.not_(ix.or_(ix.apply(scalar.IsNanOp, span), ix.apply(scalar.IsInfOp, span))),
                  "start, stop and step give no finite length")
        length = ix.max(ix.cast(ix.apply(scalar.CeilOp, span), INDEX), 0)
    else:
        length = _integer_range_length(ctx, *(ix.cast(v, INDEX) for v in (start, stop, step)))
    if rt.shape[0] is not None:
        ctx.check(ix.eq(length, rt.shape[0]),
                  f"the length differs from the type {format_shape(rt.shape)}")
        length = rt.shape[0]
    ctx.check_size([length], element, "the result")
    out = ctx.fresh(rt, [length])
    ctx.loop_nest([length], _arange_body(ctx, out.buffer, element, start, step))
    return [out]


def _integer_range_length(ctx, first, last, step):
    """``len(range(first, last, step))`` for any index values (``step != 0``), checked to fit.

    ``last - first`` may overflow, so the bounds are split by the step: ``first = qf * step +
    rf`` and ``last = ql * step + rl`` (floor division), and the length is ``ql - qf`` plus one
    where the remainders leave part of a step. That is exact modulo 2**64 in wrapping
    arithmetic, and the true length lies in ``[0, 2**64)``: it fits where it is non-negative.
    """
    ix = ctx.ix
    forward = ix.gt(step, 0)
    nonempty = ix.select(forward, ix.lt(first, last), ix.gt(first, last))
    rf, rl = ix.mod(first, step), ix.mod(last, step)
    partial = ix.select(forward, ix.gt(rl, rf), ix.lt(rl, rf))
    steps = ix.sub(ix.floordiv(last, step), ix.floordiv(first, step))
    length = ix.select(nonempty, ix.add(steps, ix.select(partial, 1, 0)), 0)
    ctx.check(ix.ge(length, 0), "start, stop and step give more than 2**63 - 1 elements")
    return length


def _arange_body(ctx, out, element, start, step):
    """The loop body storing element ``i`` of an arange, as NumPy's fill computes it."""
    ix = ctx.ix
    if not element.is_float:
        first, stride = ix.cast(start, INDEX), ix.cast(step, INDEX)

        def body(b, ivs):
            a = ctx.arith(b)
            ctx.store(b, a.cast(a.add(first, a.mul(ivs[0], stride)), element), out, ivs)
        return body
    # NumPy sets elements 0 and 1 (start, and start + step in f64), then start + i * delta with
    # delta = element 1 - element 0, in the element type (f32 for f16).
    compute = F32 if element == F16 else element
    second = ix.cast(ix.apply(scalar.AddOp, ix.cast(start, F64), ix.cast(step, F64)), element)
    base = ix.cast(start, compute)
    delta = ix.apply(scalar.SubOp, ix.cast(second, compute), base)

    def body(b, ivs):
        a = ctx.arith(b)
        i = ivs[0]
        value = a.apply(scalar.AddOp, base, a.apply(scalar.MulOp, a.cast(i, compute), delta))
        value = a.select(a.eq(i, 1), second, a.cast(value, element))
        ctx.store(b, a.select(a.eq(i, 0), start, value), out, ivs)
    return body


@BUFFERIZE.register(ConcatenateOp)
def _lower_concatenate(ctx, op):
    rt, ix, axis = op.result.type, ctx.ix, op.axis
    inputs = list(op.operands)
    shapes = ", ".join(format_shape(x.type.shape) for x in inputs)
    sizes = []
    for d in range(rt.rank):
        candidates = [ctx.size(x, d) for x in inputs]
        if d == axis:
            fits, total = ix.add_fits(candidates)
            ctx.check(fits, f"the inputs of shapes {shapes} have more than 2**63 - 1 elements "
                            f"along axis {axis} together")
            sizes.append(total)
            continue
        static = [s for s in candidates if isinstance(s, int)]
        size = static[0] if static else candidates[0]
        for s in candidates:
            ctx.check(ix.eq(s, size), f"input shapes {shapes} differ in dimension {d}")
        sizes.append(size)
    ctx.check_size(sizes, rt.element, "the result")
    out = ctx.fresh(rt, sizes)
    offset = 0
    for x in inputs:
        length = ctx.size(x, axis)
        offsets = [offset if d == axis else 0 for d in range(rt.rank)]
        window = [length if d == axis else out.sizes[d] for d in range(rt.rank)]
        part = ctx.b.insert(loops.SubviewOp.build(out.buffer, offsets, window,
                                                  [1] * rt.rank)).result
        ctx.copy(x, part)
        offset = ix.add(offset, length)
    return [out]
