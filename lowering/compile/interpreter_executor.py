"""The executor that runs a function's IR in the reference interpreter.

It is the executor of mode ``INTERP`` and the fallback of every mode while no compiled backend is
registered. Results are exactly what the interpreter rules compute (NumPy semantics).

>>> from lowering.ir.types import F32, TensorType
>>> from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
>>> f = FuncOp.build("id", [TensorType((2,), F32)], [TensorType((2,), F32)])
>>> _ = f.body.block.append(ReturnOp.create([f.args[0]]))
>>> InterpreterExecutor(ModuleOp.build([f]))(["value"])
['value']
"""
from __future__ import annotations

from lowering.ir.core import Operation
from lowering.ir.interpreter import Interpreter

from .pipeline import register_executor


class InterpreterExecutor:
    """Calls the module's only function in a fresh interpreter per call."""

    call_lock = None  # calls share nothing: they may overlap (see ``Function``)

    def __init__(self, module: Operation):
        import lowering.dialects  # noqa: F401  (registers every interpreter rule)
        funcs = [op for op in module.regions[0].block.ops if op.name == "func.func"]
        if len(funcs) != 1:
            raise ValueError(f"expected a module with one function, got {len(funcs)}")
        self.body = funcs[0].regions[0]

    def __call__(self, args: list) -> list:
        return Interpreter().run_region(self.body, args)


register_executor("interpreter", InterpreterExecutor)
