"""``tensor.softmax`` and ``tensor.log_softmax`` along one axis (the last by default).

The interpreter rules subtract the maximum first, so large inputs give finite results.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, TensorType
>>> x = Block([TensorType((None, 10), F32)]).args[0]
>>> op = SoftmaxOp.build(x)
>>> op.axis, str(op.result.type)
(1, 'tensor<?x10xf32>')
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import IntAttr
from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType

from .base import TensorOp, op_errors
from .shape_ops import fit_result, match_type
from .typing import normalize_axis, tensor_of


def _softmax_type(xt: TensorType, axis: int) -> TensorType:
    if xt.rank == 0:
        raise VerifyError(f"needs a tensor of rank 1 or more, got {xt}")
    if not xt.element.is_float:
        raise VerifyError(f"needs a float tensor, got {xt}; cast it first")
    normalize_axis(axis, xt.rank)
    return xt


class _SoftmaxBase(TensorOp):
    assembly_format = "$input `axis` $axis attr-dict : type($input, $result)"
    input = operand(AnyTensor)
    result = result(AnyTensor)
    axis = attr(IntAttr)

    @classmethod
    def build(cls, x: Value, axis: int = -1, location=None):
        with op_errors(cls.name):
            xt = _softmax_type(tensor_of(x), axis)
            axis = normalize_axis(axis, xt.rank)
        return cls.create([x], [xt], {"axis": IntAttr(axis)}, location=location)

    def inferred_type(self):
        return _softmax_type(self.input.type, self.axis)

    @property
    def normalized_axis(self) -> int:
        return self.axis % self.input.type.rank


@register_op
class SoftmaxOp(_SoftmaxBase):
    """``tensor.softmax(x) {axis}``: ``exp(x - max) / sum(exp(x - max), axis)`` (NaN along a line
    holding +inf, as NumPy computes it)."""

    name = "tensor.softmax"

    def grad(self, output_grads):
        # dx = (g - sum(g * y, axis, keepdims)) * y
        from .elementwise import MulOp, SubOp
        from .reduction import SumOp

        g, y, loc = output_grads[0], self.result, self.location
        if g is None:
            return [None]
        gy = MulOp.build(g, y, location=loc).result
        total = SumOp.build(gy, axes=[self.normalized_axis], keepdims=True, location=loc).result
        dx = MulOp.build(SubOp.build(g, total, location=loc).result, y, location=loc).result
        return [match_type(dx, self.input, loc)]


@register_op
class LogSoftmaxOp(_SoftmaxBase):
    """``tensor.log_softmax(x) {axis}``: ``x - max - log(sum(exp(x - max), axis))``."""

    name = "tensor.log_softmax"

    def grad(self, output_grads):
        # dx = g - exp(y) * sum(g, axis, keepdims)
        from .elementwise import ExpOp, MulOp, SubOp
        from .reduction import SumOp

        g, y, loc = output_grads[0], self.result, self.location
        if g is None:
            return [None]
        total = SumOp.build(g, axes=[self.normalized_axis], keepdims=True, location=loc).result
        scaled = MulOp.build(ExpOp.build(y, location=loc).result, total, location=loc).result
        return [match_type(SubOp.build(g, scaled, location=loc).result, self.input, loc)]


def _shifted(op, x: np.ndarray) -> np.ndarray:
    """``x - max(x, axis)``, NumPy's formula everywhere: a line holding +inf is all NaN
    (``inf - inf``), as is a line of -inf or one holding NaN (callers ignore the warnings)."""
    axis = op.normalized_axis
    if x.shape[axis] == 0:
        return x
    return x - np.max(x, axis=axis, keepdims=True)


@INTERPRETER.register(SoftmaxOp)
def _softmax(interp, op, args):
    x = np.asarray(args[0])
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(_shifted(op, x))
        out = e / np.sum(e, axis=op.normalized_axis, keepdims=True)
    return [fit_result(op, out)]


@INTERPRETER.register(LogSoftmaxOp)
def _log_softmax(interp, op, args):
    x = np.asarray(args[0])
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        z = _shifted(op, x)
        out = z - np.log(np.sum(np.exp(z), axis=op.normalized_axis, keepdims=True))
    return [fit_result(op, out)]
