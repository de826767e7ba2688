"""The Theano-style front end: variables, their operators and methods, the ``T`` functions,
``grad``, and the Theano view of ops.

A user's expression graph is detached tensor-dialect IR: every function here builds ops with the
dialect classes' ``build`` (see ``build.apply``), so the graph *is* the IR that ``function()``
compiles. ``lowering.tensor`` re-exports what users call.
"""
from . import theano_ops
from .variable import TensorConstant, TensorVariable, wrap  # noqa: F401

# Compiled graphs (f.maker.fgraph.toposort(), debugprint) show Theano's classes and texts.
theano_ops.install()
