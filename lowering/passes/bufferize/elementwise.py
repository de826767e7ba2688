"""Bufferize elementwise ops (every ``ElementwiseOp``: math, comparisons, ``select``, ``clip``,
``cast``) and ``tensor.constant``.

An elementwise op becomes one loop nest over its result (``loops.parallel`` outermost, the last
dimension innermost) whose body loads one element of each operand, applies the op's
``scalar_op`` (the scalar dialect op that defines what it computes) and stores the result. A
dimension an operand's type marks ``1`` is read at index 0 (Theano's broadcasting); every other
dimension must have the result's size, checked once before the loop by a ``loops.assert`` naming
the op, the user's line and the shapes. Rank-0 results are computed as scalars, without a loop.

Constants: a rank-0 or splat ``tensor.constant`` (every element the same bits) becomes a
``scalar.constant`` that loops use directly, and a buffer (``loops.alloc`` + ``loops.fill``) only
where something needs one; any other constant becomes a ``loops.constant``, read-only data that a
backend emits once as a global.
"""
from __future__ import annotations

import numpy as np

from lowering.dialects import loops
from lowering.dialects.tensor import ConstantOp, ElementwiseOp

from .core import BUFFERIZE, Lowered


@BUFFERIZE.register(ElementwiseOp)
def _lower_elementwise(ctx, op):
    rt = op.result.type
    attrs = op.scalar_attributes()
    if rt.rank == 0:
        values = [ctx.element(v) for v in op.operands]
        return [Lowered(rt, scalar=ctx.b.insert(op.scalar_op.build(*values, **attrs)).result)]
    sizes = ctx.broadcast_sizes(op.operands, rt.shape)
    ctx.check_broadcast_size(op.operands, sizes, rt.element)
    out = ctx.fresh(rt, sizes)
    readers = [ctx.reader(v, [None if v.type.shape[d] == 1 else d for d in range(rt.rank)])
               for v in op.operands]

    def body(b, ivs):
        values = [r.load(b, ivs) for r in readers]
        result = b.insert(op.scalar_op.build(*values, **attrs)).result
        ctx.store(b, result, out.buffer, ivs)

    ctx.loop_nest(out.sizes, body)
    return [out]


@BUFFERIZE.register(ConstantOp)
def _lower_constant(ctx, op):
    array = op.attributes["value"].array
    rt = op.result.type
    element = rt.element
    if is_splat(array):
        value = ctx.constant(array.reshape(-1)[0], element)
        return [Lowered(rt, scalar=value, sizes=list(array.shape))]
    buffer = ctx.b.insert(loops.ConstantOp.build(np.ascontiguousarray(array))).result
    return [Lowered(rt, buffer=buffer, sizes=list(array.shape))]


def is_splat(array: np.ndarray) -> bool:
    """Whether ``array`` is non-empty with every element the same bits (so ``-0.0`` and ``0.0``
    differ and an all-NaN array of one NaN is a splat).

    >>> is_splat(np.array([0.0, -0.0])), is_splat(np.full((2, 2), np.nan)), is_splat(np.zeros(0))
    (False, True, False)
    """
    if array.size == 0:
        return False
    if not any(array.strides):  # a broadcast view of one value (a parsed splat of any size)
        return True
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8).reshape(array.size, -1)
    return bool((raw == raw[0]).all())
