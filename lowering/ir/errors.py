"""The errors of the IR layer, below every module of it (attributes raise them too).

>>> try:
...     raise VerifyError("expected 1 operand(s), got 2")
... except IRError as error:
...     print(error.message, error.op)
expected 1 operand(s), got 2 None
"""
from __future__ import annotations


class IRError(Exception):
    """An error about IR: carries the op (if any) so diagnostics can point at it."""

    def __init__(self, message: str, op=None):  # op: the Operation the message is about
        super().__init__(message)
        self.message = message
        self.op = op


class VerifyError(IRError):
    """Raised by verifiers; ``op`` is the failing operation."""
