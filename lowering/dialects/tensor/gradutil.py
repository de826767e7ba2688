"""Helpers shared by the grad rules of tensor ops.

A grad rule returns, for each operand, a value of *exactly* the operand's type. The gradient that
flows back into an elementwise op has the broadcast shape of the op's result, so it must be summed
over the dimensions the operand broadcast along and brought back to the operand's element type and
static shape: that is ``unbroadcast``.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, F64, TensorType
>>> g = Block([TensorType((3, 5), F64)]).args[0]
>>> str(unbroadcast(g, TensorType((1, None), F32)).type)
'tensor<1x?xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Value, VerifyError
from lowering.ir.types import ScalarType, TensorType

from .base import ConstantOp


def unbroadcast(grad: Value, operand_type: TensorType, location=None) -> Value:
    """``grad`` summed over the dims where ``operand_type`` broadcasts, with exactly that type.

    Sums (keeping the dims) where the operand's dim is a static ``1`` and the grad's is not, casts
    to the operand's element type, and forgets static sizes the operand's type does not have.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32, TensorType
    >>> g = Block([TensorType((4, 3), F32)]).args[0]
    >>> str(unbroadcast(g, TensorType((4, 1), F32)).type)
    'tensor<4x1xf32>'
    >>> unbroadcast(g, TensorType((4, 3), F32)) is g
    True
    """
    from .reduction import SumOp

    gtype = grad.type
    if not isinstance(gtype, TensorType) or gtype.rank != operand_type.rank:
        raise VerifyError(f"unbroadcast: gradient of type {gtype} cannot flow into an operand of "
                          f"type {operand_type} (ranks differ)")
    axes = [d for d, (g, o) in enumerate(zip(gtype.shape, operand_type.shape)) if o == 1 and g != 1]
    if axes:
        grad = SumOp.build(grad, axes=axes, keepdims=True, location=location).result
    return as_type(grad, operand_type, location)


def as_type(value: Value, type: TensorType, location=None) -> Value:
    """``value`` as a value of ``type``: a ``tensor.cast`` to its element type that also forgets
    static sizes (``3`` to ``?``) which ``type`` leaves open. Nothing is built when the types match.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32, F64, TensorType
    >>> v = Block([TensorType((3,), F64)]).args[0]
    >>> str(as_type(v, TensorType((None,), F32)).type)
    'tensor<?xf32>'
    """
    from .elementwise import CastOp

    if value.type == type:
        return value
    return CastOp.build(value, type.element, shape=type.shape, location=location).result


def constant(value, element: ScalarType, rank: int, location=None) -> Value:
    """A constant of ``element`` type shaped ``(1,) * rank``: it broadcasts against any operand of
    that rank, which is what elementwise ops (same rank required) need.

    >>> from lowering.ir.types import F32
    >>> str(constant(2.0, F32, 2).type)
    'tensor<1x1xf32>'
    """
    array = np.full((1,) * rank, value, dtype=element.dtype)
    return ConstantOp.build(array, location=location).result


def constant_like(value, like: Value, location=None) -> Value:
    """``constant(value, ...)`` with the element type and rank of ``like``'s type.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> x = Block([TensorType((None, 3), F64)]).args[0]
    >>> str(constant_like(0.5, x).type)
    'tensor<1x1xf64>'
    """
    t = like.type
    return constant(value, t.element, t.rank, location)


def is_differentiable_type(type) -> bool:
    """Gradients flow only through float and complex tensors; integer and bool operands get
    ``None``.

    >>> from lowering.ir.types import F16, I32, TensorType
    >>> is_differentiable_type(TensorType((2,), F16)), is_differentiable_type(TensorType((2,), I32))
    (True, False)
    """
    return isinstance(type, TensorType) and (type.element.is_float or type.element.is_complex)
