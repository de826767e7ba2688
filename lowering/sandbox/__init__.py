"""Theano's ``theano.sandbox`` names that programs written for Theano import.

``sandbox.cuda`` (``CudaNdarray``, ``basic_ops.gpu_from_host``, ``gpu_contiguous``, ...) and
``sandbox.gpuarray`` (``basic_ops.gpu_from_host``) move variables to the GPU and make device
arrays; they need ``device=cuda`` and a usable GPU and say so when either is missing.
"""
from . import cuda, gpuarray  # noqa: F401
from . import rng_mrg  # noqa: F401
from lowering.unsupported import mirror_getattr  # noqa: E402

__getattr__ = mirror_getattr(__name__)
