"""``tensor.grad_filter``: the identity on values that changes the gradient flowing through it.

Theano's ``zero_grad``, ``disconnected_grad``, ``grad_clip`` and ``grad_scale`` are this op with
one ``kind`` each. The forward value is the input itself: the canonicalize pass removes the op
(``grad_filter_is_identity``), the interpreter returns its operand, and bufferize hands on the
operand's buffer, so it costs nothing at run time. Only the ``grad`` rule differs by kind:

- ``zero``: the gradient is zeros (it still goes through the graph, as a zero value);
- ``disconnected``: no gradient at all (``T.grad`` treats the input as not reached);
- ``clip``: the gradient clipped elementwise to ``[lower, upper]``;
- ``scale``: the gradient times ``lower`` (the multiplier).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> (x,) = Block([TensorType((3,), F64)]).args
>>> op = GradFilterOp.build(x, "clip", -1.0, 1.0)
>>> op.kind, op.lower, op.upper, str(op.result.type)
('clip', -1.0, 1.0, 'tensor<3xf64>')
"""
from __future__ import annotations

from lowering.ir.attributes import FloatAttr, StringAttr
from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER

from .base import TensorOp
from .gradutil import constant_like, is_differentiable_type
from .shape_ops import match_type, zeros_like

GRAD_FILTER_KINDS = ("zero", "disconnected", "clip", "scale")


@register_op
class GradFilterOp(TensorOp):
    """``tensor.grad_filter %x {kind, lower, upper}``: ``x`` unchanged; its gradient zeroed,
    cut, clipped to ``[lower, upper]`` or scaled by ``lower``, by ``kind``."""

    name = "tensor.grad_filter"
    assembly_format = "$input attr-dict : type($input)"
    input = operand(AnyTensor)
    result = result(AnyTensor)
    kind = attr(StringAttr)
    lower = attr(FloatAttr, default=0.0)
    upper = attr(FloatAttr, default=0.0)

    @classmethod
    def infer_result_types(cls, operand_types, attributes):
        return [operand_types[0]]

    @classmethod
    def build(cls, x: Value, kind: str, lower: float = 0.0, upper: float = 0.0,
              location=None) -> "GradFilterOp":
        if kind not in GRAD_FILTER_KINDS:
            raise VerifyError(f"{cls.name}: kind must be one of {', '.join(GRAD_FILTER_KINDS)}, "
                              f"got {kind!r}")
        if kind == "clip" and not lower <= upper:
            raise VerifyError(f"{cls.name}: the lower bound {lower} is above the upper bound "
                              f"{upper}")
        return cls.create([x], [x.type], {"kind": StringAttr(kind), "lower": FloatAttr(lower),
                                          "upper": FloatAttr(upper)}, location=location)

    def inferred_type(self):
        if self.kind not in GRAD_FILTER_KINDS:
            raise VerifyError(f"kind must be one of {', '.join(GRAD_FILTER_KINDS)}, "
                              f"got {self.kind!r}")
        return self.input.type

    def grad(self, output_grads):
        from .elementwise import ClipOp, MulOp

        (g,) = output_grads
        x, loc = self.input, self.location
        if g is None or self.kind == "disconnected" or not is_differentiable_type(x.type):
            return [None]
        if self.kind == "zero":
            return [zeros_like(x, loc)]
        g = match_type(g, x, loc)
        if self.kind == "clip":
            lo, hi = constant_like(self.lower, g, loc), constant_like(self.upper, g, loc)
            return [ClipOp.build(g, lo, hi, location=loc).result]
        return [MulOp.build(g, constant_like(self.lower, g, loc), location=loc).result]


@INTERPRETER.register(GradFilterOp)
def _grad_filter(interp, op, args):
    return [args[0]]


def _register_canonicalization() -> None:
    from .canonical import canonical, rewrite_to

    @canonical(GradFilterOp)
    def grad_filter_is_identity(op, rewriter) -> bool:
        """The forward value is the input: once gradients are built, the op goes."""
        return rewrite_to(rewriter, op, lambda new: op.input)


_register_canonicalization()
