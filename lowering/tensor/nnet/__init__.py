"""``theano.tensor.nnet``: activation functions, losses and convolution for neural networks.

Defined in ``lowering.frontend.nnet``; this package gathers them under Theano's module paths
(``nnet.conv``, ``nnet.nnet``, ``nnet.sigm``, ``nnet.abstract_conv``).

>>> import lowering.tensor as T
>>> T.nnet.relu(T.fvector("x")).dtype
'float32'
"""
from lowering.frontend.nnet import (binary_crossentropy, categorical_crossentropy,  # noqa: F401
                                    conv2d, hard_sigmoid, log_softmax, logsoftmax, relu, sigmoid,
                                    sigmoid_binary_crossentropy, softmax, softplus)
from lowering.unsupported import mirror_getattr

from . import abstract_conv, conv, nnet, sigm  # noqa: F401,E402

__getattr__ = mirror_getattr(__name__)
