"""Interpreter rules of the builtin dialect."""
from lowering.ir.core import IRError
from lowering.ir.interpreter import INTERPRETER

from .ops import CallOp, ModuleOp


@INTERPRETER.register(CallOp)
def _call(interp, op, args):
    module = next((a for a in op.ancestors() if isinstance(a, ModuleOp)), None)
    callee = module.lookup(op.callee) if module is not None else None
    if callee is None:
        raise IRError(f"func.call: no function named '{op.callee}'", op)
    return interp.run_region(callee.body, args)


def run_function(func, args) -> list:
    """Interpret ``func`` (a FuncOp) on ``args`` and return its results.

    >>> from lowering.ir.types import F32, TensorType
    >>> from lowering.dialects.builtin.ops import FuncOp, ReturnOp
    >>> f = FuncOp.build("id", [TensorType((2,), F32)], [TensorType((2,), F32)])
    >>> _ = f.body.block.append(ReturnOp.create([f.args[0]]))
    >>> run_function(f, [1.5])
    [1.5]
    """
    from lowering.ir.interpreter import Interpreter
    return Interpreter().run_region(func.body, args)
