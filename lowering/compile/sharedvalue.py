"""``theano.compile.sharedvalue``: shared variables where Theano defines them (``shared``,
``SharedVariable``, ``Variable``).

It lives under ``lowering.compile`` for Theano's path. Shared variables are front-end
variables, a layer above: the front end fills in these names when it loads
(``lowering.frontend.shared``), so imports keep pointing down.

>>> isinstance(shared(1.0), SharedVariable)
True
"""
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
