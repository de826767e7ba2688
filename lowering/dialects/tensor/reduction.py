"""Reductions: ``tensor.sum``, ``prod``, ``max``, ``min``, ``mean``, ``argmax``, ``argmin``.

Each reduces its input over ``axes`` (sorted, unique, non-negative; every axis when built with
``axes=None``) and drops those dims, or keeps them as static ``1`` with ``keepdims``. Result types
follow NumPy: sum and prod of bool and signed integers give i64, of unsigned integers ui64, floats
keep their type; mean of integers gives f64; max and min keep the type; argmax and argmin give i64
and take one axis or all of them (the flattened index).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, I8, TensorType
>>> x, n = Block([TensorType((None, 3), F32), TensorType((4, 5), I8)]).args
>>> str(SumOp.build(x, axes=1).result.type), str(SumOp.build(n).result.type)
('tensor<?xf32>', 'tensor<i64>')
>>> str(MeanOp.build(n, axes=[0], keepdims=True).result.type)
'tensor<1x5xf64>'
"""
from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

from lowering.ir.attributes import ArrayAttr, BoolAttr, IntAttr
from lowering.ir.constraints import AnyTensor, ArrayAttrOf
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import F64, I64, UI64, ScalarType, TensorType

from .base import ConstantOp, TensorOp
from .elementwise import CastOp, Emitter, MulOp
from .gradutil import is_differentiable_type, unbroadcast
from .shape_ops import DimShuffleOp, FillOp, ShapeIOp, match_type
from .typing import normalize_axes


class ReductionOp(TensorOp):
    assembly_format = ("$input `axes` $axes (`keepdims` $keepdims^)? attr-dict : "
                       "type($input) -> type($result)")
    """Base of the reductions: ``reducer`` is the NumPy semantics, ``result_element`` the dtype
    rule."""

    input = operand(AnyTensor)
    result = result(AnyTensor)
    axes = attr(ArrayAttrOf(IntAttr))
    keepdims = attr(IntAttr, default=0)

    # reducer(array, axes, dtype, keepdims) -> the reduced array (NumPy semantics)
    reducer: ClassVar[Callable]

    @classmethod
    def result_element(cls, element: ScalarType) -> ScalarType:
        return element

    @classmethod
    def check_axes(cls, axes: tuple[int, ...], rank: int) -> None:
        """Rules on which axes may be reduced beyond being valid axes (argmax: one or all)."""

    @classmethod
    def infer_type(cls, input_type, axes: tuple[int, ...], keepdims: bool) -> TensorType:
        """The result type of reducing ``input_type`` over normalized ``axes``."""
        if not isinstance(input_type, TensorType):
            raise VerifyError(f"{cls.name}: the input must be a tensor, got {input_type}")
        rank = input_type.rank
        if list(axes) != sorted(set(axes)) or any(not 0 <= a < rank for a in axes):
            raise VerifyError(f"{cls.name}: axes {list(axes)} must be sorted, unique and in "
                              f"range(0, {rank})")
        cls.check_axes(axes, rank)
        if keepdims:
            shape = tuple(1 if d in axes else s for d, s in enumerate(input_type.shape))
        else:
            shape = tuple(s for d, s in enumerate(input_type.shape) if d not in axes)
        return TensorType(shape, cls.result_element(input_type.element))

    @classmethod
    def build(cls, x: Value, axes=None, keepdims: bool = False, location=None) -> "ReductionOp":
        """Reduce ``x`` over ``axes`` (an int, a sequence of ints, negative ones counting from the
        end, or None for all axes)."""
        if not isinstance(x.type, TensorType):
            raise VerifyError(f"{cls.name}: the input must be a tensor, got {x.type}")
        try:
            axes = normalize_axes(axes, x.type.rank)
        except VerifyError as exc:
            raise VerifyError(f"{cls.name}: {exc.message}") from None
        out = cls.infer_type(x.type, axes, keepdims)
        return cls.create(operands=[x], result_types=[out], location=location, attributes={
            "axes": ArrayAttr(tuple(IntAttr(a) for a in axes)), "keepdims": BoolAttr(keepdims)})

    def verify_(self):
        try:
            expected = self.infer_type(self.input.type, self.axes, bool(self.keepdims))
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        if self.result.type != expected:
            raise VerifyError(f"{self.name}: result type {self.result.type} should be {expected}",
                              self)

    # -- gradient helpers -----------------------------------------------------------------

    def output_grad(self, output_grads) -> Value | None:
        """The output gradient with exactly the result's type, or None when none flows back."""
        (gz,) = output_grads
        if gz is None or not is_differentiable_type(self.input.type):
            return None
        if gz.type != self.result.type:
            gz = match_type(gz, self.result, self.location)
        return gz

    def with_kept_dims(self, value: Value) -> Value:
        """A value of the result's shape with the reduced dims put back as size-1 dims, so that it
        broadcasts against the input."""
        if self.keepdims:
            return value
        pattern, kept = [], 0
        for d in range(self.input.type.rank):
            if d in self.axes:
                pattern.append("x")
            else:
                pattern.append(kept)
                kept += 1
        return DimShuffleOp.build(value, pattern, location=self.location).result


def _sum_element(element: ScalarType) -> ScalarType:
    if element.is_float or element.is_complex:
        return element
    if element.is_int and not element.is_signed:
        return UI64
    return I64


@register_op
class SumOp(ReductionOp):
    """``tensor.sum(x) {axes, keepdims}``: the sum (0 over empty axes).

    Its gradient broadcasts the output gradient back to ``x``'s shape."""

    name = "tensor.sum"
    reducer = staticmethod(lambda x, axes, dtype, keepdims: np.sum(
        x, axis=axes, dtype=dtype, keepdims=keepdims))

    @classmethod
    def result_element(cls, element):
        return _sum_element(element)

    def grad(self, output_grads):
        gz = self.output_grad(output_grads)
        if gz is None:
            return [None]
        spread = FillOp.build(self.input, self.with_kept_dims(gz), location=self.location).result
        return [unbroadcast(spread, self.input.type, self.location)]


@register_op
class ProdOp(ReductionOp):
    """``tensor.prod(x) {axes, keepdims}``: the product (1 over empty axes).

    The gradient of each element is the product of the others, also where elements are zero: it
    is non-zero only for the zero of a group holding exactly one zero."""

    name = "tensor.prod"
    reducer = staticmethod(lambda x, axes, dtype, keepdims: np.prod(
        x, axis=axes, dtype=dtype, keepdims=keepdims))
    # conjugate(value, location): tensor.conj of a complex value (set by tensor/complex.py)
    conjugate: ClassVar[Callable | None] = None

    @classmethod
    def result_element(cls, element):
        return _sum_element(element)

    def grad(self, output_grads):
        gz = self.output_grad(output_grads)
        if gz is None:
            return [None]
        e, x, loc = Emitter(self.location), self.input, self.location
        complex_x = x.type.element.is_complex
        magnitude = e.abs(x) if complex_x else x  # complex numbers compare by their modulus
        is_zero = e.eq(magnitude, e.const(0, magnitude))
        without_zeros = e.where(is_zero, e.const(1, x), x)
        others = ProdOp.build(without_zeros, self.axes, keepdims=True, location=loc).result
        zero_count = SumOp.build(CastOp.build(is_zero, magnitude.type.element,
                                              location=loc).result,
                                 self.axes, keepdims=True, location=loc).result
        no_zero = e.eq(zero_count, e.const(0, zero_count))
        one_zero = e.eq(zero_count, e.const(1, zero_count))
        factor = e.where(is_zero, e.masked(one_zero, others), e.masked(no_zero, e.div(others, x)))
        if complex_x:  # Theano's convention: conj(d prod / dx) * gz
            factor = self.conjugate(factor, loc)
        return [unbroadcast(e.mul(self.with_kept_dims(gz), factor), x.type, loc)]


def _extremum(find):
    def reducer(x, axes, dtype, keepdims):
        empty = [a for a in axes if x.shape[a] == 0]
        if empty:
            raise ValueError(f"cannot reduce over the empty axis {empty[0]} of an array of shape "
                             f"{x.shape}")
        return find(x, axis=axes, keepdims=keepdims)
    return reducer


def _refuse_complex(cls, element: ScalarType) -> None:
    if element.is_complex:
        raise VerifyError(f"{cls.name}: operand type {element} is not accepted (complex numbers "
                          f"are not ordered)")


class _ExtremumOp(ReductionOp):
    @classmethod
    def result_element(cls, element):
        _refuse_complex(cls, element)
        return element

    def grad(self, output_grads):
        gz = self.output_grad(output_grads)
        if gz is None:
            return [None]
        e, x = Emitter(self.location), self.input
        # Every element equal to the extremum gets the gradient (ties share it, as in Theano).
        hit = e.eq(x, self.with_kept_dims(self.result))
        return [unbroadcast(e.masked(hit, self.with_kept_dims(gz)), x.type, self.location)]


@register_op
class MaxOp(_ExtremumOp):
    """``tensor.max(x) {axes, keepdims}``: the maximum (NaN if any is NaN; an error over empty
    axes). The gradient goes to every element equal to the maximum."""

    name = "tensor.max"
    reducer = staticmethod(_extremum(np.max))


@register_op
class MinOp(_ExtremumOp):
    """``tensor.min(x) {axes, keepdims}``: the minimum (NaN if any is NaN; an error over empty
    axes). The gradient goes to every element equal to the minimum."""

    name = "tensor.min"
    reducer = staticmethod(_extremum(np.min))


def _mean(x, axes, dtype, keepdims):
    accumulate = np.float32 if dtype == np.float16 else dtype
    total = np.sum(x, axis=axes, dtype=accumulate, keepdims=keepdims)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return np.true_divide(total, count)  # the mean of nothing is NaN, as in NumPy


@register_op
class MeanOp(ReductionOp):
    """``tensor.mean(x) {axes, keepdims}``: the arithmetic mean (NaN over empty axes); integers
    average to f64."""

    name = "tensor.mean"
    reducer = staticmethod(_mean)

    @classmethod
    def result_element(cls, element):
        return element if element.is_float or element.is_complex else F64

    def grad(self, output_grads):
        gz = self.output_grad(output_grads)
        if gz is None:
            return [None]
        e = Emitter(self.location)
        scaled = e.div(gz, self.element_count(gz.type.rank))
        spread = FillOp.build(self.input, self.with_kept_dims(scaled), location=self.location)
        return [unbroadcast(spread.result, self.input.type, self.location)]

    def element_count(self, rank: int) -> Value:
        """How many elements each output averages, as a ``(1,) * rank`` tensor of the result's
        element type (computed at run time from the sizes that are not static)."""
        x, loc = self.input, self.location
        static = int(np.prod([x.type.shape[a] for a in self.axes if x.type.shape[a] is not None]))
        count = ConstantOp.build(np.array(static, dtype=np.int64), location=loc).result
        for a in self.axes:
            if x.type.shape[a] is None:
                size = ShapeIOp.build(x, a, location=loc).result
                count = MulOp.build(count, size, location=loc).result
        count = CastOp.build(count, self.result.type.element, location=loc).result
        return DimShuffleOp.build(count, ["x"] * rank, location=loc).result if rank else count


class _ArgExtremumOp(ReductionOp):
    @classmethod
    def result_element(cls, element):
        _refuse_complex(cls, element)
        return I64

    @classmethod
    def check_axes(cls, axes, rank):
        if len(axes) > 1 and len(axes) != rank:
            raise VerifyError(f"{cls.name}: takes one axis or all axes, got {list(axes)}")

    def grad(self, output_grads):
        return [None]


def _arg_extremum(find):
    def reducer(x, axes, dtype, keepdims):
        if x.size == 0:
            raise ValueError(f"the input of shape {x.shape} is empty")
        return find(x, axis=axes[0] if len(axes) == 1 else None, keepdims=keepdims)
    return reducer


@register_op
class ArgMaxOp(_ArgExtremumOp):
    """``tensor.argmax(x) {axes, keepdims}``: the index of the first maximum along one axis, or in
    the flattened input when reducing all axes (an error over empty axes)."""

    name = "tensor.argmax"
    reducer = staticmethod(_arg_extremum(np.argmax))


@register_op
class ArgMinOp(_ArgExtremumOp):
    """``tensor.argmin(x) {axes, keepdims}``: the index of the first minimum along one axis, or in
    the flattened input when reducing all axes (an error over empty axes)."""

    name = "tensor.argmin"
    reducer = staticmethod(_arg_extremum(np.argmin))


REDUCTION_OPS: dict[str, type[ReductionOp]] = {
    cls.name.split(".", 1)[1]: cls for cls in (SumOp, ProdOp, MaxOp, MinOp, MeanOp, ArgMaxOp,
                                              ArgMinOp)}


def _run_reduction(interp, op, args):
    x = np.asarray(args[0])
    dtype = op.result.type.dtype
    try:
        with np.errstate(all="ignore"):  # inf - inf, 0 * inf: NaN, as IEEE says
            value = op.reducer(x, op.axes, dtype, bool(op.keepdims))
    except ValueError as exc:
        raise ValueError(f"{op.name}: {exc}") from None
    return [np.asarray(value, dtype=dtype)]


INTERPRETER.register(*REDUCTION_OPS.values())(_run_reduction)
