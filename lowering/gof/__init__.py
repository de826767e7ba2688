"""``theano.gof``: Theano's graph classes (``Variable``, ``Constant``, ``Apply``, ``Op``) and
``gof.graph``'s walks, for libraries that check and traverse graphs.

>>> import lowering as theano
>>> import lowering.tensor as T
>>> y = T.dvector("x") * 2
>>> isinstance(y, Variable), isinstance(y.owner, Apply), isinstance(T.constant(1), Constant)
(True, True, True)
"""
from lowering.compile.graph_to_module import MissingInputError  # noqa: F401
from lowering.frontend.custom_op import MethodNotDefined, Op  # noqa: F401
from lowering.frontend.theano_ops import Apply  # noqa: F401
from lowering.frontend.variable import Constant, Variable  # noqa: F401
from lowering.unsupported import mirror_getattr

from . import graph  # noqa: F401,E402

__getattr__ = mirror_getattr(__name__)
