"""Interpreter rules of the scalar dialect: every function op runs its own ``evaluate``."""
from lowering.ir.interpreter import INTERPRETER

from .ops import ConstantOp, ScalarOp


@INTERPRETER.register(ScalarOp)
def _evaluate(interp, op, args):
    return [op.evaluate(*args, **op.evaluate_attributes())]


@INTERPRETER.register(ConstantOp)
def _constant(interp, op, args):
    return [op.numpy_value]

