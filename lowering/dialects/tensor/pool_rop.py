"""The forward-mode rule (``R_OP``) of ``tensor.pool2d``.

``sum`` and the averages are linear in the input: the tangent is the same pooling of the input's
tangent. ``max`` routes each window's tangent from the position of its maximum: with the input
``x`` and its tangent ``v`` padded to whole windows (``-inf`` and ``0``, so neither the padding
nor a partial window's missing cells can win), every offset ``(a, b)`` inside the window gives
the strided view ``x[..., a::sy, b::sx]`` of one cell per window, and the tangent is the sum over
offsets of ``v`` there where ``x`` equals the window's maximum. Tied maxima share the tangent, as
the gradient (``tensor.pool2d_grad``) shares the cotangent, so ``Rop`` is the transpose of
``Lop``. The rule is built from ops every backend already runs: ``ws[0] * ws[1]`` strided reads,
comparisons and selects, which ``fuse`` makes one loop.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> from .pool import Pool2dOp
>>> x, v = Block([TensorType((2, 4, 4), F64), TensorType((2, 4, 4), F64)]).args
>>> op = Pool2dOp.build(x, (2, 2))
>>> (t,) = R_OP.lookup(op)(op, [v])
>>> str(t.type)
'tensor<2x2x2xf64>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Value
from lowering.ir.types import I64

from .elementwise import AddOp, EqOp, MaximumOp, MulOp, SelectOp
from .gradutil import constant, is_differentiable_type
from .indexing import SetSubtensorOp, SubtensorOp
from .pool import Pool2dOp
from .rop import R_OP
from .shape_ops import AllocOp, ShapeIOp, match_type, scalar_constant


@R_OP.register(Pool2dOp)
def pool2d_rop(op: Pool2dOp, tangents) -> list:
    """The tangent of ``op``'s result given the tangent of its input (see the module
    docstring)."""
    (v,) = tangents
    if v is None or not is_differentiable_type(op.result.type):
        return [None]
    if op.mode != "max":
        return [Pool2dOp.build(v, location=op.location, **op.settings()).result]
    return [match_type(_max_pool_tangent(op, v), op.result, op.location)]


def _max_pool_tangent(op: Pool2dOp, v: Value) -> Value:
    loc = op.location
    x, out = op.input, op.result
    rank = x.type.rank
    lead = [ShapeIOp.build(x, d, location=loc).result for d in range(rank - 2)]
    pooled = [ShapeIOp.build(out, rank - 2 + d, location=loc).result for d in range(2)]

    def index(n: int) -> Value:
        return scalar_constant(n, I64, loc)

    def add(a: Value, b: Value) -> Value:
        return AddOp.build(a, b, location=loc).result

    # Window r of a dimension covers padded cells [r * stride, r * stride + ws): the padded
    # input must reach the last window's end, and hold the whole input.
    full, inside, reads = [], [], []
    for d in range(2):
        ws, stride, pad = op.ws[d], op.stride[d], op.pad[d]
        size = ShapeIOp.build(x, rank - 2 + d, location=loc).result
        last = MulOp.build(add(pooled[d], index(-1)), index(stride), location=loc).result
        full.append(MaximumOp.build(add(last, index(ws)), add(size, index(2 * pad)),
                                    location=loc).result)
        inside.append(slice(pad, add(size, index(pad))))
        reads.append([slice(a, add(last, index(a + 1)), stride) for a in range(ws)])

    def padded(value: Value, fill: float) -> Value:
        background = AllocOp.build(scalar_constant(fill, value.type.element, loc), *lead, *full,
                                   location=loc).result
        key = (*[slice(None)] * (rank - 2), *inside)
        return SetSubtensorOp.build(background, value, key, location=loc).result

    px, pv = padded(x, -np.inf), padded(v, 0)
    zero = constant(0, v.type.element, rank, loc)
    total = None
    for rows in reads[0]:
        for cols in reads[1]:
            key = (*[slice(None)] * (rank - 2), rows, cols)
            cell_x = SubtensorOp.build(px, key, location=loc).result
            cell_v = SubtensorOp.build(pv, key, location=loc).result
            at_max = EqOp.build(cell_x, out, location=loc).result
            term = SelectOp.build(at_max, cell_v, zero, location=loc).result
            total = term if total is None else add(total, term)
    return total
