"""``elide-transfers``: remove the host/device transfers of tensors that cancel or repeat.

``place-on-device`` gives every read its own transfer; this pass leaves one where one is needed:

- a round trip gives the value back: ``to_host(to_device(x))`` is ``x``, and
  ``to_device{c}(to_host(x))`` is ``x`` when ``x`` is on context ``c``;
- a transfer to where the value already is, is the value itself;
- transfers of one value to one place are merged into the first (which then carries the
  locations of all of them);
- transfers nobody reads are erased.

Only tensor-level transfers are touched: at the buffer level a transfer makes a fresh buffer,
which is not the same as its operand.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> m = parse_module('''
... func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> attributes {result_devices = ["cuda"]} {
...   %0 = "gpu.to_device"(%a) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
...   %b = "tensor.sqr"(%0) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
...   %1 = "gpu.to_host"(%b) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
...   %2 = "gpu.to_device"(%1) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
...   func.return %2 : tensor<?xf32>
... }''')
>>> elide_transfers(m.functions[0])
2
>>> [op.name for op in m.functions[0].body.block.ops]
['gpu.to_device', 'tensor.sqr', 'func.return']
"""
from __future__ import annotations

from lowering.dialects.builtin import FuncOp
from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.ir.core import Operation, OpResult, Value
from lowering.ir.location import fuse_locations
from lowering.ir.passes import ModulePass, register_pass
from lowering.ir.types import TensorType

from .place_on_device import HOST, location_of

_TRANSFERS = (ToDeviceOp, ToHostOp)


@register_pass
class ElideTransfers(ModulePass):
    """Remove tensor transfers that cancel (to_host of to_device), repeat, or are unused."""

    name = "elide-transfers"

    def apply(self, module: Operation) -> None:
        functions = [module] if isinstance(module, FuncOp) else \
            [op for op in module.walk() if isinstance(op, FuncOp)]
        for func in functions:
            elide_transfers(func)


def elide_transfers(func: FuncOp) -> int:
    """Apply the pass to ``func``; returns how many transfers it removed."""
    removed = 0
    changed = True
    while changed:
        changed = False
        seen: dict[tuple, Operation] = {}
        for op in list(func.body.block.ops):
            if not _is_tensor_transfer(op):
                continue
            same = _same_value(op)
            if same is not None:
                op.result.replace_all_uses_with(same)
            else:
                key = (op.name, id(op.input), op.context)
                first = seen.setdefault(key, op)
                if first is not op:
                    first.location = fuse_locations([first.location, op.location])
                    op.result.replace_all_uses_with(first.result)
            if not op.result.uses:
                op.erase()
                removed += 1
                changed = True
    return removed


def _is_tensor_transfer(op: Operation) -> bool:
    return isinstance(op, _TRANSFERS) and isinstance(op.input.type, TensorType)


def _same_value(op: Operation) -> Value | None:
    """The value ``op`` (a transfer) gives without moving anything, or None."""
    source = op.input
    target = op.context if isinstance(op, ToDeviceOp) else HOST
    if location_of(source) == target:
        return source
    if isinstance(source, OpResult) and _is_tensor_transfer(source.op):
        origin = source.op.input
        if location_of(origin) == target:
            return origin
    return None
