"""Canonicalization patterns of the tensor dialect, attached to the op classes they rewrite.

Each pattern is a small function registered with ``@canonical(OpClass, ...)``; the op classes
hand them to the ``canonicalize`` pass through ``canonicalization_patterns()``. They keep what a
graph computes (up to the rounding of reassociated constants and the sign of a zero), and make it
smaller or simpler for later rewrites:

- algebraic identities: ``x + 0``, ``x - 0``, ``0 - x``, ``x * 1``, ``x * -1``, ``x / 1``,
  ``pow(x, 1)``, ``pow(x, 0)``, ``neg(neg(x))``, ``x - neg(y)``, ``x + neg(y)``; for integers
  only (a float ``x * 0`` is NaN where ``x`` is inf or NaN) ``x * 0`` and ``x - x``;
- constants merged in chains: ``(x * 2) * 3`` is ``x * 6``, ``(x + 2) + 3`` is ``x + 5``;
- casts: a cast to the type a value already has goes; a cast of a cast merges when the inner
  cast is exact;
- dimshuffles: one of another merges, an identity one goes; reshapes: an identity one goes, one
  of another merges;
- shapes: ``shape_i`` of an op whose size comes from an input is that input's ``shape_i``;
  ``shape`` of an alloc is the alloc's dims;
- ``fill`` (zeros_like, ones_like) sinks through elementwise ops and goes where another operand
  already gives the shape, so gradient graphs lose their broadcasts;
- reductions: a full reduction of a dimshuffle reduces the input directly; a dimshuffle dropping
  the dims a ``keepdims`` reduction kept becomes the reduction without ``keepdims``.

Rewrites that change values where the naive form is inaccurate (Theano's sigmoid forms such as
``1 - sigmoid(x)`` to ``sigmoid(-x)``) belong to the ``stabilize`` pass, not here. The matching
helpers (``splat``, ``strip_neg``, ``same_value``, ``NewOps``, ``rewrite_to``) are public: the
stabilize and specialize passes build on them.

>>> [p.name for p in MulOp.canonicalization_patterns()][:2]
['mul_by_one', 'mul_by_zero']
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from lowering.ir.core import COMMUTATIVE, PURE, OpResult, Operation, Value, VerifyError
from lowering.ir.patterns import FunctionPattern
from lowering.ir.rewriter import Rewriter
from lowering.ir.traits import add_canonicalization_pattern
from lowering.ir.types import TensorType

from .base import ConstantOp
from .blas import GemmOp, GemvOp
from .elementwise import AddOp, CastOp, DivOp, ElementwiseOp, MulOp, NegOp, PowOp, SubOp
from .fused import FusedOp
from .linalg import DotOp
from .nnet import LogSoftmaxOp, SoftmaxOp
from .reduction import ArgMaxOp, ArgMinOp, ReductionOp
from .shape_ops import (AllocOp, DimShuffleOp, FillOp, MakeVectorOp, ReshapeOp, ShapeIOp, ShapeOp)

# ---------------------------------------------------------------------------------------------
# Matching helpers


def defining(value: Value, *op_classes) -> Operation | None:
    """The op computing ``value`` if it is one of ``op_classes``, else None.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> (x,) = Block([TensorType((2,), F64)]).args
    >>> defining(NegOp.build(x).result, NegOp).name, defining(x, NegOp)
    ('tensor.neg', None)
    """
    if isinstance(value, OpResult) and isinstance(value.op, op_classes):
        return value.op
    return None


def splat(value: Value):
    """The number every element of a ``tensor.constant`` holds (a Python scalar), else None.

    >>> splat(ConstantOp.build(np.full((1, 1), 2.5)).result)
    2.5
    >>> splat(ConstantOp.build(np.arange(2.0)).result) is None
    True
    """
    op = defining(value, ConstantOp)
    if op is None:
        return None
    array = op.attributes["value"].array
    if array.size == 0:
        return None
    first = array[(0,) * array.ndim]
    if any(array.strides) and not (array == first).all():  # stride 0: one value broadcast
        return None
    return first.item()


def is_splat(value: Value, number) -> bool:
    """Whether ``value`` is a constant holding ``number`` everywhere (NaN never matches).

    >>> is_splat(ConstantOp.build(np.zeros(3, np.int8)).result, 0)
    True
    """
    found = splat(value)
    return found is not None and found == number


def is_scalar_shaped(value: Value) -> bool:
    """Whether ``value``'s type has only static ``1`` dims (it broadcasts against anything of its
    rank without changing the shape)."""
    return isinstance(value.type, TensorType) and all(d == 1 for d in value.type.shape)


def single_use(value: Value) -> bool:
    """Whether exactly one operand reads ``value`` (so a rewrite may absorb its op)."""
    return len(value.uses) == 1


def strip_neg(value: Value) -> tuple[bool, Value]:
    """``(negated, core)`` with ``value == -core`` when ``negated``: ``neg`` ops peeled off.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> (x,) = Block([TensorType((2,), F64)]).args
    >>> strip_neg(NegOp.build(NegOp.build(NegOp.build(x).result).result).result) == (True, x)
    True
    """
    negated = False
    while (op := defining(value, NegOp)) is not None:
        negated, value = not negated, op.input
    return negated, value


_MAX_KEY_DEPTH = 64


class ValueKeys:
    """Structural keys of values (see ``value_key``), numbered: a key is a small int, and equal
    computations get equal numbers. One ``ValueKeys`` remembers the values it has seen."""

    def __init__(self):
        self._by_value: dict[int, int] = {}
        self._by_structure: dict[tuple, int] = {}

    def __call__(self, value: Value, depth: int = 0) -> int:
        known = self._by_value.get(id(value))
        if known is not None:
            return known
        op = value.op if isinstance(value, OpResult) else None
        if op is None or PURE not in op.traits or op.regions or depth > _MAX_KEY_DEPTH:
            structure: tuple = ("value", id(value))
        else:
            operands = [self(v, depth + 1) for v in op.operands]
            if COMMUTATIVE in op.traits:
                operands.sort()
            structure = (op.name, tuple(sorted(op.attributes.items(), key=lambda kv: kv[0])),
                         tuple(operands), value.index, value.type)
        key = self._by_structure.setdefault(structure, len(self._by_structure))
        self._by_value[id(value)] = key
        return key


def value_key(value: Value, keys: ValueKeys | None = None) -> int:
    """A key equal for values computed the same way (same pure ops on the same inputs,
    commutative operands in any order); values not so computed key by identity. Keys compare
    only within one ``keys`` table.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> x, y = Block([TensorType((2,), F64), TensorType((2,), F64)]).args
    >>> keys = ValueKeys()
    >>> value_key(AddOp.build(x, y).result, keys) == value_key(AddOp.build(y, x).result, keys)
    True
    """
    return (keys if keys is not None else ValueKeys())(value)


def same_value(a: Value, b: Value) -> bool:
    """Whether ``a`` and ``b`` are computed the same way (see ``value_key``)."""
    if a is b:
        return True
    keys = ValueKeys()
    return keys(a) == keys(b)


def float_tensor(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.element.is_float


def int_tensor(value: Value) -> bool:
    element = value.type.element if isinstance(value.type, TensorType) else None
    return element is not None and element.is_int


# ---------------------------------------------------------------------------------------------
# Building replacements


class NewOps:
    """The ops a rewrite builds, put into the IR only if the rewrite goes ahead.

    ``new(Op, *operands, **attrs)`` builds ``Op`` (detached, with its ``build``) and returns its
    result. ``commit`` replaces the rewritten op when the replacement has exactly its type;
    otherwise, and on ``discard``, the new ops are dropped so that no value keeps a stray use.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> (x,) = Block([TensorType((2,), F64)]).args
    >>> new = NewOps()
    >>> y = new(NegOp, x)
    >>> len(x.uses), new.discard(), len(x.uses)
    (1, None, 0)
    """

    def __init__(self):
        self.ops: list[Operation] = []

    def __call__(self, op_class, *operands, **attrs) -> Value:
        return self.add(op_class.build(*operands, **attrs)).result

    def add(self, op: Operation) -> Operation:
        """Record an op built elsewhere."""
        self.ops.append(op)
        return op

    def constant(self, array) -> Value:
        return self(ConstantOp, np.asarray(array))

    def neg(self, value: Value) -> Value:
        """``-value``, peeling a ``neg`` instead of adding a second one."""
        inner = defining(value, NegOp)
        return inner.input if inner is not None else self(NegOp, value)

    def discard(self) -> None:
        for op in reversed(self.ops):
            op.erase(check_uses=False)
        self.ops = []

    def commit(self, rewriter: Rewriter, root: Operation, values) -> bool:
        values = [values] if isinstance(values, Value) else list(values)
        if [v.type for v in values] != [r.type for r in root.results]:
            self.discard()
            return False
        if self.ops:
            rewriter.insert_op_before(self.ops, root)
        rewriter.replace_op(root, values)
        return True


def rewrite_to(rewriter: Rewriter, root: Operation, make: Callable[[NewOps], Value | None]) -> bool:
    """Replace ``root`` by what ``make(new)`` builds, if that has ``root``'s type; a ``make`` that
    returns None or raises a VerifyError (the new ops do not type) changes nothing."""
    new = NewOps()
    try:
        value = make(new)
    except VerifyError:
        new.discard()
        return False
    if value is None:
        new.discard()
        return False
    return new.commit(rewriter, root, value)


def rebuild_elementwise(new: NewOps, op: ElementwiseOp, operands) -> Value:
    """``op``'s function applied to other ``operands`` (casts keep their target type)."""
    if isinstance(op, CastOp):
        return new(CastOp, operands[0], op.to)
    return new(type(op), *operands)


def full_constant(new: NewOps, number, like: Value) -> Value:
    """A ``(1, ..., 1)`` constant of ``like``'s element type and rank."""
    t = like.type
    return new.constant(np.full((1,) * t.rank, number, dtype=t.dtype))


def fill_with(new: NewOps, model: Value, number) -> Value:
    """``number`` broadcast to ``model``'s shape: ``tensor.fill(model, number)`` (a constant when
    the shape is static and small)."""
    t = model.type
    if None not in t.shape and int(np.prod(t.shape)) <= ConstantOp.FOLD_MAX_ELEMENTS:
        return new.constant(np.full(t.shape, number, dtype=t.dtype))
    return new(FillOp, model, full_constant(new, number, model))


# ---------------------------------------------------------------------------------------------
# Registration


def canonical(*op_classes, benefit: int = 1):
    """Decorator: make ``fn(op, rewriter) -> bool`` a canonicalization pattern of ``op_classes``.

    >>> @canonical(NegOp)
    ... def never(op, rewriter):
    ...     return False
    >>> never in NegOp.canonicalization_patterns()
    True
    >>> from lowering.ir.traits import CANONICALIZATION_PATTERNS
    >>> CANONICALIZATION_PATTERNS[NegOp].remove(never)
    """
    def wrap(fn) -> FunctionPattern:
        pattern = FunctionPattern(fn, op_classes, benefit)
        for cls in op_classes:
            add_canonicalization_pattern(cls, pattern)
        return pattern
    return wrap


def operand_pair(op, test) -> tuple[int, Value, Value] | None:
    """For a binary op: ``(index, matching operand, other operand)`` of the first operand
    passing ``test`` (either side for commutative ops, the right side otherwise).

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> (x,) = Block([TensorType((2,), F64)]).args
    >>> one = ConstantOp.build(np.ones(1)).result
    >>> operand_pair(AddOp.build(one, x).result.op, lambda v: is_splat(v, 1))[0]
    0
    """
    sides = (0, 1) if COMMUTATIVE in op.traits else (1,)
    for i in sides:
        if test(op.operands[i]):
            return i, op.operands[i], op.operands[1 - i]
    return None


# ---------------------------------------------------------------------------------------------
# Algebraic identities


@canonical(AddOp, SubOp)
def add_zero(op, rewriter) -> bool:
    """``x + 0``, ``0 + x``, ``x - 0`` are ``x``."""
    found = operand_pair(op, lambda v: is_splat(v, 0))
    return found is not None and rewrite_to(rewriter, op, lambda new: found[2])


@canonical(SubOp)
def zero_minus(op, rewriter) -> bool:
    """``0 - x`` is ``-x``."""
    if not is_splat(op.lhs, 0):
        return False
    return rewrite_to(rewriter, op, lambda new: new.neg(op.rhs))


@canonical(MulOp)
def mul_by_one(op, rewriter) -> bool:
    """``x * 1`` is ``x``; ``x * -1`` is ``-x``."""
    found = operand_pair(op, lambda v: is_splat(v, 1) or is_splat(v, -1))
    if found is None:
        return False
    _, constant, x = found
    return rewrite_to(rewriter, op, lambda new: x if is_splat(constant, 1) else new.neg(x))


@canonical(MulOp)
def mul_by_zero(op, rewriter) -> bool:
    """Integer ``x * 0`` is zeros of the result's shape (not for floats: inf * 0 is NaN)."""
    if not int_tensor(op.result):
        return False
    found = operand_pair(op, lambda v: is_splat(v, 0))
    if found is None or found[2].type != op.result.type:
        return False
    return rewrite_to(rewriter, op, lambda new: fill_with(new, found[2], 0))


@canonical(SubOp)
def sub_self(op, rewriter) -> bool:
    """Integer ``x - x`` is zeros (for floats, inf - inf is NaN)."""
    if not int_tensor(op.result) or not same_value(op.lhs, op.rhs) \
            or op.lhs.type != op.result.type:
        return False
    return rewrite_to(rewriter, op, lambda new: fill_with(new, op.lhs, 0))


@canonical(NegOp)
def neg_neg(op, rewriter) -> bool:
    """``-(-x)`` is ``x``."""
    inner = defining(op.input, NegOp)
    return inner is not None and rewrite_to(rewriter, op, lambda new: inner.input)


@canonical(AddOp, SubOp)
def add_neg(op, rewriter) -> bool:
    """``x - (-y)`` is ``x + y``; ``x + (-y)`` and ``(-y) + x`` are ``x - y``."""
    if isinstance(op, SubOp):
        inner = defining(op.rhs, NegOp)
        return inner is not None and rewrite_to(
            rewriter, op, lambda new: new(AddOp, op.lhs, inner.input))
    found = operand_pair(op, lambda v: defining(v, NegOp) is not None)
    if found is None:
        return False
    _, negated, x = found
    return rewrite_to(rewriter, op, lambda new: new(SubOp, x, negated.op.input))


@canonical(DivOp)
def div_by_one(op, rewriter) -> bool:
    """``x / 1`` is ``x``."""
    return is_splat(op.rhs, 1) and rewrite_to(rewriter, op, lambda new: op.lhs)


@canonical(PowOp)
def pow_one_or_zero(op, rewriter) -> bool:
    """``pow(x, 1)`` is ``x``; ``pow(x, 0)`` is ones (also for NaN, as IEEE's pow says)."""
    if is_splat(op.rhs, 1):
        return rewrite_to(rewriter, op, lambda new: op.lhs)
    if is_splat(op.rhs, 0) and op.lhs.type == op.result.type:
        return rewrite_to(rewriter, op, lambda new: fill_with(new, op.lhs, 1))
    return False


def _merge_constants(op_class, combine, name: str, doc: str) -> FunctionPattern:
    def pattern(op, rewriter) -> bool:
        found = operand_pair(op, lambda v: splat(v) is not None and is_scalar_shaped(v))
        if found is None:
            return False
        _, outer, x = found
        inner = defining(x, type(op))
        if inner is None or not single_use(x):
            return False
        inner_found = operand_pair(inner, lambda v: splat(v) is not None and
                                     is_scalar_shaped(v))
        if inner_found is None:
            return False
        _, inner_constant, y = inner_found
        a = outer.op.attributes["value"].array
        b = inner_constant.op.attributes["value"].array
        with np.errstate(all="ignore"):
            merged = combine(a, b).astype(a.dtype)
        return rewrite_to(rewriter, op, lambda new: new(type(op), y, new.constant(merged)))
    pattern.__name__, pattern.__doc__ = name, doc
    return canonical(op_class)(pattern)


merge_mul_constants = _merge_constants(MulOp, np.multiply, "merge_mul_constants",
                                       "``(x * a) * b`` is ``x * (a * b)`` for constants a, b.")
merge_add_constants = _merge_constants(AddOp, np.add, "merge_add_constants",
                                       "``(x + a) + b`` is ``x + (a + b)`` for constants a, b.")


# ---------------------------------------------------------------------------------------------
# Casts


@canonical(CastOp)
def cast_identity(op, rewriter) -> bool:
    """A cast to the type the value already has goes."""
    return op.input.type == op.result.type and rewrite_to(rewriter, op, lambda new: op.input)


@canonical(CastOp)
def cast_of_cast(op, rewriter) -> bool:
    """``cast(cast(x, T1), T2)`` is ``cast(x, T2)`` when every value of ``x`` is exact in T1."""
    inner = defining(op.input, CastOp)
    if inner is None:
        return False
    x = inner.input
    if not np.can_cast(x.type.dtype, inner.result.type.dtype, casting="safe"):
        return False

    def make(new):
        if x.type == op.result.type:
            return x
        return new(CastOp, x, op.to, shape=op.result.type.shape)
    return rewrite_to(rewriter, op, make)


# ---------------------------------------------------------------------------------------------
# Dimshuffle and reshape


@canonical(DimShuffleOp)
def dimshuffle_identity(op, rewriter) -> bool:
    """A dimshuffle keeping every dim in place goes."""
    return (list(op.pattern) == list(range(op.input.type.rank))
            and rewrite_to(rewriter, op, lambda new: op.input))


@canonical(DimShuffleOp)
def dimshuffle_of_dimshuffle(op, rewriter) -> bool:
    """Two dimshuffles in a row are one."""
    inner = defining(op.input, DimShuffleOp)
    if inner is None:
        return False
    inner_pattern = inner.pattern
    pattern = [-1 if p == -1 else inner_pattern[p] for p in op.pattern]
    return rewrite_to(rewriter, op, lambda new: new(DimShuffleOp, inner.input, pattern))


@canonical(ReshapeOp)
def reshape_identity(op, rewriter) -> bool:
    """``reshape(x, shape(x))`` is ``x``, and so is a reshape to ``x``'s own static shape."""
    x = op.input
    same_shape = defining(op.shape, ShapeOp) is not None and op.shape.op.input is x
    static = None not in x.type.shape and x.type == op.result.type
    return (same_shape or static) and rewrite_to(rewriter, op, lambda new: x)


@canonical(ReshapeOp)
def reshape_of_reshape(op, rewriter) -> bool:
    """``reshape(reshape(x, s1), s2)`` is ``reshape(x, s2)``."""
    inner = defining(op.input, ReshapeOp)
    return inner is not None and rewrite_to(
        rewriter, op, lambda new: new(ReshapeOp, inner.input, op.shape))


# ---------------------------------------------------------------------------------------------
# Shapes


def _size_source(value: Value, axis: int) -> Value | None:
    """A rank-0 i64 value holding ``value``'s size along ``axis``, found without computing
    ``value`` (an input's size or an alloc's dim), or None."""
    op = value.op if isinstance(value, OpResult) else None
    if isinstance(op, AllocOp):
        return op.dims[axis]
    return None


def _size_from_inputs(value: Value, axis: int) -> tuple[Value, int] | None:
    """``(v, a)``: the size of ``value`` along ``axis`` equals that of ``v`` along ``a``, where
    ``v`` is an operand of ``value``'s op (so the op need not run for its shape)."""
    op = value.op if isinstance(value, OpResult) else None
    if op is None:
        return None

    def widest(candidates):
        for v in candidates:
            if v.type.shape[axis] != 1:
                return v, axis
        return None

    if isinstance(op, ElementwiseOp):
        return widest(op.operands)
    if isinstance(op, FusedOp) and op.reduction(value.index) is None:
        return widest(op.operands)
    if isinstance(op, FillOp):
        return op.model, axis
    if isinstance(op, (SoftmaxOp, LogSoftmaxOp)):
        return op.input, axis
    if isinstance(op, DimShuffleOp):
        source = op.pattern[axis]
        return None if source == -1 else (op.input, source)
    if isinstance(op, ReductionOp) and not op.keepdims:
        kept = [d for d in range(op.input.type.rank) if d not in op.axes]
        return op.input, kept[axis]
    if isinstance(op, ReductionOp) and axis not in op.axes:
        return op.input, axis
    if isinstance(op, DotOp):
        if axis == 0 and op.lhs.type.rank == 2:
            return op.lhs, 0
        return op.rhs, op.rhs.type.rank - 1
    if isinstance(op, GemvOp):
        return op.lhs, 0
    if isinstance(op, GemmOp):
        return (op.lhs, 0) if axis == 0 else (op.rhs, 1)
    return None


@canonical(ShapeIOp)
def shape_i_from_inputs(op, rewriter) -> bool:
    """``shape_i(f(x, ...), i)`` is the size it takes from an input, or an alloc's dim."""
    direct = _size_source(op.input, op.axis)
    if direct is not None:
        return rewrite_to(rewriter, op, lambda new: direct)
    found = _size_from_inputs(op.input, op.axis)
    if found is None:
        return False
    source, axis = found
    return rewrite_to(rewriter, op, lambda new: new(ShapeIOp, source, axis))


@canonical(ShapeOp)
def shape_from_inputs(op, rewriter) -> bool:
    """``shape(alloc(v, d0, d1))`` is ``make_vector(d0, d1)``; the shape of an elementwise
    result is the shape of an operand of the same type shape."""
    x = op.input
    alloc = defining(x, AllocOp)
    if alloc is not None and alloc.dims:
        return rewrite_to(rewriter, op, lambda new: new(MakeVectorOp, *alloc.dims))
    producer = defining(x, ElementwiseOp, FillOp)
    if producer is None:
        return False
    candidates = [producer.model] if isinstance(producer, FillOp) else producer.operands
    for v in candidates:
        if v.type.shape == x.type.shape:
            return rewrite_to(rewriter, op, lambda new, v=v: new(ShapeOp, v))
    return False


# ---------------------------------------------------------------------------------------------
# fill


def _covers(model: Value, others) -> bool:
    """Whether ``others`` give the result every size ``model`` would (a non-1 dim each)."""
    return all(any(o.type.shape[d] != 1 for o in others)
               for d in range(model.type.rank) if model.type.shape[d] != 1)


@canonical(ElementwiseOp)
def fill_in_elementwise(op, rewriter) -> bool:
    """``f(fill(m, v), y)`` is ``f(v, y)`` when ``y`` gives the shape ``m`` gave, and otherwise
    ``fill(m, f(v, y))`` (Theano's ``local_fill_sink``), so that fills gather at the outside."""
    for index, value in enumerate(op.operands):
        fill = defining(value, FillOp)
        if fill is None or fill.value.type.rank != fill.model.type.rank:
            continue
        others = [v for i, v in enumerate(op.operands) if i != index]
        operands = list(op.operands)
        operands[index] = fill.value
        if _covers(fill.model, others):
            return rewrite_to(rewriter, op, lambda new: rebuild_elementwise(new, op, operands))
        if single_use(value):
            return rewrite_to(rewriter, op, lambda new: new(
                FillOp, fill.model, rebuild_elementwise(new, op, operands)))
    return False


@canonical(FillOp)
def fill_of_fill(op, rewriter) -> bool:
    """``fill(m, fill(m2, v))`` is ``fill(m, v)`` when ``m`` gives every size ``m2`` gave."""
    inner = defining(op.value, FillOp)
    if inner is None or inner.value.type.rank != op.model.type.rank \
            or not _covers(inner.model, [op.model]):
        return False
    return rewrite_to(rewriter, op, lambda new: new(FillOp, op.model, inner.value))


# ---------------------------------------------------------------------------------------------
# Reductions


@canonical(ReductionOp)
def reduce_all_of_dimshuffle(op, rewriter) -> bool:
    """Reducing every axis of a dimshuffle reduces its input (the order and the added size-1
    dims change nothing); not for argmax/argmin, whose flat index depends on the order."""
    shuffle = defining(op.input, DimShuffleOp)
    if shuffle is None or isinstance(op, (ArgMaxOp, ArgMinOp)) or op.keepdims \
            or len(op.axes) != op.input.type.rank:
        return False
    return rewrite_to(rewriter, op, lambda new: new(type(op), shuffle.input, None))


@canonical(DimShuffleOp)
def drop_kept_dims(op, rewriter) -> bool:
    """``dimshuffle(reduce(x, axes, keepdims=True))`` dropping exactly the kept dims is
    ``reduce(x, axes)``."""
    reduction = defining(op.input, ReductionOp)
    if reduction is None or not reduction.keepdims or not single_use(op.input):
        return False
    kept = [d for d in range(reduction.input.type.rank) if d not in reduction.axes]
    if list(op.pattern) != kept:
        return False
    return rewrite_to(rewriter, op, lambda new: new(
        type(reduction), reduction.input, list(reduction.axes), keepdims=False))
