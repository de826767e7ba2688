"""``theano.tensor.nnet.sigm``: the sigmoid family, where Theano defines it.

>>> import lowering.tensor as T
>>> hard_sigmoid(T.fvector("x")).dtype
'float32'
"""
from lowering.frontend.nnet import hard_sigmoid, sigmoid, softplus  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
