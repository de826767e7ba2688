"""Shape ops of the tensor dialect: dimshuffle, reshape, shape, shape_i, make_vector, alloc, fill,
arange and concatenate.

Result types are inferred statically. Sizes that depend on operand *values* (a reshape's target
shape, an alloc's dims, an arange's bounds) are static when those operands are constants (or
``shape``/``shape_i`` of a static dimension); otherwise they are ``?``. Because later rewrites may
fold such operands into constants, the verifier accepts a value-dependent ``?`` where inference
would now find a static size, but never two different static sizes.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, TensorType
>>> x = Block([TensorType((None, 3), F32)]).args[0]
>>> str(DimShuffleOp.build(x, [1, "x", 0]).result.type)
'tensor<3x1x?xf32>'
>>> str(ShapeIOp.build(x, 1).result.type)
'tensor<i64>'
"""
from __future__ import annotations

import math

import numpy as np

from lowering.ir.attributes import ArrayAttr, DenseAttr, IntAttr
from lowering.ir.constraints import AnyTensor, TensorOf
from lowering.ir.core import OpResult, Value, VerifyError, attr, operand, register_op, result, var_operand
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.sizes import check_allocation
from lowering.ir.types import I64, ScalarType, TensorType, scalar_type_of

from .base import ConstantOp, TensorOp, op_errors
from .typing import ShapeError, normalize_axis, tensor_of

# ---------------------------------------------------------------------------------------------
# Helpers shared by the structural ops (shape_ops, indexing, linalg, nnet)


def format_shape(shape) -> str:
    """A static shape for messages, ``?`` for run-time sizes.

    >>> format_shape((3, None)), format_shape((5,)), format_shape(())
    ('(3, ?)', '(5,)', '()')
    """
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def fit_result(op, value, index: int = 0) -> np.ndarray:
    """An interpreter result as an array of the result type's dtype, checked against its shape."""
    rtype = op.results[index].type
    arr = np.asarray(value, dtype=rtype.dtype)
    if not rtype.accepts_shape(arr.shape):
        raise ValueError(f"{op.name}: result of shape {arr.shape} does not fit the type {rtype}")
    return arr


def static_int(value: Value) -> int | None:
    """The integer a rank-0 value is known to hold at compile time, or None.

    >>> static_int(ConstantOp.build(np.int64(4)).result)
    4
    """
    if not isinstance(value, OpResult):
        return None
    owner = value.op
    if isinstance(owner, ConstantOp):
        arr = owner.attributes["value"].array
        if arr.ndim == 0 and arr.dtype.kind in "iu":
            return int(arr)
    if isinstance(owner, ShapeIOp):
        return owner.input.type.shape[owner.axis]
    return None


def static_vector(value: Value) -> list[int | None] | None:
    """The elements a rank-1 integer value is known to hold (None for unknown ones), or None
    when even its length is unknown."""
    t = value.type
    if not isinstance(t, TensorType) or t.rank != 1 or t.shape[0] is None:
        return None
    owner = value.op if isinstance(value, OpResult) else None
    if isinstance(owner, ConstantOp) and owner.attributes["value"].array.dtype.kind in "iu":
        return [int(v) for v in owner.attributes["value"].array]
    if isinstance(owner, MakeVectorOp):
        return [static_int(v) for v in owner.operands]
    if isinstance(owner, ShapeOp):
        return list(owner.input.type.shape)
    return [None] * t.shape[0]


def scalar_constant(number, element: ScalarType, location=None) -> Value:
    """A rank-0 ``tensor.constant`` of ``element`` type.

    >>> str(scalar_constant(0, I64).type)
    'tensor<i64>'
    """
    return ConstantOp.build(np.asarray(number, dtype=element.dtype), location=location).result


def zeros_like(x: Value, location=None) -> Value:
    """``tensor.fill(x, 0)``: zeros of exactly ``x``'s type."""
    zero = scalar_constant(0, x.type.element, location)
    return FillOp.build(x, zero, location=location).result


def match_type(grad: Value, operand: Value, location=None) -> Value:
    """``grad`` brought to exactly ``operand``'s type: summed over the leading dims it has in
    excess and over the dims ``operand`` broadcasts along, cast to its element type, and given
    its static sizes (``?`` where the operand has ``?``).

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64
    >>> g, x = Block([TensorType((2, 3, 4), F64), TensorType((1, None), F64)]).args
    >>> str(match_type(g, x).type)
    'tensor<1x?xf64>'
    """
    from .elementwise import CastOp
    from .gradutil import as_type
    from .reduction import SumOp

    target = operand.type
    extra = grad.type.rank - target.rank
    if extra < 0:
        raise VerifyError(f"gradient of type {grad.type} has a lower rank than its operand {target}")
    if extra:
        grad = SumOp.build(grad, axes=list(range(extra)), keepdims=False, location=location).result
    axes = [d for d, (g, o) in enumerate(zip(grad.type.shape, target.shape)) if o == 1 and g != 1]
    if axes:
        grad = SumOp.build(grad, axes=axes, keepdims=True, location=location).result
    if grad.type.element != target.element:
        grad = CastOp.build(grad, target.element, location=location).result
    if grad.type == target:
        return grad
    if all(o is None or o == g for g, o in zip(grad.type.shape, target.shape)):
        return as_type(grad, target, location)  # only forgets static sizes
    # A run-time size must become static: reshaping to the operand's own shape gives its type.
    shape = ShapeOp.build(operand, location=location).result
    return ReshapeOp.build(grad, shape, location=location).result


def _as_i64(value: Value, location=None) -> Value:
    """An integer operand converted to i64 (shape operands are i64)."""
    t = tensor_of(value)
    if t.element == I64 or not t.element.is_int:
        return value
    from .elementwise import CastOp
    return CastOp.build(value, I64, location=location).result


def _as_value(x, location=None) -> Value:
    """Python ints become rank-0 i64 constants; Values pass through."""
    if isinstance(x, Value):
        return x
    if isinstance(x, (int, np.integer)):
        return scalar_constant(int(x), I64, location)
    raise TypeError(f"expected a Value or an int, got {type(x).__name__}")


# ---------------------------------------------------------------------------------------------
# dimshuffle


def _dimshuffle_type(xt: TensorType, pattern) -> TensorType:
    rank = xt.rank
    kept = [p for p in pattern if p != -1]
    for p in pattern:
        if not isinstance(p, (int, np.integer)) or not -1 <= p < rank:
            raise VerifyError(f"pattern entry {p!r} is out of range for a tensor of rank {rank} "
                              f"(use -1 or 'x' for a new broadcastable dim)")
    if len(set(kept)) != len(kept):
        raise VerifyError(f"pattern {list(pattern)} repeats an input dim")
    for d in range(rank):
        if d not in kept and xt.shape[d] != 1:
            raise ShapeError(f"pattern {list(pattern)} drops dim {d} of {xt}, "
                             f"which is not of static size 1")
    return xt.with_shape(1 if p == -1 else xt.shape[p] for p in pattern)


@register_op
class DimShuffleOp(TensorOp):
    """Permute dims, insert broadcastable dims (``-1``, Theano's ``'x'``) and drop dims of static
    size 1: ``tensor.dimshuffle {pattern = [1, 0, -1]}``.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64
    >>> x = Block([TensorType((1, 5), F64)]).args[0]
    >>> op = DimShuffleOp.build(x, [1])
    >>> op.pattern, str(op.result.type)
    ((1,), 'tensor<5xf64>')
    """

    name = "tensor.dimshuffle"
    assembly_format = "$input $pattern attr-dict : type($input) -> type($result)"
    input = operand(AnyTensor)
    result = result(AnyTensor)
    pattern = attr(ArrayAttr)

    @classmethod
    def build(cls, x: Value, pattern, location=None) -> "DimShuffleOp":
        pattern = [-1 if p == "x" else p for p in pattern]
        with op_errors(cls.name):
            rtype = _dimshuffle_type(tensor_of(x), pattern)
        return cls.create([x], [rtype], {"pattern": ArrayAttr(tuple(IntAttr(int(p)) for p in pattern))},
                          location=location)

    def inferred_type(self):
        return _dimshuffle_type(self.input.type, self.pattern)

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type
        from .reduction import SumOp

        g = output_grads[0]
        x = self.input
        if g is None or not is_differentiable_type(x.type):
            return [None]
        pattern = self.pattern
        # New dims: sum them away (a no-op size when the grad already has size 1 there).
        new = [i for i, p in enumerate(pattern) if p == -1]
        summed = [i for i in new if g.type.shape[i] != 1]
        if summed:
            g = SumOp.build(g, axes=summed, keepdims=True, location=self.location).result
        # One dimshuffle drops the (now size-1) new dims and puts the kept dims back in input
        # order; input dims the pattern dropped come back as new size-1 dims.
        inverse = [-1] * x.type.rank
        for position, p in enumerate(pattern):
            if p != -1:
                inverse[p] = position
        g = DimShuffleOp.build(g, inverse, location=self.location).result
        return [match_type(g, x, self.location)]


@INTERPRETER.register(DimShuffleOp)
def _dimshuffle(interp, op, args):
    (x,) = args
    x = np.asarray(x)
    pattern = op.pattern
    kept = [p for p in pattern if p != -1]
    dropped = [d for d in range(x.ndim) if d not in kept]
    if any(x.shape[d] != 1 for d in dropped):
        raise ValueError(f"tensor.dimshuffle: cannot drop dims {dropped} of an array of shape {x.shape}")
    shape = [1 if p == -1 else x.shape[p] for p in pattern]
    return [fit_result(op, np.transpose(x, kept + dropped).reshape(shape))]


# ---------------------------------------------------------------------------------------------
# reshape


def _reshape_dims(in_shape, target) -> tuple[int | None, ...]:
    """Static result dims of reshaping ``in_shape`` to ``target`` (None = unknown; -1 = infer)."""
    static = [t for t in target if t is not None]
    if sum(t == -1 for t in static) > 1:
        raise ShapeError(f"target shape {format_shape(target)} has more than one -1")
    if any(t < -1 for t in static):
        raise ShapeError(f"target shape {format_shape(target)} has a negative size")
    known_input = all(d is not None for d in in_shape)
    size = math.prod(in_shape) if known_input else None
    others = [t for t in target if t != -1]
    if -1 in static:
        if size is None or any(t is None for t in others):
            return tuple(None if t == -1 else t for t in target)
        rest = math.prod(others)
        if rest == 0 or size % rest:
            raise ShapeError(f"cannot reshape {format_shape(in_shape)} into {format_shape(target)}")
        return tuple(size // rest if t == -1 else t for t in target)
    if size is not None and all(t is not None for t in target) and math.prod(target) != size:
        raise ShapeError(f"cannot reshape {format_shape(in_shape)} into {format_shape(target)}")
    return tuple(target)


def _reshape_type(xt: TensorType, shape: Value) -> TensorType:
    st = tensor_of(shape)
    if st.rank != 1 or st.element != I64:
        raise VerifyError(f"the shape operand must be a rank-1 i64 tensor, got {st}")
    if st.shape[0] is None:
        raise VerifyError(f"the shape operand must have a static length (the result rank), got {st}")
    return xt.with_shape(_reshape_dims(xt.shape, static_vector(shape)))


@register_op
class ReshapeOp(TensorOp):
    """``tensor.reshape(x, shape)``: NumPy's reshape; ``shape`` is a rank-1 i64 tensor of static
    length (the result rank) that may hold one ``-1``.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> x = Block([TensorType((2, 6), F32)]).args[0]
    >>> str(ReshapeOp.build(x, [3, -1]).result.type)
    'tensor<3x4xf32>'
    """

    name = "tensor.reshape"
    assembly_format = "$input `(` $shape `)` attr-dict : functional-type(operands, results)"
    input = operand(AnyTensor)
    shape = operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, x: Value, shape, ndim: int | None = None, location=None) -> "ReshapeOp":
        """``shape`` is a rank-1 integer Value or a sequence of ints and rank-0 integer Values."""
        shape = shape_vector(shape, location)
        with op_errors(cls.name):
            rtype = _reshape_type(tensor_of(x), shape)
            if ndim is not None and ndim != rtype.rank:
                raise VerifyError(f"ndim={ndim} differs from the length {rtype.rank} of the shape")
        return cls.create([x, shape], [rtype], location=location)

    value_dependent_type = True

    def inferred_type(self):
        return _reshape_type(self.input.type, self.shape)

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type
        g = output_grads[0]
        x = self.input
        if g is None or not is_differentiable_type(x.type):
            return [None, None]
        back = ReshapeOp.build(g, ShapeOp.build(x, location=self.location).result,
                               location=self.location).result
        return [match_type(back, x, self.location), None]


def shape_vector(shape, location=None) -> Value:
    """A shape operand as a rank-1 i64 Value: from such a Value (cast to i64), or from a
    sequence of ints (a constant) and rank-0 integer Values (a ``tensor.make_vector``)."""
    if not isinstance(shape, Value):
        shape = list(shape)
        if all(isinstance(s, (int, np.integer)) for s in shape):
            shape = ConstantOp.build(np.array(shape, dtype=np.int64).reshape(len(shape)),
                                     location=location).result
        else:
            shape = MakeVectorOp.build(*[_as_i64(_as_value(s, location), location) for s in shape],
                                       dtype=I64, location=location).result
    return _as_i64(shape, location)


@INTERPRETER.register(ReshapeOp)
def _reshape(interp, op, args):
    x, shape = np.asarray(args[0]), np.asarray(args[1])
    target = tuple(int(s) for s in shape.reshape(-1))
    if shape.ndim != 1:
        raise ValueError(f"tensor.reshape: the shape must be a vector, got an array of shape {shape.shape}")
    if sum(t == -1 for t in target) > 1 or any(t < -1 for t in target):
        raise ValueError(f"tensor.reshape: bad target shape {target} (sizes must be >= 0, one -1 at most)")
    try:
        out = x.reshape(target)
    except ValueError:
        raise ValueError(f"tensor.reshape: cannot reshape an array of shape {x.shape} "
                         f"into {target}") from None
    return [fit_result(op, out)]


# ---------------------------------------------------------------------------------------------
# shape, shape_i, make_vector


@register_op
class ShapeOp(TensorOp):
    """``tensor.shape(x) -> tensor<Rxi64>``, folded to a constant when ``x``'s type is static.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> x = Block([TensorType((None, 3), F32)]).args[0]
    >>> str(ShapeOp.build(x).result.type)
    'tensor<2xi64>'
    """

    name = "tensor.shape"
    assembly_format = "$input attr-dict : type($input) -> type($result)"
    input = operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, x: Value, location=None) -> "ShapeOp":
        with op_errors(cls.name):
            rank = tensor_of(x).rank
        return cls.create([x], [TensorType((rank,), I64)], location=location)

    def inferred_type(self):
        return TensorType((self.input.type.rank,), I64)

    def fold(self):
        shape = self.input.type.shape
        if all(d is not None for d in shape):
            return [DenseAttr.from_array(np.array(shape, dtype=np.int64).reshape(len(shape)))]
        return super().fold()

    def grad(self, output_grads):
        return [None]


@INTERPRETER.register(ShapeOp)
def _shape(interp, op, args):
    return [np.array(np.shape(args[0]), dtype=np.int64).reshape(-1)]


@register_op
class ShapeIOp(TensorOp):
    """``tensor.shape_i(x) {axis}``: one size of ``x`` as a rank-0 i64 tensor.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> x = Block([TensorType((None, 3), F32)]).args[0]
    >>> ShapeIOp.build(x, -1).axis, ShapeIOp.build(x, 1).fold()[0].array
    (1, array(3))
    """

    name = "tensor.shape_i"
    assembly_format = "$input, $axis attr-dict : type($input) -> type($result)"
    input = operand(AnyTensor)
    result = result(TensorType((), I64))
    axis = attr(IntAttr)

    @classmethod
    def build(cls, x: Value, axis: int, location=None) -> "ShapeIOp":
        with op_errors(cls.name):
            xt = tensor_of(x)
            if xt.rank == 0:
                raise VerifyError(f"a tensor of rank 0 has no axis {axis}")
            axis = normalize_axis(axis, xt.rank)
        return cls.create([x], [TensorType((), I64)], {"axis": IntAttr(axis)}, location=location)

    def verify_(self):
        rank = self.input.type.rank
        if not 0 <= self.axis < rank:
            raise VerifyError(f"{self.name}: axis {self.axis} is out of range for a tensor of "
                              f"rank {rank}", self)

    def fold(self):
        size = self.input.type.shape[self.axis]
        if size is not None:
            return [DenseAttr.from_array(np.array(size, dtype=np.int64))]
        return super().fold()

    def grad(self, output_grads):
        return [None]


@INTERPRETER.register(ShapeIOp)
def _shape_i(interp, op, args):
    return [np.array(np.shape(args[0])[op.axis], dtype=np.int64)]


@register_op
class MakeVectorOp(TensorOp):
    """``tensor.make_vector(s0, s1, ...)``: a vector from rank-0 tensors of one element type.

    >>> a = ConstantOp.build(np.int64(2)).result
    >>> str(MakeVectorOp.build(a, a, a).result.type)
    'tensor<3xi64>'
    """

    name = "tensor.make_vector"
    assembly_format = "$elements attr-dict : functional-type($elements, results)"
    elements = var_operand(AnyTensor)
    result = result(TensorOf(rank=1))

    @classmethod
    def build(cls, *elements: Value, dtype=None, location=None) -> "MakeVectorOp":
        """``dtype`` (a ScalarType or dtype name) is needed only for an empty vector."""
        if dtype is not None and not isinstance(dtype, ScalarType):
            dtype = scalar_type_of(dtype)
        if dtype is None:
            if not elements:
                raise VerifyError(f"{cls.name}: an empty vector needs a dtype")
            dtype = tensor_of(elements[0]).element
        rtype = TensorType((len(elements),), dtype)
        with op_errors(cls.name):
            _check_make_vector(elements, rtype)
        return cls.create(list(elements), [rtype], location=location)

    def inferred_type(self):
        rtype = self.result.type  # a rank-1 tensor: its element type is the op's choice
        _check_make_vector(self.operands, rtype)
        return TensorType((len(self.operands),), rtype.element)

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type
        from .indexing import SubtensorOp

        g = output_grads[0]
        if g is None or not is_differentiable_type(self.result.type):
            return [None] * len(self.operands)
        return [SubtensorOp.build(g, i, location=self.location).result for i in range(len(self.operands))]


def _check_make_vector(elements, rtype: TensorType) -> None:
    for i, e in enumerate(elements):
        t = tensor_of(e)
        if t.rank != 0 or t.element != rtype.element:
            raise VerifyError(f"element #{i} must be a rank-0 tensor of {rtype.element}, got {t}")


@INTERPRETER.register(MakeVectorOp)
def _make_vector(interp, op, args):
    dtype = op.result.type.dtype
    return [np.array([np.asarray(a).reshape(()) for a in args], dtype=dtype).reshape(len(args))]


# ---------------------------------------------------------------------------------------------
# alloc and fill


def _alloc_type(vt: TensorType, dims) -> TensorType:
    if vt.rank > len(dims):
        raise ShapeError(f"value of rank {vt.rank} does not fit {len(dims)} dims")
    for i, d in enumerate(dims):
        t = tensor_of(d)
        if t.rank != 0 or t.element != I64:
            raise VerifyError(f"dim #{i} must be a rank-0 i64 tensor, got {t}")
    lead = len(dims) - vt.rank
    shape = []
    for i, d in enumerate(dims):
        size = static_int(d)
        if size is not None and size < 0:
            raise ShapeError(f"dim #{i} is negative ({size})")
        vd = vt.shape[i - lead] if i >= lead else 1
        if vd is not None and vd != 1:
            if size is not None and size != vd:
                raise ShapeError(f"value of shape {format_shape(vt.shape)} cannot broadcast to "
                                 f"size {size} in dim {i}")
            size = vd
        shape.append(size)
    return vt.with_shape(shape)


@register_op
class AllocOp(TensorOp):
    """``tensor.alloc(value, d0, d1, ...)``: ``value`` broadcast (NumPy rules, aligned on the
    right) to the shape given by rank-0 i64 dims.

    >>> v = ConstantOp.build(np.float32(0)).result
    >>> n = ConstantOp.build(np.int64(4)).result
    >>> str(AllocOp.build(v, n, 3).result.type)
    'tensor<4x3xf32>'
    """

    name = "tensor.alloc"
    assembly_format = "$value `(` $dims `)` attr-dict : functional-type(operands, results)"
    value = operand(AnyTensor)
    dims = var_operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, value: Value, *dims, location=None) -> "AllocOp":
        """``dims`` are rank-0 integer Values or ints."""
        dims = [_as_i64(_as_value(d, location), location) for d in dims]
        with op_errors(cls.name):
            rtype = _alloc_type(tensor_of(value), dims)
        return cls.create([value, *dims], [rtype], location=location)

    value_dependent_type = True

    def inferred_type(self):
        return _alloc_type(self.value.type, self.dims)

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type
        g = output_grads[0]
        nones = [None] * len(self.dims)
        if g is None or not is_differentiable_type(self.value.type):
            return [None, *nones]
        return [match_type(g, self.value, self.location), *nones]

    def fold(self):
        return _fold_small(self)


@INTERPRETER.register(AllocOp)
def _alloc(interp, op, args):
    value, dims = np.asarray(args[0]), [int(np.asarray(d)) for d in args[1:]]
    if any(d < 0 for d in dims):
        raise ValueError(f"tensor.alloc: negative dimension in {tuple(dims)}")
    check_allocation("tensor.alloc", dims, op.result.type.dtype.itemsize)
    try:
        out = np.broadcast_to(value, dims)
    except ValueError:
        raise ValueError(f"tensor.alloc: a value of shape {value.shape} cannot broadcast to "
                         f"{tuple(dims)}") from None
    return [fit_result(op, out.copy())]


def _fill_type(mt: TensorType, vt: TensorType) -> TensorType:
    if vt.rank > mt.rank:
        raise ShapeError(f"value of rank {vt.rank} is higher than the model's rank {mt.rank}")
    for i, vd in enumerate(vt.shape):
        md = mt.shape[mt.rank - vt.rank + i]
        if vd is not None and md is not None and vd != 1 and vd != md:
            raise ShapeError(f"value of shape {format_shape(vt.shape)} cannot broadcast to the "
                             f"model's shape {format_shape(mt.shape)}")
    return mt.with_element(vt.element)


@register_op
class FillOp(TensorOp):
    """``tensor.fill(model, value)``: ``value`` broadcast to ``model``'s shape, with ``value``'s
    element type (Theano's ``fill``/``second``; ``fill(x, 0)`` is ``zeros_like(x)``).

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32, I8
    >>> x = Block([TensorType((None, 3), I8)]).args[0]
    >>> str(FillOp.build(x, ConstantOp.build(np.float32(1)).result).result.type)
    'tensor<?x3xf32>'
    """

    name = "tensor.fill"
    assembly_format = "$model, $value attr-dict : functional-type(operands, results)"
    model = operand(AnyTensor)
    value = operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, model: Value, value: Value, location=None) -> "FillOp":
        with op_errors(cls.name):
            rtype = _fill_type(tensor_of(model), tensor_of(value))
        return cls.create([model, value], [rtype], location=location)

    def inferred_type(self):
        return _fill_type(self.model.type, self.value.type)

    def grad(self, output_grads):
        from .gradutil import is_differentiable_type
        g = output_grads[0]
        if g is None or not is_differentiable_type(self.value.type):
            return [None, None]
        return [None, match_type(g, self.value, self.location)]

    def fold(self):
        return _fold_small(self)


@INTERPRETER.register(FillOp)
def _fill(interp, op, args):
    model, value = np.asarray(args[0]), np.asarray(args[1])
    try:
        out = np.broadcast_to(value, model.shape)
    except ValueError:
        raise ValueError(f"tensor.fill: a value of shape {value.shape} cannot broadcast to the "
                         f"model's shape {model.shape}") from None
    return [fit_result(op, out.copy())]


# ---------------------------------------------------------------------------------------------
# arange


def _fold_small(op):
    """Constant-fold ``op`` unless its static result is too large to keep as a constant (checked
    before anything is computed: an alloc of a billion elements must not be materialized)."""
    shape = op.result.type.shape
    if None not in shape and math.prod(shape) > TensorOp.FOLD_MAX_ELEMENTS:
        return None
    return TensorOp.fold(op)


def _arange_length(start, stop, step) -> int:
    """NumPy's arange length: exact for integers, ``ceil((stop - start) / step)`` for floats."""
    start, stop, step = (np.asarray(v).item() for v in (start, stop, step))
    if step == 0:
        raise ValueError("tensor.arange: step must not be zero")
    if all(isinstance(v, int) for v in (start, stop, step)):
        return max(0, -((start - stop) // step))  # len(range(...)) without its int64 limit
    span = (stop - start) / step
    if not math.isfinite(span):
        raise ValueError(f"tensor.arange: start {start}, stop {stop} and step {step} give no "
                         f"finite length")
    return max(0, math.ceil(span))


def _arange_values(start, stop, step, dtype) -> np.ndarray:
    # Python scalars: the length is computed exactly (in float64 for floats), without the
    # wrap-around of small integer types.
    start, stop, step = (np.asarray(v).item() for v in (start, stop, step))
    if step == 0:
        raise ValueError("tensor.arange: step must not be zero")
    length = _arange_length(start, stop, step)
    check_allocation("tensor.arange", (length,), np.dtype(dtype).itemsize)
    if all(isinstance(v, int) for v in (start, stop, step)) and np.dtype(dtype).kind in "iu":
        # start + i * step wraps in int64 on the way but not in the end (every element lies
        # between start and stop), where NumPy's float64 length can be off by one near 2**63
        steps = np.arange(length, dtype=np.int64) * np.int64(step)
        return (steps + np.int64(start)).astype(dtype, copy=False)
    return np.arange(start, stop, step, dtype=dtype)


def _arange_type(start: Value, stop: Value, step: Value) -> TensorType:
    types = [tensor_of(v) for v in (start, stop, step)]
    for what, t in zip(("start", "stop", "step"), types):
        if t.rank != 0:
            raise VerifyError(f"{what} must be a rank-0 tensor, got {t}")
        if t.element.is_bool:
            raise VerifyError(f"{what} must be an integer or float tensor, got {t}")
    if len({t.element for t in types}) > 1:
        raise VerifyError(f"start, stop and step must have one element type, got "
                          f"{', '.join(str(t) for t in types)}")
    element = types[0].element
    values = [v.op.attributes["value"].array if isinstance(v, OpResult) and isinstance(v.op, ConstantOp)
              else None for v in (start, stop, step)]
    length = None
    if all(v is not None for v in values):
        try:
            length = _arange_length(*values)
        except ValueError as exc:
            raise VerifyError(str(exc)) from None
    return TensorType((length,), element)


@register_op
class ArangeOp(TensorOp):
    """``tensor.arange(start, stop, step)``: NumPy's arange of rank-0 operands of one type; the
    length is static when all three are constants.

    >>> c = lambda v: ConstantOp.build(np.int64(v)).result
    >>> str(ArangeOp.build(c(0), c(10), c(3)).result.type)
    'tensor<4xi64>'
    """

    name = "tensor.arange"
    assembly_format = "$start, $stop, $step attr-dict : type($start, $stop, $step) -> type($result)"
    start = operand(AnyTensor)
    stop = operand(AnyTensor)
    step = operand(AnyTensor)
    result = result(AnyTensor)

    @classmethod
    def build(cls, start: Value, stop: Value, step: Value, location=None) -> "ArangeOp":
        with op_errors(cls.name):
            rtype = _arange_type(start, stop, step)
        return cls.create([start, stop, step], [rtype], location=location)

    value_dependent_type = True

    def inferred_type(self):
        return _arange_type(self.start, self.stop, self.step)

    def grad(self, output_grads):
        return [None, None, None]

    def fold(self):
        return _fold_small(self)


@INTERPRETER.register(ArangeOp)
def _arange(interp, op, args):
    dtype = op.result.type.dtype
    return [fit_result(op, _arange_values(*args, dtype=dtype))]


# ---------------------------------------------------------------------------------------------
# concatenate


def _concatenate_type(types, axis: int) -> TensorType:
    if not types:
        raise VerifyError("needs at least one operand")
    first = types[0]
    if first.rank == 0:
        raise VerifyError("cannot concatenate rank-0 tensors")
    if not 0 <= axis < first.rank:
        raise VerifyError(f"axis {axis} is out of range for tensors of rank {first.rank}")
    for i, t in enumerate(types):
        if t.rank != first.rank or t.element != first.element:
            raise VerifyError(f"operand #{i} of type {t} differs in rank or element type from {first}")
    shape = []
    for d in range(first.rank):
        dims = [t.shape[d] for t in types]
        if d == axis:
            shape.append(None if any(s is None for s in dims) else sum(dims))
            continue
        static = {s for s in dims if s is not None}
        if len(static) > 1:
            raise ShapeError(f"shapes {', '.join(format_shape(t.shape) for t in types)} differ "
                             f"in dim {d}")
        shape.append(static.pop() if static else None)
    return first.with_shape(shape)


@register_op
class ConcatenateOp(TensorOp):
    """``tensor.concatenate(xs...) {axis}``: join tensors of one rank and element type along
    ``axis``; the other dims must be equal.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> a, b = Block([TensorType((2, None), F32), TensorType((3, 4), F32)]).args
    >>> str(ConcatenateOp.build(a, b, axis=0).result.type)
    'tensor<5x4xf32>'
    """

    name = "tensor.concatenate"
    assembly_format = "$inputs `axis` $axis attr-dict : functional-type($inputs, results)"
    inputs = var_operand(AnyTensor)
    result = result(AnyTensor)
    axis = attr(IntAttr)

    @classmethod
    def build(cls, *xs, axis: int = 0, location=None) -> "ConcatenateOp":
        """``xs`` are Values, or one list of Values."""
        if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
            xs = tuple(xs[0])
        with op_errors(cls.name):
            types = [tensor_of(x) for x in xs]
            if not types:
                raise VerifyError("needs at least one operand")
            axis = normalize_axis(axis, types[0].rank) if types[0].rank else axis
            rtype = _concatenate_type(types, axis)
        return cls.create(list(xs), [rtype], {"axis": IntAttr(axis)}, location=location)

    def inferred_type(self):
        return _concatenate_type([x.type for x in self.operands], self.axis)

    def grad(self, output_grads):
        from .elementwise import AddOp
        from .gradutil import is_differentiable_type
        from .indexing import SubtensorOp

        g = output_grads[0]
        if g is None or not is_differentiable_type(self.result.type):
            return [None] * len(self.operands)
        axis, loc = self.axis, self.location
        grads = []
        start: int | Value = 0
        for x in self.operands:
            size = x.type.shape[axis]
            if isinstance(start, int) and size is not None:
                stop: int | Value = start + size
            else:
                size_v = scalar_constant(size, I64, loc) if size is not None else \
                    ShapeIOp.build(x, axis, location=loc).result
                start_v = scalar_constant(start, I64, loc) if isinstance(start, int) else start
                stop = AddOp.build(start_v, size_v, location=loc).result
            key = (slice(None),) * axis + (slice(start, stop),)
            piece = SubtensorOp.build(g, key, location=loc).result
            grads.append(match_type(piece, x, loc))
            start = stop
        return grads


@INTERPRETER.register(ConcatenateOp)
def _concatenate(interp, op, args):
    arrays = [np.asarray(a) for a in args]
    try:
        out = np.concatenate(arrays, axis=op.axis)
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"tensor.concatenate: shapes {shapes} differ outside axis {op.axis}") from None
    return [fit_result(op, out)]
