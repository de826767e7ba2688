"""Error messages that show the IR around the op at fault.

``render_op_error(op, message)`` gives a header line with the op's location and the enclosing
function printed with the message under the op::

    model.py:12:5: error: operand types differ
    func.func @f(%x: tensor<?xf32>, %y: tensor<?xi64>) -> tensor<?xf32> {
      %0 = "tensor.add"(%x, %y) : (tensor<?xf32>, tensor<?xi64>) -> tensor<?xf32>
           ^ error: operand types differ
      func.return %0 : tensor<?xf32>
    }

``format_error(exc)`` does the same for any IRError (VerifyError included) that names its op.
"""
from __future__ import annotations

from .core import ISOLATED, SYMBOL, IRError, Operation
from .location import UNKNOWN
from .parser import ParseError
from .printer import print_op


def render_op_error(op: Operation, message: str, generic: bool = False) -> str:
    """The op's location and ``message``, then the enclosing function with the message under ``op``.

    Without an enclosing function the top-most ancestor is printed; a detached op alone.

    >>> from lowering.ir.core import Operation
    >>> from lowering.ir.location import Location
    >>> from lowering.ir.types import F32
    >>> op = Operation(result_types=[F32], location=Location("m.py", 4, 2))
    >>> print(render_op_error(op, "no such op"))
    m.py:4:2: error: no such op
    %0 = "builtin.unregistered"() : () -> f32
         ^ error: no such op
    """
    lines = [_header(op, message)]
    lines.append(print_op(_context_of(op), generic=generic,
                          annotations={op: "error: " + message}))
    return "\n".join(lines)


def format_error(exc: BaseException) -> str:
    """A user-facing message for ``exc``: with the IR around its op when it names one.

    >>> format_error(IRError("bad pipeline"))
    'error: bad pipeline'
    """
    if isinstance(exc, ParseError):
        return exc.message  # it already holds the position and the source line
    if isinstance(exc, IRError):
        if exc.op is not None:
            return render_op_error(exc.op, exc.message)
        return "error: " + exc.message
    return f"error: {exc}"


def _context_of(op: Operation) -> Operation:
    """The nearest function-like op around (or at) ``op``; else its top-most ancestor."""
    top = op
    for candidate in (op, *op.ancestors()):
        if ISOLATED in candidate.traits and SYMBOL in candidate.traits:
            return candidate
        top = candidate
    return top


def _header(op: Operation, message: str) -> str:
    parts = [p for p in op.location.locations if p != UNKNOWN]
    if not parts:
        return f"error: {message}"
    header = f"{parts[0].short()}: error: {message}"
    # A fused op came from several places in the user's code; name the others too.
    return "\n".join([header] + [f"{p.short()}: note: also from here" for p in parts[1:]])
