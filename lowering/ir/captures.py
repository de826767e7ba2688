"""What an op with regions defines inside itself and what it reads from outside.

Outlining a launch body into a kernel, mapping a loop nest to the device and running a region
op on the host all need the same answer: which values the op uses that come from above it.

>>> from lowering.ir.core import Block, Operation, Region
>>> from lowering.ir.types import F32
>>> x, y = Operation(result_types=[F32]), Operation(result_types=[F32])
>>> body = Block([F32])
>>> inner = body.append(Operation([body.args[0], x.results[0]], [F32]))
>>> loop = Operation([y.results[0]], regions=[Region([body])])
>>> captured_values(loop) == [x.results[0]]
True
>>> used_from_outside(loop) == [y.results[0], x.results[0]]
True
"""
from __future__ import annotations

from .core import Operation, Value


def defined_inside(op: Operation) -> set[Value]:
    """The values defined in ``op``'s regions: results of nested ops and block arguments (not
    ``op``'s own results).

    >>> from lowering.ir.core import Block, Operation, Region
    >>> from lowering.ir.types import F32
    >>> body = Block([F32])
    >>> op = Operation(result_types=[F32], regions=[Region([body])])
    >>> defined_inside(op) == {body.args[0]}
    True
    """
    inside: set[Value] = set()
    for nested in op.walk():
        if nested is not op:
            inside.update(nested.results)
        for region in nested.regions:
            for block in region.blocks:
                inside.update(block.args)
    return inside


def captured_values(op: Operation) -> list[Value]:
    """The values used by the ops in ``op``'s regions but defined outside ``op``, in first-use
    order (``op``'s own operands count only where a nested op uses them too).

    >>> from lowering.ir.core import Block, Operation, Region
    >>> from lowering.ir.types import F32
    >>> x = Operation(result_types=[F32])
    >>> body = Block([], [Operation([x.results[0], x.results[0]], [F32])])
    >>> captured_values(Operation(regions=[Region([body])])) == [x.results[0]]
    True
    """
    return _first_uses_from_outside(op, include_own_operands=False)


def used_from_outside(op: Operation) -> list[Value]:
    """The values ``op`` uses that are defined outside it: its own operands, then what the ops in
    its regions read from above, each once, in first-use order.

    >>> from lowering.ir.core import Operation
    >>> from lowering.ir.types import F32
    >>> x = Operation(result_types=[F32])
    >>> used_from_outside(Operation([x.results[0], x.results[0]])) == [x.results[0]]
    True
    """
    return _first_uses_from_outside(op, include_own_operands=True)


def _first_uses_from_outside(op: Operation, include_own_operands: bool) -> list[Value]:
    inside = defined_inside(op)
    found: dict[Value, None] = {}  # an ordered set
    for nested in op.walk():
        if nested is op and not include_own_operands:
            continue
        for value in nested.operands:
            if value not in inside:
                found.setdefault(value, None)
    return list(found)
