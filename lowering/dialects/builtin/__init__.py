"""The builtin dialect: ``builtin.module``, ``func.func``, ``func.return``, ``func.call``."""
from .ops import CallOp, FuncOp, ModuleOp, ReturnOp  # noqa: F401
from . import interpret  # noqa: F401

from lowering.ir.context import Dialect  # noqa: E402

# The ops this package defines, as one dialect.
DIALECT = Dialect.of_package("builtin", __name__)
