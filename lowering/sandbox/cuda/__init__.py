"""``theano.sandbox.cuda``: ``CudaNdarray``, ``cuda_available`` and the transfer functions of
``basic_ops`` (see ``lowering.sandbox.transfers``)."""
from . import basic_ops  # noqa: F401
from .cuda_ndarray import CudaNdarray  # noqa: F401


def __getattr__(name: str):
    # Read when asked: flags (device, gpuarray.simulate) may change after import.
    if name == "cuda_available":
        from lowering.frontend.gpu import gpu_missing
        return gpu_missing() is None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
