"""``theano.sandbox.gpuarray.basic_ops``: ``gpu_from_host`` and ``host_from_gpu``."""
from lowering.sandbox.transfers import (GpuUnavailableError, gpu_from_host,  # noqa: F401
                                        host_from_gpu)
