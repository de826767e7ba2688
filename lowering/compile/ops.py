"""``theano.compile.ops``: ``as_op`` and ``FromFunctionOp`` where Theano defines them.

It lives under ``lowering.compile`` for Theano's path. The names are the front end's, a layer
above: the front end fills them in when it loads (``lowering.frontend.from_function_op``), so
imports keep pointing down.

>>> import lowering as theano
>>> theano.compile.ops.as_op is theano.as_op is theano.compile.as_op
True
"""
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
