"""Transfers between host and device memory: ``gpu.to_device``, ``gpu.to_host``, ``gpu.memcpy``.

At the tensor level ``to_device`` and ``to_host`` (Theano's GpuFromHost and HostFromGpu) take a
tensor and give a tensor of the same type: they mark where a value lives. At the buffer level they
copy a buffer of any layout into a fresh contiguous buffer of the same shape and element type in
the other memory space. ``memcpy`` copies between two existing contiguous buffers.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32
>>> from lowering.dialects.loops.types import BufferType
>>> block = Block([BufferType((None, 4), F32, strides=(None, 1), offset=None)])
>>> str(ToDeviceOp.build(block.args[0]).result.type)
'!loops.buffer<?x4xf32, space="device">'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import StringAttr
from lowering.ir.constraints import AnyOf, AnyTensor, ConstraintVar
from lowering.ir.core import Operation, Value, VerifyError, attr, operand, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.traits import MemoryEffects
from lowering.ir.types import TensorType, Type

from lowering.dialects.loops.constraints import AnyBuffer, BufferOf
from lowering.dialects.loops.runtime import as_buffer, live_allocations
from lowering.dialects.loops.types import BufferType

from .checks import ON_HOST

DEFAULT_CONTEXT = "cuda"


def transferred_type(t: Type, space: str) -> Type:
    """The result type of moving a value of type ``t`` to memory ``space``: the same tensor
    type, or a fresh contiguous buffer of the same shape and element in ``space``.

    >>> from lowering.ir.types import F32
    >>> str(transferred_type(BufferType((3,), F32, memory_space="device"), "host"))
    '!loops.buffer<3xf32>'
    """
    if isinstance(t, TensorType):
        return t
    if isinstance(t, BufferType):
        return BufferType(t.shape, t.element, memory_space=space)
    raise TypeError(f"expected a tensor or a buffer, got {t}")


class _TransferOp(Operation):
    """One value moved to ``target_space``; ``source_space`` is where a buffer operand lives."""

    source_space = ""
    target_space = ""
    traits = frozenset({ON_HOST})
    input = operand(AnyOf(AnyTensor, AnyBuffer))
    context = attr(StringAttr, default=DEFAULT_CONTEXT)
    assembly_format = ("$input (`context` $context^)? attr-dict : "
                       "type($input) -> type($result)")
    result = result()

    @classmethod
    def build(cls, value: Value, context: str = DEFAULT_CONTEXT, location=None) -> "_TransferOp":
        """The transfer of ``value`` (a tensor or a buffer in the source space)."""
        return cls.create(operands=[value], result_types=[transferred_type(value.type,
                                                                             cls.target_space)],
                          attributes={"context": StringAttr(context)}, location=location)

    def verify_(self):
        src, dst = self.input.type, self.result.type
        if isinstance(src, TensorType):
            if dst != src:
                raise VerifyError(f"{self.name}: a tensor keeps its type, result {dst} should be "
                                  f"{src}", self)
            return
        if src.memory_space != self.source_space:
            raise VerifyError(f"{self.name}: operand must be a buffer in space "
                              f"\"{self.source_space}\", got {src}", self)
        want = transferred_type(src, self.target_space)
        if dst != want:
            raise VerifyError(f"{self.name}: result {dst} should be {want} (a fresh contiguous "
                              f"buffer with offset 0, same shape and element, in space "
                              f"\"{self.target_space}\")", self)


@register_op
class ToDeviceOp(_TransferOp):
    """Host to device: ``%d = "gpu.to_device"(%h) {context = "cuda"} : (T) -> T'``."""

    name = "gpu.to_device"
    source_space = "host"
    target_space = "device"


@register_op
class ToHostOp(_TransferOp):
    """Device to host: ``%h = "gpu.to_host"(%d) {context = "cuda"} : (T) -> T'``."""

    name = "gpu.to_host"
    source_space = "device"
    target_space = "host"


def _transfer(interp, op, args):
    value = args[0]
    if isinstance(op.input.type, TensorType):
        # Tensors are values: a copy keeps the two sides from sharing memory, like a real transfer.
        return [np.array(value, copy=True) if isinstance(value, np.ndarray) else value]
    source = as_buffer(value, op.input.type, "operand")
    fresh = np.array(source, copy=True, order="C")
    # The copy is an allocation of its own: a later loops.dealloc may free it.
    live_allocations(interp)[id(fresh)] = fresh
    return [fresh]


INTERPRETER.register(ToDeviceOp)(_transfer)
INTERPRETER.register(ToHostOp)(_transfer)


# Both sides of a memcpy: contiguous, on the host or the device, of one element type and shape.
_MEMCPY_BUFFER = BufferOf(ConstraintVar("element"), shape=ConstraintVar("shape"),
                          space=("host", "device"), contiguous=True)


@register_op
class MemcpyOp(Operation):
    """Copies ``source`` into ``target``: two contiguous buffers of equal shape and element type,
    each on the host or the device. ``"gpu.memcpy"(%src, %dst) : (S, D) -> ()``."""

    name = "gpu.memcpy"
    traits = frozenset({ON_HOST, MemoryEffects(reads=("source",), writes=("target",))})
    assembly_format = "$source, $target attr-dict : type($source), type($target)"
    source = operand(_MEMCPY_BUFFER)
    target = operand(_MEMCPY_BUFFER)

    @classmethod
    def build(cls, source: Value, target: Value, location=None) -> "MemcpyOp":
        return cls.create(operands=[source, target], location=location)


@INTERPRETER.register(MemcpyOp)
def _memcpy(interp, op, args):
    source = as_buffer(args[0], op.source.type, "source")
    target = as_buffer(args[1], op.target.type, "target")
    if source.shape != target.shape:
        raise ValueError(f"source shape {source.shape} differs from target shape {target.shape}")
    np.copyto(target, source)
    return []
