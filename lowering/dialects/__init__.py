"""Dialects. Importing this package defines every op, type, verifier and interpreter rule, and
loads the default dialects (builtin, scalar, tensor, loops, gpu, sparse) into the default context
(``lowering.ir.context``). ``DIALECTS`` names every dialect of the package, the test dialect
included: tests and ``lowering-opt --load-dialect`` load it into a context of their own.
"""
from lowering.ir.context import load_default_dialect

from . import builtin, function_attrs, scalar, tensor, loops, gpu  # noqa: F401
from . import test  # noqa: F401  (defined, not loaded by default)
from . import sparse  # noqa: F401

_DEFAULTS = (builtin.DIALECT, scalar.DIALECT, tensor.DIALECT, loops.DIALECT, gpu.DIALECT)
_DEFAULTS += (sparse.DIALECT,)
for _dialect in _DEFAULTS:
    load_default_dialect(_dialect)

DIALECTS = {d.name: d for d in (*_DEFAULTS, test.DIALECT)}
