"""``theano.scan_module.scan_utils``: the graph helpers Theano keeps with scan and libraries import
from there (``equal_computations``, ``clone``).

>>> import lowering.tensor as T
>>> x = T.dvector("x")
>>> equal_computations([x + 1], [x + 1])
True
"""
from lowering.frontend.clone import clone_replace as clone  # noqa: F401
from lowering.frontend.scan import until  # noqa: F401
from lowering.gof.graph import equal_computations  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
