"""``loops.constant``: a read-only buffer holding constant data (a global in compiled code).

``%c = "loops.constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> !loops.buffer<3xi64>``

The result is contiguous with offset 0 and exactly the value's shape and element type. Nothing may
write into it or free it: a backend places the data in read-only memory once per module, and the
interpreter hands out a read-only array (a store into it is an error).

>>> import numpy as np
>>> op = ConstantOp.build(np.arange(3, dtype=np.int64))
>>> str(op.result.type)
'!loops.buffer<3xi64>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import DenseAttr
from lowering.ir.core import PURE, Operation, VerifyError, attr, register_op, result
from lowering.ir.interpreter import INTERPRETER

from .types import BufferType


@register_op
class ConstantOp(Operation):
    """A read-only buffer with the data of a dense attribute."""

    name = "loops.constant"
    assembly_format = "$value attr-dict"
    traits = frozenset({PURE})
    value = attr(DenseAttr)
    result = result()

    @classmethod
    def infer_result_types(cls, operand_types, attributes) -> list[BufferType]:
        """The result type the assembly format leaves out: the value's, as a buffer."""
        dense = attributes["value"]
        return [BufferType(tuple(dense.array.shape), dense.type.element)]

    @classmethod
    def build(cls, array, location=None) -> "ConstantOp":
        dense = DenseAttr.from_array(np.asarray(array))
        t = BufferType(tuple(dense.array.shape), dense.type.element)
        return cls.create(result_types=[t], attributes={"value": dense}, location=location)

    def verify_(self):
        t = self.result.type
        dense = self.attributes["value"]
        want = BufferType(tuple(dense.array.shape), dense.type.element)
        if t != want:
            raise VerifyError(f"{self.name}: result type {t} should be {want} (the value's exact "
                              f"shape and element type, contiguous)", self)


@INTERPRETER.register(ConstantOp)
def _constant(interp, op, args):
    return [op.attributes["value"].elements(op)]  # read-only: a store into it raises
