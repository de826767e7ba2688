"""Explicit transfers between host and GPU, spelled as Theano's sandbox spells them.

>>> import lowering.tensor as T
>>> gpu_from_host(T.vector("x"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
lowering.sandbox.transfers.GpuUnavailableError: gpu_from_host moves a variable to the GPU: ...
"""
from __future__ import annotations

from lowering.compile.pipeline import EXECUTORS
from lowering.config import config


class GpuUnavailableError(RuntimeError):
    """A GPU operation was asked for, but GPU execution is not set up (names what is missing)."""


def _require_gpu(what: str) -> None:
    missing = []
    if not config.device.startswith(("cuda", "gpu")):
        missing.append(f"device=cuda (the device flag is {config.device!r}; set it with "
                       f"LOWERING_FLAGS=device=cuda or THEANO_FLAGS=device=cuda)")
    if "gpu" not in EXECUTORS:
        missing.append("the GPU backend (PyCUDA and an NVIDIA GPU), which is not available in "
                       "this installation")
    if missing:
        raise GpuUnavailableError(f"{what}: it needs {' and '.join(missing)}")


def gpu_from_host(x):
    """``x`` on the default GPU context, kept there when it is a function's output."""
    _require_gpu("gpu_from_host moves a variable to the GPU")
    return x.transfer(None)


def host_from_gpu(x):
    """``x`` back on the host."""
    _require_gpu("host_from_gpu moves a variable from the GPU")
    return x.transfer("cpu")
