"""Indexing ops of the tensor dialect: basic indexing (``tensor.subtensor``, ``set_subtensor``,
``inc_subtensor``) and integer-array indexing (``tensor.advanced_subtensor`` and its set/inc forms).

The ``spec`` attribute
----------------------
``spec`` lists one entry per indexed dimension, from the first; dimensions after the last entry
are taken whole (trailing whole slices are dropped when an op is built, so ``x[1]`` and
``x[1, :]`` are the same op). An entry is an array whose first element names its kind:

- ``["index", P]``: an integer index; the dimension disappears (basic indexing only);
- ``["slice", P, P, P]``: ``start:stop:step``; the dimension stays;
- ``["array"]``: an integer index array (advanced indexing only), the next index operand.

Each part ``P`` is a static integer (``2 : i64``), ``"?"`` for a run-time value (the next index
operand, a rank-0 integer tensor), or ``"none"`` for an absent slice part. Index operands follow
the spec's order: entries from the first, and within a slice start, stop, step. Semantics are
NumPy's: negative indices count from the end, slice bounds are clamped, an integer index out of
range is an ``IndexError`` when the IR runs (or when it is built, if index and size are static).
For example ``x[1:, ::2, i]`` and ``p[arange(n), y]`` print as::

    %r = "tensor.subtensor"(%x, %i) {spec = [["slice", 1 : i64, "none", "none"],
        ["slice", "none", "none", 2 : i64], ["index", "?"]]} : (...) -> ...
    %s = "tensor.advanced_subtensor"(%p, %a, %y) {spec = [["array"], ["array"]]} : (...) -> ...

Advanced indexing supports integer arrays (any integer type and rank, broadcast together) next
to each other, with slices before and after them; the broadcast index shape replaces the indexed
dims in place, as in NumPy. Repeated indices accumulate in ``advanced_inc_subtensor`` (like
``numpy.add.at``); in ``advanced_set_subtensor`` the last write wins.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F32, I64, TensorType
>>> x, i = Block([TensorType((None, 6), F32), TensorType((), I64)]).args
>>> op = SubtensorOp.build(x, (slice(1, None), slice(None, None, 2)))
>>> str(op.result.type), str(op.attributes["spec"])
('tensor<?x3xf32>', '[["slice", 1 : i64, "none", "none"], ["slice", "none", "none", 2 : i64]]')
>>> str(SubtensorOp.build(x, (i, -1)).result.type)
'tensor<f32>'
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lowering.ir.attributes import ArrayAttr, IntAttr, StringAttr
from lowering.ir.constraints import AnyTensor
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result, var_operand
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import TensorType

from .base import ConstantOp, TensorOp, op_errors
from .shape_ops import fit_result, format_shape, match_type, scalar_constant, zeros_like
from .typing import ShapeError, broadcast_dim, tensor_of

# ---------------------------------------------------------------------------------------------
# The spec: Python model, encoding as an attribute, and decoding


class _Dynamic:
    """The part is a run-time value: the next index operand."""

    def __repr__(self):
        return "DYN"


DYN = _Dynamic()
_DYN_TEXT, _ABSENT_TEXT = "?", "none"


@dataclass(frozen=True)
class Index:
    """An integer index (an int or DYN); it removes its dimension."""

    value: object


@dataclass(frozen=True)
class Slice:
    """``start:stop:step``; each part an int, None (absent) or DYN."""

    start: object = None
    stop: object = None
    step: object = None

    @property
    def parts(self) -> tuple:
        return (self.start, self.stop, self.step)

    @property
    def is_whole(self) -> bool:
        return self.parts == (None, None, None)


@dataclass(frozen=True)
class ArrayIndex:
    """An integer index array (advanced indexing): the next index operand."""


def _encode_part(part):
    if part is DYN:
        return StringAttr(_DYN_TEXT)
    if part is None:
        return StringAttr(_ABSENT_TEXT)
    return IntAttr(int(part))


def encode_spec(entries) -> ArrayAttr:
    """The ``spec`` attribute of index entries.

    >>> str(encode_spec([Index(DYN), Slice(None, 3, None), ArrayIndex()]))
    '[["index", "?"], ["slice", "none", 3 : i64, "none"], ["array"]]'
    """
    out = []
    for e in entries:
        if isinstance(e, Index):
            out.append(ArrayAttr((StringAttr("index"), _encode_part(e.value))))
        elif isinstance(e, Slice):
            out.append(ArrayAttr((StringAttr("slice"), *map(_encode_part, e.parts))))
        elif isinstance(e, ArrayIndex):
            out.append(ArrayAttr((StringAttr("array"),)))
        else:
            raise TypeError(f"not an index entry: {e!r}")
    return ArrayAttr(tuple(out))


def _decode_part(a):
    if isinstance(a, StringAttr) and a.data == _DYN_TEXT:
        return DYN
    if isinstance(a, StringAttr) and a.data == _ABSENT_TEXT:
        return None
    if isinstance(a, IntAttr) and not a.type.is_bool:
        return a.data
    raise VerifyError(f'spec part {a} is not an integer, "?" or "none"')


def decode_spec(spec) -> tuple:
    """Index entries from a ``spec`` attribute (a VerifyError when it is malformed).

    >>> decode_spec(encode_spec([Index(2), Slice(DYN)]))
    (Index(value=2), Slice(start=DYN, stop=None, step=None))
    """
    if not isinstance(spec, ArrayAttr):
        raise VerifyError(f"spec must be an array, got {spec}")
    entries = []
    for item in spec:
        kind = item.data[0] if isinstance(item, ArrayAttr) and item.data else None
        kind = kind.data if isinstance(kind, StringAttr) else None
        if kind == "index" and len(item) == 2:
            value = _decode_part(item.data[1])
            if value is None:
                raise VerifyError(f"spec entry {item}: an index cannot be absent")
            entries.append(Index(value))
        elif kind == "slice" and len(item) == 4:
            entries.append(Slice(*(_decode_part(p) for p in item.data[1:])))
        elif kind == "array" and len(item) == 1:
            entries.append(ArrayIndex())
        else:
            raise VerifyError(f'spec entry {item} is not ["index", P], ["slice", P, P, P] or ["array"]')
    return tuple(entries)


def dynamic_count(entries) -> int:
    """How many index operands the entries read."""
    n = 0
    for e in entries:
        if isinstance(e, ArrayIndex):
            n += 1
        elif isinstance(e, Index):
            n += e.value is DYN
        else:
            n += sum(p is DYN for p in e.parts)
    return n


def _canonical(entries) -> tuple:
    """Drop defaults that change nothing: step 1, start 0 with a positive step, trailing whole
    slices."""
    out = []
    for e in entries:
        if isinstance(e, Slice):
            step = None if e.step == 1 else e.step
            forward = step is None or (step is not DYN and step > 0)
            start = None if forward and e.start == 0 else e.start
            e = Slice(start, e.stop, step)
        out.append(e)
    while out and isinstance(out[-1], Slice) and out[-1].is_whole:
        out.pop()
    return tuple(out)


def parse_key(key, rank: int, advanced: bool, location=None) -> tuple[tuple, list[Value]]:
    """Index entries and index operands from a NumPy-style key.

    Items are ints, slices (parts ints, None or rank-0 integer Values), ``Ellipsis``, and Values:
    a Value is a run-time integer index in basic indexing and an index array in advanced
    indexing (where a plain int becomes a constant index array, as NumPy treats it).

    >>> parse_key((Ellipsis, 2), 3, advanced=False)
    ((Slice(start=None, stop=None, step=None), Slice(start=None, stop=None, step=None), Index(value=2)), [])
    """
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis")
    if any(item is Ellipsis for item in items):
        at = next(n for n, i in enumerate(items) if i is Ellipsis)
        fill = rank - (len(items) - 1)
        items[at:at + 1] = [slice(None)] * max(fill, 0)
    entries, operands = [], []

    def part(p):
        if p is None or isinstance(p, (int, np.integer)):
            return None if p is None else int(p)
        if isinstance(p, Value):
            operands.append(p)
            return DYN
        raise TypeError(f"slice parts must be ints, None or Values, got {type(p).__name__}")

    for item in items:
        if item is None:
            raise IndexError("new axes (None) are not indices; use tensor.dimshuffle")
        if isinstance(item, (bool, np.bool_)) or (
                isinstance(item, (list, np.ndarray)) and np.asarray(item).dtype == np.bool_):
            raise IndexError("boolean masks are not supported as indices")
        if isinstance(item, slice):
            entries.append(Slice(part(item.start), part(item.stop), part(item.step)))
        elif advanced and isinstance(item, (Value, int, np.integer, list, np.ndarray)):
            if not isinstance(item, Value):
                item = ConstantOp.build(np.asarray(item, dtype=np.int64), location=location).result
            operands.append(item)
            entries.append(ArrayIndex())
        elif isinstance(item, (Value, int, np.integer)):
            entries.append(Index(part(item)))
        else:
            raise TypeError(f"cannot index with {type(item).__name__}")
    return _canonical(entries), operands


# ---------------------------------------------------------------------------------------------
# Type inference


def _slice_length(size, s: Slice):
    """The static length of a slice of a dim of ``size`` (None when not computable)."""
    if s.step == 0:
        raise VerifyError("slice step cannot be zero")
    if size is None or DYN in s.parts:
        return None
    return len(range(*slice(s.start, s.stop, s.step).indices(size)))


def _check_index_operands(entries, operands) -> None:
    if len(operands) != dynamic_count(entries):
        raise VerifyError(f"spec reads {dynamic_count(entries)} index operand(s), got {len(operands)}")
    it = iter(operands)
    for e in entries:
        count = 1 if isinstance(e, ArrayIndex) else (
            int(e.value is DYN) if isinstance(e, Index) else sum(p is DYN for p in e.parts))
        for _ in range(count):
            v = next(it)
            t = tensor_of(v)
            if not t.element.is_int:
                raise VerifyError(f"index operands must have an integer type, got {t}")
            if not isinstance(e, ArrayIndex) and t.rank != 0:
                raise VerifyError(f"run-time indices and slice bounds must be rank 0, got {t}")


def _view_shape(xt: TensorType, entries, operands, advanced: bool) -> tuple:
    """The shape of ``x[spec]`` (checks the spec against ``x`` and the index operands)."""
    if len(entries) > xt.rank:
        raise VerifyError(f"{len(entries)} indices for a tensor of rank {xt.rank}")
    _check_index_operands(entries, operands)
    arrays = [i for i, e in enumerate(entries) if isinstance(e, ArrayIndex)]
    if advanced:
        if not arrays:
            raise VerifyError("advanced indexing needs at least one index array")
        if arrays != list(range(arrays[0], arrays[-1] + 1)):
            raise VerifyError("index arrays must be next to each other (slices only before or after)")
        if any(isinstance(e, Index) for e in entries):
            raise VerifyError("advanced indexing takes index arrays and slices, not integer indices")
    elif arrays:
        raise VerifyError("basic indexing takes integer indices and slices, not index arrays")
    shape: list = []
    it = iter(operands)
    array_types = []
    for dim, e in enumerate(entries):
        size = xt.shape[dim]
        if isinstance(e, Index):
            if e.value is DYN:
                next(it)
            elif size is not None and not -size <= e.value < size:
                raise ShapeError(f"index {e.value} is out of range for dim {dim} of size {size}")
        elif isinstance(e, Slice):
            for p in e.parts:
                if p is DYN:
                    next(it)
            shape.append(_slice_length(size, e))
        else:
            array_types.append(tensor_of(next(it)))
            if dim == arrays[-1]:
                shape.extend(_broadcast_index_shapes(array_types))
    return tuple(shape) + xt.shape[len(entries):]


def _broadcast_index_shapes(types) -> tuple:
    rank = max(t.rank for t in types)
    padded = [(1,) * (rank - t.rank) + t.shape for t in types]
    try:
        return tuple(broadcast_dim(dims) for dims in zip(*padded))
    except ShapeError:
        shapes = ", ".join(format_shape(t.shape) for t in types)
        raise ShapeError(f"index arrays of shapes {shapes} do not broadcast together") from None


def _check_value_fits(view: tuple, yt: TensorType, xt: TensorType) -> None:
    if yt.element != xt.element:
        raise VerifyError(f"value of type {yt} must have the element type of {xt}")
    if yt.rank > len(view):
        raise ShapeError(f"value of shape {format_shape(yt.shape)} has a higher rank than the "
                         f"indexed view {format_shape(view)}")
    for vd, yd in zip(view[len(view) - yt.rank:], yt.shape):
        if yd is not None and vd is not None and yd != 1 and yd != vd:
            raise ShapeError(f"value of shape {format_shape(yt.shape)} cannot broadcast to the "
                             f"indexed view {format_shape(view)}")


# ---------------------------------------------------------------------------------------------
# Op classes


class _IndexingOp(TensorOp):
    """Shared behaviour: decoding the spec, inference, verification."""

    advanced = False
    writes = False  # set/inc forms take a value operand

    @property
    def entries(self) -> tuple:
        """The decoded ``spec``."""
        return decode_spec(self.attributes["spec"])

    @classmethod
    def _infer(cls, x: Value, y: Value | None, entries, indices) -> TensorType:
        xt = tensor_of(x)
        view = _view_shape(xt, entries, indices, cls.advanced)
        if not cls.writes:
            return xt.with_shape(view)
        _check_value_fits(view, tensor_of(y), xt)
        return xt

    @classmethod
    def _create(cls, x, y, entries, indices, location):
        entries = _canonical(entries)
        with op_errors(cls.name):
            rtype = cls._infer(x, y, entries, list(indices))
        operands = [x] + ([y] if cls.writes else []) + list(indices)
        return cls.create(operands, [rtype], {"spec": encode_spec(entries)}, location=location)

    def inferred_type(self):
        entries = decode_spec(self.attributes.get("spec"))
        y = self.value if self.writes else None
        return self._infer(self.input, y, entries, list(self.indices))


class _ReadOp(_IndexingOp):
    assembly_format = ("$input `[` $indices `]` $spec attr-dict : "
                       "functional-type(operands, results)")
    input = operand(AnyTensor)
    indices = var_operand(AnyTensor)
    result = result(AnyTensor)
    spec = attr(ArrayAttr)

    @classmethod
    def build(cls, x: Value, key, location=None):
        """``x[key]`` with a NumPy-style key (see ``parse_key``)."""
        entries, indices = parse_key(key, tensor_of(x).rank, cls.advanced, location)
        return cls._create(x, None, entries, indices, location)

    @classmethod
    def from_spec(cls, x: Value, entries, indices, location=None):
        """The op for decoded ``entries`` and their index operands (as another op has them)."""
        return cls._create(x, None, entries, indices, location)


class _WriteOp(_IndexingOp):
    # ``%y into %x[%i] spec``; the function type lists the operands in order (x, y, indices).
    assembly_format = ("$value `into` $input `[` $indices `]` $spec attr-dict : "
                       "functional-type(operands, results)")
    writes = True
    input = operand(AnyTensor)
    value = operand(AnyTensor)
    indices = var_operand(AnyTensor)
    result = result(AnyTensor)
    spec = attr(ArrayAttr)

    @classmethod
    def build(cls, x: Value, y: Value, key, location=None):
        """``x`` with ``x[key]`` set to (or incremented by) ``y``."""
        entries, indices = parse_key(key, tensor_of(x).rank, cls.advanced, location)
        return cls._create(x, y, entries, indices, location)

    @classmethod
    def from_spec(cls, x: Value, y: Value, entries, indices, location=None):
        return cls._create(x, y, entries, indices, location)


def _differentiable(value) -> bool:
    from .gradutil import is_differentiable_type
    return is_differentiable_type(value.type)


@register_op
class SubtensorOp(_ReadOp):
    """``tensor.subtensor(x, indices...) {spec}``: basic indexing ``x[i, a:b:c, ...]``."""

    name = "tensor.subtensor"

    def grad(self, output_grads):
        g = output_grads[0]
        nones = [None] * len(self.indices)
        if g is None or not _differentiable(self.input):
            return [None, *nones]
        zeros = zeros_like(self.input, self.location)
        inc = IncSubtensorOp.from_spec(zeros, g, self.entries, self.indices, self.location).result
        return [match_type(inc, self.input, self.location), *nones]


@register_op
class SetSubtensorOp(_WriteOp):
    """``tensor.set_subtensor(x, y, indices...) {spec}``: ``x`` with ``x[spec] = y``."""

    name = "tensor.set_subtensor"
    read_class = SubtensorOp

    def grad(self, output_grads):
        return _write_grads(self, output_grads[0], zero_view=True)


@register_op
class IncSubtensorOp(_WriteOp):
    """``tensor.inc_subtensor(x, y, indices...) {spec}``: ``x`` with ``x[spec] += y``."""

    name = "tensor.inc_subtensor"
    read_class = SubtensorOp

    def grad(self, output_grads):
        return _write_grads(self, output_grads[0], zero_view=False)


@register_op
class AdvancedSubtensorOp(_ReadOp):
    """``tensor.advanced_subtensor(x, indices...) {spec}``: integer-array indexing
    (``p[arange(n), y]``)."""

    name = "tensor.advanced_subtensor"
    advanced = True

    def grad(self, output_grads):
        g = output_grads[0]
        nones = [None] * len(self.indices)
        if g is None or not _differentiable(self.input):
            return [None, *nones]
        zeros = zeros_like(self.input, self.location)
        inc = AdvancedIncSubtensorOp.from_spec(zeros, g, self.entries, self.indices,
                                               self.location).result
        return [match_type(inc, self.input, self.location), *nones]


@register_op
class AdvancedSetSubtensorOp(_WriteOp):
    """``tensor.advanced_set_subtensor(x, y, indices...) {spec}``: ``x`` with ``x[spec] = y``;
    the last of repeated indices wins."""

    name = "tensor.advanced_set_subtensor"
    advanced = True
    read_class = AdvancedSubtensorOp

    def grad(self, output_grads):
        return _write_grads(self, output_grads[0], zero_view=True)


@register_op
class AdvancedIncSubtensorOp(_WriteOp):
    """``tensor.advanced_inc_subtensor(x, y, indices...) {spec}``: ``x`` with ``x[spec] += y``;
    repeated indices accumulate (``numpy.add.at``)."""

    name = "tensor.advanced_inc_subtensor"
    advanced = True
    read_class = AdvancedSubtensorOp

    def grad(self, output_grads):
        return _write_grads(self, output_grads[0], zero_view=False)


def _write_grads(op: _WriteOp, g, zero_view: bool) -> list:
    """Grads of set/inc: ``x`` gets ``g`` (with the written view zeroed for set); ``y`` gets the
    view of ``g``, summed to ``y``'s type."""
    x, y, loc = op.input, op.value, op.location
    nones = [None] * len(op.indices)
    if g is None or not _differentiable(x):
        return [None, None, *nones]
    entries, indices = op.entries, op.indices
    gx = g
    if zero_view:
        zero = scalar_constant(0, x.type.element, loc)
        setter = AdvancedSetSubtensorOp if op.advanced else SetSubtensorOp
        gx = setter.from_spec(g, zero, entries, indices, loc).result
    view = op.read_class.from_spec(g, entries, indices, loc).result
    return [match_type(gx, x, loc), match_type(view, y, loc), *nones]


# ---------------------------------------------------------------------------------------------
# Interpreter rules


def _runtime_key(op, x: np.ndarray, indices) -> tuple:
    """The NumPy key for ``op``'s spec with the run-time index values."""
    it = iter(indices)

    def part(p):
        return int(np.asarray(next(it)).reshape(())) if p is DYN else p

    key = []
    for dim, e in enumerate(op.entries):
        if isinstance(e, ArrayIndex):
            key.append(np.asarray(next(it)))
        elif isinstance(e, Slice):
            s = slice(*(part(p) for p in e.parts))
            if s.step == 0:
                raise ValueError(f"{op.name}: slice step cannot be zero (dim {dim})")
            key.append(s)
        else:
            k, size = part(e.value), x.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"{op.name}: index {k} is out of range for dim {dim} of size {size}")
            key.append(k)
    return tuple(key)


def _read(interp, op, args):
    x = np.asarray(args[0])
    return [fit_result(op, x[_runtime_key(op, x, args[1:])])]


def _write(accumulate: bool):
    def rule(interp, op, args):
        x, y = np.asarray(args[0]), np.asarray(args[1])
        key = _runtime_key(op, x, args[2:])
        out = x.copy()
        view_shape = out[key].shape
        try:
            y = np.broadcast_to(y, view_shape)
        except ValueError:
            raise ValueError(f"{op.name}: a value of shape {y.shape} cannot broadcast to the indexed "
                             f"view of shape {view_shape}") from None
        if accumulate:
            np.add.at(out, key, y)
        else:
            out[key] = y
        return [fit_result(op, out)]
    return rule


INTERPRETER.register(SubtensorOp, AdvancedSubtensorOp)(_read)
INTERPRETER.register(SetSubtensorOp, AdvancedSetSubtensorOp)(_write(False))
INTERPRETER.register(IncSubtensorOp, AdvancedIncSubtensorOp)(_write(True))
