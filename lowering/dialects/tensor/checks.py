"""``tensor.check``: an array passed through once a run-time condition on it holds.

``%q = tensor.check %p if %ok, "p must be in [0, 1]" : tensor<?xf64>, tensor<i1>`` is ``%p`` when
the rank-0 ``i1`` ``%ok`` is true and stops the function otherwise, with the message, the op and
the user's line (``tensor.check at model.py:12:5: p must be in [0, 1]``). The front end uses it
for arguments whose values are known only when the function runs (a symbolic probability), so the
call fails before any shared variable is updated. Bufferize lowers it to a ``loops.assert``; the
result is the input's buffer.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, I1, TensorType
>>> p, ok = Block([TensorType((None,), F64), TensorType((), I1)]).args
>>> str(CheckOp.build(p, ok, "p must be in [0, 1]").result.type)
'tensor<?xf64>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import StringAttr
from lowering.ir.constraints import AnyTensor, ConstraintVar, TensorOf
from lowering.ir.core import Value, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import I1

from .base import TensorOp

_SAME = ConstraintVar("T", AnyTensor)


@register_op
class CheckOp(TensorOp):
    """``input`` once ``condition`` holds; a run-time error with ``message`` otherwise."""

    name = "tensor.check"
    assembly_format = "$input `if` $condition `,` $message attr-dict : type($input, $condition)"
    input = operand(_SAME)
    condition = operand(TensorOf(I1, rank=0))
    message = attr(StringAttr)
    result = result(_SAME)

    @classmethod
    def build(cls, input: Value, condition: Value, message: str, location=None) -> "CheckOp":
        return cls.create([input, condition], [input.type], {"message": StringAttr(message)},
                          location=location)

    @classmethod
    def infer_result_types(cls, operand_types, attributes):
        return [operand_types[0]]

    def grad(self, output_grads):
        return [output_grads[0], None]


@INTERPRETER.register(CheckOp)
def _check(interp, op, args):
    if not bool(np.asarray(args[1])):
        raise ValueError(op.message)
    return [np.asarray(args[0])]


__all__ = ["CheckOp"]
