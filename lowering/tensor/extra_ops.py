"""``theano.tensor.extra_ops``: the NumPy-like helpers Theano keeps apart from ``theano.tensor``.

>>> import lowering.tensor as T
>>> squeeze(T.row("r")).ndim
1
>>> cumsum(T.vector("v")).ndim
1
"""
from lowering.frontend.extra_ops import (bincount, cumprod, cumsum, diff,  # noqa: F401
                                         fill_diagonal, fill_diagonal_offset, ravel_multi_index,
                                         repeat, squeeze, to_one_hot, unravel_index)
from lowering.frontend.windows import bartlett  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
