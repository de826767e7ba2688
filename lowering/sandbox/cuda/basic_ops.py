"""``theano.sandbox.cuda.basic_ops``: moving variables to the GPU and back.

``gpu_from_host`` / ``as_cuda_ndarray_variable`` give a variable on the default GPU context
(``x.transfer(None)``); ``gpu_contiguous`` asks for a C-contiguous one (the device inputs of
ops written in Python are always C-contiguous, see ``lowering.frontend.custom_op``);
``host_from_gpu`` brings a variable back (``x.transfer('cpu')``).
"""
from __future__ import annotations

from lowering.frontend.constructors import as_tensor_variable
from lowering.sandbox.transfers import (GpuUnavailableError, gpu_from_host,  # noqa: F401
                                        host_from_gpu, require_gpu_device)


def as_cuda_ndarray_variable(x):
    """``x`` (a variable, or a value made a constant) as a variable on the default GPU context;
    a variable already on a GPU is returned as it is."""
    x = as_tensor_variable(x)
    if x.target != "cpu":
        return x
    return gpu_from_host(x)


def gpu_contiguous(x):
    """``x`` on the GPU, C-contiguous where an op written in Python reads it."""
    return as_cuda_ndarray_variable(x)
