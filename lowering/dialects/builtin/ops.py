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
from lowering.ir.constraints import AnyFunctionType, TypeAttrOf
from lowering.ir.core import (ISOLATED, SYMBOL, TERMINATOR, Block, Operation, Region, VerifyError,
                              attr, region, register_op, var_operand, var_result)
from lowering.ir.traits import SYMBOL_TABLE
from lowering.ir.types import FunctionType


def print_function(op: Operation, printer) -> bool | None:
    """The pretty form of a function op (``func.func``, ``gpu.func``), which names its arguments
    in its signature: ``@f(%x: t) -> t [attributes {...}] { ops }``; without blocks, a
    declaration ``@f(t) -> t``."""
    name, ftype = op.attributes.get("sym_name"), op.attributes.get("function_type")
    if (len(op.regions) != 1 or not isinstance(name, StringAttr)
            or not isinstance(ftype, TypeAttr) or not isinstance(ftype.data, FunctionType)):
        return False
    body, ftype = op.regions[0], ftype.data
    if body.blocks and [a.type for a in body.block.args] != list(ftype.inputs):
        return False
    printer.write(" ")
    printer.print_symbol(name.data)
    printer.write("(")
    if body.blocks:
        printer.print_list(body.block.args, printer.print_block_arg)
    else:
        printer.print_types(ftype.inputs)
    printer.write(")")
    if ftype.results:
        printer.write(" -> " + printer.results_text(ftype.results))
    printer.print_attr_dict({k: v for k, v in op.attributes.items()
                             if k not in ("sym_name", "function_type")}, keyword=True)
    if body.blocks:
        printer.write(" ")
        printer.print_region(body, print_entry_block_args=False)
    return None


def parse_function(cls: type[Operation], parser, num_results: int) -> Operation:
    """Read what ``print_function`` writes and create a ``cls`` op."""
    name = parser.parse_symbol()
    args_at = parser.position()
    args = parser.parse_comma_list(
        lambda: parser.parse_block_arg() if parser.peek_kind() == "value"
        else (None, parser.parse_type()))
    results = parser.parse_result_types() if parser.accept("->") else []
    attrs = parser.parse_optional_attr_dict(keyword="attributes")
    ftype = FunctionType(tuple(t for _, t in args), tuple(results))
    if parser.at("{"):
        if any(ref is None for ref, _ in args):
            parser.error("a function with a body names its arguments: (%x: type, ...)", args_at)
        body = parser.parse_region(entry_args=args)
    else:
        body = Region()  # a declaration
    attrs = {"sym_name": StringAttr(name), "function_type": TypeAttr(ftype), **attrs}
    return cls.create(attributes=attrs, regions=[body], location=parser.op_location)


@register_op
class ModuleOp(Operation):
    """The top-level container of functions."""

    name = "builtin.module"
    traits = frozenset({ISOLATED, SYMBOL_TABLE})
    assembly_format = "(symbol($sym_name)^)? attr-dict-with-keyword $body"
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


@register_op
class FuncOp(Operation):
    """A function: one entry block whose arguments are the inputs; ``func.return`` ends it."""

    name = "func.func"
    traits = frozenset({ISOLATED, SYMBOL})
    body = region()
    sym_name = attr(StringAttr)
    function_type = attr(TypeAttrOf(AnyFunctionType))

    @staticmethod
    def build(name: str, input_types, result_types, location=None) -> "FuncOp":
        ftype = FunctionType(tuple(input_types), tuple(result_types))
        block = Block(ftype.inputs)
        return FuncOp.create(attributes={"sym_name": StringAttr(name), "function_type": TypeAttr(ftype)},
                             regions=[Region([block])], location=location)

    @property
    def args(self):
        return self.body.block.args

    print_pretty = print_function
    parse_pretty = classmethod(parse_function)

    def verify_(self):
        ftype = self.function_type
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
    assembly_format = "attr-dict ($values^ : type($values))?"
    traits = frozenset({TERMINATOR})
    values = var_operand()


@register_op
class CallOp(Operation):
    """Calls a function of the same module by name."""

    name = "func.call"
    assembly_format = "symbol($callee) `(` $args `)` attr-dict : functional-type($args, $outs)"
    args = var_operand()
    outs = var_result()
    callee = attr(StringAttr)
