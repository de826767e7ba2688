"""Modules, functions, returns and calls.

>>> from lowering.ir.types import F32, TensorType
>>> t = TensorType((None,), F32)
>>> f = FuncOp.build("f", [t], [t])
>>> ret = f.body.block.append(ReturnOp.create([f.args[0]]))
>>> m = ModuleOp.build([f])
>>> m.lookup("f") is f
True
"""
from __future__ import annotations

from lowering.ir.attributes import StringAttr, TypeAttr
from lowering.ir.core import (ISOLATED, SYMBOL, TERMINATOR, Block, Operation, Region, VerifyError,
                              attr, region, register_op, var_operand, var_result)
from lowering.ir.types import FunctionType


@register_op
class ModuleOp(Operation):
    """The top-level container of functions."""

    name = "builtin.module"
    traits = frozenset({ISOLATED})
    body = region()
    sym_name = attr(StringAttr, default=None)

    @staticmethod
    def build(ops=(), location=None) -> "ModuleOp":
        block = Block(ops=ops)
        return ModuleOp.create(regions=[Region([block])], location=location)

    @property
    def functions(self) -> list["FuncOp"]:
        return [op for op in self.body.block.ops if isinstance(op, FuncOp)]

    def lookup(self, name: str) -> Operation | None:
        for op in self.body.block.ops:
            if op.get_attr("sym_name") == name:
                return op
        return None

    def verify_(self):
        if len(self.body.blocks) != 1 or self.body.block.args:
            raise VerifyError("a module has one block without arguments", self)
        names = [op.get_attr("sym_name") for op in self.body.block.ops if SYMBOL in op.traits]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise VerifyError(f"symbol defined twice: {', '.join(sorted(dup))}", self)


@register_op
class FuncOp(Operation):
    """A function: one entry block whose arguments are the inputs; ``func.return`` ends it."""

    name = "func.func"
    traits = frozenset({ISOLATED, SYMBOL})
    body = region()
    sym_name = attr(StringAttr)
    function_type = attr(TypeAttr)

    @staticmethod
    def build(name: str, input_types, result_types, location=None) -> "FuncOp":
        ftype = FunctionType(tuple(input_types), tuple(result_types))
        block = Block(ftype.inputs)
        return FuncOp.create(attributes={"sym_name": StringAttr(name), "function_type": TypeAttr(ftype)},
                             regions=[Region([block])], location=location)

    @property
    def args(self):
        return self.body.block.args

    def verify_(self):
        ftype = self.function_type
        if not isinstance(ftype, FunctionType):
            raise VerifyError("function_type must be a function type", self)
        block = self.body.block
        if [a.type for a in block.args] != list(ftype.inputs):
            raise VerifyError("entry block argument types differ from function_type inputs", self)
        term = block.last_op
        if not isinstance(term, ReturnOp):
            raise VerifyError("a function must end with func.return", self)
        if [v.type for v in term.operands] != list(ftype.results):
            raise VerifyError("func.return operand types differ from function_type results", term)


@register_op
class ReturnOp(Operation):
    """Returns the function's results."""

    name = "func.return"
    traits = frozenset({TERMINATOR})
    values = var_operand()


@register_op
class CallOp(Operation):
    """Calls a function of the same module by name."""

    name = "func.call"
    args = var_operand()
    outs = var_result()
    callee = attr(StringAttr)
