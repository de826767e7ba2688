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


@register_op
class ModuleOp(Operation):
    """The top-level container of functions."""

    name = "builtin.module"
    traits = frozenset({ISOLATED, SYMBOL_TABLE})
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

    def print_pretty(self, printer):
        """``module [@name] [attributes {...}] { ops }``."""
        if len(self.regions) != 1 or len(self.regions[0].blocks) != 1 or self.regions[0].block.args:
            return False
        name = self.attributes.get("sym_name")
        if name is not None and not isinstance(name, StringAttr):
            return False
        if name is not None:
            printer.write(" ")
            printer.print_symbol(name.data)
        printer.print_attr_dict({k: v for k, v in self.attributes.items() if k != "sym_name"},
                                keyword=True)
        printer.write(" ")
        printer.print_region(self.regions[0], print_entry_block_args=False)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        attrs = {}
        if parser.peek_kind() == "symbol":
            attrs["sym_name"] = StringAttr(parser.parse_symbol())
        attrs.update(parser.parse_optional_attr_dict(keyword="attributes"))
        body = parser.parse_region(entry_args=[])
        return cls.create(attributes=attrs, regions=[body], location=parser.op_location)

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

    def print_pretty(self, printer):
        """``func.func @f(%x: t) -> t [attributes {...}] { ops }``; without blocks, a declaration
        ``func.func @f(t) -> t``."""
        name, ftype = self.attributes.get("sym_name"), self.attributes.get("function_type")
        if (len(self.regions) != 1 or not isinstance(name, StringAttr)
                or not isinstance(ftype, TypeAttr) or not isinstance(ftype.data, FunctionType)):
            return False
        body, ftype = self.regions[0], ftype.data
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
        printer.print_attr_dict({k: v for k, v in self.attributes.items()
                                 if k not in ("sym_name", "function_type")}, keyword=True)
        if body.blocks:
            printer.write(" ")
            printer.print_region(body, print_entry_block_args=False)

    @classmethod
    def parse_pretty(cls, parser, num_results):
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
    traits = frozenset({TERMINATOR})
    values = var_operand()

    def print_pretty(self, printer):
        """``func.return %0, %1 : t0, t1``."""
        # Followed by another op, a bare ``func.return`` would read that op's results as operands.
        if self.attributes or self.regions or self.results or self.next_op is not None:
            return False
        if self.operands:
            printer.write(" ")
            printer.print_operands(self.operands)
            printer.write(" : ")
            printer.print_types(v.type for v in self.operands)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        refs = parser.parse_operand_list()
        if not refs:
            return cls.create([], location=parser.op_location)
        parser.expect(":", "before the types of the returned values")
        types_at = parser.position()
        types = parser.parse_type_list()
        return cls.create(parser.resolve_operands(refs, types, types_at),
                          location=parser.op_location)


@register_op
class CallOp(Operation):
    """Calls a function of the same module by name."""

    name = "func.call"
    args = var_operand()
    outs = var_result()
    callee = attr(StringAttr)
