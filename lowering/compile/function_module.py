"""``theano.compile.function_module``: the compiled function's classes and errors where Theano
defines them (``Function``, ``FunctionMaker``, ``In``, ``UnusedInputError``, ...).

It lives under ``lowering.compile`` for Theano's path and belongs to the top layer: it names
front-end functions (``is_same_graph``).

>>> import lowering as theano
>>> import lowering.tensor as T
>>> isinstance(theano.function([], T.constant(1.0)), Function)
True
"""
from lowering.compile import (Function, FunctionMaker, In, MissingInputError,  # noqa: F401
                              UnusedInputError)
from lowering.compile import function as orig_function  # noqa: F401
from lowering.gof.graph import is_same_graph  # noqa: F401
from lowering.unsupported import mirror_getattr

__getattr__ = mirror_getattr(__name__)
