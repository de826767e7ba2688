"""The test dialect: small ops with one property each, shared by the tests of the IR machinery
(parser, printer, verifier, rewriter, passes), as xDSL's ``dialects/test.py``.

It is not a default dialect: a test loads ``DIALECT`` into a ``Context`` of its own
(``new_context()``, the pytest fixture ``test_context``, or ``lowering-opt --load-dialect test``),
so the default context never knows these ops. The ops:

- ``test.op`` (``GenericOp``): any operands, results, attributes and regions, and unknown side
  effects: never erased, merged or moved. Printed in the generic form.
- ``test.pure`` (``PureOp``): the same, but pure: erased when unused, merged with its twins.
- ``test.isolated`` (``IsolatedOp``): like ``test.op``, with regions that cannot see the values
  around it.
- ``test.constant`` (``ConstantOp``): a pure constant, ``value`` an integer attribute; it folds
  to its value and materializes folded values.
- ``test.add`` (``AddOp``): pure; folds constants and ``x + 0``; pretty form
  ``test.add %a, %b : i64``.
- ``test.mul`` (``MulOp``): pure and commutative; folds constants; its canonicalization pattern
  ``mul_by_one`` rewrites ``x * 1`` to ``x``.
- ``test.yield`` (``YieldOp``): a terminator, any operands.
- ``test.exp_without_loops`` (``ExpWithoutLoopsOp``): ``tensor.exp`` under another name, for
  tests of a layer that declares an op it cannot handle.
- ``test.checked`` (``CheckedOp``): like ``test.op``, and fails verification, with the message
  of its ``error`` attribute, when it has one.

>>> from lowering.ir.context import default_context
>>> from lowering.ir.parser import parse_module
>>> context = new_context()
>>> module = parse_module('%0 = test.constant 2\\n%1 = test.add %0, %0 : i64', context=context)
>>> [op.name for op in module.body.block.ops], "test.add" in default_context().ops
(['test.constant', 'test.add'], False)
"""
from __future__ import annotations

from lowering.dialects.tensor import ExpOp as TensorExpOp
from lowering.ir.attributes import IntAttr
from lowering.ir.context import Context, Dialect
from lowering.ir.core import (COMMUTATIVE, ISOLATED, PURE, TERMINATOR, Operation, VerifyError,
                              attr, operand, register_op, result, var_operand, var_result)
from lowering.ir.patterns import rewrite_pattern
from lowering.ir.types import I64


class _AnyShapeOp(Operation):
    """Any number of operands, results and regions, any attributes."""
    ins = var_operand()
    outs = var_result()

    def verify_structure(self) -> None:
        """Nothing to count: every shape of op is allowed."""


@register_op
class GenericOp(_AnyShapeOp):
    """``test.op``: anything, with unknown side effects."""
    name = "test.op"


@register_op
class PureOp(_AnyShapeOp):
    """``test.pure``: anything, without side effects."""
    name = "test.pure"
    traits = frozenset({PURE})


@register_op
class IsolatedOp(_AnyShapeOp):
    """``test.isolated``: anything; its regions do not see the values defined around it."""
    name = "test.isolated"
    traits = frozenset({ISOLATED})


@register_op
class CheckedOp(_AnyShapeOp):
    """``test.checked``: fails verification with the message of its ``error`` attribute."""
    name = "test.checked"

    def verify_(self) -> None:
        if "error" in self.attributes:
            raise VerifyError(self.attributes["error"].value, self)


@register_op
class YieldOp(Operation):
    """``test.yield``: ends a block, passing out its operands."""
    name = "test.yield"
    traits = frozenset({TERMINATOR, PURE})
    values = var_operand()


@register_op
class ConstantOp(Operation):
    """``test.constant 3`` (an ``i64``, or ``test.constant 3 : i8``): folds to its value."""
    name = "test.constant"
    traits = frozenset({PURE})
    value = attr(IntAttr)
    out = result()

    @classmethod
    def build(cls, value: int, type=I64, location=None) -> "ConstantOp":
        return cls.create(result_types=[type], attributes={"value": IntAttr(value)},
                          location=location)

    def fold(self):
        return [self.attributes["value"]]

    @classmethod
    def materialize_constant(cls, attribute, type, location):
        return cls.create(result_types=[type], attributes={"value": attribute}, location=location)

    def print_pretty(self, printer):
        printer.write(f" {self.value}")
        if self.out.type != I64:
            printer.write(" : ")
            printer.print_type(self.out.type)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        value = parser.parse_integer()
        type = parser.parse_type() if parser.accept(":") else I64
        return cls.build(value, type, parser.op_location)


class _BinaryOp(Operation):
    """Two operands and a result of one type: ``test.add %a, %b : i64``."""
    traits = frozenset({PURE})
    lhs = operand()
    rhs = operand()
    out = result()

    materialize_constant = ConstantOp.materialize_constant

    @classmethod
    def build(cls, lhs, rhs, location=None) -> "_BinaryOp":
        return cls.create([lhs, rhs], [lhs.type], location=location)

    def constant_operands(self) -> list:
        """The operands' constant values (None where not a ``test.constant``)."""
        return [v.owner.value if isinstance(v.owner, ConstantOp) else None for v in self.operands]

    def print_pretty(self, printer):
        printer.write(" ")
        printer.print_operands(self.operands)
        printer.write(" : ")
        printer.print_type(self.out.type)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        refs = parser.parse_operand_list()
        parser.expect(":")
        kind = parser.parse_type()
        return cls.create(parser.resolve_operands(refs, [kind, kind]), [kind],
                          location=parser.op_location)


@register_op
class AddOp(_BinaryOp):
    """``test.add``: folds constants, and ``x + 0`` to ``x``."""
    name = "test.add"

    def fold(self):
        lhs, rhs = self.constant_operands()
        if lhs is not None and rhs is not None:
            return [IntAttr(lhs + rhs)]
        return [self.lhs] if rhs == 0 else None


@register_op
class MulOp(_BinaryOp):
    """``test.mul``: commutative; folds constants; canonicalizes ``x * 1`` to ``x``."""
    name = "test.mul"
    traits = frozenset({PURE, COMMUTATIVE})

    def fold(self):
        lhs, rhs = self.constant_operands()
        return None if lhs is None or rhs is None else [IntAttr(lhs * rhs)]

    @classmethod
    def canonicalization_patterns(cls):
        return [mul_by_one]


@register_op
class ExpWithoutLoopsOp(TensorExpOp):
    """``test.exp_without_loops``: computes ``tensor.exp``; a test declares a layer unable to
    handle it."""
    name = "test.exp_without_loops"


@rewrite_pattern(MulOp)
def mul_by_one(op, rewriter):
    """``x * 1`` -> ``x``."""
    if op.constant_operands()[1] != 1:
        return False
    rewriter.replace_op(op, [op.lhs])
    return True


DIALECT = Dialect.of_package("test", __name__)


def new_context() -> Context:
    """A new context with the default dialects and this one.

    >>> new_context().lookup_op("test.op") is GenericOp
    True
    """
    context = Context()
    context.load_dialect(DIALECT)
    return context
