"""``theano.gpuarray.basic_ops``: moving variables to a GPU context and back (those of
``lowering.sandbox.gpuarray.basic_ops``).

>>> as_gpuarray_variable.__name__
'as_gpuarray_variable'
"""
from lowering.sandbox.gpuarray.basic_ops import (as_gpuarray_variable,  # noqa: F401
                                                 gpu_contiguous, gpu_from_host, host_from_gpu)
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
