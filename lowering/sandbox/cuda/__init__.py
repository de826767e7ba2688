"""``theano.sandbox.cuda``: ``CudaNdarray``, the probes ``cuda_available`` and ``cuda_enabled``,
the transfer functions of ``basic_ops`` (see ``lowering.sandbox.transfers``) and ``dnn``'s
probe (cuDNN is not used: ``dnn.dnn_available()`` is False).

``cuda_available``: a GPU can be used (PyCUDA with a CUDA driver and an NVIDIA GPU, or the
simulated device); ``cuda_enabled``: also the ``device`` flag asks for one, as Theano's was true
once its GPU back end was in use. Both are read when asked: flags may change after import.

>>> import lowering
>>> with lowering.config.change_flags(device="cpu"):
...     lowering.sandbox.cuda.cuda_enabled
False
"""
from lowering.unsupported import mirror_getattr

from . import basic_ops, dnn  # noqa: F401
from .cuda_ndarray import CudaNdarray  # noqa: F401

_missing_name = mirror_getattr(__name__)


def __getattr__(name: str):
    if name in ("cuda_available", "cuda_enabled"):
        from lowering.frontend.gpu import gpu_device_flag, gpu_missing
        usable = gpu_missing() is None
        return usable and (name == "cuda_available" or gpu_device_flag())
    return _missing_name(name)
