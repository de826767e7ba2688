"""``theano.tensor.shared_randomstreams``: ``RandomStreams``, random draws whose generator state
is shared between function calls (see ``lowering.frontend.random_streams``).

>>> RandomStreams(seed=3).uniform((2,)).ndim
1
"""
from lowering.frontend.random_state import RandomStateSharedVariable  # noqa: F401
from lowering.frontend.random_streams import RandomStreams  # noqa: F401
from lowering.frontend.shared import SharedVariable, shared  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
