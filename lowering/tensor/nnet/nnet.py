"""``theano.tensor.nnet.nnet``: softmax, rectifiers and cross-entropies, where Theano defines them.

>>> import lowering.tensor as T
>>> categorical_crossentropy(softmax(T.dmatrix("p")), T.ivector("y")).ndim
1
"""
from lowering.frontend.nnet import (binary_crossentropy, categorical_crossentropy,  # noqa: F401
                                    log_softmax, logsoftmax, relu, sigmoid_binary_crossentropy,
                                    softmax)
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
