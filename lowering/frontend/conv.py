"""``T.nnet.conv2d``: Theano's 2-D convolution of a mini-batch of images with a bank of filters
(``theano.tensor.nnet.abstract_conv.conv2d``), on the tensor dialect's ``tensor.conv2d``.

>>> from lowering.frontend.constructors import tensor4
>>> images, filters = tensor4("images", dtype="float32"), tensor4("filters", dtype="float32")
>>> out = conv2d(images, filters, input_shape=(500, 1, 28, 28), filter_shape=(20, 1, 5, 5))
>>> out.ndim, out.dtype
(4, 'float32')
"""
from __future__ import annotations

import numpy as np

from lowering.dialects.tensor import Conv2dOp
from lowering.dialects.tensor.conv import conv2d_type
from lowering.ir.core import VerifyError
from lowering.ir.types import TensorType as IRTensorType

from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast, float_dtype_for
from .errors import GraphBuildError
from .variable import TensorVariable


def pair(value, what: str) -> tuple[int, int]:
    """An int or a pair of ints as a pair; anything else is an error naming ``what``.

    >>> pair(2, "subsample"), pair((1, 3), "subsample")
    ((2, 2), (1, 3))
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value), int(value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return int(value[0]), int(value[1])
    raise GraphBuildError(f"{what} must be an int or a pair of ints, got {value!r}")


def border_geometry(border_mode) -> tuple[str, tuple[int, int]]:
    """Theano's ``border_mode`` as ``(mode, explicit padding)``: ``'valid'``, ``'full'``,
    ``'half'``, an int or a pair of ints (zeros added on each side).

    >>> border_geometry("half"), border_geometry(2), border_geometry((1, 0))
    (('half', (0, 0)), ('explicit', (2, 2)), ('explicit', (1, 0)))
    """
    if isinstance(border_mode, str):
        if border_mode not in ("valid", "full", "half"):
            raise GraphBuildError(f"conv2d: border_mode must be 'valid', 'full', 'half', an int "
                                  f"or a pair of ints, got {border_mode!r}")
        return border_mode, (0, 0)
    pad = pair(border_mode, "conv2d: border_mode")
    if min(pad) < 0:
        raise GraphBuildError(f"conv2d: border_mode padding must not be negative, got {pad}")
    return "explicit", pad


def _check_hint(var: TensorVariable, hint, what: str) -> None:
    """A shape hint (``input_shape``, ``filter_shape``) must have 4 entries (ints or None) that
    agree with the variable's static sizes."""
    if hint is None:
        return
    hint = tuple(hint)
    if len(hint) != 4 or any(h is not None and not isinstance(h, (int, np.integer))
                             for h in hint):
        raise GraphBuildError(f"conv2d: {what} must be 4 ints or None, got {hint!r}")
    for d, (h, s) in enumerate(zip(hint, var.value.type.shape)):
        if h is not None and s is not None and h != s:
            raise GraphBuildError(f"conv2d: {what}[{d}] is {h} but {var} has size {s} there")


def _hinted(var: TensorVariable, hint) -> IRTensorType:
    """The variable's IR type with the sizes ``hint`` gives where the type has ``?``."""
    t = var.value.type
    if hint is None:
        return t
    return IRTensorType(tuple(s if s is not None else h for s, h in zip(t.shape, hint)),
                        t.element)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, image_shape=None, filter_dilation=(1, 1),
           num_groups=1, unshared=False, **kwargs) -> TensorVariable:
    """The 2-D convolution of ``input`` (batch, channels, rows, columns) with ``filters``
    (outputs, channels, rows, columns): a true convolution with ``filter_flip`` (the default),
    a cross-correlation without. ``border_mode``: ``'valid'``, ``'full'``, ``'half'``, an int or
    a pair of ints; ``subsample``: the strides; ``filter_dilation``: the spacing of the filter
    taps. ``input_shape`` (or the older ``image_shape``) and ``filter_shape`` are hints, checked
    against each other and the variables."""
    if kwargs:
        raise GraphBuildError(f"conv2d: unexpected arguments {', '.join(sorted(kwargs))}")
    if num_groups != 1:
        raise GraphBuildError(f"conv2d: num_groups={num_groups} (grouped convolution) is not "
                              f"supported; only num_groups=1")
    if unshared:
        raise GraphBuildError("conv2d: unshared=True (locally connected filters) is not "
                              "supported")
    if image_shape is not None:
        if input_shape is not None:
            raise GraphBuildError("conv2d: give input_shape or image_shape (its old name), not "
                                  "both")
        input_shape = image_shape
    x, w = as_tensor_variable(input), as_tensor_variable(filters)
    for what, var in (("input", x), ("filters", w)):
        if var.ndim != 4:
            raise GraphBuildError(f"conv2d: {what} must be a 4-d tensor, got {var} of rank "
                                  f"{var.ndim}")
    _check_hint(x, input_shape, "input_shape")
    _check_hint(w, filter_shape, "filter_shape")
    mode, pad = border_geometry(border_mode)
    subsample = pair(subsample, "conv2d: subsample")
    filter_dilation = pair(filter_dilation, "conv2d: filter_dilation")
    try:  # the checks of the op's type inference, on the sizes the hints add
        conv2d_type(_hinted(x, input_shape), _hinted(w, filter_shape), mode, pad, subsample,
                    filter_dilation)
    except VerifyError as exc:
        raise GraphBuildError(f"conv2d: {exc.message}") from None
    dtype = float_dtype_for(np.result_type(x.dtype, w.dtype).name)
    return apply(Conv2dOp, cast(x, dtype), cast(w, dtype), named=[x, w], border_mode=mode,
                 pad=pad, subsample=subsample, dilation=filter_dilation,
                 filter_flip=bool(filter_flip))
