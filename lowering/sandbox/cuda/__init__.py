"""``theano.sandbox.cuda``: the GPU transfer functions (see ``lowering.sandbox.transfers``)."""
from . import basic_ops  # noqa: F401
