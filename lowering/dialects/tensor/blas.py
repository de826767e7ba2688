"""BLAS-shaped products with scale and accumulation: ``tensor.gemv`` and ``tensor.gemm``.

``specialize`` folds ``y + alpha * dot(A, x)`` forms into these ops, so that one BLAS call (or one
generated loop nest) computes the scaled product and the accumulation, as Theano's ``CGemv`` and
``Gemm`` did::

    tensor.gemv(y, alpha, A, x, beta) = beta * y + alpha * (A @ x)     y: (m,), A: (m, n), x: (n,)
    tensor.gemm(C, alpha, A, B, beta) = beta * C + alpha * (A @ B)     C: (m, n), A: (m, k), B: (k, n)

``alpha`` and ``beta`` are rank-0 tensors; every operand has the same element type (a number,
not i1). ``y`` and ``C`` have the full result shape (they do not broadcast). As in BLAS, where
``beta`` is 0 the accumulator is not read, so NaNs in it do not reach the result.

These ops appear after ``grad`` has run; they have no grad rule.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, TensorType
>>> y, a, x, s = Block([TensorType((None,), F32), TensorType((None, 784), F32),
...                     TensorType((784,), F32), TensorType((), F32)]).args
>>> str(GemvOp.build(y, s, a, x, s).result.type)
'tensor<?xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType

from .base import TensorOp, op_errors
from .shape_ops import fit_result, format_shape
from .typing import ShapeError, check_one_number_type, tensor_of
from .typing import merge_dim as _merge_dim




def _check_operands(names, types, ranks) -> None:
    for name, t, rank in zip(names, types, ranks):
        if t.rank != rank:
            raise VerifyError(f"{name} must have rank {rank}, got {t}")
    check_one_number_type(types)


def _gemv_type(yt: TensorType, alpha: TensorType, at: TensorType, xt: TensorType,
               beta: TensorType) -> TensorType:
    _check_operands(("y", "alpha", "A", "x", "beta"), (yt, alpha, at, xt, beta), (1, 0, 2, 1, 0))
    _merge_dim(f"A of shape {format_shape(at.shape)} and x of shape {format_shape(xt.shape)} "
               f"do not agree", at.shape[1], xt.shape[0])
    m = _merge_dim(f"y of shape {format_shape(yt.shape)} does not fit A of shape "
                   f"{format_shape(at.shape)}", yt.shape[0], at.shape[0])
    if yt.shape[0] == 1 and at.shape[0] != 1:
        raise ShapeError(f"y of shape {format_shape(yt.shape)} would broadcast; it must have the "
                         f"result's size")
    return yt.with_shape((m,))


def _gemm_type(ct: TensorType, alpha: TensorType, at: TensorType, bt: TensorType,
               beta: TensorType) -> TensorType:
    _check_operands(("C", "alpha", "A", "B", "beta"), (ct, alpha, at, bt, beta), (2, 0, 2, 2, 0))
    _merge_dim(f"A of shape {format_shape(at.shape)} and B of shape {format_shape(bt.shape)} "
               f"do not agree", at.shape[1], bt.shape[0])
    dims = []
    for d, size in enumerate((at.shape[0], bt.shape[1])):
        merged = _merge_dim(f"C of shape {format_shape(ct.shape)} does not fit the product of "
                            f"{format_shape(at.shape)} and {format_shape(bt.shape)}",
                            ct.shape[d], size)
        if ct.shape[d] == 1 and size != 1:
            raise ShapeError(f"C of shape {format_shape(ct.shape)} would broadcast; it must have "
                             f"the result's shape")
        dims.append(merged)
    return ct.with_shape(dims)


class _ScaledProductOp(TensorOp):
    assembly_format = ("$acc, $alpha, $lhs, $rhs, $beta attr-dict : "
                       "functional-type(operands, results)")
    """Shared parts of gemv and gemm: ``acc`` accumulates ``alpha * (lhs @ rhs)``."""

    acc = operand(AnyTensor)
    alpha = operand(AnyTensor)
    lhs = operand(AnyTensor)
    rhs = operand(AnyTensor)
    beta = operand(AnyTensor)
    result = result(AnyTensor)

    @staticmethod
    def infer(*types) -> TensorType:  # pragma: no cover - overridden
        raise NotImplementedError

    @classmethod
    def build(cls, acc: Value, alpha: Value, lhs: Value, rhs: Value, beta: Value,
              location=None) -> "_ScaledProductOp":
        operands = [acc, alpha, lhs, rhs, beta]
        with op_errors(cls.name):
            rtype = cls.infer(*[tensor_of(v) for v in operands])
        return cls.create(operands, [rtype], location=location)

    def inferred_type(self):
        return self.infer(*[v.type for v in self.operands])


@register_op
class GemvOp(_ScaledProductOp):
    """``tensor.gemv(y, alpha, A, x, beta)``: ``beta * y + alpha * (A @ x)``."""

    name = "tensor.gemv"
    infer = staticmethod(_gemv_type)


@register_op
class GemmOp(_ScaledProductOp):
    """``tensor.gemm(C, alpha, A, B, beta)``: ``beta * C + alpha * (A @ B)``."""

    name = "tensor.gemm"
    infer = staticmethod(_gemm_type)


def scaled_product(acc, alpha, lhs, rhs, beta, dtype) -> np.ndarray:
    """``beta * acc + alpha * (lhs @ rhs)`` in ``dtype``, not reading ``acc`` when ``beta`` is 0.

    >>> scaled_product(np.array([np.nan]), 2.0, np.ones((1, 2)), np.ones(2), 0.0, "float64")
    array([4.])
    """
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if lhs.shape[-1] != rhs.shape[0]:
        raise ValueError(f"incompatible shapes {lhs.shape} and {rhs.shape}")
    with np.errstate(all="ignore"):
        product = np.asarray(alpha, dtype=dtype) * np.dot(lhs, rhs).astype(dtype, copy=False)
        if np.asarray(beta) == 0:
            return product.astype(dtype, copy=False)
        acc = np.asarray(acc)
        if acc.shape != product.shape:
            raise ValueError(f"the accumulator of shape {acc.shape} does not fit the product of "
                             f"shape {product.shape}")
        return (np.asarray(beta, dtype=dtype) * acc + product).astype(dtype, copy=False)


def _run_scaled_product(interp, op, args):
    try:
        value = scaled_product(*args, dtype=op.result.type.dtype)
    except ValueError as exc:
        raise ValueError(f"{op.name}: {exc}") from None
    return [fit_result(op, value)]


INTERPRETER.register(GemvOp)(_run_scaled_product)
INTERPRETER.register(GemmOp)(_run_scaled_product)
