"""The builtin dialect: ``builtin.module``, ``func.func``, ``func.return``, ``func.call``."""
from .ops import CallOp, FuncOp, ModuleOp, ReturnOp  # noqa: F401
from . import interpret  # noqa: F401
