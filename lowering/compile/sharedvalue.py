"""``theano.compile.sharedvalue``: shared variables where Theano defines them (``shared``,
``SharedVariable``).

It lives under ``lowering.compile`` for Theano's path and belongs to the top layer: shared
variables are front-end variables.

>>> isinstance(shared(1.0), SharedVariable)
True
"""
from lowering.frontend.shared import SharedVariable, shared  # noqa: F401
from lowering.frontend.variable import Variable  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
