"""``theano.tensor.extra_ops``: the NumPy-like helpers Theano keeps apart from ``theano.tensor``.

>>> import lowering.tensor as T
>>> squeeze(T.row("r")).ndim
1
"""
from lowering.frontend.shapes import squeeze  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
