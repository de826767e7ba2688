"""Views: new shapes and strides over the same memory, no copying.

- ``loops.subview``: a strided window (offsets, sizes, steps per dimension), optionally dropping
  dimensions of size 1, like ``memref.subview``; steps may be negative (``x[::-1]``);
- ``loops.reshape_view``: a new shape for a contiguous buffer;
- ``loops.transpose_view``: a permutation of the dimensions that may also drop size-1 dimensions
  and insert new size-1 ones (Theano's dimshuffle, with ``-1`` for ``'x'``);
- ``loops.broadcast_view``: size-1 dimensions stretched to any size with stride 0.

Every builder infers the result type, and every verifier checks that the result type is exactly
the inferred one:

>>> from lowering.ir.types import F32
>>> from .memory import AllocOp
>>> x = AllocOp.build([3, 4], F32).result
>>> str(TransposeViewOp.build(x, [1, "x", 0]).result.type)
'!loops.buffer<4x1x3xf32, strides=[1, 0, 4]>'
>>> str(SubviewOp.build(x, [1, 0], [2, 2], [1, 2]).result.type)
'!loops.buffer<2x2xf32, strides=[4, 2], offset=4>'
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lowering.ir.attributes import ArrayAttr, IntAttr
from lowering.ir.constraints import Index
from lowering.ir.core import (PURE, Operation, Value, VerifyError, attr, operand, register_op,
                              result, var_operand)
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import INDEX

from .checks import DYNAMIC, check_count, check_result_type, split_mixed
from .constraints import AnyBuffer, BufferOf
from .runtime import as_buffer, as_index, index_error
from .syntax import (all_index, index_types, parse_mixed, parse_view_types, print_mixed,
                     print_view_types, well_formed)
from .types import BufferType, contiguous_strides


class ViewOp(Operation):
    """Base of the view ops: pure, one buffer operand first, one buffer result."""

    traits = frozenset({PURE})

    def int_list(self, name: str) -> tuple[int, ...]:
        """The ints of array attribute ``name`` (a VerifyError if it holds anything else)."""
        a = self.attributes.get(name)
        if a is None:
            return ()
        if not all(isinstance(x, IntAttr) for x in a):
            raise VerifyError(f"{self.name}: '{name}' must be an array of integers, got {a}", self)
        return tuple(x.data for x in a)

    def check_inferred(self, infer) -> BufferType:
        """Run ``infer()`` (which raises VerifyError without an op) and compare with the result."""
        try:
            want = infer()
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        check_result_type(self, self.result.type, want)
        return want


def _ints(values) -> ArrayAttr:
    return ArrayAttr(tuple(IntAttr(v) for v in values))


def _view(array: np.ndarray, shape, strides_in_elements) -> np.ndarray:
    return as_strided(array, shape=tuple(shape),
                      strides=tuple(s * array.itemsize for s in strides_in_elements))


# ---------------------------------------------------------------------------------------------
# subview


def subview_type(source: BufferType, offsets, sizes, steps, drop_dims=()) -> BufferType:
    """The type of a subview; entries of ``offsets``/``sizes``/``steps`` may be ``DYNAMIC``.

    >>> from lowering.ir.types import F32
    >>> str(subview_type(BufferType((None, 8), F32), [DYNAMIC, 0], [1, 8], [1, 1], [0]))
    '!loops.buffer<8xf32, offset=?>'
    """
    rank = source.rank
    for what, entries in (("offsets", offsets), ("sizes", sizes), ("steps", steps)):
        if len(entries) != rank:
            raise VerifyError(f"loops.subview: {len(entries)} {what} for a rank-{rank} buffer")
    for axis, (o, s, k) in enumerate(zip(offsets, sizes, steps)):
        if o != DYNAMIC and o < 0:
            raise VerifyError(f"loops.subview: negative offset {o} in dimension {axis}")
        if s != DYNAMIC and s < 0:
            raise VerifyError(f"loops.subview: negative size {s} in dimension {axis}")
        if k == 0:
            raise VerifyError(f"loops.subview: step 0 in dimension {axis} "
                              f"(use loops.broadcast_view)")
        dim = source.shape[axis]
        if DYNAMIC not in (o, s, k) and dim is not None and not _in_bounds(o, s, k, dim):
            raise VerifyError(f"loops.subview: offset {o}, size {s}, step {k} is out of bounds "
                              f"for dimension {axis} of size {dim}")
    if len(set(drop_dims)) != len(drop_dims):
        raise VerifyError(f"loops.subview: drop_dims {list(drop_dims)} repeats a dimension")
    for axis in drop_dims:
        if not 0 <= axis < rank:
            raise VerifyError(f"loops.subview: cannot drop dimension {axis} of a rank-{rank} "
                              f"buffer")
        if sizes[axis] != 1:
            raise VerifyError(f"loops.subview: dropped dimension {axis} must have size 1")
    layout = source.layout_strides
    strides = [None if st is None or k == DYNAMIC else st * k for st, k in zip(layout, steps)]
    offset = source.offset
    for o, st in zip(offsets, layout):
        if offset is None or o == 0:
            continue
        offset = None if o == DYNAMIC or st is None else offset + o * st
    if offset is not None and offset < 0:
        raise VerifyError("loops.subview: the view starts before its buffer")
    keep = [a for a in range(rank) if a not in drop_dims]
    shape = [None if sizes[a] == DYNAMIC else sizes[a] for a in keep]
    return BufferType(tuple(shape), source.element, tuple(strides[a] for a in keep), offset,
                      source.memory_space)


def _in_bounds(offset: int, size: int, step: int, dim: int) -> bool:
    if size == 0:
        return 0 <= offset <= dim
    last = offset + (size - 1) * step
    return 0 <= offset < dim and 0 <= last < dim


@register_op
class SubviewOp(ViewOp):
    """A strided window: element ``i`` of dimension ``d`` is source element ``offset_d + i *
    step_d``. Run-time offsets, sizes and steps are operands (all offsets, then sizes, then
    steps), marked ``DYNAMIC`` in the static arrays; ``drop_dims`` removes size-1 dimensions."""

    name = "loops.subview"
    source = operand(AnyBuffer)
    dynamic = var_operand(Index)
    static_offsets = attr(ArrayAttr)
    static_sizes = attr(ArrayAttr)
    static_strides = attr(ArrayAttr)
    drop_dims = attr(ArrayAttr, default=())
    result = result(AnyBuffer)

    @classmethod
    def build(cls, source: Value, offsets, sizes, steps, drop_dims=(),
              location=None) -> "SubviewOp":
        """Entries of ``offsets``, ``sizes`` and ``steps`` are ints or index Values."""
        parts = [split_mixed(entries) for entries in (offsets, sizes, steps)]
        statics = [static for static, _ in parts]
        dynamic = [v for _, values in parts for v in values]
        t = subview_type(source.type, *statics, tuple(drop_dims))
        attributes = {"static_offsets": _ints(statics[0]), "static_sizes": _ints(statics[1]),
                      "static_strides": _ints(statics[2])}
        if drop_dims:
            attributes["drop_dims"] = _ints(drop_dims)
        return cls.create(operands=[source, *dynamic], result_types=[t], attributes=attributes,
                          location=location)

    def statics(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return (self.int_list("static_offsets"), self.int_list("static_sizes"),
                self.int_list("static_strides"))

    def print_pretty(self, printer):
        """``loops.subview %x[%o, 0] [%n, 4] [1, -1] drop_dims [0] : source -> result``."""
        names = ("static_offsets", "static_sizes", "static_strides", "drop_dims")
        if not well_formed(self, names, [*self.operands[:1], *self.results]) \
                or not all_index(self.dynamic):
            return False
        try:
            statics = self.statics()
            drop = self.int_list("drop_dims")
        except VerifyError:
            return False
        if sum(part.count(DYNAMIC) for part in statics) != len(self.dynamic):
            return False
        dynamic = iter(self.dynamic)
        printer.write(" ")
        printer.print_operand(self.source)
        for index, part in enumerate(statics):
            if index:
                printer.write(" ")
            print_mixed(printer, part, [next(dynamic) for _ in range(part.count(DYNAMIC))])
        if "drop_dims" in self.attributes:
            printer.write(" drop_dims [" + ", ".join(map(str, drop)) + "]")
        print_view_types(printer, self.source, self.result)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        source_ref = parser.parse_operand()
        parts = [parse_mixed(parser) for _ in range(3)]
        attributes = {key: _ints(statics) for key, (statics, _) in
                      zip(("static_offsets", "static_sizes", "static_strides"), parts)}
        if parser.accept("drop_dims"):
            attributes["drop_dims"] = _ints(parser.parse_comma_list(parser.parse_integer, "[", "]"))
        source_type, result_type = parse_view_types(parser)
        refs = [ref for _, part_refs in parts for ref in part_refs]
        operands = [parser.resolve_operand(source_ref, source_type),
                    *parser.resolve_operands(refs, [INDEX] * len(refs))]
        return cls.create(operands=operands, result_types=[result_type], attributes=attributes,
                          location=parser.op_location)

    def verify_(self):
        statics = self.statics()
        check_count(self, len(self.dynamic), sum(s.count(DYNAMIC) for s in statics),
                    "dynamic operand(s), one per DYNAMIC entry")
        self.check_inferred(lambda: subview_type(self.source.type, *statics,
                                                 self.int_list("drop_dims")))


@INTERPRETER.register(SubviewOp)
def _subview(interp, op, args):
    array = as_buffer(args[0], op.source.type, "source")
    dynamic = iter(as_index(a) for a in args[1:])
    offsets, sizes, steps = ([next(dynamic) if x == DYNAMIC else x for x in static]
                             for static in op.statics())
    index = []
    for axis, (o, s, k) in enumerate(zip(offsets, sizes, steps)):
        if s < 0 or k == 0:
            raise ValueError(f"size {s} and step {k} in dimension {axis}: sizes must be >= 0 and "
                             f"steps non-zero")
        if not _in_bounds(o, s, k, array.shape[axis]):
            raise index_error(op, f"offset {o}, size {s}, step {k} is out of bounds for dimension "
                                  f"{axis} of size {array.shape[axis]}")
        if s == 0:
            index.append(slice(0, 0))
        else:
            stop = o + (s - 1) * k + (1 if k > 0 else -1)
            index.append(slice(o, stop if stop >= 0 else None, k))
    view = array[tuple(index)]
    drop = set(op.int_list("drop_dims"))
    # The trailing Ellipsis keeps a view even when every dimension is dropped (x[0] of a rank-1
    # array would be a scalar copy, x[0, ...] is a rank-0 view).
    return [view[(*(0 if a in drop else slice(None) for a in range(view.ndim)), Ellipsis)]]


# ---------------------------------------------------------------------------------------------
# views with run-time result sizes (reshape_view, broadcast_view)


# The pretty form of a view whose result sizes are partly run-time ``sizes`` operands.
_SIZED_VIEW_FORMAT = "$source `(` $sizes `)` attr-dict : type($source) -> type($result)"


class _SizedView(ViewOp):
    """A view of ``source`` whose result sizes are partly run-time ``sizes`` operands."""

    @classmethod
    def infer_operand_types(cls, known, counts):
        return index_types(counts, "sizes")


# reshape_view


@register_op
class ReshapeViewOp(_SizedView):
    """A contiguous buffer seen with another shape of the same number of elements; one index
    operand per ``?`` of the result."""

    name = "loops.reshape_view"
    assembly_format = _SIZED_VIEW_FORMAT
    source = operand(BufferOf(contiguous=True))
    sizes = var_operand(Index)
    result = result(AnyBuffer)

    @classmethod
    def build(cls, source: Value, shape, location=None) -> "ReshapeViewOp":
        """``shape`` entries are ints or index Values."""
        static, dynamic = split_mixed(shape)
        t = replace(source.type, shape=tuple(None if d == DYNAMIC else d for d in static))
        return cls.create(operands=[source, *dynamic], result_types=[t], location=location)

    def verify_(self):
        src, out = self.source.type, self.result.type
        check_result_type(self, out, replace(src, shape=out.shape))
        check_count(self, len(self.sizes), len(out.dynamic_dims), "size operand(s), one per '?'")
        if None not in src.shape and None not in out.shape and \
                np.prod(src.shape, dtype=np.int64) != np.prod(out.shape, dtype=np.int64):
            raise VerifyError(f"{self.name}: cannot view {src.shape} as {out.shape}: the numbers "
                              f"of elements differ", self)


@INTERPRETER.register(ReshapeViewOp)
def _reshape_view(interp, op, args):
    array = as_buffer(args[0], op.source.type, "source")
    sizes = iter(as_index(a) for a in args[1:])
    shape = tuple(next(sizes) if d is None else d for d in op.result.type.shape)
    if any(d < 0 for d in shape) or np.prod(shape, dtype=np.int64) != array.size:
        raise ValueError(f"cannot view {array.size} elements of shape {array.shape} as {shape}")
    return [_view(array, shape, contiguous_strides(shape))]


# ---------------------------------------------------------------------------------------------
# transpose_view


def transpose_type(source: BufferType, pattern) -> BufferType:
    """The type of a transpose view: ``pattern[i]`` is the source dimension of result dimension
    ``i``, or -1 for a new size-1 dimension; source dimensions left out must have size 1.

    >>> from lowering.ir.types import F32
    >>> str(transpose_type(BufferType((None, 1, 5), F32), [2, 0]))
    '!loops.buffer<5x?xf32, strides=[1, 5]>'
    """
    kept = [p for p in pattern if p != -1]
    for p in kept:
        if not 0 <= p < source.rank:
            raise VerifyError(f"loops.transpose_view: pattern {list(pattern)} names dimension {p} "
                              f"of a rank-{source.rank} buffer")
    if len(set(kept)) != len(kept):
        raise VerifyError(f"loops.transpose_view: pattern {list(pattern)} repeats a dimension")
    for axis in set(range(source.rank)) - set(kept):
        if source.shape[axis] != 1:
            raise VerifyError(f"loops.transpose_view: pattern {list(pattern)} drops dimension "
                              f"{axis}, which does not have size 1")
    layout = source.layout_strides
    shape = tuple(1 if p == -1 else source.shape[p] for p in pattern)
    strides = tuple(0 if p == -1 else layout[p] for p in pattern)
    return replace(source, shape=shape, strides=strides)


@register_op
class TransposeViewOp(ViewOp):
    """Permutes dimensions, drops size-1 ones and inserts new size-1 ones (``-1`` in ``pattern``,
    stride 0), like Theano's dimshuffle."""

    name = "loops.transpose_view"
    source = operand(AnyBuffer)
    pattern = attr(ArrayAttr)
    result = result(AnyBuffer)

    @classmethod
    def build(cls, source: Value, pattern, location=None) -> "TransposeViewOp":
        """``pattern`` entries are source dimensions, or ``"x"`` / ``-1`` for a new one."""
        pattern = tuple(-1 if p == "x" else int(p) for p in pattern)
        t = transpose_type(source.type, pattern)
        return cls.create(operands=[source], result_types=[t],
                          attributes={"pattern": _ints(pattern)}, location=location)

    def print_pretty(self, printer):
        """``loops.transpose_view %x [1, x, 0] : source -> result`` (``x``: a new dimension)."""
        if not well_formed(self, ("pattern",), [*self.operands, *self.results]):
            return False
        try:
            pattern = self.int_list("pattern")
        except VerifyError:
            return False
        printer.write(" ")
        printer.print_operand(self.source)
        printer.write(" [" + ", ".join("x" if p == -1 else str(p) for p in pattern) + "]")
        print_view_types(printer, self.source, self.result)

    @classmethod
    def parse_pretty(cls, parser, num_results):
        source_ref = parser.parse_operand()
        pattern = parser.parse_comma_list(lambda: -1 if parser.accept("x") else
                                          parser.parse_integer(), "[", "]")
        source_type, result_type = parse_view_types(parser)
        return cls.create(operands=[parser.resolve_operand(source_ref, source_type)],
                          result_types=[result_type], attributes={"pattern": _ints(pattern)},
                          location=parser.op_location)

    def verify_(self):
        self.check_inferred(lambda: transpose_type(self.source.type, self.int_list("pattern")))


@INTERPRETER.register(TransposeViewOp)
def _transpose_view(interp, op, args):
    array = as_buffer(args[0], op.source.type, "source")
    pattern = op.int_list("pattern")
    strides = [0 if p == -1 else array.strides[p] // array.itemsize for p in pattern]
    shape = [1 if p == -1 else array.shape[p] for p in pattern]
    return [_view(array, shape, strides)]


# ---------------------------------------------------------------------------------------------
# broadcast_view


def broadcast_type(source: BufferType, shape) -> BufferType:
    """The type of a broadcast view to ``shape`` (``None`` entries are run-time sizes): a source
    dimension of size 1 may take any size (stride 0); every other dimension keeps its size.

    >>> from lowering.ir.types import F32
    >>> str(broadcast_type(BufferType((1, 3), F32), [None, 3]))
    '!loops.buffer<?x3xf32, strides=[0, 1]>'
    """
    if len(shape) != source.rank:
        raise VerifyError(f"loops.broadcast_view: cannot broadcast rank {source.rank} to rank "
                          f"{len(shape)} (insert dimensions with loops.transpose_view first)")
    layout = source.layout_strides
    strides = []
    for axis, (have, want) in enumerate(zip(source.shape, shape)):
        if have == 1 and want != 1:
            strides.append(0)
        elif have == want:
            strides.append(layout[axis])
        else:
            raise VerifyError(f"loops.broadcast_view: dimension {axis} of size "
                              f"{'?' if have is None else have} cannot broadcast to "
                              f"{'?' if want is None else want}; only size-1 dimensions broadcast")
    return replace(source, shape=tuple(shape), strides=tuple(strides))


def broadcast_dims(source: BufferType, result: BufferType) -> list[int]:
    """The dimensions a broadcast view stretches from size 1 to a run-time size."""
    return [a for a, (have, want) in enumerate(zip(source.shape, result.shape))
            if have == 1 and want is None]


@register_op
class BroadcastViewOp(_SizedView):
    """Stretches size-1 dimensions with stride 0 (NumPy's broadcast_to, rank kept); one index
    operand per dimension that goes from 1 to ``?``."""

    name = "loops.broadcast_view"
    assembly_format = _SIZED_VIEW_FORMAT
    source = operand(AnyBuffer)
    sizes = var_operand(Index)
    result = result(AnyBuffer)

    @classmethod
    def build(cls, source: Value, shape, location=None) -> "BroadcastViewOp":
        """``shape`` entries are ``None`` (keep the source size), ints or index Values."""
        src = source.type
        if len(shape) != src.rank:
            raise VerifyError(f"loops.broadcast_view: {len(shape)} sizes for a rank-{src.rank} "
                              f"buffer")
        static, dynamic = [], []
        for have, want in zip(src.shape, shape):
            if want is None:
                static.append(have)
            elif isinstance(want, Value):
                if have != 1:
                    raise VerifyError("loops.broadcast_view: a run-time size is only allowed for "
                                      "a dimension of size 1")
                static.append(None)
                dynamic.append(want)
            else:
                static.append(int(want))
        t = broadcast_type(src, static)
        return cls.create(operands=[source, *dynamic], result_types=[t], location=location)

    def verify_(self):
        source = self.source.type
        want = self.check_inferred(lambda: broadcast_type(source, self.result.type.shape))
        check_count(self, len(self.sizes), len(broadcast_dims(source, want)),
                    "size operand(s), one per dimension broadcast to '?'")


@INTERPRETER.register(BroadcastViewOp)
def _broadcast_view(interp, op, args):
    array = as_buffer(args[0], op.source.type, "source")
    out = op.result.type
    sizes = dict(zip(broadcast_dims(op.source.type, out), (as_index(a) for a in args[1:])))
    shape, strides = [], []
    for axis, want in enumerate(out.shape):
        size = sizes.get(axis, array.shape[axis] if want is None else want)
        if size < 0:
            raise ValueError(f"negative size {size} for dimension {axis}")
        shape.append(size)
        stretched = array.shape[axis] == 1 and size != 1
        strides.append(0 if stretched else array.strides[axis] // array.itemsize)
    return [_view(array, shape, strides)]
