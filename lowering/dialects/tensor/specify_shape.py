"""``tensor.specify_shape``: ``x`` itself, after checking at run time that its shape is the given
one (Theano's ``SpecifyShape``).

``tensor.specify_shape(%x, %shape)``: ``%shape`` is a rank-1 i64 tensor with one entry per
dimension of ``%x``; the result has ``%x``'s type and shares its value. A shape that differs
stops the function with an error naming both shapes.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> x = Block([TensorType((None, 3), F32)]).args[0]
>>> str(SpecifyShapeOp.build(x, [2, 3]).result.type)
'tensor<?x3xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType

from .base import ConstantOp, TensorOp, op_errors
from .shape_ops import shape_vector
from .typing import tensor_of


@register_op
class SpecifyShapeOp(TensorOp):
    """``tensor.specify_shape(x, shape)``: ``x``, checked to have ``shape`` when it runs."""

    name = "tensor.specify_shape"
    assembly_format = "$input `(` $shape `)` attr-dict : functional-type(operands, results)"
    input = operand(AnyTensor)
    shape = operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, x: Value, shape, location=None) -> "SpecifyShapeOp":
        """``shape`` is a rank-1 integer Value or a sequence of ints and rank-0 integer Values."""
        shape = shape_vector(shape, location)
        with op_errors(cls.name):
            _check_shape_operand(tensor_of(x), shape)
        return cls.create([x, shape], [x.type], location=location)

    def inferred_type(self):
        _check_shape_operand(self.input.type, self.shape)
        return self.input.type

    def grad(self, output_grads):
        return [output_grads[0], None]


def _check_shape_operand(xt: TensorType, shape: Value) -> None:
    """The shape operand has one entry per dimension, and a constant one agrees with the sizes
    the input's type knows."""
    st = shape.type
    if not isinstance(st, TensorType) or st.rank != 1 or st.shape[0] is None:
        raise VerifyError(f"the shape must be a vector of static length, got {st}")
    if st.shape[0] != xt.rank:
        raise VerifyError(f"the shape has {st.shape[0]} entries for a tensor of rank {xt.rank}")
    owner = getattr(shape, "op", None)
    if isinstance(owner, ConstantOp):
        given = [int(s) for s in owner.attributes["value"].array.reshape(-1)]
        for d, (static, size) in enumerate(zip(xt.shape, given)):
            if static is not None and static != size:
                raise VerifyError(f"dimension {d} of the input has size {static}, the shape "
                                  f"says {size}")


@INTERPRETER.register(SpecifyShapeOp)
def _specify_shape(interp, op, args):
    x, shape = args
    expected = tuple(int(s) for s in np.asarray(shape).reshape(-1))
    if np.shape(x) != expected:
        raise ValueError(f"the shape {np.shape(x)} of the input differs from the specified shape "
                         f"{expected}")
    return [x]
