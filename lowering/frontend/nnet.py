"""``T.nnet``: activation functions and losses for neural networks.

>>> from lowering.frontend.constructors import fmatrix, ivector
>>> p = softmax(fmatrix("x"))
>>> y = ivector("y")
>>> loss = categorical_crossentropy(p, y)
>>> p.dtype, loss.ndim, loss.dtype
('float32', 1, 'float32')
"""
from __future__ import annotations

import warnings

from lowering.dialects.tensor import LogSoftmaxOp, SoftmaxOp

from . import elemwise, reductions
from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast, float_dtype_for, sigmoid, softplus  # noqa: F401 - part of T.nnet
from .errors import GraphBuildError, GraphTypeError
from .indexing import getitem
from .shapes import arange, shape_i, shape_padleft
from .variable import TensorVariable


def _float(x) -> TensorVariable:
    x = as_tensor_variable(x)
    return cast(x, float_dtype_for(x.dtype))


def _vector_as_row(x, op_name: str) -> TensorVariable:
    """Theano 1.0's (Log)Softmax of a vector: a 1 x n row, with its deprecation warning."""
    x = as_tensor_variable(x)
    if x.ndim != 1:
        return x
    warnings.warn(f"DEPRECATION: If x is a vector, {op_name} will not automatically pad x "
                  f"anymore in next releases. If you need it, please do it manually. The "
                  f"vector case is gonna be supported soon and the output will be a vector.",
                  stacklevel=3)
    return shape_padleft(x)


def softmax(x, axis: int = -1) -> TensorVariable:
    """``exp(x) / sum(exp(x))`` along ``axis`` (the last by default), computed stably. A vector
    gives a 1 x n row, as in Theano 1.0 (with its deprecation warning)."""
    x = _vector_as_row(x, "Softmax")
    return apply(SoftmaxOp, _float(x), axis=axis, named=[x])


def log_softmax(x, axis: int = -1) -> TensorVariable:
    """``log(softmax(x))`` along ``axis``, computed stably; a vector gives a 1 x n row."""
    x = _vector_as_row(x, "LogSoftmax")
    return apply(LogSoftmaxOp, _float(x), axis=axis, named=[x])


logsoftmax = log_softmax


def relu(x, alpha=0) -> TensorVariable:
    """``max(x, 0)``; with ``alpha``, the leaky form ``x if x > 0 else alpha * x``."""
    x = as_tensor_variable(x)
    if isinstance(alpha, (int, float)) and alpha == 0:
        return elemwise.maximum(x, 0)
    return elemwise.switch(x > 0, x, alpha * x)


def hard_sigmoid(x) -> TensorVariable:
    """The piecewise-linear sigmoid ``clip(0.2 x + 0.5, 0, 1)``."""
    x = _float(x)
    return elemwise.clip(x * 0.2 + 0.5, 0, 1)


def binary_crossentropy(output, target) -> TensorVariable:
    """``-(target log(output) + (1 - target) log(1 - output))``, elementwise."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return -(target * elemwise.log(output) + (1 - target) * elemwise.log(1 - output))


def sigmoid_binary_crossentropy(output, target) -> TensorVariable:
    """``binary_crossentropy(sigmoid(output), target)`` computed from the logits without overflow:
    ``target softplus(-output) + (1 - target) softplus(output)``."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return target * softplus(-output) + (1 - target) * softplus(output)


def categorical_crossentropy(coding_dist, true_dist) -> TensorVariable:
    """The cross-entropy of each row of ``coding_dist`` (probabilities, the last axis summing to
    1) with ``true_dist``: either one-hot/probability rows of the same shape
    (``-sum(true_dist * log(coding_dist), axis=-1)``) or a vector of integer class labels
    (``-log(coding_dist[arange(n), true_dist])``)."""
    coding, true = as_tensor_variable(coding_dist), as_tensor_variable(true_dist)
    if true.ndim == coding.ndim:
        return -reductions.sum(true * elemwise.log(coding), axis=-1)
    if true.ndim == coding.ndim - 1 == 1:
        if not true.dtype.startswith(("int", "uint")):
            raise GraphTypeError(f"categorical_crossentropy: class labels must be integers, got "
                                 f"{true} of dtype {true.dtype}")
        picked = getitem(coding, (arange(shape_i(coding, 0)), true))
        return -elemwise.log(picked)
    raise GraphBuildError(f"categorical_crossentropy: true_dist ({true}, rank {true.ndim}) must "
                          f"have the rank of coding_dist ({coding}, rank {coding.ndim}) or be a "
                          f"vector of labels for a matrix")


# Convolution: ``T.nnet.conv2d`` and the older module ``T.nnet.conv``.
from .conv import conv2d  # noqa: E402,F401
from . import nnet_conv as conv  # noqa: E402,F401
