"""Complex numbers on a GPU: not supported, said at bufferization with the op and the user's line.

The kernels, the device arrays and the device BLAS compute on real element types only. An op
placed on a device whose operands or results are complex fails ``bufferize`` with the layer's
usual message (``bufferize on a GPU: tensor.mul (at model.py:3:8) is not supported: ...``);
the ops that exist only for complex numbers are declared unsupported in ``DEVICE_BUFFERIZE``,
so the support matrix shows it.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import C64, TensorType
>>> from lowering.dialects.tensor import ExpOp
>>> (z,) = Block([TensorType((2,), C64)]).args
>>> complex_types_of(ExpOp.build(z))
['complex<f32>']
"""
from __future__ import annotations

from lowering.dialects.tensor.complex import COMPLEX_ELEMENTWISE_OPS
from lowering.ir.core import Operation
from lowering.ir.passes import PassFailure
from lowering.ir.types import ScalarType, TensorType

from .core import DEVICE_BUFFERIZE

REASON = ("complex numbers are not supported on a GPU (kernels, device arrays and the device "
          "BLAS compute on real element types); compile this function for the CPU")

for _cls in COMPLEX_ELEMENTWISE_OPS.values():
    DEVICE_BUFFERIZE.unsupported(_cls, REASON)
del _cls


def complex_types_of(op: Operation) -> list[str]:
    """The complex element types among ``op``'s operands and results and the values computed
    inside its regions (a fused body), in order, once each."""
    found = []
    values = [*op.operands, *(r for inner in op.walk() for r in inner.results)]
    for value in values:
        t = value.type
        element = t.element if isinstance(t, TensorType) else t
        if isinstance(element, ScalarType) and element.is_complex and str(element) not in found:
            found.append(str(element))
    return found


def refuse_complex_on_device(op: Operation) -> None:
    """Fail, naming ``op``, its line and its complex types, when it computes on complex
    numbers (for an op placed on a device)."""
    found = complex_types_of(op)
    if found:
        raise PassFailure(f"{DEVICE_BUFFERIZE.layer}: {op.name} (at {op.location.short()}) is "
                          f"not supported: it computes on {', '.join(found)}; {REASON}", op)
