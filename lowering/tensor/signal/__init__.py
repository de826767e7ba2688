"""``theano.tensor.signal``: the package of ``pool`` (``T.signal.pool.pool_2d``).

>>> pool.pool_2d.__name__
'pool_2d'
"""
from lowering.unsupported import mirror_getattr

from . import pool  # noqa: F401

__getattr__ = mirror_getattr(__name__)
