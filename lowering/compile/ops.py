"""``theano.compile.ops``: ``as_op`` and ``FromFunctionOp`` where Theano defines them.

It lives under ``lowering.compile`` for Theano's path and belongs to the top layer: the names
are the front end's (``lowering.frontend.from_function_op``).

>>> import lowering as theano
>>> theano.compile.ops.as_op is theano.as_op is theano.compile.as_op
True
"""
from lowering.frontend.from_function_op import FromFunctionOp, as_op  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
