"""``T.signal``: Theano's ``theano.tensor.signal`` package; ``T.signal.pool.pool_2d``.

>>> pool.pool_2d.__name__
'pool_2d'
"""
from . import pool  # noqa: F401
