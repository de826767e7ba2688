"""Interpreter rules of the scalar dialect: every function op runs its own ``evaluate``."""
from lowering.ir.interpreter import interpreter_rule

from .ops import SCALAR_OPS


def _evaluate(interp, op, args):
    return [op.evaluate(*args, **op.evaluate_attributes())]


@interpreter_rule("scalar.constant")
def _constant(interp, op, args):
    return [op.numpy_value]


for _cls in SCALAR_OPS.values():
    interpreter_rule(_cls.name)(_evaluate)
