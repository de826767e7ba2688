"""The one way the front end creates ops: ``apply`` builds a tensor-dialect op with its class's
``build`` (which infers types and records the user's line), turns dialect errors into errors that
name the user's variables and line, and computes test values when ``config.compute_test_value``
asks for them.

>>> from lowering.dialects.tensor.elementwise import ExpOp
>>> from lowering.frontend.constructors import vector
>>> y = apply(ExpOp, vector("x"))
>>> y.dtype, y.value.op.name
('float64', 'tensor.exp')
"""
from __future__ import annotations

import warnings

import numpy as np

from lowering.config import config
from lowering.dialects.tensor import ConstantOp
from lowering.ir.core import IRError, Operation, OpResult, Value
from lowering.ir.interpreter import INTERPRETER, Interpreter
from lowering.ir.location import caller_location

from .errors import GraphBuildError, build_error
from .graph import graph_inputs, toposort
from .variable import _TEST_VALUES, TensorVariable, _VARIABLES, wrap


def value_of(x) -> Value:
    """The IR value of a variable (or a value itself)."""
    return x.value if isinstance(x, TensorVariable) else x


def build_op(op_class, *operands, named=(), **attrs) -> Operation:
    """``op_class.build(*operand_values, **attrs)``; errors name ``named`` variables (default: the
    operands that are variables) and the user's line."""
    values = [value_of(o) for o in operands]
    try:
        op = op_class.build(*values, **attrs)
    except (IRError, TypeError, ValueError, IndexError) as exc:
        variables = named or [o for o in operands if isinstance(o, TensorVariable)]
        raise build_error(op_class.name, exc, variables, caller_location()) from None
    if config.compute_test_value != "off":
        compute_test_values(op)
    return op


def apply(op_class, *operands, named=(), **attrs) -> TensorVariable:
    """The variable of the (single) result of ``build_op``."""
    return wrap(build_op(op_class, *operands, named=named, **attrs).result)


# ---------------------------------------------------------------------------------------------
# Test values (Theano's compute_test_value): each op runs, as it is built, on the test values of
# its operands, so a shape error shows at the line that built the op.


def _test_value_of(value: Value):
    if value in _TEST_VALUES:
        return _TEST_VALUES[value]
    if isinstance(value, OpResult) and isinstance(value.op, ConstantOp):
        return value.op.attributes["value"].array
    var = _VARIABLES.get(value)
    if var is not None and hasattr(var, "get_value"):  # shared variables carry their value
        return np.asarray(var.get_value(borrow=True))
    return None


class _HasTestValue:
    """The values whose test value is known (a ``stop`` set for graph walks)."""

    def __contains__(self, value) -> bool:
        return _test_value_of(value) is not None


def _derive_test_value(value: Value):
    """The test value of an op result that was built without one (gradient ops are built by the
    dialect's grad rules): computed from the test values of the leaves it depends on."""
    if not isinstance(value, OpResult):
        return None
    for op in toposort([value], stop=_HasTestValue()):
        args = [_test_value_of(v) for v in op.operands]
        if any(a is None for a in args) or not _run_on_test_values(op, args):
            return None
    return _test_value_of(value)


def compute_test_values(op: Operation) -> None:
    """Run ``op`` on its operands' test values and attach the results' test values."""
    mode = config.compute_test_value
    args = []
    for value in op.operands:
        data = _test_value_of(value)
        if data is None:
            data = _derive_test_value(value)
        if data is None:
            missing = [v for v in graph_inputs([value], stop=_HasTestValue())
                       if _test_value_of(v) is None] or [value]
            names = ", ".join(str(wrap(v)) for v in missing)
            message = (f"{op.name} at {op.location.short()}: {names} has no test value; set "
                       f"x.tag.test_value or turn compute_test_value off")
            if mode == "raise":
                raise GraphBuildError(message, op.location, op)
            if mode == "warn":
                warnings.warn(message, stacklevel=4)
            return
        args.append(data)
    _run_on_test_values(op, args)


def _run_on_test_values(op: Operation, args: list) -> bool:
    """Interpret ``op`` on ``args`` and keep its results' test values (False: no rule)."""
    rule = INTERPRETER.find(type(op))
    if rule is None:
        return False
    try:
        outs = rule(Interpreter(), op, args)
    except (ValueError, IndexError, TypeError, ZeroDivisionError, FloatingPointError) as exc:
        shapes = ", ".join(str(np.shape(a)) for a in args)
        raise GraphBuildError(f"{op.name} fails on the test values (shapes {shapes}): {exc}",
                              op.location, op) from None
    for result, data in zip(op.results, outs):
        _TEST_VALUES[result] = np.asarray(data, dtype=result.type.dtype)
    return True
