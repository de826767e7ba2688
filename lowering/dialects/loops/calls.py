"""``loops.call``: a call to an external symbol such as a BLAS routine.

``"loops.call"(%n, %x, %one, %y, %one) {callee = @cblas_sdot} : (index, !loops.buffer<?xf32>,
index, !loops.buffer<?xf32>, index) -> f32``

Arguments are buffers and scalars, results are scalars; how each is passed is the convention in
``externals``. A callee registered there is checked against its signature; any other symbol is
left for the backend to resolve (and the interpreter cannot run it).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, INDEX
>>> from .types import BufferType
>>> b = Block([INDEX, BufferType((None,), F32)])
>>> n, x = b.args
>>> call = CallOp.build("cblas_sdot", [n, x, n, x, n], [F32])
>>> str(call.attributes["callee"]), str(call.results[0].type)
('@cblas_sdot', 'f32')
"""
from __future__ import annotations

from lowering.ir.attributes import StringAttr, SymbolRefAttr
from lowering.ir.constraints import AnyOf, AnyScalar
from lowering.ir.core import Operation, VerifyError, attr, register_op, var_operand, var_result
from lowering.ir.interpreter import INTERPRETER, InterpreterError
from lowering.ir.types import FunctionType

from .externals import EXTERNAL_FUNCTIONS, param_accepts
from .constraints import AnyBuffer
from .runtime import as_buffer
from .types import BufferType


@register_op
class CallOp(Operation):
    """Calls external symbol ``callee`` with buffer and scalar arguments."""

    name = "loops.call"
    assembly_format = "$callee `(` $args `)` attr-dict : functional-type($args, $outs)"
    args = var_operand(AnyOf(AnyBuffer, AnyScalar))
    outs = var_result(AnyScalar)
    callee = attr((SymbolRefAttr, StringAttr))

    @classmethod
    def build(cls, callee: str, args, result_types=(), location=None) -> "CallOp":
        return cls.create(operands=list(args), result_types=list(result_types),
                          attributes={"callee": SymbolRefAttr(callee)}, location=location)

    def verify_(self):
        if len(self.outs) > 1:
            raise VerifyError(f"{self.name}: an external function returns at most one value, "
                              f"got {len(self.outs)} results", self)
        known = EXTERNAL_FUNCTIONS.get(self.callee)
        if known is None:
            return
        results = [r.type for r in self.outs]
        if len(self.args) != len(known.params) or results != list(known.results):
            raise VerifyError(f"{self.name}: {self.callee} takes {len(known.params)} argument(s) "
                              f"and returns ({', '.join(map(str, known.results))}): "
                              f"{known.signature()}", self)
        for index, (v, param) in enumerate(zip(self.args, known.params)):
            if not param_accepts(param, v.type):
                raise VerifyError(f"{self.name}: argument #{index} of {self.callee} must be "
                                  f"{param}, got {v.type}", self)


@INTERPRETER.register(CallOp)
def _call(interp, op, args):
    known = EXTERNAL_FUNCTIONS.get(op.callee)
    if known is None:
        raise InterpreterError(f"{op.name} at {op.location.short()}: external symbol "
                               f"'{op.callee}' has no reference implementation", op)
    values = [as_buffer(a, v.type, f"argument #{i}") if isinstance(v.type, BufferType) else a
              for i, (a, v) in enumerate(zip(args, op.args))]
    return list(known.implementation(*values))
