"""``theano.tensor.xlogx``: ``xlogx(x) = x log(x)`` and ``xlogy0(x, y) = x log(y)``, 0 where ``x``
is 0 (see ``lowering.frontend.xlogx``).

>>> import lowering.tensor as T
>>> xlogy0(T.dvector("x"), T.dvector("y")).ndim
1
"""
from lowering.frontend.xlogx import xlogx, xlogy0  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
