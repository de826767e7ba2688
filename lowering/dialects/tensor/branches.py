"""``tensor.if``: choose between two computations by a scalar condition, running only one.

The op takes a rank-0 ``condition`` (any element type: zero is false, anything else true, as in
Theano's ``ifelse``) and ``inputs``; each of its two regions is one block whose arguments are
the inputs (the regions are isolated: what a branch reads comes in as an input) and which ends
with ``tensor.yield`` of the results. The front end builds the op with branches that only yield
their inputs (``build``); moving the ops that only one branch needs into it
(``lowering.dialects.tensor.branch_sinking``) is what makes that branch's work happen only
when it is taken::

    %r = tensor.if %c, %x, %y : tensor<i8>, (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
      %e = tensor.exp %a : tensor<?xf64>
      tensor.yield %e : tensor<?xf64>
    } else {
    ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
      tensor.yield %b : tensor<?xf64>
    }

A branch may yield a value whose type is more static than the result's (``tensor<3xf64>`` for
``tensor<?xf64>``); element types and ranks are the same. Attributes (``place-on-device``'s
``result_places``) print after the result types: ``-> tensor<?xf64> attributes {...} {``.

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.interpreter import Interpreter
>>> from lowering.ir.types import F64, I8, TensorType
>>> c, x, y = Block([TensorType((), I8), TensorType((None,), F64), TensorType((None,), F64)]).args
>>> op = IfOp.build(c, [x], [y])
>>> INTERPRETER.find(IfOp)(Interpreter(), op, [np.int8(0), np.ones(2), np.zeros(2)])
[array([0., 0.])]
"""
from __future__ import annotations

from lowering.ir.constraints import AnyTensor, TensorOf
from lowering.ir.core import (ISOLATED, PURE, TERMINATOR, Block, Region, Value, VerifyError,
                              operand, region, register_op, var_operand, var_result)
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.patterns import rewrite_pattern
from lowering.ir.traits import HAS_CANONICALIZATION_PATTERNS, HasParent, \
    add_canonicalization_pattern
from lowering.ir.types import TensorType

from .base import ConstantOp, TensorOp


def joined_type(a: TensorType, b: TensorType) -> TensorType:
    """The type of a value that is either of ``a`` or ``b`` (same element type and rank): a size
    stays static where both have it.

    >>> from lowering.ir.types import F32
    >>> str(joined_type(TensorType((3, 1), F32), TensorType((None, 1), F32)))
    'tensor<?x1xf32>'
    """
    return TensorType(tuple(p if p == q else None for p, q in zip(a.shape, b.shape)), a.element)


def fits(value_type, result_type) -> bool:
    """Whether a branch may yield a value of ``value_type`` for a result of ``result_type``."""
    return (isinstance(value_type, TensorType) and isinstance(result_type, TensorType)
            and value_type.element == result_type.element and value_type.rank == result_type.rank
            and all(r is None or r == v for v, r in zip(value_type.shape, result_type.shape)))


@register_op
class IfOp(TensorOp):
    """The results of ``then_region`` when ``condition`` is non-zero, else of ``else_region``;
    only that region runs (see the module docstring)."""

    name = "tensor.if"
    traits = frozenset({PURE, ISOLATED, HAS_CANONICALIZATION_PATTERNS})
    condition = operand(TensorOf(rank=0))
    inputs = var_operand(AnyTensor)
    outs = var_result(AnyTensor)
    then_region = region()
    else_region = region()

    @classmethod
    def build(cls, condition: Value, then_values, else_values, location=None) -> "IfOp":
        """The op choosing ``then_values`` or ``else_values`` (one per result, pairwise of the
        same element type and rank): both are inputs, each branch yields its own."""
        then_values, else_values = list(then_values), list(else_values)
        if len(then_values) != len(else_values):
            raise VerifyError(f"tensor.if: {len(then_values)} value(s) for the then branch but "
                              f"{len(else_values)} for the else branch")
        for k, (a, b) in enumerate(zip(then_values, else_values)):
            if a.type.element != b.type.element or a.type.rank != b.type.rank:
                raise VerifyError(f"tensor.if: result {k} is {a.type} in the then branch but "
                                  f"{b.type} in the else branch")
        inputs = then_values + else_values
        n = len(then_values)
        blocks = [Block([v.type for v in inputs]) for _ in range(2)]
        blocks[0].append(YieldOp.build(blocks[0].args[:n]))
        blocks[1].append(YieldOp.build(blocks[1].args[n:]))
        types = [joined_type(a.type, b.type) for a, b in zip(then_values, else_values)]
        return cls.create(operands=[condition, *inputs], result_types=types,
                          regions=[Region([blocks[0]]), Region([blocks[1]])], location=location)

    @property
    def branches(self) -> tuple[Region, Region]:
        return self.then_region, self.else_region

    def yielded(self, branch: Region) -> list[Value]:
        """The values ``branch`` yields."""
        return list(branch.block.last_op.operands)

    def print_pretty(self, printer):
        """``tensor.if %c, %x : tensor<i1>, (tensor<?xf64>) -> tensor<?xf64> {...} else {...}``."""
        try:
            self.verify_structure()
        except VerifyError:
            return False
        if any(len(r.blocks) != 1 for r in self.branches):
            return False
        printer.write(" ")
        printer.print_operands(self.operands)
        printer.write(" : ")
        printer.print_type(self.condition.type)
        printer.write(", (")
        printer.print_types(v.type for v in self.inputs)
        printer.write(") -> " + printer.results_text(r.type for r in self.outs))
        printer.print_attr_dict(self.attributes, keyword=True)
        printer.write(" ")
        printer.print_region(self.then_region)
        printer.write(" else ")
        printer.print_region(self.else_region)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        refs = [parser.parse_operand()]
        while parser.accept(","):
            refs.append(parser.parse_operand())
        parser.expect(":", "before the types of tensor.if")
        condition_type = parser.parse_type()
        parser.expect(",", "between the condition's type and the inputs' types")
        at = parser.position()
        input_types = parser.parse_result_types()
        if len(input_types) != len(refs) - 1:
            parser.error(f"{len(refs) - 1} input(s) but {len(input_types)} type(s)", at)
        parser.expect("->", "before the result types of tensor.if")
        types = parser.parse_result_types()
        attributes = parser.parse_optional_attr_dict("attributes")
        operands = parser.resolve_operands(refs, [condition_type, *input_types])
        then_region = parser.parse_region()
        parser.expect("else", "between the branches of tensor.if")
        else_region = parser.parse_region()
        return cls.create(operands=operands, result_types=types, attributes=attributes,
                          regions=[then_region, else_region], location=parser.op_location)

    def verify_(self):
        inputs = [v.type for v in self.inputs]
        results = [r.type for r in self.outs]
        for branch, which in ((self.then_region, "then"), (self.else_region, "else")):
            if len(branch.blocks) != 1:
                raise VerifyError(f"{self.name}: the {which} branch must be one block, got "
                                  f"{len(branch.blocks)}", self)
            block = branch.block
            if [a.type for a in block.args] != inputs:
                raise VerifyError(f"{self.name}: the {which} branch's arguments "
                                  f"({', '.join(str(a.type) for a in block.args)}) should be the "
                                  f"inputs' types ({', '.join(map(str, inputs))})", self)
            term = block.last_op
            if not isinstance(term, YieldOp):
                raise VerifyError(f"{self.name}: the {which} branch must end with tensor.yield",
                                  self)
            got = [v.type for v in term.values]
            if len(got) != len(results) or not all(map(fits, got, results)):
                raise VerifyError(f"tensor.yield: the {which} branch yields "
                                  f"({', '.join(map(str, got))}), which do not fit the results "
                                  f"({', '.join(map(str, results))})", term)

    def fold(self):
        return None  # a constant condition is the canonicalization pattern's (it inlines)

    def grad(self, output_grads):
        """Each branch input receives the gradient of the result it is yielded as when its
        branch is taken, zeros otherwise; the condition receives none. Only branches that
        yield their inputs (as the front end builds them) are differentiated."""
        from .gradutil import as_type
        grads: list = [None] * len(self.operands)
        for branch, taken in ((self.then_region, True), (self.else_region, False)):
            for value, g in zip(self.yielded(branch), output_grads):
                if g is None:
                    continue
                if value.owner is not branch.block:
                    raise VerifyError(f"{self.name}: differentiating a branch that computes "
                                      f"its results (not only yields its inputs) is not "
                                      f"supported; take the gradient before compiling", self)
                zeros = _zeros_like(g)
                pair = (g, zeros) if taken else (zeros, g)
                chosen = IfOp.build(self.condition, [pair[0]], [pair[1]]).results[0]
                position = value.index + 1
                target = self.operands[position].type
                if fits(chosen.type, TensorType(target.shape, chosen.type.element)):
                    # The operand's sizes where they are open (a gradient is typed as it is).
                    chosen = as_type(chosen, TensorType(target.shape, chosen.type.element))
                grads[position] = chosen if grads[position] is None else \
                    _add(grads[position], chosen)
        return grads


def _zeros_like(value: Value) -> Value:
    import numpy as np
    from .shape_ops import FillOp
    zero = ConstantOp.build(np.zeros((), dtype=value.type.dtype)).result
    return FillOp.build(value, zero).result


def _add(a: Value, b: Value) -> Value:
    from .elementwise import AddOp
    return AddOp.build(a, b).result


@register_op
class YieldOp(TensorOp):
    """Ends a branch of ``tensor.if``: the branch's results."""

    name = "tensor.yield"
    traits = frozenset({TERMINATOR, HasParent(IfOp)})
    assembly_format = "attr-dict ($values^ : type($values))?"
    values = var_operand(AnyTensor)

    @classmethod
    def build(cls, values=(), location=None) -> "YieldOp":
        return cls.create(operands=list(values), location=location)

    def verify_(self):
        pass  # the enclosing tensor.if checks what its branches yield

    def fold(self):
        return None


@INTERPRETER.register(IfOp)
def _if(interp, op, args):
    taken = op.then_region if bool(args[0] != 0) else op.else_region
    values = interp.run_region(taken, args[1:])
    return [v.astype(r.type.dtype, copy=False) if hasattr(v, "astype") else v
            for v, r in zip(values, op.outs)]


@rewrite_pattern(IfOp)
def inline_constant_condition(op: IfOp, rewriter) -> bool:
    """A condition that is a constant: the branch it takes, in place of the op (when what it
    yields has the results' types)."""
    owner = getattr(op.condition, "op", None)
    if not isinstance(owner, ConstantOp):
        return False
    taken = op.then_region if bool(owner.attributes["value"].array != 0) else op.else_region
    block = taken.block
    if [v.type for v in op.yielded(taken)] != [r.type for r in op.outs]:
        return False
    mapping: dict[Value, Value] = dict(zip(block.args, op.inputs))
    for inner in list(block.ops)[:-1]:
        rewriter.insert_op_before(inner.clone(mapping), op)
    rewriter.replace_op(op, [mapping.get(v, v) for v in op.yielded(taken)])
    return True


add_canonicalization_pattern(IfOp, inline_constant_condition)
