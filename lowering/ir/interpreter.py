"""The reference interpreter's core: an environment of values and a registry of per-op rules.

Each dialect registers the rules for its own ops in the ``INTERPRETER`` rule table, by op class
(``@INTERPRETER.register(ExpOp)``; a rule for a base class serves its subclasses). A rule
receives the interpreter, the op and the run-time values of its operands, and returns one value per
result (a list or tuple). Region ops call ``interp.run_region``; a block's terminator gives back its
operands' values, which is how ``func.return`` and ``yield`` ops pass results out.

>>> from lowering.ir.core import Operation
>>> INTERPRETER.layer, INTERPRETER.find(Operation)  # dialects register rules for their ops
('interpreter', None)
"""
from __future__ import annotations

from typing import Any, Callable

from .core import IRError, Operation, Region, Value
from .rules import RuleTable

Rule = Callable[["Interpreter", Operation, list], Any]
INTERPRETER = RuleTable("interpreter")


class InterpreterError(IRError, ValueError):
    """A run-time failure in the interpreter, naming the op and its location.

    It is a ValueError, as the compiled backends' shape errors are, so user code catches both alike.
    """


class Interpreter:
    """Runs IR on NumPy values. ``env`` maps SSA values to run-time values."""

    def __init__(self):
        self.env: dict[Value, Any] = {}

    def value(self, v: Value) -> Any:
        try:
            return self.env[v]
        except KeyError:
            raise InterpreterError(f"value {v!r} has no run-time value (used before defined)") from None

    def run_op(self, op: Operation) -> list:
        rule = INTERPRETER.lookup(op, InterpreterError)
        args = [self.value(v) for v in op.operands]
        try:
            outs = rule(self, op, args)
        except InterpreterError:
            raise
        except (ValueError, IndexError, TypeError, ZeroDivisionError, FloatingPointError) as exc:
            raise InterpreterError(f"{op.name} at {op.location.short()}: {exc}", op) from exc
        except MemoryError as exc:  # the system cannot give an array that fits the size limit
            raise MemoryError(f"{op.name} at {op.location.short()}: out of memory ({exc})") \
                from exc
        outs = list(outs) if outs is not None else []
        if len(outs) != len(op.results):
            raise InterpreterError(f"rule for {op.name} gave {len(outs)} values for "
                                   f"{len(op.results)} results", op)
        for res, val in zip(op.results, outs):
            self.env[res] = val
        return outs

    def run_block(self, block, args) -> list:
        """Bind the block's arguments, run its ops, return the terminator's operand values."""
        if len(args) != len(block.args):
            raise InterpreterError(f"block takes {len(block.args)} arguments, got {len(args)}")
        for a, v in zip(block.args, args):
            self.env[a] = v
        term = block.terminator
        for op in block.ops:
            if op is term:  # terminators pass their operands out of the region
                return [self.value(v) for v in op.operands]
            self.run_op(op)
        return []

    def run_region(self, region: Region, args) -> list:
        return self.run_block(region.block, list(args))
