"""Shared pieces of the loops ops' pretty forms (``print_pretty`` / ``parse_pretty``).

A pretty form leaves out what the op's types already say (index operands are ``index``, a load
gives the element type), so it is only printed for ops where that holds; any other op prints in
the generic form, which says everything.

>>> from lowering.ir.parser import Parser
>>> parse_mixed(Parser("[%a, 3, -1]"))
([-9223372036854775808, 3, -1], [OperandRef(name='a', index=0, token=1)])
"""
from __future__ import annotations

from lowering.ir.core import Operation, VerifyError
from lowering.ir.types import INDEX

from .checks import DYNAMIC
from .types import BufferType


def well_formed(op: Operation, attributes=(), buffers=()) -> bool:
    """Whether ``op`` passes its structural checks, has no attributes but ``attributes`` and the
    values ``buffers`` are buffers: what a pretty form needs before it prints anything."""
    try:
        op.verify_structure()
    except VerifyError:
        return False
    return (set(op.attributes) <= set(attributes)
            and all(isinstance(v.type, BufferType) for v in buffers))


def all_index(values) -> bool:
    return all(v.type == INDEX for v in values)


def print_mixed(printer, statics, dynamic) -> None:
    """``[%a, 3]``: each static entry, or the next dynamic value where it is ``DYNAMIC``."""
    values = iter(dynamic)
    printer.write("[")
    printer.print_list(statics, lambda s: printer.print_operand(next(values)) if s == DYNAMIC
                       else printer.write(str(s)))
    printer.write("]")


def parse_mixed(parser) -> tuple[list[int], list]:
    """Read ``[%a, 3]``: the static entries (``DYNAMIC`` for values) and the value references."""
    statics: list[int] = []
    refs: list = []

    def item():
        if parser.peek_kind() == "value":
            refs.append(parser.parse_operand())
            statics.append(DYNAMIC)
        else:
            statics.append(parser.parse_integer())
    parser.parse_comma_list(item, "[", "]")
    return statics, refs


def print_view_types(printer, source, result) -> None:
    """`` : source-type -> result-type``."""
    printer.write(" : ")
    printer.print_type(source.type)
    printer.write(" -> ")
    printer.print_type(result.type)


def parse_view_types(parser) -> tuple:
    """Read `` : source-type -> result-type``."""
    parser.expect(":", "before the view's types")
    source = parser.parse_type()
    parser.expect("->", "between the source and result types")
    return source, parser.parse_type()


def parse_index_list(parser) -> list:
    """``(%a, %b)`` (possibly empty) resolved as index values."""
    refs = parser.parse_comma_list(parser.parse_operand)
    return parser.resolve_operands(refs, [INDEX] * len(refs))
