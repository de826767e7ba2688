"""``theano.sandbox.rng_mrg``: ``MRG_RandomStreams``, Theano's GPU-friendly random streams, here
on the same counter-based generator as ``lowering.tensor.shared_randomstreams``.

>>> MRG_RandomStreams(seed=1).uniform((2,)).dtype == __import__("lowering").config.floatX
True
"""
from lowering.frontend.random_streams import MRG_RandomStreams  # noqa: F401

__all__ = ["MRG_RandomStreams"]
