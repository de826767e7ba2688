"""``theano.sandbox.gpuarray``: the GPU transfer functions (see ``lowering.sandbox.transfers``)."""
from . import basic_ops  # noqa: F401
