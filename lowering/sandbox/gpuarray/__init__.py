"""``theano.sandbox.gpuarray``: the GPU transfer functions of ``basic_ops`` (see
``lowering.sandbox.transfers``)."""
from . import basic_ops  # noqa: F401
