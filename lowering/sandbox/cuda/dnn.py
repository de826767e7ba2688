"""``theano.sandbox.cuda.dnn``: the old back end's cuDNN probe, ``dnn_available()``: False, as
cuDNN is not part of this compiler (see ``lowering.gpuarray.dnn``).

>>> dnn_available(), dnn_available.msg == NO_CUDNN
(False, True)
"""
from __future__ import annotations

from lowering.gpuarray.dnn import NO_CUDNN
from lowering.unsupported import mirror_getattr


def dnn_available() -> bool:
    """Whether cuDNN can be used: never here (see ``dnn_available.msg``)."""
    return False


dnn_available.msg = NO_CUDNN

__getattr__ = mirror_getattr(__name__)
