"""``theano.sandbox.gpuarray.dnn``: the cuDNN probes of ``lowering.gpuarray.dnn`` (False here).

>>> dnn_present()
False
"""
from lowering.gpuarray.dnn import dnn_available, dnn_present  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
