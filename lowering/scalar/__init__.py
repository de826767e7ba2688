"""``theano.scalar``: the scalar names programs use (``theano.scalar.upcast``; see
``lowering.frontend.scalar_names``).

>>> upcast("int8", "float32")
'float32'
"""
from lowering.frontend.scalar_names import upcast  # noqa: F401
from lowering.unsupported import mirror_getattr

from . import basic  # noqa: F401,E402

__getattr__ = mirror_getattr(__name__)
