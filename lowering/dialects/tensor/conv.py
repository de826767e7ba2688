"""2-D convolution: ``tensor.conv2d`` and its two gradients, ``tensor.conv2d_grad_inputs`` and
``tensor.conv2d_grad_filters``.

The input is ``(batch, channels, rows, columns)``, the filters ``(outputs, channels, rows,
columns)``. With ``filter_flip`` (Theano's default) the op is a true convolution: the filters are
flipped in both spatial dimensions before they slide; without it, a cross-correlation. Writing
``w'`` for the (possibly flipped) filters, ``p`` for the padding and ``s``, ``d`` for the
subsampling and the dilation::

    out[n, o, i, j] = sum_{c, a, b} x_padded[n, c, i*s0 + a*d0, j*s1 + b*d1] * w'[o, c, a, b]

``border_mode`` says the padding: ``valid`` none, ``full`` ``d*(k-1)`` (every overlap), ``half``
``d*(k//2)`` (the output keeps the input's size for odd ``k`` and ``s = 1``), ``explicit`` the
``pad`` attribute. The gradient ops take the value whose shape they produce as a third operand
(only its sizes are read), so every size stays known where the forward op's were.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> x, w = Block([TensorType((None, 1, 28, 28), F32), TensorType((20, 1, 5, 5), F32)]).args
>>> str(Conv2dOp.build(x, w).result.type)
'tensor<?x20x24x24xf32>'
>>> str(Conv2dOp.build(x, w, border_mode="half", subsample=(2, 2)).result.type)
'tensor<?x20x14x14xf32>'
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

BORDER_MODES = ("valid", "full", "half", "explicit")


def conv_padding(border_mode: str, pad, kernel: int, dilation: int) -> int:
    """The zeros added on each side of one spatial dimension.

    >>> conv_padding("full", (0, 0), 5, 1), conv_padding("half", (0, 0), 5, 2)
    (4, 4)
    """
    if border_mode == "valid":
        return 0
    if border_mode == "full":
        return dilation * (kernel - 1)
    if border_mode == "half":
        return dilation * (kernel // 2)
    return pad


def conv_output_size(size, kernel, pad: int, stride: int, dilation: int):
    """The output size of one spatial dimension (None where a size is unknown); below 1 when
    the dilated kernel does not fit the padded input.

    >>> conv_output_size(28, 5, 0, 1, 1), conv_output_size(7, 3, 1, 2, 1), conv_output_size(None, 3, 0, 1, 1)
    (24, 4, None)
    """
    if size is None or kernel is None:
        return None
    return (size + 2 * pad - (dilation * (kernel - 1) + 1)) // stride + 1


class _ConvBase(TensorOp):
    """What the three ops share: the geometry attributes and their checks."""

    border_mode = attr(EnumAttr(BORDER_MODES))
    pad = attr(ArrayAttrOf(IntAttr))
    subsample = attr(ArrayAttrOf(IntAttr))
    dilation = attr(ArrayAttrOf(IntAttr))
    filter_flip = attr(IntAttr)
    result = result(AnyTensor)

    @staticmethod
    def geometry_attributes(border_mode, pad, subsample, dilation, filter_flip) -> dict:
        def ints(values):
            return ArrayAttr(tuple(IntAttr(int(v)) for v in values))

        return {"border_mode": StringAttr(border_mode), "pad": ints(pad),
                "subsample": ints(subsample), "dilation": ints(dilation),
                "filter_flip": BoolAttr(bool(filter_flip))}

    def geometry(self) -> dict:
        return {"border_mode": self.border_mode, "pad": tuple(self.pad),
                "subsample": tuple(self.subsample), "dilation": tuple(self.dilation),
                "filter_flip": bool(self.filter_flip)}

    def paddings(self, kernel_sizes) -> tuple[int, int]:
        """The padding of both spatial dimensions for filters of ``kernel_sizes``."""
        return tuple(conv_padding(self.border_mode, self.pad[d], kernel_sizes[d],
                                  self.dilation[d]) for d in range(2))


def _check_geometry(border_mode, pad, subsample, dilation) -> None:
    if border_mode not in BORDER_MODES:
        raise VerifyError(f"border_mode must be one of {', '.join(BORDER_MODES)}, got "
                          f"{border_mode!r}")
    for what, values, low in (("pad", pad, 0), ("subsample", subsample, 1),
                              ("filter_dilation", dilation, 1)):
        if len(values) != 2 or any(int(v) < low for v in values):
            raise VerifyError(f"{what} must be two integers of at least {low}, got "
                              f"{tuple(values)}")


def conv2d_type(xt: TensorType, wt: TensorType, border_mode, pad, subsample,
                dilation) -> TensorType:
    """The result type of ``tensor.conv2d`` (the checks name the arguments the front end takes).

    >>> from lowering.ir.types import F64
    >>> str(conv2d_type(TensorType((2, 3, 9, None), F64), TensorType((4, 3, 3, 3), F64),
    ...                 "full", (0, 0), (1, 1), (1, 1)))
    'tensor<2x4x11x?xf64>'
    """
    _check_geometry(border_mode, pad, subsample, dilation)
    for what, t in (("input", xt), ("filters", wt)):
        if t.rank != 4:
            raise VerifyError(f"the {what} must have rank 4 (batch/outputs, channels, rows, "
                              f"columns), got {t}")
        if not t.element.is_float:
            raise VerifyError(f"the {what} must be float, got {t}")
    if xt.element != wt.element:
        raise VerifyError(f"the input {xt} and the filters {wt} must have one element type")
    channels, filter_channels = xt.shape[1], wt.shape[1]
    if None not in (channels, filter_channels) and channels != filter_channels:
        raise VerifyError(f"the filters have {filter_channels} input channels (filter_shape[1]) "
                          f"but the input has {channels} (input_shape[1])")
    sizes = []
    for d in range(2):
        size, kernel = xt.shape[2 + d], wt.shape[2 + d]
        p = conv_padding(border_mode, pad[d], kernel, dilation[d]) if kernel is not None else None
        out = None if p is None else conv_output_size(size, kernel, p, subsample[d], dilation[d])
        if out is not None and out < 1:
            raise VerifyError(f"the filters' {'rows' if d == 0 else 'columns'} ({kernel}, dilated "
                              f"by {dilation[d]}) do not fit the input's {size} (padded by {p} on "
                              f"each side) with border_mode {border_mode!r}")
        sizes.append(out)
    return TensorType((xt.shape[0], wt.shape[0], *sizes), xt.element)


@register_op
class Conv2dOp(_ConvBase):
    """``tensor.conv2d %x, %w``: the 2-D convolution of a batch of images with a bank of
    filters (see the module docstring)."""

    name = "tensor.conv2d"
    assembly_format = ("$input, $filters `border_mode` $border_mode `pad` $pad `subsample` "
                       "$subsample `dilation` $dilation `filter_flip` $filter_flip attr-dict : "
                       "type($input, $filters) -> type($result)")
    input = operand(AnyTensor)
    filters = operand(AnyTensor)

    @classmethod
    def build(cls, x: Value, w: Value, border_mode: str = "valid", pad=(0, 0),
              subsample=(1, 1), dilation=(1, 1), filter_flip: bool = True,
              location=None) -> "Conv2dOp":
        with op_errors(cls.name):
            rtype = conv2d_type(tensor_of(x), tensor_of(w), border_mode, pad, subsample, dilation)
        return cls.create([x, w], [rtype], cls.geometry_attributes(
            border_mode, pad, subsample, dilation, filter_flip), location=location)

    def inferred_type(self):
        return conv2d_type(self.input.type, self.filters.type, self.border_mode, self.pad,
                           self.subsample, self.dilation)

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type

        g = output_grads[0]
        if g is None or not is_differentiable_type(self.result.type):
            return [None, None]
        loc, geometry = self.location, self.geometry()
        g = match_type(g, self.result, loc)
        gx = Conv2dGradInputsOp.build(g, self.filters, self.input, location=loc, **geometry)
        gw = Conv2dGradFiltersOp.build(self.input, g, self.filters, location=loc, **geometry)
        return [gx.result, gw.result]


def _grad_type(op_name: str, xt, wt, gt, border_mode, pad, subsample, dilation) -> None:
    """Check that the output gradient ``gt`` has the forward op's result shape."""
    forward = conv2d_type(xt, wt, border_mode, pad, subsample, dilation)
    if gt.rank != 4 or gt.element != forward.element or any(
            a is not None and b is not None and a != b for a, b in zip(gt.shape, forward.shape)):
        raise VerifyError(f"the output gradient {gt} does not fit the convolution's result "
                          f"{forward}")


@register_op
class Conv2dGradInputsOp(_ConvBase):
    """``tensor.conv2d_grad_inputs %g, %w, %x``: the gradient of ``tensor.conv2d`` with
    respect to its input, given the output gradient ``%g``; the result has ``%x``'s type (only
    its sizes are read)."""

    name = "tensor.conv2d_grad_inputs"
    assembly_format = ("$output_grad, $filters, $input `border_mode` $border_mode `pad` $pad "
                       "`subsample` $subsample `dilation` $dilation `filter_flip` $filter_flip "
                       "attr-dict : type($output_grad, $filters, $input) -> type($result)")
    output_grad = operand(AnyTensor)
    filters = operand(AnyTensor)
    input = operand(AnyTensor)

    @classmethod
    def build(cls, g: Value, w: Value, x: Value, border_mode: str = "valid", pad=(0, 0),
              subsample=(1, 1), dilation=(1, 1), filter_flip: bool = True,
              location=None) -> "Conv2dGradInputsOp":
        with op_errors(cls.name):
            _grad_type(cls.name, tensor_of(x), tensor_of(w), tensor_of(g), border_mode, pad,
                       subsample, dilation)
        return cls.create([g, w, x], [x.type], cls.geometry_attributes(
            border_mode, pad, subsample, dilation, filter_flip), location=location)

    def inferred_type(self):
        _grad_type(self.name, self.input.type, self.filters.type, self.output_grad.type,
                   self.border_mode, self.pad, self.subsample, self.dilation)
        return self.input.type


@register_op
class Conv2dGradFiltersOp(_ConvBase):
    """``tensor.conv2d_grad_filters %x, %g, %w``: the gradient of ``tensor.conv2d`` with
    respect to its filters, given the input and the output gradient ``%g``; the result has
    ``%w``'s type (only its sizes are read)."""

    name = "tensor.conv2d_grad_filters"
    assembly_format = ("$input, $output_grad, $filters `border_mode` $border_mode `pad` $pad "
                       "`subsample` $subsample `dilation` $dilation `filter_flip` $filter_flip "
                       "attr-dict : type($input, $output_grad, $filters) -> type($result)")
    input = operand(AnyTensor)
    output_grad = operand(AnyTensor)
    filters = operand(AnyTensor)

    @classmethod
    def build(cls, x: Value, g: Value, w: Value, border_mode: str = "valid", pad=(0, 0),
              subsample=(1, 1), dilation=(1, 1), filter_flip: bool = True,
              location=None) -> "Conv2dGradFiltersOp":
        with op_errors(cls.name):
            _grad_type(cls.name, tensor_of(x), tensor_of(w), tensor_of(g), border_mode, pad,
                       subsample, dilation)
        return cls.create([x, g, w], [w.type], cls.geometry_attributes(
            border_mode, pad, subsample, dilation, filter_flip), location=location)

    def inferred_type(self):
        _grad_type(self.name, self.input.type, self.filters.type, self.output_grad.type,
                   self.border_mode, self.pad, self.subsample, self.dilation)
        return self.filters.type


# ---------------------------------------------------------------------------------------------
# Interpreter rules: one shifted view of the padded input per filter tap (a, b)


def _taps(op, x_shape, w_shape):
    """``(padded size, padding, output sizes)`` and an iterator over the filter taps: for each,
    the filter index it reads (flipped or not) and the slices of the padded input it meets."""
    kernel = w_shape[2:]
    pads = op.paddings(kernel)
    out = [conv_output_size(x_shape[2 + d], kernel[d], pads[d], op.subsample[d],
                            op.dilation[d]) for d in range(2)]
    if min(out) < 1:
        raise ValueError(f"{op.name}: filters of shape {tuple(w_shape)} do not fit the input of "
                         f"shape {tuple(x_shape)}")
    if x_shape[1] != w_shape[1]:
        raise ValueError(f"{op.name}: the filters have {w_shape[1]} channels, the input "
                         f"{x_shape[1]}")

    def taps():
        for a in range(kernel[0]):
            for b in range(kernel[1]):
                tap = (kernel[0] - 1 - a, kernel[1] - 1 - b) if op.filter_flip else (a, b)
                rows = slice(a * op.dilation[0], a * op.dilation[0] + op.subsample[0] * (out[0] - 1) + 1,
                             op.subsample[0])
                cols = slice(b * op.dilation[1], b * op.dilation[1] + op.subsample[1] * (out[1] - 1) + 1,
                             op.subsample[1])
                yield tap, rows, cols

    return pads, out, taps()


def _padded(x: np.ndarray, pads) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (pads[0], pads[0]), (pads[1], pads[1])))


@INTERPRETER.register(Conv2dOp)
def _conv2d(interp, op, args):
    x, w = (np.asarray(a) for a in args)
    pads, out, taps = _taps(op, x.shape, w.shape)
    xp = _padded(x, pads)
    z = np.zeros((x.shape[0], w.shape[0], *out), dtype=x.dtype)
    for tap, rows, cols in taps:
        z += np.einsum("nchw,oc->nohw", xp[:, :, rows, cols], w[:, :, tap[0], tap[1]])
    return [fit_result(op, z)]


@INTERPRETER.register(Conv2dGradInputsOp)
def _conv2d_grad_inputs(interp, op, args):
    g, w, x = (np.asarray(a) for a in args)
    pads, out, taps = _taps(op, x.shape, w.shape)
    gxp = np.zeros((*x.shape[:2], x.shape[2] + 2 * pads[0], x.shape[3] + 2 * pads[1]),
                   dtype=x.dtype)
    for tap, rows, cols in taps:
        gxp[:, :, rows, cols] += np.einsum("nohw,oc->nchw", g, w[:, :, tap[0], tap[1]])
    gx = gxp[:, :, pads[0]:pads[0] + x.shape[2], pads[1]:pads[1] + x.shape[3]]
    return [fit_result(op, gx)]


@INTERPRETER.register(Conv2dGradFiltersOp)
def _conv2d_grad_filters(interp, op, args):
    x, g, w = (np.asarray(a) for a in args)
    pads, out, taps = _taps(op, x.shape, w.shape)
    xp = _padded(x, pads)
    gw = np.zeros(w.shape, dtype=w.dtype)
    for tap, rows, cols in taps:
        gw[:, :, tap[0], tap[1]] = np.einsum("nohw,nchw->oc", g, xp[:, :, rows, cols])
    return [fit_result(op, gw)]
