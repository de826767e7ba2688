"""``scalar.linear_index``: where the current element lies in the iteration space of the fused
body holding the op (as MLIR's ``linalg.index``, flattened).

Elementwise ops compute an element from the elements of their operands; a counter-based random
draw also needs the element's position, and this op gives it, in row-major order, as ``ui64``.
The interpreter of ``tensor.fused`` binds it to the positions of the whole space; ``bufferize``
replaces it with the loop indices' row-major combination, so no code generator sees it.

>>> op = LinearIndexOp.build()
>>> str(op.result.type)
'ui64'
"""
from __future__ import annotations

from lowering.ir.constraints import Is
from lowering.ir.core import PURE, Operation, register_op, result
from lowering.ir.interpreter import INTERPRETER, InterpreterError
from lowering.ir.types import UI64


@register_op
class LinearIndexOp(Operation):
    """The row-major position of the current element of the enclosing fused body's space."""

    name = "scalar.linear_index"
    assembly_format = "attr-dict : type($result)"
    traits = frozenset({PURE})
    result = result(Is(UI64))

    @classmethod
    def build(cls, location=None) -> "LinearIndexOp":
        return cls.create(result_types=[UI64], location=location)


@INTERPRETER.register(LinearIndexOp)
def _linear_index(interp, op, args):
    # The fused op's interpreter binds the positions before it runs the body.
    if op.result not in interp.env:
        raise InterpreterError("scalar.linear_index is only defined in the body of tensor.fused")
    return [interp.env[op.result]]
