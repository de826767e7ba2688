"""``theano.tensor.signal.pool``: pooling over the last two dimensions (see
``lowering.frontend.pool``).

>>> import lowering.tensor as T
>>> pool_2d(T.tensor4("x"), ws=(2, 2), ignore_border=True).ndim
4
"""
from lowering.frontend.pool import pool_2d  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
