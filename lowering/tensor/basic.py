"""``theano.tensor.basic``: where Theano defines most of ``theano.tensor``; here the same names as
``lowering.tensor`` (whose other submodules hold the rest of Theano's paths).

The package's names gathered before this module loads are copied in; any other name the package
has (those it gathers after loading its submodules: ``eye``, ``tile``, ``tensordot``, ...) is
read from it when asked for, so this module offers every name of ``lowering.tensor``.

>>> import lowering.tensor as T
>>> dmatrix is T.dmatrix and dot is T.dot
True
>>> from lowering.tensor.basic import eye, tensordot, tril
>>> eye is T.eye and tril is T.tril
True
"""
import sys

from lowering.tensor import *  # noqa: F401,F403 - the package's names, gathered before this module
from lowering.unsupported import mirror_getattr

_missing = mirror_getattr(__name__)


def __getattr__(name: str):
    package = sys.modules.get("lowering.tensor")
    if package is not None and not name.startswith("__") and name in vars(package):
        return vars(package)[name]
    return _missing(name)
