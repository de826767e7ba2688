"""``tensor.random``: counter-based random draws, elementwise in the element's position.

``tensor.random "uniform" %key, %counter (%d0, %d1)`` is an array of the shape the rank-0 ``i64``
dims give whose element at row-major position ``i`` is draw ``i`` of the stream (``key``,
``counter``) (``lowering.dialects.scalar.random_draws``: one Philox4x32-10 block per element).
``key`` and ``counter`` are ``ui64`` tensors of one element, of the result's rank (every dim of
size 1), so the op broadcasts them as elementwise ops do and ``fuse`` puts it in a loop with its
elementwise consumers when its size is another array's shape (``x * (uniform(x.shape) < p)`` is
one loop, no mask in memory). The op is pure: the same key, counter and shape give the same
values; a stream's state advances by the program updating its counter (by the number of
elements), as ``lowering.tensor.shared_randomstreams`` does.

>>> from lowering.ir.types import F32, UI64
>>> from .shape_ops import scalar_constant
>>> key = ConstantOp.build(np.array([[7]], np.uint64)).result
>>> counter = ConstantOp.build(np.array([[0]], np.uint64)).result
>>> op = RandomOp.build(key, counter, 2, 3, distribution="uniform", element=F32)
>>> str(op.result.type)
'tensor<2x3xf32>'
"""
from __future__ import annotations

import functools
import math

import numpy as np

from lowering.dialects.scalar.philox import Emitter
from lowering.dialects.scalar.random_draws import DISTRIBUTIONS, draw, element_type_ok
from lowering.ir.attributes import StringAttr
from lowering.ir.constraints import AnyTensor, EnumAttr, TensorOf
from lowering.ir.core import Block, Value, VerifyError, attr, operand, register_op, result, \
    var_operand
from lowering.ir.interpreter import INTERPRETER, Interpreter
from lowering.ir.sizes import check_allocation
from lowering.ir.types import I64, UI64, ScalarType, TensorType

from .base import ConstantOp, TensorOp
from .shape_ops import _as_i64, _as_value, fit_result, static_int
from .typing import ShapeError, tensor_of


def _random_type(distribution: str, element: ScalarType, key: TensorType, counter: TensorType,
                 dims) -> TensorType:
    if not element_type_ok(distribution, element):
        raise VerifyError(f"\"{distribution}\" draws "
                          f"{'ui32' if distribution == 'bits' else 'f32 or f64'}, not {element}")
    shape = []
    for i, d in enumerate(dims):
        t = tensor_of(d)
        if t.rank != 0 or t.element != I64:
            raise VerifyError(f"dim #{i} must be a rank-0 i64 tensor, got {t}")
        size = static_int(d)
        if size is not None and size < 0:
            raise ShapeError(f"dim #{i} is negative ({size})")
        shape.append(size)
    for what, t in (("key", key), ("counter", counter)):
        if t.shape != (1,) * len(shape):
            raise VerifyError(f"the {what} must have one element and the result's rank "
                              f"{len(shape)}, got {t}")
    return TensorType(tuple(shape), element)


@register_op
class RandomOp(TensorOp):
    """Draws of one distribution over a shape, from a stream's key and counter."""

    name = "tensor.random"
    assembly_format = ("$distribution $key `,` $counter `(` $dims `)` attr-dict : "
                       "functional-type(operands, results)")
    distribution = attr(EnumAttr(DISTRIBUTIONS))
    key = operand(TensorOf(UI64))
    counter = operand(TensorOf(UI64))
    dims = var_operand(AnyTensor)
    result = result(AnyTensor)
    value_dependent_type = True

    @classmethod
    def build(cls, key: Value, counter: Value, *dims, distribution: str, element: ScalarType,
              location=None) -> "RandomOp":
        """``dims`` are rank-0 integer Values or ints."""
        dims = [_as_i64(_as_value(d, location), location) for d in dims]
        try:
            rtype = _random_type(distribution, element, tensor_of(key), tensor_of(counter), dims)
        except VerifyError as exc:
            raise type(exc)(f"{cls.name}: {exc.message}") from None
        return cls.create([key, counter, *dims], [rtype],
                          {"distribution": StringAttr(distribution)}, location=location)

    def inferred_type(self):
        return _random_type(self.distribution, self.result.type.element, self.key.type,
                            self.counter.type, self.dims)

    def grad(self, output_grads):
        return [None] * len(self.operands)

    def emit_element(self, e: Emitter, key: Value, counter: Value, index: Value) -> Value:
        """The scalar ops computing the element at position ``index`` (all three ``ui64``)."""
        return draw(e, self.distribution, self.result.type.element, key, counter, index)

    def shape_source(self) -> Value | None:
        """The array whose shape this op's dims are (each dim ``tensor.shape_i`` of it, in
        order), or None: an op with such a source may join a fused loop over that array."""
        from .shape_ops import ShapeIOp
        owners = [getattr(d, "op", None) for d in self.dims]
        if not owners or not all(isinstance(o, ShapeIOp) and o.axis == axis
                                 for axis, o in enumerate(owners)):
            return None
        source = owners[0].input
        if any(o.input is not source for o in owners):
            return None
        return source if source.type.rank == len(self.dims) else None


@functools.lru_cache(maxsize=None)
def element_function(distribution: str, element: ScalarType):
    """A block computing one draw from (key, counter, index) and the value it yields; run on
    arrays of indices, it gives a whole array of draws."""
    block = Block([UI64, UI64, UI64])
    value = draw(Emitter(block.append), distribution, element, *block.args)
    return block, value


def draws(distribution: str, element: ScalarType, key, counter, shape) -> np.ndarray:
    """Draws ``counter``, ``counter + 1``, ... of stream ``key`` in an array of ``shape``, by
    interpreting the element function.

    >>> from lowering.ir.types import UI32
    >>> [hex(int(w)) for w in draws("bits", UI32, 0, 0, (2,))]
    ['0x6627e8d5', '0xf8e4cca4']
    """
    block, value = element_function(distribution, element)
    index = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    interp = Interpreter()
    interp.run_block(block, [np.uint64(key), np.uint64(counter), index])
    return np.asarray(np.broadcast_to(interp.value(value), shape), dtype=element.dtype)


@INTERPRETER.register(RandomOp)
def _random(interp, op, args):
    dims = tuple(int(np.asarray(d)) for d in args[2:])
    if any(d < 0 for d in dims):
        raise ValueError(f"tensor.random: negative dimension in the size {dims}")
    check_allocation("tensor.random", dims, op.result.type.dtype.itemsize)
    key, counter = (np.asarray(a).reshape(-1)[0] for a in args[:2])
    return [fit_result(op, draws(op.distribution, op.result.type.element, key, counter, dims))]


__all__ = ["RandomOp", "draws", "element_function"]
