"""``theano.tensor.nnet.abstract_conv``: where Theano defines ``conv2d`` (``T.nnet.conv2d``).

>>> import lowering.tensor as T
>>> conv2d(T.tensor4("x"), T.tensor4("w"), border_mode="half").ndim
4
"""
from lowering.frontend.conv import conv2d  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
