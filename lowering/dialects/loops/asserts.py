"""``loops.assert``: a run-time check that stops the function with an error.

``loops.assert %ok, "message" {error_code = 3 : i64}``; the generic form is
``"loops.assert"(%ok) {error_code = 3 : i64, message = "..."} : (i1) -> ()``.

When ``%ok`` is false the function stops: the interpreter raises ``RuntimeCheckError`` (a
``ValueError``) or, with ``kind = "index"``, ``RuntimeIndexError`` (an ``IndexError``), whose
message is exactly ``message``; a compiled function returns ``error_code`` (never 0, which means
success) from its entry, and the caller raises the error the code stands for. The message names
the failing op, the user's source line and the shapes involved, so it is ready for the user.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import I1
>>> (ok,) = Block([I1]).args
>>> op = AssertOp.build(ok, "tensor.add at a.py:3:1: shapes differ", error_code=2)
>>> op.message, op.error_code, op.kind
('tensor.add at a.py:3:1: shapes differ', 2, 'value')
"""
from __future__ import annotations

from lowering.ir.attributes import IntAttr, StringAttr
from lowering.ir.constraints import Bool, EnumAttr
from lowering.ir.core import Operation, VerifyError, attr, operand, register_op
from lowering.ir.interpreter import INTERPRETER, InterpreterError
from lowering.ir.types import I1, I64


# The Python exception each kind of failed check raises (the compiled entry returns the code).
ASSERT_KINDS = ("value", "index")


class RuntimeCheckError(InterpreterError, ValueError):
    """A failed ``loops.assert`` (kind ``value``): the message names the op and the user's line."""

    def __init__(self, message: str, op=None, error_code: int = 0):
        super().__init__(message, op)
        self.error_code = error_code


class RuntimeIndexError(RuntimeCheckError, IndexError):
    """A failed ``loops.assert`` of kind ``index``: an index out of range."""


@register_op
class AssertOp(Operation):
    """Stops the function with ``message`` (and ``error_code`` in compiled code) when the
    ``i1`` condition is false."""

    name = "loops.assert"
    assembly_format = "$condition, $message attr-dict"
    condition = operand(Bool)
    message = attr(StringAttr)
    error_code = attr(IntAttr)
    kind = attr(EnumAttr(ASSERT_KINDS), default="value")

    @classmethod
    def infer_operand_types(cls, known, counts):
        return {"condition": [I1]}

    @classmethod
    def build(cls, condition, message: str, error_code: int, kind: str = "value",
              location=None) -> "AssertOp":
        attributes = {"message": StringAttr(message), "error_code": IntAttr(error_code)}
        if kind != "value":
            attributes["kind"] = StringAttr(kind)
        return cls.create(operands=[condition], attributes=attributes, location=location)

    def verify_(self):
        # A range of values, not a type: no constraint says it.
        code = self.attributes["error_code"]
        if code.type != I64 or code.data < 1:
            raise VerifyError(f"{self.name}: error_code must be a positive i64 (0 means "
                              f"success), got {code}", self)


@INTERPRETER.register(AssertOp)
def _assert(interp, op, args):
    if not bool(args[0]):
        error = RuntimeIndexError if op.kind == "index" else RuntimeCheckError
        raise error(op.message, op, op.error_code)
    return []
