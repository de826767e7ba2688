"""``theano.scalar.basic``: where Theano defines ``upcast``.

>>> upcast("int32", "float32")
'float64'
"""
from lowering.frontend.scalar_names import upcast  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
