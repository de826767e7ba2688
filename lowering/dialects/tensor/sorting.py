"""``tensor.argsort``: the indices that sort a tensor along one axis (Theano's ``ArgSortOp``).

The order is NumPy's stable one: ascending, equal elements in their original order, NaNs last.
The result is an i64 tensor of the input's shape. ``T.sort`` gathers the input with these
indices, so its gradient is the gather's.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> x = Block([TensorType((None, 3), F32)]).args[0]
>>> op = ArgSortOp.build(x, 0)
>>> op.axis, str(op.result.type)
(0, 'tensor<?x3xi64>')
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import IntAttr
from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import I64, TensorType

from .base import TensorOp, op_errors
from .rop import R_OP
from .typing import normalize_axis, tensor_of


@register_op
class ArgSortOp(TensorOp):
    """``tensor.argsort %x axis k``: the stable ascending order of ``x`` along axis ``k``."""

    name = "tensor.argsort"
    assembly_format = "$input `axis` $axis attr-dict : type($input) -> type($result)"
    input = operand(AnyTensor)
    result = result(AnyTensor)
    axis = attr(IntAttr)

    @classmethod
    def build(cls, x: Value, axis: int, location=None) -> "ArgSortOp":
        with op_errors(cls.name):
            xt = tensor_of(x)
            if xt.rank == 0:
                raise VerifyError("the input must have at least one dimension")
            axis = normalize_axis(axis, xt.rank)
        return cls.create([x], [TensorType(xt.shape, I64)], {"axis": IntAttr(axis)},
                          location=location)

    def inferred_type(self):
        xt = self.input.type
        if not 0 <= self.axis < xt.rank:
            raise VerifyError(f"axis {self.axis} is out of range for a tensor of rank {xt.rank}")
        return TensorType(xt.shape, I64)


@INTERPRETER.register(ArgSortOp)
def _argsort(interp, op, args):
    return [np.argsort(np.asarray(args[0]), axis=op.axis, kind="stable").astype(np.int64)]


@R_OP.register(ArgSortOp)
def _argsort_tangent(op, tangents):
    return [None]  # positions are integers: no tangent
