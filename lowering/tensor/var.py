"""``theano.tensor.var``: the classes of tensor variables and constants (see
``lowering.frontend.variable``).

>>> import lowering.tensor as T
>>> isinstance(T.dvector("x"), TensorVariable), isinstance(T.constant(1), TensorConstant)
(True, True)
"""
from lowering.frontend.variable import TensorConstant, TensorVariable, Variable  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
