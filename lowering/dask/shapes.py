"""The result types of a compiled ``Function`` for given argument shapes: what a block of a Dask
array becomes, found without running anything.

The function's tensor-level module is copied, its arguments get the blocks' static shapes, and
every op's result type is inferred again, top to bottom, with the tensor dialect's own type
inference (broadcasting, reductions, dot, dimshuffle, ...). A size an op cannot know before it
runs (a reshape to computed sizes, an op without type inference) stays ``None``.

>>> import lowering as theano
>>> import lowering.tensor as T
>>> x, v = T.matrix("x"), T.vector("v")
>>> f = theano.function([x, v], [T.exp(x) * v, x.sum(axis=1)])
>>> [(t.shape, str(t.dtype)) for t in result_types(f, [(3, 4), (4,)])]
[((3, 4), 'float64'), ((3,), 'float64')]
"""
from __future__ import annotations

from lowering.dialects.tensor import ElementwiseOp, ReductionOp, TensorOp
from lowering.ir.core import VerifyError
from lowering.ir.types import TensorType

__all__ = ["result_types", "argument_types"]


def argument_types(function) -> list[TensorType]:
    """The types of ``function``'s explicit inputs (shared variables left out)."""
    func = function.ir_module("tensor").regions[0].block.first_op
    return [a.type for a in func.regions[0].block.args[:len(function.maker.inputs)]]


def result_types(function, shapes) -> list[TensorType]:
    """The types of ``function``'s outputs when its inputs have the static ``shapes``."""
    func = function.ir_module("tensor").regions[0].block.first_op
    block = func.regions[0].block
    args = block.args[:len(function.maker.inputs)]
    if len(shapes) != len(args):
        raise TypeError(f"function '{function.name}' takes {len(args)} inputs, got "
                        f"{len(shapes)} shapes")
    for pos, (arg, shape) in enumerate(zip(args, shapes)):
        shape = tuple(int(d) for d in shape)
        if len(shape) != arg.type.rank or not arg.type.accepts_shape(shape):
            raise ValueError(f"input #{pos} of function '{function.name}' has type {arg.type}; "
                             f"a block of shape {shape} does not fit it")
        arg.type = TensorType(shape, arg.type.element)
    for op in block.ops:
        if op is block.last_op:
            break
        inferred = _inferred_type(op)
        if inferred is not None:
            op.results[0].type = inferred
    return [v.type for v in block.last_op.operands[:len(function.maker.outputs)]]


def _inferred_type(op) -> TensorType | None:
    """The result type of a one-result tensor op from its operands' current types, or None
    where the op does not infer one (its declared type then stays)."""
    if not isinstance(op, TensorOp) or len(op.results) != 1 or op.regions:
        return None
    try:
        if isinstance(op, ElementwiseOp):
            return type(op).infer_type([v.type for v in op.operands],
                                       **op.scalar_attributes())
        if isinstance(op, ReductionOp):
            return type(op).infer_type(op.input.type, tuple(op.axes), bool(op.keepdims))
        return op.inferred_type()
    except VerifyError as exc:
        raise ValueError(f"the blocks' shapes do not fit {op.name}: {exc.message}") from None
