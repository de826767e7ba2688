"""``theano.tensor.nnet.conv``: Theano's older convolution module, whose ``conv2d`` takes
``image_shape`` before ``filter_shape`` (see ``lowering.frontend.nnet_conv``).

>>> import lowering.tensor as T
>>> conv2d(T.tensor4("x"), T.tensor4("w"), border_mode="full").ndim
4
"""
from lowering.frontend.nnet_conv import conv2d  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
