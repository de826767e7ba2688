"""Shared pieces of the loops ops' pretty forms: the types their assembly formats leave out, and
the hand-written forms of the ops a format cannot spell (loops with named induction variables,
views with mixed static and dynamic entries).

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


def index_types(counts: dict, *names: str) -> dict:
    """``infer_operand_types`` for operand fields ``names`` of ``index`` values."""
    return {name: [INDEX] * counts[name] for name in names}


def element_of(types: list) -> list:
    """The element type of the one buffer type in ``types`` (a load's result, a stored value)."""
    (buffer,) = types
    if not isinstance(buffer, BufferType):
        raise VerifyError(f"expected a buffer, got {buffer}")
    return [buffer.element]


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
