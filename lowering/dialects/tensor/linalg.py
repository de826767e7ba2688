"""``tensor.dot``: the inner product of vectors, matrix-vector (gemv), vector-matrix and
matrix-matrix (gemm) products, as NumPy's ``dot`` for operands of rank 1 or 2.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, TensorType
>>> x, w = Block([TensorType((None, 784), F32), TensorType((784,), F32)]).args
>>> str(DotOp.build(x, w).result.type)
'tensor<?xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType

from .base import TensorOp, op_errors
from .shape_ops import DimShuffleOp, fit_result, format_shape, match_type
from .typing import ShapeError, tensor_of


def _dot_type(at: TensorType, bt: TensorType) -> TensorType:
    for what, t in (("left", at), ("right", bt)):
        if t.rank not in (1, 2):
            raise VerifyError(f"the {what} operand must have rank 1 or 2, got {t}")
    if at.element != bt.element:
        raise VerifyError(f"operands must have one element type, got {at} and {bt}")
    if at.element.is_bool:
        raise VerifyError(f"operands must be numbers, not booleans ({at}); cast them first")
    k_a, k_b = at.shape[-1], bt.shape[0]
    if k_a is not None and k_b is not None and k_a != k_b:
        raise ShapeError(f"incompatible shapes {format_shape(at.shape)} and {format_shape(bt.shape)}")
    return at.with_shape(at.shape[:-1] + bt.shape[1:])


@register_op
class DotOp(TensorOp):
    """``tensor.dot(a, b)``: contracts the last dim of ``a`` with the first of ``b``."""

    name = "tensor.dot"
    assembly_format = "$lhs, $rhs attr-dict : functional-type(operands, results)"
    lhs = operand(AnyTensor)
    rhs = operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, a: Value, b: Value, location=None) -> "DotOp":
        with op_errors(cls.name):
            rtype = _dot_type(tensor_of(a), tensor_of(b))
        return cls.create([a, b], [rtype], location=location)

    def inferred_type(self):
        return _dot_type(self.lhs.type, self.rhs.type)

    def grad(self, output_grads):
        from .elementwise import MulOp
        from .gradutil import is_differentiable_type

        g = output_grads[0]
        a, b, loc = self.lhs, self.rhs, self.location
        if g is None or not is_differentiable_type(self.result.type):
            return [None, None]
        if self.result.type.element.is_complex:  # d(a.b) = da.b + a.db: conj(b), conj(a) flow
            from .complex import ConjOp
            a, b = (ConjOp.build(v, location=loc).result for v in (a, b))

        def shuffle(v, pattern):
            return DimShuffleOp.build(v, pattern, location=loc).result

        def dot(u, v):
            return DotOp.build(u, v, location=loc).result

        def outer(u, v):  # u[:, None] * v[None, :]
            return MulOp.build(shuffle(u, [0, "x"]), shuffle(v, ["x", 0]), location=loc).result

        ranks = (a.type.rank, b.type.rank)
        if ranks == (1, 1):      # g is rank 0: ga = g * b, gb = g * a
            ga = MulOp.build(shuffle(g, ["x"]), b, location=loc).result
            gb = MulOp.build(shuffle(g, ["x"]), a, location=loc).result
        elif ranks == (2, 1):    # gemv: ga = outer(g, b), gb = a.T . g
            ga, gb = outer(g, b), dot(shuffle(a, [1, 0]), g)
        elif ranks == (1, 2):    # ga = b . g, gb = outer(a, g)
            ga, gb = dot(b, g), outer(a, g)
        else:                    # gemm: ga = g . b.T, gb = a.T . g
            ga, gb = dot(g, shuffle(b, [1, 0])), dot(shuffle(a, [1, 0]), g)
        return [match_type(ga, a, loc), match_type(gb, b, loc)]


@INTERPRETER.register(DotOp)
def _dot(interp, op, args):
    a, b = np.asarray(args[0]), np.asarray(args[1])
    if a.shape[-1] != b.shape[0]:
        raise ValueError(f"tensor.dot: incompatible shapes {a.shape} and {b.shape}")
    return [fit_result(op, np.dot(a, b))]
