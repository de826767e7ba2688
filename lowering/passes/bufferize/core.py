"""The machinery the ``bufferize`` pass's per-op lowerings share.

A ``FunctionLowering`` builds one function's loops IR, straight-line at the function's top level,
while it walks the tensor ops in order. It maps each tensor value to a ``Lowered``: a buffer, or
for a rank-0 value or a value whose elements are all equal (a splat constant, a broadcast scalar)
just the scalar, materialized into a buffer only when something needs one.

Per-op lowerings register in the ``BUFFERIZE`` rule table with
``@BUFFERIZE.register(OpClass, ...)`` (a lowering for a base class serves its subclasses) and
return one ``Lowered`` per result::

    @BUFFERIZE.register(ExpOp)
    def lower_exp(ctx, op):
        ...
        return [ctx.fresh(op.result.type, sizes)]

Rules every lowering follows, so that later passes and backends can rely on them:

- sizes, run-time checks (``loops.assert``) and everything outside loop bodies are emitted at the
  function's top level, before the loops that use them; a check is never inside a loop;
- ``ctx.reader`` prepares an operand at the top level, and its ``load`` is all a loop body uses;
- a fresh result buffer (``ctx.fresh``/``ctx.alloc``) has exactly the buffer type of its tensor
  type (``!loops.buffer<?x4xf32>`` for ``tensor<?x4xf32>``); a buffer is written only while
  its op is lowered, never after (views of it may be handed on);
- a result that can be larger than every input (sizes the user gives, broadcasting, the rows of
  one matrix by the columns of another, a gather) has its size checked (``ctx.check_size``)
  before it is allocated, so that a size product never wraps around and the error names the
  op; the backend's own check of each allocation can only name ``loops.alloc``.

``Arith`` does index and scalar arithmetic that folds when the operands are Python ints:

>>> from lowering.ir.core import Block
>>> from lowering.ir.builder import Builder
>>> from lowering.ir.types import INDEX
>>> block = Block([INDEX])
>>> ix = Arith(Builder.at_end(block), lambda value, type: block.args[0])
>>> ix.add(2, 3), ix.mul(block.args[0], 1) is block.args[0], len(block)
(5, True, 0)
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from lowering.dialects import scalar
from lowering.dialects.loops import (AllocOp, AssertOp, BufferType, CopyOp, DimOp, FillOp,
                                     ForOp, LoadOp, ParallelOp, StoreOp, YieldOp)
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.ir.builder import Builder
from lowering.ir.core import Block, Operation, Value
from lowering.ir.passes import PassFailure
from lowering.ir.rules import RuleTable
from lowering.ir.sizes import MAX_ALLOCATION_BYTES
from lowering.ir.types import I1, INDEX, ScalarType, TensorType

# ---------------------------------------------------------------------------------------------
# The rule table of per-op lowerings: ``fn(ctx, op) -> list[Lowered]``

BUFFERIZE = RuleTable("bufferize")


# ---------------------------------------------------------------------------------------------
# Scalar and index arithmetic that folds Python ints


def _is_static(x) -> bool:
    return isinstance(x, (int, bool, np.integer, np.bool_))


class Arith:
    """Builds scalar ops with ``builder``; operands may be Values or Python ints/bools, and an op
    whose operands are all Python values is computed here instead (NumPy's integer semantics:
    floor division by 0 gives 0). ``constant(value, type)`` makes the Value of a Python number."""

    def __init__(self, builder: Builder, constant: Callable[[object, ScalarType], Value]):
        self.b = builder
        self.constant = constant
        # Ops this Arith made, by what they compute: the same computation is made once (every
        # op goes to the end of one block, so an earlier one dominates a later use).
        self._made: dict[tuple, Value] = {}

    def _insert(self, op: Operation) -> Value:
        key = (op.name, tuple(id(v) for v in op.operands),
               tuple(sorted((k, str(a)) for k, a in op.attributes.items())),
               tuple(str(r.type) for r in op.results))
        found = self._made.get(key)
        if found is not None:
            op.erase()
            return found
        value = self._made[key] = self.b.insert(op).result
        return value

    def forget(self, values) -> None:
        """Stop handing out the ops made for ``values`` (they were moved where later ops
        cannot read them: into a device kernel)."""
        self._made = {k: v for k, v in self._made.items() if v not in values}

    def value(self, x, type: ScalarType = INDEX) -> Value:
        """``x`` as a Value (Python numbers become constants of ``type``)."""
        return x if isinstance(x, Value) else self.constant(x, type)

    def apply(self, cls, *operands, **attrs) -> Value:
        """The result of scalar op ``cls`` on ``operands`` (Python numbers become index
        constants, or constants of the type of the first Value operand)."""
        return self._insert(self.build(cls, *operands, **attrs))

    def build(self, cls, *operands, **attrs) -> Operation:
        """The detached op ``apply`` would insert (to mark it before ``insert``)."""
        like = next((v.type for v in operands if isinstance(v, Value)), INDEX)
        values = [self.value(v, I1 if isinstance(v, (bool, np.bool_)) else like)
                  for v in operands]
        return cls.build(*values, **attrs)

    def insert(self, op: Operation) -> Value:
        """The result of the detached one-result scalar ``op``, inserted (or the result of an
        identical op inserted before, ``op`` then being dropped)."""
        return self._insert(op)

    def add(self, a, b):
        if _is_static(a) and _is_static(b):
            return int(a) + int(b)
        if _is_static(b) and b == 0:
            return a
        if _is_static(a) and a == 0:
            return b
        return self.apply(scalar.AddOp, a, b)

    def sub(self, a, b):
        if _is_static(a) and _is_static(b):
            return int(a) - int(b)
        if _is_static(b) and b == 0:
            return a
        return self.apply(scalar.SubOp, a, b)

    def mul(self, a, b):
        if _is_static(a) and _is_static(b):
            return int(a) * int(b)
        for x, y in ((a, b), (b, a)):
            if _is_static(x) and x == 1:
                return y
            if _is_static(x) and x == 0:
                return 0
        return self.apply(scalar.MulOp, a, b)

    def floordiv(self, a, b):
        if _is_static(a) and _is_static(b):
            return 0 if b == 0 else int(a) // int(b)
        if _is_static(b) and b == 1:
            return a
        return self.apply(scalar.FloorDivOp, a, b)

    def mod(self, a, b):
        if _is_static(a) and _is_static(b):
            return 0 if b == 0 else int(a) % int(b)
        return self.apply(scalar.ModOp, a, b)

    def product_fits(self, factors, limit: int):
        """Whether the product of the non-negative ``factors`` is at most ``limit``, computed
        without overflow (a zero factor does not excuse the others, as in NumPy): True, False
        or an i1 Value.

        >>> from lowering.ir.core import Block
        >>> ix = Arith(Builder.at_end(Block()), None)
        >>> ix.product_fits([2 ** 40, 2 ** 40, 0], 2 ** 63 - 1), ix.product_fits([3, 4], 12)
        (False, True)
        """
        fits, product = True, 1  # product: of max(factor, 1), saturated at limit + 1
        for factor in factors:
            at_least_one = self.max(factor, 1)
            step_fits = self.le(product, self.floordiv(limit, at_least_one))
            fits = self.and_(fits, step_fits)
            product = self.when(step_fits, lambda: self.mul(product, at_least_one),
                                lambda: limit + 1 if limit < 2 ** 63 - 1 else limit)
        return fits

    def add_fits(self, terms):
        """Whether the sum of the non-negative ``terms`` fits in an index (True, False or an
        i1 Value), and the sum (meaningful where it does)."""
        fits, total = True, 0
        for term in terms:
            fits = self.and_(fits, self.le(total, self.sub(2 ** 63 - 1, term)))
            total = self.add(total, term)
        return fits, total

    def neg(self, a):
        return -int(a) if _is_static(a) else self.apply(scalar.NegOp, a)

    def max(self, a, b):
        if _is_static(a) and _is_static(b):
            return max(int(a), int(b))
        return self.apply(scalar.MaximumOp, a, b)

    def min(self, a, b):
        if _is_static(a) and _is_static(b):
            return min(int(a), int(b))
        return self.apply(scalar.MinimumOp, a, b)

    def compare(self, cls, fold, a, b):
        if _is_static(a) and _is_static(b):
            return bool(fold(int(a), int(b)))
        if a is b and isinstance(a, Value) and a.type == INDEX:  # an index equals itself
            return bool(fold(0, 0))
        return self.apply(cls, a, b)

    def eq(self, a, b):
        return self.compare(scalar.EqOp, lambda x, y: x == y, a, b)

    def ne(self, a, b):
        return self.compare(scalar.NeOp, lambda x, y: x != y, a, b)

    def lt(self, a, b):
        return self.compare(scalar.LtOp, lambda x, y: x < y, a, b)

    def le(self, a, b):
        return self.compare(scalar.LeOp, lambda x, y: x <= y, a, b)

    def gt(self, a, b):
        return self.compare(scalar.GtOp, lambda x, y: x > y, a, b)

    def ge(self, a, b):
        return self.compare(scalar.GeOp, lambda x, y: x >= y, a, b)

    def and_(self, a, b):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, (bool, np.bool_)):
                return y if x else False
        return self.apply(scalar.AndOp, a, b)

    def or_(self, a, b):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, (bool, np.bool_)):
                return True if x else y
        return self.apply(scalar.OrOp, a, b)

    def not_(self, a):
        return (not a) if isinstance(a, (bool, np.bool_)) else self.apply(scalar.NotOp, a)

    def all(self, conditions):
        result = True
        for c in conditions:
            result = self.and_(result, c)
        return result

    def select(self, cond, on_true, on_false):
        if isinstance(cond, (bool, np.bool_)):
            return on_true if cond else on_false
        if _is_static(on_true) and _is_static(on_false) and on_true == on_false:
            return on_true
        like = next((v.type for v in (on_true, on_false) if isinstance(v, Value)),
                    I1 if isinstance(on_true, (bool, np.bool_)) else INDEX)
        return self._insert(scalar.SelectOp.build(
            cond, self.value(on_true, like), self.value(on_false, like)))

    def when(self, cond, on_true: Callable, on_false: Callable):
        """``select(cond, on_true(), on_false())``, computing only the branch taken when
        ``cond`` is known at compile time."""
        if isinstance(cond, (bool, np.bool_)):
            return on_true() if cond else on_false()
        return self.select(cond, on_true(), on_false())

    def cast(self, v, to: ScalarType) -> Value:
        """``v`` converted to ``to`` (a Python number becomes a constant of ``to``)."""
        if not isinstance(v, Value):
            return self.constant(v, to)
        if v.type == to:
            return v
        return self._insert(scalar.CastOp.build(v, to))


class AlwaysFails(Exception):
    """A check of the op being lowered fails whenever it runs (known at compile time)."""


# ---------------------------------------------------------------------------------------------
# What a tensor value became


@dataclass
class Lowered:
    """The lowered form of one tensor value.

    ``buffer`` holds the value (a fresh allocation, a view, an argument or a constant), or is None
    when ``scalar`` says everything: every element equals ``scalar`` (the element of a rank-0
    value, or a splat). ``sizes`` caches the size of each dimension (an int, an index Value, or
    None before it is needed). ``owned``: ``buffer`` is a fresh ``loops.alloc`` of exactly the
    buffer type of ``type`` that nothing else refers to, so the function may return it as is.
    ``space``: the memory space the value lives in (``"device"`` for the values of ops placed on
    a GPU); a buffer made for a ``scalar`` is allocated there.
    """

    type: TensorType
    buffer: Value | None = None
    scalar: Value | None = None
    sizes: list = field(default_factory=list)
    owned: bool = False
    space: str = "host"

    def __post_init__(self):
        if not self.sizes:
            self.sizes = list(self.type.shape)


@dataclass
class Reader:
    """Reads elements of one operand inside loop bodies; made at the top level by
    ``FunctionLowering.reader``.

    ``dims`` says, per dimension of the operand, which loop index addresses it: ``k`` (the k-th
    loop index), ``None`` (always 0: a broadcast dimension) or ``(k, is_one)`` (0 where the i1
    Value ``is_one`` holds, the k-th loop index otherwise: NumPy's run-time broadcasting).
    """

    scalar: Value | None
    buffer: Value | None
    dims: list
    zero: Value

    def load(self, b: Builder, ivs) -> Value:
        """The element at loop indices ``ivs`` (a scalar operand gives its scalar)."""
        if self.scalar is not None:
            return self.scalar
        indices = []
        for d in self.dims:
            if d is None:
                indices.append(self.zero)
            elif isinstance(d, tuple):
                k, is_one = d
                indices.append(b.insert(scalar.SelectOp.build(is_one, self.zero, ivs[k])).result)
            else:
                indices.append(ivs[d])
        return b.insert(LoadOp.build(self.buffer, indices)).result


# ---------------------------------------------------------------------------------------------
# The lowering of one function


class FunctionLowering:
    """Builds the loops IR of one function at the end of ``block`` (see the module docstring).

    ``error_codes`` numbers the function's ``loops.assert`` ops (shared by a module's functions,
    so a code names one check in the whole module); ``options`` is the pass object.

    >>> from lowering.ir.types import F32
    >>> ctx = FunctionLowering(Block(), options=None, error_codes=itertools.count(1))
    >>> buffer = ctx.alloc(TensorType((None, 4), F32), [5, 4])
    >>> str(buffer.type), [op.name for op in ctx.block.ops]
    ('!loops.buffer<?x4xf32>', ['scalar.constant', 'loops.alloc'])
    >>> ctx.constant(5) is ctx.constant(5)
    True
    """

    def __init__(self, block: Block, options, error_codes: "itertools.count"):
        self.block = block
        # The function's own block (``block`` is a branch's while a branch is being lowered).
        self.entry = block
        # Lowers one more op where ``block`` is (the pass sets it; ops with regions use it).
        self.lower_op: Callable[[Operation], None] | None = None
        self.b = Builder.at_end(block)
        self.options = options
        self.error_codes = error_codes
        self.values: dict[Value, Lowered] = {}
        self.value_map: dict[Value, Value] = {}  # non-tensor values: old -> new
        self.op: Operation | None = None  # the tensor op being lowered
        # Where the op being lowered allocates: "device" for an op placed on a GPU.
        self.space = "host"
        self._constants: dict[tuple, Value] = {}
        self.ix = Arith(self.b, self.constant)

    # -- values -------------------------------------------------------------------------------

    def bind(self, value: Value, lowered: Lowered) -> None:
        self.values[value] = lowered

    def lowered(self, value: Value) -> Lowered:
        try:
            return self.values[value]
        except KeyError:
            raise PassFailure(f"bufferize: {value!r} is used before it is defined", self.op) \
                from None

    def constant(self, value, type: ScalarType = INDEX) -> Value:
        """A ``scalar.constant`` at the top of the function (made once per value and type)."""
        data = np.asarray(value, dtype=type.dtype)
        key = (type.name, data.tobytes())
        found = self._constants.get(key)
        if found is None:
            op = scalar.ConstantOp.build(data[()], type)
            if self.entry.first_op is None:
                self.entry.append(op)
            else:
                self.entry.insert_before(op, self.entry.first_op)
            found = self._constants[key] = op.result
        return found

    def arith(self, builder: Builder) -> Arith:
        """Folding arithmetic that inserts with ``builder`` (inside a loop body, say)."""
        return Arith(builder, self.constant)

    # -- sizes --------------------------------------------------------------------------------

    def sizes(self, value: Value) -> list:
        """The size of every dimension of ``value``: ints where known, index Values otherwise."""
        lw = self.lowered(value)
        for d, s in enumerate(lw.sizes):
            if s is None:
                buf = self.buffer(value)
                static = buf.type.shape[d]
                lw.sizes[d] = static if static is not None else \
                    self.b.insert(DimOp.build(buf, d)).result
        return list(lw.sizes)

    def size(self, value: Value, axis: int):
        return self.sizes(value)[axis]

    def broadcast_sizes(self, operands, declared_shape, what: str = "operand") -> list:
        """The sizes ``operands`` broadcast to with Theano's rules (a dimension broadcasts only
        where its type says 1), checking that every other operand dimension has that size;
        ``declared_shape`` gives static sizes where known. ``what`` names the operands in the
        check's message."""
        shapes = ", ".join(format_shape(v.type.shape) for v in operands)
        sizes = []
        for d, declared in enumerate(declared_shape):
            candidates = [self.size(v, d) for v in operands if v.type.shape[d] != 1]
            if not candidates:
                sizes.append(1)
                continue
            static = [s for s in candidates if _is_static(s)]
            size = declared if declared is not None else static[0] if static else candidates[0]
            for s in candidates:
                self.check(self.ix.eq(s, size), f"{what} shapes {shapes} differ in dimension {d} "
                                                f"(only dimensions typed 1 broadcast)")
            sizes.append(size)
        return sizes

    def index(self, value: Value):
        """A rank-0 integer tensor as an ``index`` (an int when known at compile time)."""
        from lowering.dialects.tensor import ConstantOp, ShapeIOp
        owner = getattr(value, "op", None)
        if isinstance(owner, ConstantOp):
            return int(owner.attributes["value"].array.reshape(()))
        if isinstance(owner, ShapeIOp):
            return self.size(owner.input, owner.axis)
        return self.ix.cast(self.element(value), INDEX)

    def vector(self, value: Value) -> list:
        """The entries of a rank-1 integer tensor of static length, each an index or an int."""
        from lowering.dialects.tensor import ConstantOp, MakeVectorOp, ShapeOp
        owner = getattr(value, "op", None)
        if isinstance(owner, ConstantOp):
            return [int(v) for v in owner.attributes["value"].array.reshape(-1)]
        if isinstance(owner, ShapeOp):
            return self.sizes(owner.input)
        if isinstance(owner, MakeVectorOp):
            return [self.index(v) for v in owner.operands]
        buf = self.buffer(value)
        return [self.ix.cast(self.b.insert(LoadOp.build(buf, [self.constant(i)])).result, INDEX)
                for i in range(value.type.shape[0])]

    # -- buffers and scalars ------------------------------------------------------------------

    def alloc(self, type: TensorType, sizes, space: str | None = None) -> Value:
        """A fresh buffer of exactly ``type``'s buffer type; ``sizes`` give the run-time sizes
        of its ``?`` dimensions (ints become constants). It is in memory ``space``, by default
        that of the op being lowered (``self.space``)."""
        shape = [d if d is not None else self.ix.value(s) for d, s in zip(type.shape, sizes)]
        return self.b.insert(AllocOp.build(shape, type.element, space or self.space)).result

    def fresh(self, type: TensorType, sizes) -> Lowered:
        """A Lowered value backed by a new allocation (see ``alloc``)."""
        sizes = [d if d is not None else s for d, s in zip(type.shape, sizes)]
        return Lowered(type, buffer=self.alloc(type, sizes), sizes=sizes, owned=True,
                       space=self.space)

    def buffer(self, value: Value) -> Value:
        """The buffer holding ``value`` (allocated and filled the first time for a value that
        only had its scalar)."""
        lw = self.lowered(value)
        if lw.buffer is None:
            sizes = [d if d is not None else s for d, s in zip(lw.type.shape, lw.sizes)]
            if any(s is None for s in sizes):
                raise PassFailure(f"bufferize: the sizes of {value!r} are unknown", self.op)
            lw.buffer = self.alloc(lw.type, sizes, space=lw.space)
            lw.owned = True
            self.b.insert(FillOp.build(lw.scalar, lw.buffer))
        return lw.buffer

    def element(self, value: Value) -> Value:
        """The element of a rank-0 value (or of a splat) as a scalar Value."""
        lw = self.lowered(value)
        if lw.scalar is None:
            buf = self.buffer(value)
            zero = [self.constant(0)] * buf.type.rank
            lw.scalar = self.b.insert(LoadOp.build(buf, zero)).result
        return lw.scalar

    def splat(self, value: Value) -> Value | None:
        """The scalar every element of ``value`` equals, when known without loading."""
        lw = self.lowered(value)
        if lw.scalar is not None and (lw.buffer is None or lw.type.rank == 0):
            return lw.scalar
        return None

    def reader(self, value: Value, dims) -> Reader:
        """A Reader of ``value`` (``dims`` as in ``Reader``); rank-0 values and splats read as
        their scalar."""
        lw = self.lowered(value)
        if lw.scalar is not None and (lw.buffer is None or lw.type.rank == 0):
            return Reader(lw.scalar, None, [], self.constant(0))
        if lw.type.rank == 0 and lw.buffer.type.memory_space == "device":
            # Device memory is read where the loop runs (in the kernel), not by the host.
            return Reader(None, lw.buffer, [], self.constant(0))
        if lw.type.rank == 0:
            return Reader(self.element(value), None, [], self.constant(0))
        return Reader(None, self.buffer(value), list(dims), self.constant(0))

    def broadcast_reader(self, value: Value, target_sizes, what: str = "the value",
                         first: int = 0) -> Reader:
        """A Reader of ``value`` broadcast to ``target_sizes`` with NumPy's rules (dimensions
        aligned on the right; a size of 1, also at run time, broadcasts), with the checks.
        Target dimension ``k`` is addressed by loop index ``first + k``."""
        rank, target_rank = value.type.rank, len(target_sizes)
        sizes = self.sizes(value)
        lead = target_rank - rank
        dims = []
        for j, (declared, s) in enumerate(zip(value.type.shape, sizes)):
            k = lead + j
            t = target_sizes[k]
            if declared == 1 or (_is_static(s) and s == 1):
                dims.append(None)
                continue
            is_one = self.ix.eq(s, 1)
            self.check(self.ix.or_(self.ix.eq(s, t), is_one),
                       f"{what} of shape {format_shape(value.type.shape)} cannot broadcast to "
                       f"the shape {format_sizes(target_sizes)} in dimension {k}")
            dims.append(first + k if isinstance(is_one, bool) else (first + k, is_one))
        return self.reader(value, dims)

    # -- checks -------------------------------------------------------------------------------

    def where(self) -> str:
        """``tensor.add at model.py:12:5``: the op being lowered and the user's line."""
        return f"{self.op.name} at {self.op.location.short()}"

    def check(self, cond, detail: str, kind: str = "value") -> None:
        """A ``loops.assert`` of ``cond`` (nothing when it is known to hold); its message is the
        op, its location and ``detail``. A condition known to be false raises ``AlwaysFails``
        after the assert: the rest of the op would never run (and need not be consistent)."""
        static = isinstance(cond, (bool, np.bool_))
        if static and cond:
            return
        value = self.ix.value(False, I1) if static else cond
        self.b.insert(AssertOp.build(value, f"{self.where()}: {detail}", next(self.error_codes),
                                     kind))
        if static:
            raise AlwaysFails(detail)

    def check_size(self, sizes, element: ScalarType, what: str) -> None:
        """Check that an array of ``sizes`` (non-negative) and ``element`` fits in one
        allocation (``lowering.ir.sizes``): a size product never wraps around. For the ops
        whose result can outgrow their inputs (sizes the user gives, broadcasting, outer
        products, gathers), so that the error names the op; every ``loops.alloc`` checks its
        byte count again in the backend, where the message can only name the buffer type."""
        itemsize = max(1, element.dtype.itemsize)
        fits = self.ix.product_fits(list(sizes), MAX_ALLOCATION_BYTES // itemsize)
        self.check(fits, f"{what} of shape {format_sizes(sizes)} and element type {element} "
                         f"is too big (more than {MAX_ALLOCATION_BYTES} bytes)")

    def check_broadcast_size(self, operands, sizes, element: ScalarType) -> None:
        """``check_size`` of a result of ``element`` broadcast from ``operands`` to ``sizes``,
        skipped where one operand has no dimension typed 1 and elements at least as wide: its
        sizes are the result's, and it exists."""
        width = element.dtype.itemsize
        if any(all(d != 1 for d in v.type.shape) and v.type.element.dtype.itemsize >= width
               for v in operands):
            return
        self.check_size(sizes, element, "the result")

    def unreachable(self, type: TensorType) -> Lowered:
        """A stand-in for a result of an op whose check always fails (never read at run time):
        an empty buffer of ``type``."""
        return self.fresh(type, [0] * type.rank)

    # -- loops --------------------------------------------------------------------------------

    def loop_nest(self, uppers, body: Callable, parallel: bool = True,
                  builder: Builder | None = None) -> None:
        """Call ``body(builder, ivs)`` inside loops over every index of ``[0, uppers)`` in
        row-major order: the outermost loop is a ``loops.parallel`` (a ``loops.for`` when
        ``parallel`` is false), the inner ones ``loops.for``; the last dimension is innermost.
        The loops go where ``builder`` inserts (the function's top level by default); with no
        dimensions, ``body`` runs once there."""
        b = self.b if builder is None else builder
        if not uppers:
            body(b, [])
            return
        c0, c1 = self.constant(0), self.constant(1)
        ups = [self.ix.value(u) for u in uppers]
        if parallel:
            loop = b.insert(ParallelOp.build([c0], [ups[0]], [c1]))
            ivs = [loop.body.block.args[0]]
        else:
            loop = b.insert(ForOp.build(c0, ups[0], c1))
            ivs = [loop.induction_var]
        blocks = [loop.body.block]
        for u in ups[1:]:
            inner = Builder.at_end(blocks[-1]).insert(ForOp.build(c0, u, c1))
            blocks.append(inner.body.block)
            ivs.append(inner.induction_var)
        body(Builder.at_end(blocks[-1]), ivs)
        for block in blocks:
            block.append(YieldOp.build())

    def fold(self, builder: Builder, uppers, inits, body: Callable, lowers=None) -> list[Value]:
        """Sequential ``loops.for`` loops over ``[lowers, uppers)`` (``lowers`` default to 0)
        carrying ``inits``: ``body(builder, ivs, carried) -> next carried values``; returns the
        final values."""
        if not uppers:
            return list(body(builder, [], list(inits)))
        c1 = self.constant(1)
        ups = [self.ix.value(u) for u in uppers]
        los = [self.ix.value(lo) for lo in (lowers or [0] * len(uppers))]

        def level(b: Builder, k: int, ivs: list, carried: list) -> list[Value]:
            loop = b.insert(ForOp.build(los[k], ups[k], c1, carried))
            inner = Builder.at_end(loop.body.block)
            here = ivs + [loop.induction_var]
            if k == len(ups) - 1:
                new = body(inner, here, list(loop.carried))
            else:
                new = level(inner, k + 1, here, list(loop.carried))
            loop.body.block.append(YieldOp.build(list(new)))
            return list(loop.results)

        return level(builder, 0, [], list(inits))

    def copy(self, value: Value, target: Value) -> None:
        """Write every element of ``value`` into the buffer ``target`` (same shape)."""
        splat = self.splat(value)
        if splat is not None:
            self.b.insert(FillOp.build(splat, target))
        else:
            self.b.insert(CopyOp.build(self.buffer(value), target))

    def store(self, b: Builder, value: Value, buffer: Value, ivs) -> None:
        b.insert(StoreOp.build(value, buffer, list(ivs)))


def format_sizes(sizes) -> str:
    """Sizes for messages: ints, ``?`` for run-time ones.

    >>> format_sizes([3, None])
    '(3, ?)'
    """
    return format_shape([s if _is_static(s) else None for s in sizes])


def input_buffer_type(t: TensorType, memory_space: str = "host") -> BufferType:
    """The buffer type of a function argument: any layout (run-time strides and offset), in
    ``memory_space`` (``"device"`` for an argument on a GPU).

    >>> from lowering.ir.types import F32
    >>> str(input_buffer_type(TensorType((None, 3), F32)))
    '!loops.buffer<?x3xf32, strides=[?, ?], offset=?>'
    >>> str(input_buffer_type(TensorType((4,), F32), "device"))
    '!loops.buffer<4xf32, strides=[?], offset=?, space="device">'
    """
    return BufferType(t.shape, t.element, strides=(None,) * t.rank, offset=None,
                      memory_space=memory_space)


def result_buffer_type(t: TensorType, memory_space: str = "host") -> BufferType:
    """The buffer type of a fresh allocation holding a tensor of type ``t``: contiguous, in
    ``memory_space``.

    >>> from lowering.ir.types import F32
    >>> str(result_buffer_type(TensorType((None, 3), F32)))
    '!loops.buffer<?x3xf32>'
    """
    return BufferType(t.shape, t.element, memory_space=memory_space)
