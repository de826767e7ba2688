"""Forward-mode rules (``R_OP``): the Jacobian-vector product of each tensor op.

``T.Rop`` walks a graph from the ``wrt`` variables to the outputs and, for each op, asks its rule
for the tangent of every result given the tangents of its operands (the "eval points" pushed
forward). A rule is ``rule(op, tangents) -> list`` with one tangent per result, each of exactly
that result's type or None (no dependence: integer results, or no tangent reached the op); the
tangents it gets have exactly their operands' types, or are None where none flows.

Every op class with a ``grad`` rule has a rule here (``scan``'s is in ``scan_rop.py``, those of
complex numbers in ``complex_rop.py``); a test checks it. They come in four forms:

- elementwise ops derive theirs from the partial derivatives their ``grad`` already uses:
  ``partials`` with an output gradient of ones gives each ``df/dx_i``, and the tangent is
  ``sum_i df/dx_i * v_i``, so one table of derivatives serves both modes;
- ops linear in some operands (shape ops, indexing, ``sum``, ``mean``, ``cast``) are applied to
  the tangents of those operands in place of the operands (``linear_in``);
- ``dot`` is bilinear: ``dot(va, b) + dot(a, vb)`` (``multilinear_in``); reductions that are
  not linear (``prod``, ``max``, ``min``) weigh the tangent by their gradient of ones and sum it
  over their axes;
- ``softmax`` and ``log_softmax`` have their closed forms.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> from .elementwise import SinOp
>>> x, v = Block([TensorType((3,), F64), TensorType((3,), F64)]).args
>>> op = SinOp.build(x)
>>> (t,) = R_OP.lookup(op)(op, [v])
>>> str(t.type)
'tensor<3xf64>'
"""
from __future__ import annotations

from lowering.ir.core import Operation, Value
from lowering.ir.rules import RuleTable

from .branches import IfOp
from .checks import CheckOp
from .complex import ComplexFromPolarOp, ComplexOp, ConjOp
from .complex_rop import complex_elementwise, from_polar, is_complex
from .conv import Conv2dOp
from .custom import CustomOp, custom_implementation
from .elementwise import (AddOp, CastOp, ElementwiseOp, Emitter, ExpOp, MulOp, SubOp)
from .grad_filter import GradFilterOp
from .gradutil import as_type, is_differentiable_type
from .indexing import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp, AdvancedSubtensorOp,
                       IncSubtensorOp, SetSubtensorOp, SubtensorOp)
from .linalg import DotOp
from .nnet import LogSoftmaxOp, SoftmaxOp
from .random import RandomOp
from .reduction import ArgMaxOp, ArgMinOp, MaxOp, MeanOp, MinOp, ProdOp, SumOp
from .scan import ScanOp
from .specify_shape import SpecifyShapeOp
from .shape_ops import (AllocOp, ArangeOp, ConcatenateOp, DimShuffleOp, FillOp, MakeVectorOp,
                        ReshapeOp, ShapeIOp, ShapeOp, scalar_constant, zeros_like)

R_OP = RuleTable("R-op", hint="forward-mode rules of tensor ops live in "
                              "lowering/dialects/tensor/rop.py")


def push_forward(op: Operation, tangents: list) -> list:
    """The tangents of ``op``'s results given those of its operands, by its rule; an op without
    one raises a ``VerifyError`` naming it and why.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> from .elementwise import NegOp
    >>> x, v = Block([TensorType((2,), F64), TensorType((2,), F64)]).args
    >>> [str(t.type) for t in push_forward(NegOp.build(x), [v])]
    ['tensor<2xf64>']
    """
    from lowering.ir.core import VerifyError
    from lowering.ir.location import default_location

    rule = R_OP.find(type(op))
    if rule is None:
        reason = R_OP.unsupported_reason(type(op)) or f"it has no rule; {R_OP.hint}"
        raise VerifyError(f"Rop: {op.name} (built at {op.location.short()}) cannot be "
                          f"differentiated in forward mode: {reason}", op)
    with default_location(op.location):
        return rule(op, tangents)


def _none(op: Operation, tangents) -> list:
    """Ops whose results carry no tangent: shapes, index ranges, argmax/argmin."""
    return [None] * len(op.results)


R_OP.register(ShapeOp, ShapeIOp, ArangeOp, ArgMaxOp, ArgMinOp)(_none)


def linear_in(*positions: int):
    """The rule of an op linear in the operands at ``positions`` (all operands when none are
    given): the same op applied to their tangents (zeros where one has none), the other operands
    unchanged."""

    def rule(op: Operation, tangents) -> list:
        linear = positions or tuple(range(len(op.operands)))
        if all(tangents[i] is None for i in linear) or not any(
                is_differentiable_type(r.type) for r in op.results):
            return [None] * len(op.results)
        operands = list(op.operands)
        for i in linear:
            operands[i] = tangents[i] if tangents[i] is not None else \
                zeros_like(op.operands[i], op.location)
        clone = type(op).create(operands=operands, result_types=[r.type for r in op.results],
                                attributes=dict(op.attributes), location=op.location)
        return list(clone.results)

    return rule


R_OP.register(DimShuffleOp, ReshapeOp, AllocOp, SubtensorOp, AdvancedSubtensorOp, SumOp,
              MeanOp, CastOp)(linear_in(0))
R_OP.register(FillOp)(linear_in(1))
R_OP.register(SetSubtensorOp, IncSubtensorOp, AdvancedSetSubtensorOp,
              AdvancedIncSubtensorOp)(linear_in(0, 1))
R_OP.register(MakeVectorOp, ConcatenateOp)(linear_in())


@R_OP.register(ElementwiseOp)
def _elementwise(op: ElementwiseOp, tangents) -> list:
    """``sum_i df/dx_i * v_i``, the partials taken from the op's gradient table."""
    if any(is_complex(v) for v in (*op.operands, *op.results)):
        return complex_elementwise(op, tangents, _as_result)
    if op.partials is None or not is_differentiable_type(op.result.type):
        return [None]
    emit = Emitter(op.location)
    parts = op.partials(emit, emit.const(1, op.result), *op.operands, op.result)
    parts = parts if isinstance(parts, (tuple, list)) else (parts,)
    total = None
    for part, tangent, operand in zip(parts, tangents, op.operands):
        if part is None or tangent is None or not is_differentiable_type(operand.type):
            continue
        term = emit.mul(part, tangent)
        total = term if total is None else emit.add(total, term)
    if total is None:
        return [None]
    return [_as_result(total, op.result, op.location)]


def _as_result(value: Value, result: Value, location) -> Value:
    """``value`` broadcast to ``result``'s shape (a tangent may vary along fewer dims than the
    result when only a broadcast operand has one) and given ``result``'s type."""
    if value.type.shape != result.type.shape:
        value = FillOp.build(result, value, location=location).result
    return as_type(value, result.type, location)


def multilinear_in(*positions: int):
    """The rule of an op linear in each operand at ``positions`` separately (``dot``, a
    convolution in its input and its filters): the sum, over those with a tangent, of the op
    with that one operand replaced by its tangent (``dot(va, b) + dot(a, vb)``)."""

    def rule(op: Operation, tangents) -> list:
        if not any(is_differentiable_type(r.type) for r in op.results):
            return [None] * len(op.results)
        totals: list = [None] * len(op.results)
        for i in positions:
            if tangents[i] is None:
                continue
            operands = list(op.operands)
            operands[i] = tangents[i]
            clone = type(op).create(operands=operands, result_types=[r.type for r in op.results],
                                    attributes=dict(op.attributes), location=op.location)
            totals = [r if t is None else AddOp.build(t, r, location=op.location).result
                      for t, r in zip(totals, clone.results)]
        return [None if t is None else as_type(t, r.type, op.location)
                for t, r in zip(totals, op.results)]

    return rule


R_OP.register(DotOp)(multilinear_in(0, 1))


@R_OP.register(ProdOp, MaxOp, MinOp)
def _weighted_reduction(op, tangents) -> list:
    """``sum(df/dx * v)`` over the reduced axes, ``df/dx`` being the op's gradient of ones
    (each result element depends only on the elements reduced into it)."""
    (v,), loc = tangents, op.location
    if v is None or not is_differentiable_type(op.result.type):
        return [None]
    (slope,) = op.grad([_ones_like(op.result, loc)])
    if is_complex(slope):  # the gradient's factor is conj(d prod / dx)
        slope = ConjOp.build(slope, location=loc).result
    weighted = MulOp.build(slope, v, location=loc).result
    total = SumOp.build(weighted, axes=list(op.axes), keepdims=bool(op.keepdims),
                        location=loc).result
    return [as_type(total, op.result.type, loc)]


def _ones_like(like: Value, location) -> Value:
    one = scalar_constant(1, like.type.element, location)
    return FillOp.build(like, one, location=location).result


@R_OP.register(SoftmaxOp)
def _softmax(op: SoftmaxOp, tangents) -> list:
    """``y * (v - sum(v * y, axis))``."""
    (v,), y, loc = tangents, op.result, op.location
    if v is None:
        return [None]
    vy = MulOp.build(v, y, location=loc).result
    total = SumOp.build(vy, axes=[op.normalized_axis], keepdims=True, location=loc).result
    out = MulOp.build(y, SubOp.build(v, total, location=loc).result, location=loc).result
    return [as_type(out, y.type, loc)]


@R_OP.register(LogSoftmaxOp)
def _log_softmax(op: LogSoftmaxOp, tangents) -> list:
    """``v - sum(exp(y) * v, axis)``."""
    (v,), y, loc = tangents, op.result, op.location
    if v is None:
        return [None]
    weighted = MulOp.build(ExpOp.build(y, location=loc).result, v, location=loc).result
    total = SumOp.build(weighted, axes=[op.normalized_axis], keepdims=True, location=loc).result
    return [as_type(SubOp.build(v, total, location=loc).result, y.type, loc)]


@R_OP.register(GradFilterOp)
def _grad_filter(op: GradFilterOp, tangents) -> list:
    """The forward value is the identity, so clipped and scaled gradients pass the tangent on;
    as in Theano, ``zero_grad`` gives a zero tangent and ``disconnected_grad`` none."""
    (v,) = tangents
    if v is None or op.kind == "disconnected":
        return [None]
    if op.kind == "zero":
        return [zeros_like(op.result, op.location)]
    return [v]


@R_OP.register(CustomOp)
def _custom(op: CustomOp, tangents) -> list:
    """The implementation's ``R_op(eval_points)``, as a Theano ``Op`` defines ``R_op``."""
    from lowering.ir.core import VerifyError

    rule = getattr(custom_implementation(op.key), "R_op", None)
    if rule is None:
        raise VerifyError(f"custom op '{op.op_name}' has no R_op", op)
    return rule(tangents)


# ---------------------------------------------------------------------------------------------
# Control flow, checks and random draws


R_OP.register(CheckOp)(linear_in(0))  # the tangent of a checked value passes the same check
R_OP.register(RandomOp)(_none)         # a draw has no derivative in its parameters here


@R_OP.register(IfOp)
def _if(op: IfOp, tangents) -> list:
    """Each result's tangent is the tangent of the input the taken branch yields (branches that
    yield their inputs, as the front end builds them, like the gradient rule)."""
    from lowering.ir.core import VerifyError

    def tangent_of(branch, k: int) -> Value | None:
        value = op.yielded(branch)[k]
        if value.owner is not branch.block:
            raise VerifyError(f"{op.name}: the R-op of a branch that computes its results (not "
                              f"only yields its inputs) is not supported; take it before "
                              f"compiling", op)
        return tangents[value.index + 1]

    out = []
    for k, result in enumerate(op.results):
        then_t, else_t = tangent_of(op.then_region, k), tangent_of(op.else_region, k)
        if (then_t is None and else_t is None) or not is_differentiable_type(result.type):
            out.append(None)
            continue
        then_t = then_t if then_t is not None else zeros_like(else_t, op.location)
        else_t = else_t if else_t is not None else zeros_like(then_t, op.location)
        chosen = IfOp.build(op.condition, [then_t], [else_t], location=op.location).results[0]
        out.append(as_type(chosen, result.type, op.location) if
                   chosen.type.rank == result.type.rank else chosen)
    return out


R_OP.register(Conv2dOp)(multilinear_in(0, 1))  # linear in the images and in the filters
R_OP.register(SpecifyShapeOp)(linear_in(0))

# The tangents of a scan are a scan of the step's tangents (scan_rop.py), built with this table.
from .scan_rop import scan_rop  # noqa: E402

R_OP.register(ScanOp)(lambda op, tangents: scan_rop(op, tangents, push_forward))

# Complex numbers: the elementwise rule above defers to complex_rop.py; conj and complex(x, y)
# are real-linear; complex_from_polar has its own rule.
R_OP.register(ConjOp, ComplexOp)(linear_in())
R_OP.register(ComplexFromPolarOp)(lambda op, tangents: from_polar(op, tangents, _as_result))
