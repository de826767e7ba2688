"""``theano.sandbox.gpuarray``: the GPU transfer functions of ``basic_ops`` (see
``lowering.sandbox.transfers``) and the probes of ``lowering.gpuarray`` (``pygpu_activated``
False, ``dnn.dnn_available()`` False).

>>> pygpu_activated
False
"""
from lowering.unsupported import mirror_getattr

from . import basic_ops, dnn  # noqa: F401

pygpu_activated = False  # as lowering.gpuarray's: the GPU back end does not use pygpu

__getattr__ = mirror_getattr(__name__)
