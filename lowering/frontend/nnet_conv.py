"""``T.nnet.conv``: Theano's older convolution module (``theano.tensor.nnet.conv``), whose
``conv2d`` takes ``image_shape`` before ``filter_shape`` and only the ``'valid'`` and ``'full'``
border modes; it builds the same ``tensor.conv2d`` as ``T.nnet.conv2d``.

>>> from lowering.frontend.constructors import tensor4
>>> conv2d(tensor4("x"), tensor4("w"), border_mode="full").ndim
4
"""
from __future__ import annotations

from . import conv
from .errors import GraphBuildError
from .variable import TensorVariable


def conv2d(input, filters, image_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), **kargs) -> TensorVariable:
    """The 2-D convolution of ``input`` with ``filters`` (flipped: a true convolution);
    ``border_mode`` ``'valid'`` or ``'full'``."""
    if border_mode not in ("valid", "full"):
        raise GraphBuildError(f"conv.conv2d: border_mode must be 'valid' or 'full', got "
                              f"{border_mode!r}")
    # The old op's tuning arguments (unroll_batch, unroll_kern, ...) do not change the result.
    return conv.conv2d(input, filters, input_shape=image_shape, filter_shape=filter_shape,
                       border_mode=border_mode, subsample=subsample)
