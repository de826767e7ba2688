"""``theano.sparse``: sparse matrix variables and operations on scipy.sparse (the ``sparse``
extra: ``pip install 'lowering[sparse]'``). See ``basic`` and docs/sparse.md.

>>> import lowering as theano
>>> x = theano.sparse.csr_matrix("x", dtype="float32")
>>> x.type
Sparse[float32, csr]
"""
from .basic import *  # noqa: F401,F403
from .basic import __all__  # noqa: F401
from . import basic  # noqa: F401
