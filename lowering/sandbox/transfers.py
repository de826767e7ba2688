"""Explicit transfers between host and GPU, spelled as Theano's sandbox spells them.

``gpu_from_host(x)`` is ``x.transfer(None)`` (``x`` on the default GPU context, kept there when
it is a function's output); ``host_from_gpu(x)`` is ``x.transfer('cpu')``. Both need the
``device`` flag to ask for a GPU and a GPU to be usable (PyCUDA with a CUDA driver and an NVIDIA
GPU, or the interpreted device of ``gpuarray.simulate=True``); otherwise they raise
``GpuUnavailableError`` saying what is missing and how to get it.

>>> import lowering.tensor as T
>>> gpu_from_host(T.vector("x"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
lowering.sandbox.transfers.GpuUnavailableError: gpu_from_host moves a variable to the GPU: ...
"""
from __future__ import annotations

from lowering.config import config
from lowering.frontend.constructors import as_tensor_variable
from lowering.frontend.gpu import CudaUnavailableError, gpu_device_flag, gpu_missing


class GpuUnavailableError(CudaUnavailableError):
    """A GPU transfer was asked for where GPU execution is not set up: the ``device`` flag does
    not ask for a GPU, or no GPU can be used (the message names each missing part)."""


def require_gpu_device(what: str) -> None:
    """Nothing when the device flag asks for a GPU and one can be used; else
    GpuUnavailableError starting with ``what`` and naming everything that is missing."""
    missing = []
    if not gpu_device_flag():
        missing.append(f"device=cuda (the device flag is {config.device!r}; set it with "
                       f"LOWERING_FLAGS=device=cuda or THEANO_FLAGS=device=cuda)")
    reason = gpu_missing()
    if reason is not None:
        missing.append(f"a usable GPU: {reason}")
    if missing:
        raise GpuUnavailableError(f"{what}: it needs {' and '.join(missing)}")


def gpu_from_host(x):
    """``x`` on the default GPU context, kept there when it is a function's output."""
    require_gpu_device("gpu_from_host moves a variable to the GPU")
    return as_tensor_variable(x).transfer(None)


def host_from_gpu(x):
    """``x`` back on the host."""
    require_gpu_device("host_from_gpu moves a variable from the GPU")
    return as_tensor_variable(x).transfer("cpu")
