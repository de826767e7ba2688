"""A graph linear in one value, evaluated for a whole batch of that value at once.

``jacobian`` needs ``Lop(y, w, e_i)`` for every basis vector ``e_i`` of ``y``'s space. Those
reverse sweeps are one graph, linear in the cotangent ``u``: ``batch_linear`` rebuilds the ops
that depend on ``u`` with a new leading axis, so that feeding the identity matrix computes every
row at once, for a length known only at run time. Each op class has a rule in ``BATCHING``
(values not depending on ``u`` stay as they are and are broadcast along the new axis where an
op needs it); an op without one is an error naming it.

>>> from lowering.frontend.constructors import matrix, vector
>>> u, x, E = vector("u"), vector("x"), matrix("E")
>>> g = u * x * 2
>>> (rows,) = batch_linear([g.value], u.value, E.value)
>>> str(rows.type)
'tensor<?x?xf64>'
"""
from __future__ import annotations

from lowering.dialects.tensor import CumSumOp, IfOp
from lowering.dialects.tensor import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp,
                                      AdvancedSubtensorOp, AllocOp, CastOp, ConcatenateOp,
                                      DimShuffleOp, DotOp, ElementwiseOp, FillOp, GradFilterOp,
                                      IncSubtensorOp, MakeVectorOp, ReductionOp, ReshapeOp,
                                      SetSubtensorOp, ShapeIOp, ShapeOp, SubtensorOp)
from lowering.dialects.tensor.elementwise import AddOp
from lowering.dialects.tensor.indexing import ArrayIndex, Slice
from lowering.dialects.tensor.shape_ops import scalar_constant
from lowering.ir.core import Value
from lowering.ir.location import default_location
from lowering.ir.rules import RuleTable
from lowering.ir.types import I64

from .errors import GraphBuildError
from .graph import depends_on, toposort

BATCHING = RuleTable("batching", hint="the batching rules of the jacobian's reverse sweeps live in "
                                      "lowering/frontend/batching.py")


class Batch:
    """The state of one batching: ``size`` is the batch length (a rank-0 i64 value), ``loc``
    where the new ops are said to be built."""

    def __init__(self, size: Value, location):
        self.size, self.loc = size, location

    def lift(self, v: Value) -> Value:
        """``v`` with a leading axis of length 1 (it broadcasts along the batch)."""
        return DimShuffleOp.build(v, ["x", *range(v.type.rank)], location=self.loc).result

    def spread(self, v: Value) -> Value:
        """``v`` repeated along a leading axis of the batch's length."""
        dims = [ShapeIOp.build(v, d, location=self.loc).result for d in range(v.type.rank)]
        return AllocOp.build(v, self.size, *dims, location=self.loc).result

    def align(self, v: Value, rank: int) -> Value:
        """A batched ``v`` (batch axis first) given ``rank`` dims after the batch axis, new
        size-1 dims inserted after the batch axis (as right-aligned broadcasting would)."""
        extra = rank - (v.type.rank - 1)
        if extra <= 0:
            return v
        pattern = [0, *["x"] * extra, *range(1, v.type.rank)]
        return DimShuffleOp.build(v, pattern, location=self.loc).result

    def keep_static_sizes(self, new: Value, original: Value) -> Value:
        """The batched ``new`` with the static sizes of ``original``'s type where its own type
        lost them (later ops may rely on a static 1 to broadcast or drop a dim): a reshape to
        the same sizes, some now constants."""
        sizes = original.type.shape
        if all(s is None or n is not None for s, n in zip(sizes, new.type.shape[1:])):
            return new
        dims = [scalar_constant(s, I64, self.loc) if s is not None else
                ShapeIOp.build(new, d + 1, location=self.loc).result
                for d, s in enumerate(sizes)]
        target = MakeVectorOp.build(self.size, *dims, location=self.loc).result
        return ReshapeOp.build(new, target, location=self.loc).result


def batch_linear(outputs: list[Value], source: Value, batched_source: Value) -> list[Value]:
    """``outputs`` (a graph linear in ``source``) recomputed with ``batched_source`` (one
    leading axis more than ``source``) in place of ``source``: row ``i`` of each result is the
    output for ``batched_source[i]``. Outputs that do not depend on ``source`` are repeated."""
    relevant = depends_on(outputs, [source])
    size = ShapeIOp.build(batched_source, 0).result
    batch = Batch(size, None)
    values: dict[Value, Value] = {source: batched_source}
    for op in toposort(outputs, {source}):
        if not any(v in values for v in op.operands) or not any(r in relevant for r in op.results):
            continue
        rule = BATCHING.find(type(op))
        if rule is None:
            raise GraphBuildError(f"jacobian: the reverse sweep goes through {op.name} (built at "
                                  f"{op.location.short()}), which cannot yet be batched over the "
                                  f"rows of the jacobian; give the differentiated vector a static "
                                  f"length, or loop over its elements with theano.scan",
                                  op.location, op)
        batch.loc = op.location
        with default_location(op.location):
            results = rule(batch, op, [values.get(v, v) for v in op.operands],
                           [v in values for v in op.operands])
        for r, (new, is_batched) in zip(op.results, results):
            if is_batched:
                values[r] = batch.keep_static_sizes(new, r)
    return [values[o] if o in values else batch.spread(o) for o in outputs]


@BATCHING.register(ElementwiseOp)
def _elementwise(b: Batch, op, operands, batched):
    lifted = [v if is_b else b.lift(v) for v, is_b in zip(operands, batched)]
    if isinstance(op, CastOp):
        return [(CastOp.build(lifted[0], op.to, location=b.loc).result, True)]
    return [(type(op).build(*lifted, location=b.loc).result, True)]


@BATCHING.register(DimShuffleOp)
def _dimshuffle(b: Batch, op, operands, batched):
    pattern = [0, *["x" if p == -1 else p + 1 for p in op.pattern]]
    return [(DimShuffleOp.build(operands[0], pattern, location=b.loc).result, True)]


@BATCHING.register(ReductionOp)
def _reduction(b: Batch, op, operands, batched):
    axes = [a + 1 for a in op.axes]
    out = type(op).build(operands[0], axes=axes, keepdims=bool(op.keepdims), location=b.loc)
    return [(out.result, True)]


@BATCHING.register(GradFilterOp)
def _grad_filter(b: Batch, op, operands, batched):
    out = GradFilterOp.build(operands[0], op.kind, op.lower, op.upper, location=b.loc)
    return [(out.result, True)]


@BATCHING.register(FillOp)
def _fill(b: Batch, op, operands, batched):
    model, value = operands
    if not batched[1]:  # only the model's shape is batched: the value broadcasts as before
        return [(FillOp.build(model, value, location=b.loc).result, True)]
    rank = op.result.type.rank
    value = b.align(value, rank)
    if batched[0]:
        return [(FillOp.build(model, value, location=b.loc).result, True)]
    zeros = FillOp.build(b.lift(model), scalar_constant(0, value.type.element, b.loc),
                         location=b.loc).result
    return [(AddOp.build(value, zeros, location=b.loc).result, True)]


@BATCHING.register(AllocOp)
def _alloc(b: Batch, op, operands, batched):
    value, dims = operands[0], operands[1:]
    value = b.align(value, len(dims))
    return [(AllocOp.build(value, b.size, *dims, location=b.loc).result, True)]


@BATCHING.register(ReshapeOp)
def _reshape(b: Batch, op, operands, batched):
    x, shape = operands
    batch_dim = MakeVectorOp.build(b.size, location=b.loc).result
    target = ConcatenateOp.build(batch_dim, shape, axis=0, location=b.loc).result
    return [(ReshapeOp.build(x, target, location=b.loc).result, True)]


@BATCHING.register(ShapeIOp)
def _shape_i(b: Batch, op, operands, batched):
    return [(ShapeIOp.build(operands[0], op.axis + 1, location=b.loc).result, False)]


@BATCHING.register(ShapeOp)
def _shape(b: Batch, op, operands, batched):
    shape = ShapeOp.build(operands[0], location=b.loc).result
    return [(SubtensorOp.build(shape, (slice(1, None),), location=b.loc).result, False)]


def _check_advanced(op) -> None:
    arrays = [i for i, e in enumerate(op.entries) if isinstance(e, ArrayIndex)]
    if arrays and arrays != list(range(arrays[0], arrays[-1] + 1)):
        raise GraphBuildError(f"jacobian: {op.name} (built at {op.location.short()}) indexes "
                              f"with arrays separated by slices, which cannot be batched",
                              op.location, op)


@BATCHING.register(SubtensorOp, AdvancedSubtensorOp)
def _read(b: Batch, op, operands, batched):
    _check_advanced(op)
    entries = (Slice(), *op.entries)
    out = type(op).from_spec(operands[0], entries, operands[1:], location=b.loc)
    return [(out.result, True)]


@BATCHING.register(SetSubtensorOp, IncSubtensorOp, AdvancedSetSubtensorOp,
                   AdvancedIncSubtensorOp)
def _write(b: Batch, op, operands, batched):
    _check_advanced(op)
    x, y, indices = operands[0], operands[1], operands[2:]
    x = x if batched[0] else b.spread(x)
    if batched[1]:
        view_rank = op.read_class.from_spec(op.input, op.entries, op.indices,
                                            location=b.loc).result.type.rank
        y = b.align(y, view_rank)
    entries = (Slice(), *op.entries)
    return [(type(op).from_spec(x, y, entries, indices, location=b.loc).result, True)]


@BATCHING.register(ConcatenateOp)
def _concatenate(b: Batch, op, operands, batched):
    parts = [v if is_b else b.spread(v) for v, is_b in zip(operands, batched)]
    return [(ConcatenateOp.build(*parts, axis=op.axis + 1, location=b.loc).result, True)]


@BATCHING.register(MakeVectorOp)
def _make_vector(b: Batch, op, operands, batched):
    columns = [DimShuffleOp.build(v if is_b else b.spread(v), [0, "x"], location=b.loc).result
               for v, is_b in zip(operands, batched)]
    return [(ConcatenateOp.build(*columns, axis=1, location=b.loc).result, True)]


@BATCHING.register(DotOp)
def _dot(b: Batch, op, operands, batched):
    """The sweep is linear in the batched value, so only one side of a product is batched."""
    (a, c), loc = operands, b.loc
    ra, rc = op.lhs.type.rank, op.rhs.type.rank

    def dot(u, v):
        return DotOp.build(u, v, location=loc).result

    def shuffle(v, pattern):
        return DimShuffleOp.build(v, pattern, location=loc).result

    def size(v, axis):
        return ShapeIOp.build(v, axis, location=loc).result

    def reshape(v, dims):
        dims = [scalar_constant(d, I64, loc) if isinstance(d, int) else d for d in dims]
        return ReshapeOp.build(v, MakeVectorOp.build(*dims, location=loc).result,
                               location=loc).result

    if batched[0] and ra == 1:        # (B, n) . c
        return [(dot(a, c), True)]
    if batched[0]:                    # (B, m, n) . c: fold the batch into the rows
        flat = dot(reshape(a, [-1, size(a, 2)]), c)
        dims = [b.size, size(a, 1)] + ([size(c, 1)] if rc == 2 else [])
        return [(reshape(flat, dims), True)]
    if rc == 1:                       # a . (B, n): each row against a
        return [(dot(c, a) if ra == 1 else dot(c, shuffle(a, [1, 0])), True)]
    # a . (B, n, k): put the batch beside k, multiply, and move it back to the front.
    n, k = size(c, 1), size(c, 2)
    wide = reshape(shuffle(c, [1, 0, 2]), [n, -1])
    if ra == 1:
        return [(reshape(dot(a, wide), [b.size, k]), True)]
    m = size(a, 0)
    return [(shuffle(reshape(dot(a, wide), [m, b.size, k]), [1, 0, 2]), True)]


def identity(n: Value, dtype_element) -> Value:
    """The ``n`` x ``n`` identity matrix of ``dtype_element`` (``n`` a rank-0 i64 value)."""
    from lowering.dialects.tensor import ArangeOp, CastOp, EqOp
    zero, one = scalar_constant(0, I64), scalar_constant(1, I64)
    steps = ArangeOp.build(zero, n, one).result
    rows = DimShuffleOp.build(steps, [0, "x"]).result
    cols = DimShuffleOp.build(steps, ["x", 0]).result
    return CastOp.build(EqOp.build(rows, cols).result, dtype_element).result



@BATCHING.register(IfOp)
def _if(b: Batch, op, operands, batched):
    """Both branches yield batched values (the one that is not gets repeated); the condition
    cannot depend on the batched value, the sweep being linear in it."""
    if batched[0]:
        raise GraphBuildError(f"jacobian: the condition of {op.name} (built at "
                              f"{op.location.short()}) depends on the cotangent", op.location, op)

    def yielded(branch) -> list[Value]:
        values = []
        for value in op.yielded(branch):
            if value.owner is not branch.block:
                raise GraphBuildError(f"jacobian: {op.name} (built at {op.location.short()}) "
                                      f"computes in a branch; only branches that yield their "
                                      f"inputs are batched", op.location, op)
            i = value.index + 1
            values.append(operands[i] if batched[i] else b.spread(operands[i]))
        return values

    new = IfOp.build(operands[0], yielded(op.then_region), yielded(op.else_region),
                     location=b.loc)
    return [(r, True) for r in new.results]


@BATCHING.register(CumSumOp)
def _cumsum(b: Batch, op, operands, batched):
    """A running sum is linear: the same sum one axis further in."""
    out = CumSumOp.build(operands[0], op.axis + 1, bool(op.reverse), location=b.loc)
    return [(out.result, True)]
