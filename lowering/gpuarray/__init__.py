"""``theano.gpuarray``: the probes and transfers of Theano 1.0's GPU back end.

``pygpu_activated`` is False: this compiler's GPU back end (PyCUDA and its own kernels, see
docs/gpu.md) does not use pygpu, so code written for pygpu's arrays and cuDNN ops takes its
CPU path; ``dnn.dnn_available()`` is False. ``basic_ops`` moves variables to a GPU context and
back, as in ``lowering.sandbox.gpuarray``.

>>> pygpu_activated, dnn.dnn_present()
(False, False)
"""
from lowering.unsupported import mirror_getattr

from . import basic_ops, dnn  # noqa: F401

pygpu_activated = False

__getattr__ = mirror_getattr(__name__)
