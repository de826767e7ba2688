"""Compiling graphs into callable functions: ``function()``, its modes and pipeline, shared
variable storage, and the Theano-style view of compiled graphs.

>>> from lowering.compile import function, In, Out, get_mode
>>> get_mode("INTERP").name
'INTERP'
"""
from .fgraph import Apply, FunctionGraph, install_presentation  # noqa: F401
from .compiled_function import Function, FunctionMaker  # noqa: F401
from .function import function  # noqa: F401
from .graph_to_module import MissingInputError, UnusedInputError  # noqa: F401
from .io import In, Out  # noqa: F401
from .monitor_mode import MonitorMode  # noqa: F401
from .pipeline import (Mode, StageUnavailableError, get_mode, register_executor,  # noqa: F401
                       register_stage)
from .shared_storage import SharedContainer, bind_shared, shared_container  # noqa: F401
from .values import InputTypeError, filter_value  # noqa: F401

# theano.compile's names defined by the front end, a layer above: its modules
# compile.sharedvalue and compile.function_module (top layer, loaded by ``import lowering``)
# hold them.
from lowering.unsupported import mirror_getattr  # noqa: E402

__getattr__ = mirror_getattr(__name__, {"SharedVariable": "sharedvalue", "shared": "sharedvalue",
                                         "as_op": "ops", "FromFunctionOp": "ops"})
