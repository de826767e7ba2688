"""``theano.tensor.type``: ``TensorType``, a dtype and a broadcastable pattern (see
``lowering.frontend.types``).

>>> TensorType("float64", (False,))
TensorType(float64, vector)
"""
from lowering.frontend.types import TensorType  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
