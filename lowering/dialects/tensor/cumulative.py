"""``tensor.cumsum`` and ``tensor.cumprod``: running sums and products along one axis (Theano's
``CumOp``), forward or, with ``reverse``, from the end of the axis back to its start.

The result has the input's type (Theano's declared type: integers accumulate in their own
dtype). The reverse form is what the gradient of a running sum needs, so it exists as an
attribute rather than as two flips around a forward scan.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> x = Block([TensorType((None, 3), F32)]).args[0]
>>> op = CumSumOp.build(x, -1)
>>> op.axis, bool(op.reverse), str(op.result.type)
(1, False, 'tensor<?x3xf32>')
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import BoolAttr, IntAttr
from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType  # noqa: F401  (the doctest builds one)

from .base import TensorOp, op_errors
from .elementwise import DivOp, MulOp
from .gradutil import is_differentiable_type
from .rop import R_OP, linear_in
from .shape_ops import match_type
from .typing import normalize_axis, tensor_of


class CumulativeOp(TensorOp):
    """Base of the running reductions: ``numpy_fn`` is the forward NumPy semantics."""

    assembly_format = ("$input `axis` $axis (`reverse` $reverse^)? attr-dict : "
                       "type($input) -> type($result)")
    input = operand(AnyTensor)
    result = result(AnyTensor)
    axis = attr(IntAttr)
    reverse = attr(IntAttr, default=0)

    numpy_fn = staticmethod(np.cumsum)

    @classmethod
    def build(cls, x: Value, axis: int, reverse: bool = False,
              location=None) -> "CumulativeOp":
        with op_errors(cls.name):
            xt = tensor_of(x)
            if xt.rank == 0:
                raise VerifyError("the input must have at least one dimension")
            axis = normalize_axis(axis, xt.rank)
        attributes = {"axis": IntAttr(axis)}
        if reverse:
            attributes["reverse"] = BoolAttr(True)
        return cls.create([x], [xt], attributes, location=location)

    def inferred_type(self):
        rank = self.input.type.rank
        if not 0 <= self.axis < rank:
            raise VerifyError(f"axis {self.axis} is out of range for a tensor of rank {rank}")
        return self.input.type

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """The op on a NumPy array (in the input's dtype)."""
        x = np.asarray(x)
        if self.reverse:
            x = np.flip(x, self.axis)
        out = self.numpy_fn(x, axis=self.axis, dtype=x.dtype)
        return np.flip(out, self.axis) if self.reverse else out

    def output_grad(self, output_grads) -> Value | None:
        (gz,) = output_grads
        if gz is None or not is_differentiable_type(self.input.type):
            return None
        return gz if gz.type == self.result.type else match_type(gz, self.result, self.location)


@register_op
class CumSumOp(CumulativeOp):
    """``tensor.cumsum %x axis k``: running sums along axis ``k``. Its gradient is the running
    sum of the output gradient taken the other way."""

    name = "tensor.cumsum"
    numpy_fn = staticmethod(np.cumsum)

    def grad(self, output_grads):
        gz = self.output_grad(output_grads)
        if gz is None:
            return [None]
        return [CumSumOp.build(gz, self.axis, not self.reverse, self.location).result]


@register_op
class CumProdOp(CumulativeOp):
    """``tensor.cumprod %x axis k``: running products along axis ``k``. Its gradient is
    Theano's: the reverse running sum of ``result * gz``, divided by ``x`` (so not finite where
    ``x`` is zero, as in Theano)."""

    name = "tensor.cumprod"
    numpy_fn = staticmethod(np.cumprod)

    def grad(self, output_grads):
        gz = self.output_grad(output_grads)
        if gz is None:
            return [None]
        loc = self.location
        weighted = MulOp.build(self.result, gz, location=loc).result
        spread = CumSumOp.build(weighted, self.axis, not self.reverse, loc).result
        return [DivOp.build(spread, self.input, location=loc).result]


@INTERPRETER.register(CumulativeOp)
def _cumulative(interp, op, args):
    return [op.evaluate(args[0])]


R_OP.register(CumSumOp)(linear_in(0))


@R_OP.register(CumProdOp)
def _cumprod_tangent(op: CumProdOp, tangents) -> list:
    """``result * cumsum(v / x)``, the form of the gradient (not finite where ``x`` is zero)."""
    (v,) = tangents
    if v is None or not is_differentiable_type(op.result.type):
        return [None]
    loc = op.location
    ratio = DivOp.build(v, op.input, location=loc).result
    spread = CumSumOp.build(ratio, op.axis, bool(op.reverse), loc).result
    return [MulOp.build(op.result, spread, location=loc).result]
