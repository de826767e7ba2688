"""``theano.sandbox.gpuarray.basic_ops``: moving variables to a GPU context and back.

``as_gpuarray_variable(x, context_name)`` is ``x.transfer(context_name)`` (None: the default
context); ``gpu_from_host``, ``host_from_gpu`` and ``gpu_contiguous`` are those of
``lowering.sandbox.cuda.basic_ops``.
"""
from __future__ import annotations

from lowering.frontend.constructors import as_tensor_variable
from lowering.sandbox.cuda.basic_ops import gpu_contiguous  # noqa: F401
from lowering.sandbox.transfers import (GpuUnavailableError, gpu_from_host,  # noqa: F401
                                        host_from_gpu, require_gpu_device)


def as_gpuarray_variable(x, context_name=None):
    """``x`` (a variable, or a value made a constant) on GPU context ``context_name`` (None:
    the default one; else a name of the ``contexts`` flag)."""
    require_gpu_device(f"as_gpuarray_variable moves a variable to GPU context {context_name!r}")
    return as_tensor_variable(x).transfer(context_name)
