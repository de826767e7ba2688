"""2-D pooling over the last two dimensions: ``tensor.pool2d`` and its gradient
``tensor.pool2d_grad``, with Theano's four modes.

A window ``ws`` moves by ``stride`` over the input padded by ``pad`` zeros on each side. Window
``r`` of one dimension starts at ``r * stride`` in padded coordinates and ends at
``min(start + ws, size + 2 pad)``: with ``ignore_border`` only whole windows count, without it a
last partial window does too. ``max``, ``sum`` and ``average_exc_pad`` read only the window's
input elements (not the padding); ``average_inc_pad`` divides the sum by the window's size in the
padded input. The gradient of ``max`` goes to every input element equal to its window's maximum,
as Theano's ``MaxPoolGrad`` gives it.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> x = Block([TensorType((None, 20, 24, 24), F32)]).args[0]
>>> str(Pool2dOp.build(x, (2, 2)).result.type)
'tensor<?x20x12x12xf32>'
>>> str(Pool2dOp.build(x, (5, 5), ignore_border=False).result.type)
'tensor<?x20x5x5xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import ArrayAttr, BoolAttr, IntAttr, StringAttr
from lowering.ir.constraints import AnyTensor, ArrayAttrOf, EnumAttr
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType

from .base import TensorOp, op_errors
from .shape_ops import fit_result, match_type
from .typing import tensor_of

POOL_MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def pool_output_size(size, ws: int, stride: int, pad: int, ignore_border: bool):
    """The number of windows along one dimension (None for an unknown size), Theano's
    ``Pool.out_shape``.

    >>> pool_output_size(24, 2, 2, 0, True), pool_output_size(5, 2, 2, 0, False), pool_output_size(5, 3, 1, 0, False)
    (12, 3, 3)
    """
    if size is None:
        return None
    padded = size + 2 * pad
    if ignore_border:
        return max((padded - ws) // stride + 1, 0)
    if stride >= ws:
        return (padded - 1) // stride + 1
    return max(0, (padded - 1 - ws + stride) // stride) + 1


def pool_window(r: int, size: int, ws: int, stride: int, pad: int, include_pad: bool):
    """Window ``r``'s ``[start, end)`` in input coordinates (negative or past ``size`` only
    with ``include_pad``), and its element count (the divisor of the averages).

    >>> pool_window(0, 5, 3, 2, 1, False), pool_window(0, 5, 3, 2, 1, True)
    ((0, 2, 2), (-1, 2, 3))
    """
    start = r * stride
    end = min(start + ws, size + 2 * pad)
    if include_pad:
        return start - pad, end - pad, end - start
    lo, hi = max(start, pad) - pad, min(end, size + pad) - pad
    return lo, hi, hi - lo


def _check_pool(xt: TensorType, ws, stride, pad, ignore_border, mode) -> None:
    if mode not in POOL_MODES:
        raise VerifyError(f"mode must be one of {', '.join(POOL_MODES)}, got {mode!r}")
    if xt.rank < 2:
        raise VerifyError(f"the input must have rank 2 or more (pooling its last two "
                          f"dimensions), got {xt}")
    if not (xt.element.is_float or xt.element.is_int):
        raise VerifyError(f"the input must be numeric, got {xt}")
    if mode.startswith("average") and not xt.element.is_float:
        raise VerifyError(f"mode {mode!r} needs a float input, got {xt}; cast it first")
    for what, values, low in (("ws", ws, 1), ("stride", stride, 1), ("pad", pad, 0)):
        if len(values) != 2 or any(int(v) < low for v in values):
            raise VerifyError(f"{what} must be two integers of at least {low}, got "
                              f"{tuple(values)}")
    if any(pad) and not ignore_border:
        raise VerifyError(f"pad {tuple(pad)} needs ignore_border=True")
    if any(p >= w for p, w in zip(pad, ws)):
        raise VerifyError(f"pad {tuple(pad)} must be smaller than ws {tuple(ws)}")


def pool2d_type(xt: TensorType, ws, stride, pad, ignore_border, mode) -> TensorType:
    """The result type of ``tensor.pool2d``; a window larger than the (padded) input with
    ``ignore_border`` is an error naming ``ws``.

    >>> from lowering.ir.types import F64
    >>> str(pool2d_type(TensorType((3, 7, None), F64), (2, 3), (1, 3), (0, 0), False, "max"))
    'tensor<3x6x?xf64>'
    """
    _check_pool(xt, ws, stride, pad, ignore_border, mode)
    sizes = []
    for d in range(2):
        size = xt.shape[xt.rank - 2 + d]
        if size is not None and ignore_border and ws[d] > size + 2 * pad[d]:
            raise VerifyError(f"the window ws={tuple(ws)} is larger than the input's "
                              f"{'rows' if d == 0 else 'columns'} ({size}, padded by {pad[d]}) "
                              f"with ignore_border=True")
        sizes.append(pool_output_size(size, ws[d], stride[d], pad[d], ignore_border))
    return TensorType((*xt.shape[:-2], *sizes), xt.element)


class _PoolBase(TensorOp):
    ws = attr(ArrayAttrOf(IntAttr))
    stride = attr(ArrayAttrOf(IntAttr))
    pad = attr(ArrayAttrOf(IntAttr))
    ignore_border = attr(IntAttr)
    mode = attr(EnumAttr(POOL_MODES))
    result = result(AnyTensor)

    @staticmethod
    def pool_attributes(ws, stride, pad, ignore_border, mode) -> dict:
        def ints(values):
            return ArrayAttr(tuple(IntAttr(int(v)) for v in values))

        return {"ws": ints(ws), "stride": ints(stride), "pad": ints(pad),
                "ignore_border": BoolAttr(bool(ignore_border)), "mode": StringAttr(mode)}

    def settings(self) -> dict:
        return {"ws": tuple(self.ws), "stride": tuple(self.stride), "pad": tuple(self.pad),
                "ignore_border": bool(self.ignore_border), "mode": self.mode}

    def forward_type(self) -> TensorType:
        return pool2d_type(self.input.type, self.ws, self.stride, self.pad,
                           bool(self.ignore_border), self.mode)


@register_op
class Pool2dOp(_PoolBase):
    """``tensor.pool2d %x``: pooling over the last two dimensions (see the module docstring)."""

    name = "tensor.pool2d"
    assembly_format = ("$input `ws` $ws `stride` $stride `pad` $pad `ignore_border` "
                       "$ignore_border `mode` $mode attr-dict : type($input) -> type($result)")
    input = operand(AnyTensor)

    @classmethod
    def build(cls, x: Value, ws, stride=None, pad=(0, 0), ignore_border: bool = True,
              mode: str = "max", location=None) -> "Pool2dOp":
        stride = tuple(ws) if stride is None else tuple(stride)
        with op_errors(cls.name):
            rtype = pool2d_type(tensor_of(x), tuple(ws), stride, tuple(pad), ignore_border, mode)
        return cls.create([x], [rtype], cls.pool_attributes(ws, stride, pad, ignore_border, mode),
                          location=location)

    def inferred_type(self):
        return self.forward_type()

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type

        g = output_grads[0]
        if g is None or not is_differentiable_type(self.input.type):
            return [None]
        g = match_type(g, self.result, self.location)
        return [Pool2dGradOp.build(self.input, self.result, g, location=self.location,
                                   **self.settings()).result]


@register_op
class Pool2dGradOp(_PoolBase):
    """``tensor.pool2d_grad %x, %out, %g``: the gradient of ``tensor.pool2d`` with respect to
    its input ``%x``, given its result ``%out`` (read by ``max`` only) and the output gradient
    ``%g``."""

    name = "tensor.pool2d_grad"
    assembly_format = ("$input, $output, $output_grad `ws` $ws `stride` $stride `pad` $pad "
                       "`ignore_border` $ignore_border `mode` $mode attr-dict : "
                       "type($input, $output, $output_grad) -> type($result)")
    input = operand(AnyTensor)
    output = operand(AnyTensor)
    output_grad = operand(AnyTensor)

    @classmethod
    def build(cls, x: Value, out: Value, g: Value, ws, stride, pad, ignore_border: bool,
              mode: str, location=None) -> "Pool2dGradOp":
        op = cls.create([x, out, g], [x.type], cls.pool_attributes(ws, stride, pad,
                                                                     ignore_border, mode),
                        location=location)
        with op_errors(cls.name):
            op.inferred_type()
        return op

    def inferred_type(self):
        forward = self.forward_type()
        for what, v in (("output", self.output), ("output gradient", self.output_grad)):
            t = v.type
            if not isinstance(t, TensorType) or t.rank != forward.rank or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(t.shape, forward.shape)):
                raise VerifyError(f"the {what} {t} does not fit the pooling's result {forward}")
        return self.input.type


# ---------------------------------------------------------------------------------------------
# Interpreter rules: one window at a time, vectorized over the leading dimensions


def _windows(op, shape):
    sizes = shape[-2:]
    include_pad = op.mode == "average_inc_pad"
    out = [pool_output_size(sizes[d], op.ws[d], op.stride[d], op.pad[d], bool(op.ignore_border))
           for d in range(2)]
    if op.ignore_border and any(op.ws[d] > sizes[d] + 2 * op.pad[d] for d in range(2)):
        raise ValueError(f"{op.name}: the window {tuple(op.ws)} is larger than the input of "
                         f"shape {tuple(shape)}")
    per_dim = [[pool_window(r, sizes[d], op.ws[d], op.stride[d], op.pad[d], include_pad)
                for r in range(out[d])] for d in range(2)]
    for r0, (lo0, hi0, n0) in enumerate(per_dim[0]):
        for r1, (lo1, hi1, n1) in enumerate(per_dim[1]):
            rows = slice(max(lo0, 0), min(hi0, sizes[0]))
            cols = slice(max(lo1, 0), min(hi1, sizes[1]))
            yield (r0, r1), rows, cols, n0 * n1
    return out


def _output_shape(op, shape):
    return (*shape[:-2], *(pool_output_size(shape[-2 + d], op.ws[d], op.stride[d], op.pad[d],
                                            bool(op.ignore_border)) for d in range(2)))


@INTERPRETER.register(Pool2dOp)
def _pool2d(interp, op, args):
    x = np.asarray(args[0])
    z = np.zeros(_output_shape(op, x.shape), dtype=x.dtype)
    for (r0, r1), rows, cols, count in _windows(op, x.shape):
        window = x[..., rows, cols]
        if op.mode == "max":
            z[..., r0, r1] = window.max(axis=(-2, -1))
        else:
            total = window.sum(axis=(-2, -1))
            z[..., r0, r1] = total if op.mode == "sum" else total / count
    return [fit_result(op, z)]


@INTERPRETER.register(Pool2dGradOp)
def _pool2d_grad(interp, op, args):
    x, out, g = (np.asarray(a) for a in args)
    gx = np.zeros(x.shape, dtype=x.dtype)
    for (r0, r1), rows, cols, count in _windows(op, x.shape):
        gz = g[..., r0, r1, None, None]
        if op.mode == "max":
            gx[..., rows, cols] += np.where(x[..., rows, cols] == out[..., r0, r1, None, None],
                                            gz, 0)
        else:
            gx[..., rows, cols] += gz if op.mode == "sum" else gz / count
    return [fit_result(op, gx)]
