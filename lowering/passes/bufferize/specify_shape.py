"""Bufferizing ``tensor.specify_shape``: a ``loops.assert`` per dimension whose size is not
known to match, and the input's own buffer as the result."""
from __future__ import annotations

from lowering.dialects.tensor import SpecifyShapeOp

from .core import BUFFERIZE, Lowered, format_sizes


@BUFFERIZE.register(SpecifyShapeOp)
def _lower_specify_shape(ctx, op):
    x, ix = op.input, ctx.ix
    sizes, expected = ctx.sizes(x), ctx.vector(op.shape)
    for d, (size, want) in enumerate(zip(sizes, expected)):
        ctx.check(ix.eq(size, want), f"the shape {format_sizes(sizes)} of the input differs "
                                     f"from the specified shape {format_sizes(expected)} in "
                                     f"dimension {d}")
    lowered = ctx.lowered(x)
    if lowered.buffer is None:
        return [Lowered(op.result.type, scalar=lowered.scalar, sizes=sizes)]
    return [Lowered(op.result.type, buffer=lowered.buffer, sizes=sizes)]
