"""Theano's ``theano.sandbox`` names that programs written for Theano import.

``sandbox.cuda.basic_ops.gpu_from_host`` and ``sandbox.gpuarray.basic_ops.gpu_from_host`` move a
variable to the GPU (``x.transfer(None)``); they need ``device=cuda`` and the GPU backend and say
so when either is missing.
"""
from . import cuda, gpuarray  # noqa: F401
