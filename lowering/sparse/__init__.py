"""``theano.sparse``: sparse matrix variables and operations on scipy.sparse (the ``sparse``
extra: ``pip install 'lowering[sparse]'``). See ``basic`` and docs/sparse.md.

>>> import lowering as theano
>>> x = theano.sparse.csr_matrix("x", dtype="float32")
>>> x.type
Sparse[float32, csr]
"""
from .basic import *  # noqa: F401,F403
from .basic import __all__  # noqa: F401
from . import basic  # noqa: F401
from .properties import *  # noqa: F401,F403,E402
from .structured import *  # noqa: F401,F403,E402
from .pairs import *  # noqa: F401,F403,E402
from .sharedvar import *  # noqa: F401,F403,E402
from .comparisons import *  # noqa: F401,F403,E402
from .theano_names import *  # noqa: F401,F403,E402
from . import comparisons, pairs, properties, sharedvar, structured, theano_names  # noqa: F401,E402

__all__ = (__all__ + properties.__all__ + structured.__all__ + pairs.__all__  # noqa: F405
           + sharedvar.__all__ + comparisons.__all__ + theano_names.__all__)
