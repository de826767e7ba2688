"""Elementwise tensor ops: one per scalar function, applied with broadcasting.

Each class links to its ``scalar`` dialect op (``ExpOp.scalar_op is scalar.ExpOp``), which is the
one description of what the function computes and which element types it takes. The tensor op adds
the array part: every operand has the same element type (only ``select``'s condition is i1) and the
same rank, and the result's shape is the operands' broadcast shape (a dimension broadcasts only
where its type says ``1``, as in Theano).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, TensorType
>>> x, y = Block([TensorType((None, 1), F32), TensorType((1, 5), F32)]).args
>>> str(AddOp.build(x, y).result.type), str(GtOp.build(x, y).result.type)
('tensor<?x5xf32>', 'tensor<?x5xi1>')
>>> str(elementwise("exp", x).result.type)
'tensor<?x1xf32>'
"""
from __future__ import annotations

import math
from typing import Callable, ClassVar

import numpy as np

from lowering.dialects import scalar
from lowering.ir.attributes import TypeAttr
from lowering.ir.core import (ELEMENTWISE, PURE, Value, VerifyError, attr, operand, register_op,
                              result)
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.traits import HAS_CANONICALIZATION_PATTERNS
from lowering.ir.types import ScalarType, TensorType

from .base import TensorOp
from .gradutil import constant_like, is_differentiable_type, unbroadcast
from .shape_ops import match_type, zeros_like
from .typing import ShapeError, broadcast_shapes


class ElementwiseOp(TensorOp):
    """Base of the elementwise ops. ``scalar_op`` is the scalar dialect class computing one element.

    Subclasses may set ``partials``: a function from an ``Emitter``, the output gradient and the
    op's operands and result to one partial gradient per operand (of the broadcast shape, or
    ``None`` when no gradient flows); ``grad`` sums them back to each operand's type.
    ``complex_partials``, where set, replaces ``partials`` for complex operands
    (``tensor/complex.py`` says which convention they follow).
    """

    traits = frozenset({PURE, ELEMENTWISE, HAS_CANONICALIZATION_PATTERNS})
    scalar_op: ClassVar[type[scalar.ScalarOp]]
    short: ClassVar[str] = ""
    partials: ClassVar[Callable | None] = None
    complex_partials: ClassVar[Callable | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "scalar_op" in vars(cls):
            cls.short = cls.scalar_op.short

    # -- typing ---------------------------------------------------------------------------

    @classmethod
    def infer_type(cls, operand_types, **attrs) -> TensorType:
        """The result type for operands of ``operand_types`` (an error names the op and why)."""
        types = list(operand_types)
        for index, t in enumerate(types):
            if not isinstance(t, TensorType):
                raise VerifyError(f"{cls.name}: operand #{index} must be a tensor, got {t}")
            if t.encoding is not None:
                raise VerifyError(f"{cls.name}: operand #{index} must be a dense tensor, got {t}")
        try:
            shape = broadcast_shapes([t.shape for t in types])
        except ShapeError as exc:
            raise ShapeError(f"{cls.name}: {exc.message}; operand types are "
                             f"{', '.join(map(str, types))}") from None
        try:
            element = cls.scalar_op.result_element([t.element for t in types], **attrs)
        except VerifyError as exc:
            raise VerifyError(exc.message.replace(cls.scalar_op.name, cls.name, 1)) from None
        return TensorType(shape, element)

    @classmethod
    def infer_result_types(cls, operand_types, attributes) -> list[TensorType]:
        """The result type an assembly format leaves out: ``infer_type``'s."""
        return [cls.infer_type(operand_types)]

    def scalar_attributes(self) -> dict:
        """Keyword arguments of ``scalar_op.evaluate``/``result_element`` besides the operands."""
        return {}

    def build_scalar(self, *operands: Value, location=None) -> scalar.ScalarOp:
        """The scalar op computing one element of this op from scalar ``operands`` (the body of a
        fused op or a loop nest).

        >>> from lowering.ir.core import Block
        >>> from lowering.ir.types import F32, TensorType
        >>> (x,) = Block([TensorType((2,), F32)]).args
        >>> (s,) = Block([F32]).args
        >>> ExpOp.build(x).build_scalar(s).name
        'scalar.exp'
        """
        return self.scalar_op.build(*operands, location=location or self.location)

    @classmethod
    def build(cls, *operands: Value, location=None) -> "ElementwiseOp":
        """The op applied to ``operands``, its result type inferred."""
        out = cls.infer_type([v.type for v in operands])
        return cls.create(operands=operands, result_types=[out], location=location)

    def verify_(self):
        try:
            expected = self.infer_type([v.type for v in self.operands], **self.scalar_attributes())
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        if self.result.type != expected:
            raise VerifyError(f"{self.name}: result type {self.result.type} should be {expected}",
                              self)

    # -- gradients ------------------------------------------------------------------------

    def grad(self, output_grads: list[Value | None]) -> list[Value | None]:
        """One gradient per operand (``None`` for integer/bool operands and disconnected ones)."""
        (gz,) = output_grads
        if gz is None or self.partials is None or not is_differentiable_type(self.result.type) \
                or not any(is_differentiable_type(v.type) for v in self.operands):
            return [None] * len(self.operands)  # e.g. exp of an integer tensor
        emit = Emitter(self.location)
        if gz.type != self.result.type:  # e.g. a wider dtype: the partials need the result's type
            gz = match_type(gz, self.result, self.location)
        partials = self.partials
        if self.complex_partials is not None and any(
                v.type.element.is_complex for v in self.operands):
            partials = self.complex_partials
        parts = partials(emit, gz, *self.operands, self.result)
        parts = parts if isinstance(parts, (tuple, list)) else (parts,)
        return [unbroadcast(p, v.type, self.location)
                if p is not None and is_differentiable_type(v.type) else None
                for p, v in zip(parts, self.operands)]


class Emitter:
    """Builds detached elementwise ops at one location, for grad rules:
    ``emit.mul(a, b)`` is ``MulOp.build(a, b, location=...).result``.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> (x,) = Block([TensorType((3,), F64)]).args
    >>> emit = Emitter(None)
    >>> str(emit.mul(x, emit.const(2.0, x)).type)
    'tensor<3xf64>'
    """

    def __init__(self, location):
        self.location = location

    def __getattr__(self, short: str):
        if short not in ELEMENTWISE_OPS:
            raise AttributeError(short)
        return lambda *operands: self.apply(short, *operands)

    def apply(self, short: str, *operands: Value) -> Value:
        """The result of the elementwise op ``short`` (also ``"and"``, ``"or"``, ``"not"``)."""
        return ELEMENTWISE_OPS[short].build(*operands, location=self.location).result

    def const(self, value, like: Value) -> Value:
        """A ``(1, ..., 1)`` constant with ``like``'s element type and rank."""
        return constant_like(value, like, self.location)

    def zeros_like(self, like: Value) -> Value:
        return zeros_like(like, self.location)

    def where(self, cond: Value, on_true: Value, on_false: Value) -> Value:
        return SelectOp.build(cond, on_true, on_false, location=self.location).result

    def masked(self, cond: Value, gz: Value) -> Value:
        """``gz`` where ``cond`` holds, else 0."""
        return self.where(cond, gz, self.const(0, gz))


# ---------------------------------------------------------------------------------------------
# Arity bases


class UnaryElementwiseOp(ElementwiseOp):
    assembly_format = "$input attr-dict : type($input)"
    input = operand()
    result = result()


class BinaryElementwiseOp(ElementwiseOp):
    assembly_format = "$lhs, $rhs attr-dict : type($lhs, $rhs)"
    lhs = operand()
    rhs = operand()
    result = result()


def _define(base, scalar_op, partials=None):
    short = scalar_op.short
    doc = f"``tensor.{short}``, elementwise: {scalar_op.__doc__}"
    cls = type(scalar_op.__name__, (base,), {
        "name": f"tensor.{short}", "scalar_op": scalar_op,
        "traits": scalar_op.traits | {ELEMENTWISE, HAS_CANONICALIZATION_PATTERNS},
        "partials": staticmethod(partials) if partials else None, "__doc__": doc,
        "__module__": __name__})
    return register_op(cls)


def _unary(scalar_op, partial=None):
    return _define(UnaryElementwiseOp, scalar_op, partial)


def _binary(scalar_op, partials=None):
    return _define(BinaryElementwiseOp, scalar_op, partials)


def _zero(e, gz, x, y):
    return e.zeros_like(x)


_LN2, _LN10, _TWO_OVER_SQRT_PI = math.log(2.0), math.log(10.0), 2.0 / math.sqrt(math.pi)

# ---------------------------------------------------------------------------------------------
# Unary ops, each with its partial derivative times the output gradient ``gz``
# (``x`` the operand, ``y`` the result).

NegOp = _unary(scalar.NegOp, lambda e, gz, x, y: e.neg(gz))
AbsOp = _unary(scalar.AbsOp, lambda e, gz, x, y: e.mul(gz, e.sign(x)))
SignOp = _unary(scalar.SignOp, _zero)
SqrOp = _unary(scalar.SqrOp, lambda e, gz, x, y: e.mul(gz, e.mul(x, e.const(2, x))))
ExpOp = _unary(scalar.ExpOp, lambda e, gz, x, y: e.mul(gz, y))
Exp2Op = _unary(scalar.Exp2Op, lambda e, gz, x, y: e.mul(gz, e.mul(y, e.const(_LN2, x))))
ExpM1Op = _unary(scalar.ExpM1Op, lambda e, gz, x, y: e.mul(gz, e.add(y, e.const(1, x))))
LogOp = _unary(scalar.LogOp, lambda e, gz, x, y: e.div(gz, x))
Log2Op = _unary(scalar.Log2Op, lambda e, gz, x, y: e.div(gz, e.mul(x, e.const(_LN2, x))))
Log10Op = _unary(scalar.Log10Op, lambda e, gz, x, y: e.div(gz, e.mul(x, e.const(_LN10, x))))
Log1pOp = _unary(scalar.Log1pOp, lambda e, gz, x, y: e.div(gz, e.add(x, e.const(1, x))))
SqrtOp = _unary(scalar.SqrtOp, lambda e, gz, x, y: e.div(gz, e.mul(y, e.const(2, x))))
ReciprocalOp = _unary(scalar.ReciprocalOp, lambda e, gz, x, y: e.neg(e.mul(gz, e.sqr(y))))
SinOp = _unary(scalar.SinOp, lambda e, gz, x, y: e.mul(gz, e.cos(x)))
CosOp = _unary(scalar.CosOp, lambda e, gz, x, y: e.neg(e.mul(gz, e.sin(x))))
TanOp = _unary(scalar.TanOp, lambda e, gz, x, y: e.mul(gz, e.add(e.const(1, x), e.sqr(y))))
ArcSinOp = _unary(scalar.ArcSinOp,
                  lambda e, gz, x, y: e.div(gz, e.sqrt(e.sub(e.const(1, x), e.sqr(x)))))
ArcCosOp = _unary(scalar.ArcCosOp,
                  lambda e, gz, x, y: e.neg(e.div(gz, e.sqrt(e.sub(e.const(1, x), e.sqr(x))))))
ArcTanOp = _unary(scalar.ArcTanOp, lambda e, gz, x, y: e.div(gz, e.add(e.const(1, x), e.sqr(x))))
SinhOp = _unary(scalar.SinhOp, lambda e, gz, x, y: e.mul(gz, e.cosh(x)))
CoshOp = _unary(scalar.CoshOp, lambda e, gz, x, y: e.mul(gz, e.sinh(x)))
TanhOp = _unary(scalar.TanhOp, lambda e, gz, x, y: e.mul(gz, e.sub(e.const(1, x), e.sqr(y))))
ArcSinhOp = _unary(scalar.ArcSinhOp,
                   lambda e, gz, x, y: e.div(gz, e.sqrt(e.add(e.sqr(x), e.const(1, x)))))
ArcCoshOp = _unary(scalar.ArcCoshOp,
                   lambda e, gz, x, y: e.div(gz, e.sqrt(e.sub(e.sqr(x), e.const(1, x)))))
ArcTanhOp = _unary(scalar.ArcTanhOp, lambda e, gz, x, y: e.div(gz, e.sub(e.const(1, x), e.sqr(x))))
SigmoidOp = _unary(scalar.SigmoidOp,
                   lambda e, gz, x, y: e.mul(gz, e.mul(y, e.sub(e.const(1, x), y))))
SoftplusOp = _unary(scalar.SoftplusOp, lambda e, gz, x, y: e.mul(gz, e.sigmoid(x)))
ErfOp = _unary(scalar.ErfOp, lambda e, gz, x, y: e.mul(
    gz, e.mul(e.const(_TWO_OVER_SQRT_PI, x), e.exp(e.neg(e.sqr(x))))))
FloorOp = _unary(scalar.FloorOp, _zero)
CeilOp = _unary(scalar.CeilOp, _zero)
RoundOp = _unary(scalar.RoundOp, _zero)
RoundHalfAwayFromZeroOp = _unary(scalar.RoundHalfAwayFromZeroOp, _zero)
TruncOp = _unary(scalar.TruncOp, _zero)
NotOp = _unary(scalar.NotOp)
IsNanOp = _unary(scalar.IsNanOp)
IsInfOp = _unary(scalar.IsInfOp)


# ---------------------------------------------------------------------------------------------
# Binary ops: partials return (d/dx, d/dy) times ``gz``, with ``z`` the result.


def _pow_partials(e, gz, x, y, z):
    dx = e.mul(gz, e.mul(y, e.pow(x, e.sub(y, e.const(1, y)))))
    # z * log(x) is 0 * -inf at x == 0, where the derivative in y is 0.
    dy = e.where(e.eq(x, e.const(0, x)), e.const(0, x), e.mul(gz, e.mul(z, e.log(x))))
    return dx, dy


def _arctan2_partials(e, gz, a, b, z):
    scale = e.div(gz, e.add(e.sqr(a), e.sqr(b)))
    return e.mul(scale, b), e.neg(e.mul(scale, a))


AddOp = _binary(scalar.AddOp, lambda e, gz, x, y, z: (gz, gz))
SubOp = _binary(scalar.SubOp, lambda e, gz, x, y, z: (gz, e.neg(gz)))
MulOp = _binary(scalar.MulOp, lambda e, gz, x, y, z: (e.mul(gz, y), e.mul(gz, x)))
DivOp = _binary(scalar.DivOp, lambda e, gz, x, y, z: (e.div(gz, y), e.neg(e.div(e.mul(gz, z), y))))
FloorDivOp = _binary(scalar.FloorDivOp, lambda e, gz, x, y, z: (e.zeros_like(x), e.zeros_like(y)))
ModOp = _binary(scalar.ModOp, lambda e, gz, x, y, z: (gz, e.neg(e.mul(gz, e.floordiv(x, y)))))
PowOp = _binary(scalar.PowOp, _pow_partials)
# Ties send the gradient to both operands, as Theano does.
MaximumOp = _binary(scalar.MaximumOp,
                    lambda e, gz, x, y, z: (e.masked(e.eq(z, x), gz), e.masked(e.eq(z, y), gz)))
MinimumOp = _binary(scalar.MinimumOp,
                    lambda e, gz, x, y, z: (e.masked(e.eq(z, x), gz), e.masked(e.eq(z, y), gz)))
ArcTan2Op = _binary(scalar.ArcTan2Op, _arctan2_partials)
EqOp = _binary(scalar.EqOp)
NeOp = _binary(scalar.NeOp)
LtOp = _binary(scalar.LtOp)
LeOp = _binary(scalar.LeOp)
GtOp = _binary(scalar.GtOp)
GeOp = _binary(scalar.GeOp)
AndOp = _binary(scalar.AndOp)
OrOp = _binary(scalar.OrOp)
XorOp = _binary(scalar.XorOp)


# ---------------------------------------------------------------------------------------------
# select, clip, cast


def _select_partials(e, gz, cond, on_true, on_false, z):
    return None, e.masked(cond, gz), e.where(cond, e.const(0, gz), gz)


@register_op
class SelectOp(ElementwiseOp):
    """``tensor.select(cond, on_true, on_false)`` (Theano's ``switch``): ``cond`` is i1; the
    gradient flows to the branch each element was taken from."""

    name = "tensor.select"
    assembly_format = ("$cond, $on_true, $on_false attr-dict : "
                       "type($cond), type($on_true, $on_false)")
    scalar_op = scalar.SelectOp
    partials = staticmethod(_select_partials)
    cond = operand()
    on_true = operand()
    on_false = operand()
    result = result()


def _clip_partials(e, gz, x, lo, hi, z):
    inside = e.apply("and", e.ge(x, lo), e.le(x, hi))
    return (e.masked(inside, gz),
            e.masked(e.apply("and", e.lt(x, lo), e.le(lo, hi)), gz),
            e.masked(e.gt(e.maximum(x, lo), hi), gz))


@register_op
class ClipOp(ElementwiseOp):
    """``tensor.clip(x, lo, hi)``: ``minimum(maximum(x, lo), hi)``, elementwise; the gradient
    goes to whichever of ``x``, ``lo``, ``hi`` the result equals."""

    name = "tensor.clip"
    assembly_format = "$input, $lo, $hi attr-dict : type($input, $lo, $hi)"
    scalar_op = scalar.ClipOp
    partials = staticmethod(_clip_partials)
    input = operand()
    lo = operand()
    hi = operand()
    result = result()


@register_op
class CastOp(ElementwiseOp):
    """``tensor.cast(x) {to = f32}``: ``x`` converted elementwise, as NumPy's ``astype``.

    The result may also forget static sizes of ``x`` (``tensor<3xf32>`` to ``tensor<?xf64>``):
    that is how a value is given a more general type without any other change.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, I32, TensorType
    >>> (x,) = Block([TensorType((3,), I32)]).args
    >>> str(CastOp.build(x, F64).result.type), str(CastOp.build(x, F64, shape=(None,)).result.type)
    ('tensor<3xf64>', 'tensor<?xf64>')
    """

    name = "tensor.cast"
    assembly_format = "$input `to` $to attr-dict : type($input) -> type($result)"
    scalar_op = scalar.CastOp
    to = attr(TypeAttr)
    input = operand()
    result = result()

    @classmethod
    def build(cls, x: Value, to: ScalarType, shape=None, location=None) -> "CastOp":
        out = cls.infer_type([x.type], to=to)
        if shape is not None:
            out = out.with_shape(shape)
            _check_relaxed(cls.name, x.type, out)
        return cls.create(operands=[x], result_types=[out], attributes={"to": TypeAttr(to)},
                          location=location)

    def scalar_attributes(self) -> dict:
        return {"to": self.to}

    def build_scalar(self, *operands: Value, location=None) -> scalar.CastOp:
        return scalar.CastOp.build(*operands, self.to, location=location or self.location)

    def verify_(self):
        try:
            expected = self.infer_type([self.input.type], to=self.to)
            _check_relaxed(self.name, self.input.type, self.result.type)
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        if self.result.type.element != expected.element:
            raise VerifyError(f"{self.name}: result type {self.result.type} should have element "
                              f"type {expected.element}", self)

    def grad(self, output_grads):
        (gz,) = output_grads
        if gz is None or not (is_differentiable_type(self.input.type)
                              and is_differentiable_type(self.result.type)):
            return [None]
        if gz.type.element.is_complex and not self.input.type.element.is_complex:
            # a real number made complex: the gradient of its part (tensor/complex.py's rule)
            gz = self.complex_partials(Emitter(self.location), gz, self.input, self.result)
        # A cast that forgot static sizes (``?x3`` to ``?x?``) takes them back on the way down.
        return [match_type(gz, self.input, self.location)]


def _check_relaxed(name: str, source: TensorType, result: TensorType) -> None:
    if not isinstance(result, TensorType) or result.rank != source.rank or any(
            r is not None and r != s for r, s in zip(result.shape, source.shape)):
        raise VerifyError(f"{name}: result shape {result} must be the operand's shape "
                          f"{source}, with static sizes kept or made '?'")


ELEMENTWISE_OPS: dict[str, type[ElementwiseOp]] = {
    cls.short: cls for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, ElementwiseOp) and "scalar_op" in vars(cls)}


def elementwise(short: str, *operands: Value, location=None) -> ElementwiseOp:
    """Build the elementwise op named ``short`` (``"add"``, ``"exp"``, ...) on ``operands``.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import I8, TensorType
    >>> (x,) = Block([TensorType((4,), I8)]).args
    >>> str(elementwise("sqrt", x).result.type)
    'tensor<4xf32>'
    """
    try:
        cls = ELEMENTWISE_OPS[short]
    except KeyError:
        from lowering.ir.core import did_you_mean
        raise VerifyError(f"unknown elementwise op '{short}'"
                          f"{did_you_mean(short, ELEMENTWISE_OPS)}") from None
    if cls is CastOp:
        raise VerifyError("tensor.cast takes a target type: use CastOp.build(x, to)")
    return cls.build(*operands, location=location)


# ---------------------------------------------------------------------------------------------
# Interpreter


def check_broadcast(op: ElementwiseOp, arrays) -> None:
    """Theano's run-time rule: along each dimension, every operand whose type does not say ``1``
    must have the same size (a run-time size of 1 does not broadcast)."""
    shapes = [np.shape(a) for a in arrays]
    for dim in range(op.result.type.rank):
        sizes = {s[dim] for s, v in zip(shapes, op.operands) if v.type.shape[dim] != 1}
        if len(sizes) > 1:
            raise ValueError(f"{op.name}: operand shapes {', '.join(map(str, shapes))} differ in "
                             f"dimension {dim} (only dimensions typed 1 broadcast)")


@INTERPRETER.register(ElementwiseOp)
def _run_elementwise(interp, op, args):
    arrays = [np.asarray(a) for a in args]
    check_broadcast(op, arrays)
    value = op.scalar_op.evaluate(*arrays, **op.scalar_attributes())
    return [np.asarray(value, dtype=op.result.type.dtype)]



__all__ = ["ElementwiseOp", "UnaryElementwiseOp", "BinaryElementwiseOp", "Emitter",
           "ELEMENTWISE_OPS", "elementwise", "check_broadcast",
           *sorted(cls.__name__ for cls in ELEMENTWISE_OPS.values())]
