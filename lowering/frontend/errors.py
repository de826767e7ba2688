"""Errors raised while a graph is built, naming the op, the variables and the user's line.

The tensor dialect's ``build`` methods check types and static shapes and say what is wrong
(``tensor.dot: incompatible shapes (3, 4) and (5,)``). The front end adds what only it knows: the
user's variables by name and the line of the user's code that asked for the op.

>>> from lowering.ir.location import Location
>>> str(GraphBuildError("tensor.add: bad", Location("train.py", 12, 5)))
'train.py:12: tensor.add: bad'
"""
from __future__ import annotations

from lowering.ir.core import VerifyError
from lowering.ir.location import UNKNOWN, caller_location


class GraphBuildError(VerifyError, ValueError):
    """An operation that cannot be built from its operands (shapes, axes, ranks).

    ``location`` is the user's line that asked for it; the message starts with ``file:line``.
    """

    def __init__(self, message: str, location=None, op=None):
        self.location = location if location is not None else caller_location()
        where = f"{self.location.file}:{self.location.line}: " if self.location != UNKNOWN else ""
        super().__init__(where + message, op)


class GraphTypeError(GraphBuildError, TypeError):
    """An operation given operands of the wrong dtype or kind."""


class DisconnectedInputError(ValueError):
    """``grad`` was asked for a variable the cost does not depend on."""


def describe(variable) -> str:
    """A variable for messages: its name (or Theano's default text) and its IR type.

    >>> from lowering.frontend.constructors import matrix
    >>> describe(matrix("x", dtype="float32"))
    'x: tensor<?x?xf32>'
    """
    return f"{variable}: {variable.value.type}"


def build_error(op_name: str, exc: Exception, variables=(), location=None) -> GraphBuildError:
    """A front-end error for ``exc`` (raised by a dialect's ``build``), naming the variables."""
    message = getattr(exc, "message", None) or str(exc)
    if not message.startswith(op_name):
        message = f"{op_name}: {message}"
    if variables:
        message += " (operands: " + ", ".join(describe(v) for v in variables) + ")"
    cls = GraphTypeError if isinstance(exc, TypeError) else GraphBuildError
    error = cls(message, location)
    error.original = exc
    return error
