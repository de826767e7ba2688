"""``theano.tensor.elemwise``: the classes of elementwise, broadcasting and reduction nodes that
compiled graphs show (``f.maker.fgraph.toposort()``; see ``lowering.frontend.theano_ops``).

>>> import lowering.tensor as T
>>> isinstance((T.dvector("x") + 1).owner.op, Elemwise)
True
"""
from lowering.frontend.theano_ops import CAReduce, DimShuffle, Elemwise, Prod, Sum  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
