"""``theano.tensor.basic``: where Theano defines most of ``theano.tensor``; here the same names as
``lowering.tensor`` (whose other submodules hold the rest of Theano's paths).

>>> import lowering.tensor as T
>>> dmatrix is T.dmatrix and dot is T.dot
True
"""
from lowering.tensor import *  # noqa: F401,F403 - the package's names, gathered before this module
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
