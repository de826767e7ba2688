"""What ``map-to-gpu`` knows about a host-level loop nest: its levels, what each iteration
writes, and whether the iterations of a level are independent, reduce into accumulators, or
neither.

A *nest* is a top-level ``loops.parallel`` or ``loops.for`` (no loop-carried values) and the
loops perfectly nested in it: a loop is a level of the nest while the body around it holds only
ops that write nothing (loads, scalar and index arithmetic) and exactly one inner loop whose
bounds come from outside the nest (a rectangular iteration space). What the innermost level
runs is the nest's *point body*; the write-free ops of the outer levels are its *hoisted* ops.

Each store of the point body is one of:

- a **map store**: its indices name the induction variable of every ``loops.for`` level
  directly, so two iterations never write the same element (``loops.parallel`` levels are
  independent by that op's contract);
- an **accumulate store** ``acc[p] = combine(acc[p], x)`` with ``combine`` associative and
  commutative (``add mul maximum minimum and or xor``): the levels named by ``p`` are kept, the
  others are reduced, and their order does not matter (floats: up to rounding);
- anything else, which keeps the levels it does not name sequential.

A load of memory the point body writes must be the load of the element a store of the same
buffer writes, at the same indices (reading one's own element), or the nest is not analyzed.

>>> from lowering.ir.parser import parse_module
>>> m = parse_module('''
... func.func @f(%x: !loops.buffer<?x?xf32, space="device">,
...              %s: !loops.buffer<?xf32, space="device">) {
...   %c0 = "scalar.constant"() {value = 0 : index} : () -> index
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %n = loops.dim %x, 0 : !loops.buffer<?x?xf32, space="device">
...   %k = loops.dim %x, 1 : !loops.buffer<?x?xf32, space="device">
...   loops.parallel (%i) = (%c0) to (%n) step (%c1) {
...     loops.for %j = %c0 to %k step %c1 {
...       %v = loops.load %x[%i, %j] : !loops.buffer<?x?xf32, space="device">
...       %a = loops.load %s[%i] : !loops.buffer<?xf32, space="device">
...       %t = "scalar.add"(%a, %v) : (f32, f32) -> f32
...       loops.store %t, %s[%i] : !loops.buffer<?xf32, space="device">
...       loops.yield
...     }
...     loops.yield
...   }
...   func.return
... }''')
>>> loop = list(m.functions[0].body.block.ops)[4]
>>> nest = extract_nest(loop)
>>> len(nest.levels), [op.name for op in nest.body]
(2, ['loops.load', 'loops.load', 'scalar.add', 'loops.store'])
>>> analysis = analyze(nest)
>>> [a.kind for a in analysis.stores], analysis.free_levels()
(['accumulate'], [True, False])
"""
from __future__ import annotations

from dataclasses import dataclass, field

from lowering.dialects import scalar
from lowering.dialects.gpu import AtomicRmwOp
from lowering.dialects.loops import (BufferType, CallOp, ConstantOp, CopyOp, DimOp, FillOp,
                                     ForOp, LoadOp, ParallelOp, StoreOp, StrideOp, YieldOp)
from lowering.dialects.loops.views import ViewOp
from lowering.ir.captures import defined_inside
from lowering.ir.core import PURE, BlockArgument, Operation, OpResult, Value

from ..buffer_analysis import root

# The combining steps of a reduction, by scalar op class: the atomic kind (None: no atomic) and
# the name a kernel doing it gets.
COMBINES: dict[type, tuple[str | None, str]] = {
    scalar.AddOp: ("add", "sum"),
    scalar.MulOp: (None, "prod"),
    scalar.MaximumOp: ("max", "max"),
    scalar.MinimumOp: ("min", "min"),
    scalar.AndOp: (None, "all"),
    scalar.OrOp: (None, "any"),
    scalar.XorOp: (None, "xor"),
}


class Combining:
    """What a reduction step folding values with its ``combine`` op (a ``COMBINES`` key) gets
    from it: the atomic kind and the kernel's name."""

    combine: Operation

    @property
    def atomic_kind(self) -> str | None:
        return COMBINES[type(self.combine)][0]

    @property
    def kernel_name(self) -> str:
        return COMBINES[type(self.combine)][1]


def is_device_buffer(value: Value) -> bool:
    """Whether ``value`` is a buffer in GPU memory (space "device" or "shared")."""
    t = value.type
    return isinstance(t, BufferType) and t.memory_space in ("device", "shared")


def accessed_buffers(op: Operation) -> list[Value]:
    """The buffers whose elements ``op`` itself reads or writes (not ``dim``, not views)."""
    if isinstance(op, (LoadOp, StoreOp, FillOp, AtomicRmwOp)):
        return [op.buffer]
    if isinstance(op, CopyOp):
        return [op.source, op.target]
    if isinstance(op, CallOp):
        return [v for v in op.args if isinstance(v.type, BufferType)]
    return []


def touches_device(op: Operation) -> bool:
    """Whether ``op`` or an op nested in it reads or writes elements of device memory."""
    return any(is_device_buffer(v) for inner in op.walk() for v in accessed_buffers(inner))


def touches_host(op: Operation) -> list[Operation]:
    """The ops in ``op`` (itself included) that read or write elements of host memory."""
    return [inner for inner in op.walk()
            if any(isinstance(v.type, BufferType) and v.type.memory_space == "host"
                   for v in accessed_buffers(inner))]


_WRITE_FREE = (LoadOp, DimOp, StrideOp, ViewOp, ConstantOp, YieldOp)


def is_write_free(op: Operation) -> bool:
    """Whether ``op`` (with everything nested in it) writes no memory and stops nothing: loads,
    sizes, views, scalar arithmetic and loops made only of those."""
    return all(_reads_or_computes(inner) for inner in op.walk())


def _reads_or_computes(op: Operation) -> bool:
    """Whether ``op`` itself (not what is nested in it) only reads memory or computes: loads,
    sizes, views, scalar ops, loops and their terminators."""
    return (isinstance(op, _WRITE_FREE) or isinstance(op, (ForOp, ParallelOp))
            or (PURE in op.traits and op.name.startswith("scalar.")))


def body_ops(block) -> list[Operation]:
    """The ops of a loop body without its ``loops.yield``."""
    return [op for op in block.ops if not isinstance(op, YieldOp)]


def constant_int(value) -> int | Value:
    """The int a ``scalar.constant`` of an integer or index type holds, else ``value`` itself
    (an int stays an int)."""
    if isinstance(value, OpResult) and isinstance(value.op, scalar.ConstantOp) \
            and not value.type.is_float:
        return int(value.op.numpy_value)
    return value


# ---------------------------------------------------------------------------------------------
# Nests


@dataclass
class Level:
    """One dimension of a nest: ``for iv = lower; iv < upper; iv += step``."""

    iv: Value
    lower: Value
    upper: Value
    step: Value
    parallel: bool


@dataclass
class Nest:
    """A top-level loop seen as ``levels`` (outermost first): ``loops`` are the loop ops the
    levels come from (a ``loops.parallel`` gives several), ``hoisted[k]`` the write-free ops in
    the body of ``loops[k]`` before ``loops[k + 1]``, and ``body`` what the innermost loop
    runs at every point."""

    loops: list[Operation]
    levels: list[Level]
    hoisted: list[list[Operation]]
    body: list[Operation]

    @property
    def op(self) -> Operation:
        """The outermost loop."""
        return self.loops[0]

    @property
    def ivs(self) -> list[Value]:
        return [level.iv for level in self.levels]

    def point_ops(self) -> list[Operation]:
        """Everything one iteration point runs, in order."""
        return [op for ops in self.hoisted for op in ops] + self.body


def _levels_of(loop: Operation) -> list[Level]:
    if isinstance(loop, ParallelOp):
        return [Level(iv, lo, hi, st, True) for iv, lo, hi, st in
                zip(loop.induction_vars, loop.lowers, loop.uppers, loop.steps)]
    return [Level(loop.induction_var, loop.lower, loop.upper, loop.step, False)]


def _is_nest_loop(op: Operation) -> bool:
    return isinstance(op, ParallelOp) or (isinstance(op, ForOp) and not op.inits)


def extract_nest(op: Operation) -> Nest:
    """The nest of the top-level loop ``op`` (a ``loops.parallel``, or a ``loops.for`` without
    loop-carried values); see the module docstring."""
    if not _is_nest_loop(op):
        raise ValueError(f"{op.name} with loop-carried values is not a nest")
    inside = defined_inside(op)
    loops = [op]
    levels = _levels_of(op)
    hoisted: list[list[Operation]] = []
    block = op.body.block
    while True:
        ops = body_ops(block)
        inner = ops[-1] if ops else None
        if inner is None or not _is_nest_loop(inner) or any(o.regions for o in ops[:-1]):
            break
        bounds = [v for lv in _levels_of(inner) for v in (lv.lower, lv.upper, lv.step)]
        if any(v in inside for v in bounds) or not all(is_write_free(o) for o in ops[:-1]):
            break
        hoisted.append(ops[:-1])
        loops.append(inner)
        levels.extend(_levels_of(inner))
        block = inner.body.block
    return Nest(loops, levels, hoisted, body_ops(block))


# ---------------------------------------------------------------------------------------------
# Stores and accumulations


@dataclass
class Accumulation(Combining):
    """``store combine(load buf[idx], x), buf[idx]``: the load, the combining op and ``x``."""

    load: LoadOp
    combine: Operation
    value: Value


def accumulation(store: StoreOp) -> Accumulation | None:
    """The parts of ``store`` when it combines a value into the element it stores to (the load
    and the combining op used by nothing else, all three in one block), else None."""
    value = store.value
    if not isinstance(value, OpResult) or type(value.op) not in COMBINES:
        return None
    combine = value.op
    if len(value.uses) != 1 or combine.parent is not store.parent:
        return None
    for mine, other in ((0, 1), (1, 0)):
        loaded = combine.operands[mine]
        if not isinstance(loaded, OpResult) or not isinstance(loaded.op, LoadOp):
            continue
        load = loaded.op
        if load.buffer is store.buffer and list(load.indices) == list(store.indices) \
                and len(loaded.uses) == 1 and load.parent is store.parent \
                and combine.operands[other] is not loaded:
            return Accumulation(load, combine, combine.operands[other])
    return None


@dataclass
class StoreInfo:
    """A store of a point body: ``kind`` is "map", "accumulate" or "other"; ``levels`` are the
    indices of the nest levels whose induction variables its indices name."""

    op: StoreOp
    kind: str
    levels: frozenset
    accumulation: Accumulation | None = None
    at_point: bool = True  # directly in the point body, not in a loop inside it


@dataclass
class Analysis:
    """What the point body of ``nest`` writes: ``stores``; ``opaque`` when it also writes memory
    in other ways (fills, copies, calls, ...) or reads written memory other than its own
    element, in which case only ``loops.parallel`` levels are independent."""

    nest: Nest
    stores: list[StoreInfo] = field(default_factory=list)
    opaque: bool = False
    reason: str = ""

    def free_levels(self) -> list[bool]:
        """Per level: may its iterations run at once (a parallel level, or one every store
        names)?"""
        free = []
        for k, level in enumerate(self.nest.levels):
            if level.parallel:
                free.append(True)
            else:
                free.append(not self.opaque and all(k in s.levels for s in self.stores))
        return free

    def all_accumulate(self) -> bool:
        """Whether every store is an accumulate store directly in the point body whose indices
        are nest variables or values from outside the nest (so each names one element per
        kept point)."""
        return (not self.opaque and bool(self.stores)
                and all(s.kind == "accumulate" and s.at_point and indices_are_ivs_or_outside(
                    s.op, self.nest) for s in self.stores))


def indices_are_ivs_or_outside(store: StoreOp, nest: Nest) -> bool:
    """Whether each index of ``store`` is a nest level's variable or a value from outside the
    nest."""
    inside = defined_inside(nest.op)
    ivs = set(nest.ivs)
    return all(v in ivs or v not in inside for v in store.indices)


def analyze(nest: Nest) -> Analysis:
    """Classify the writes of ``nest``'s point body (see the module docstring)."""
    result = Analysis(nest)
    level_of = {level.iv: k for k, level in enumerate(nest.levels)}
    body_block = nest.body[0].parent if nest.body else None
    stores: list[StoreOp] = []
    loads: list[LoadOp] = []
    for top in nest.point_ops():
        for op in top.walk():
            if isinstance(op, StoreOp):
                stores.append(op)
            elif isinstance(op, LoadOp):
                loads.append(op)
            elif not _reads_or_computes(op):  # fills, copies, calls, allocations, checks
                result.opaque, result.reason = True, f"it runs {op.name}"
    for store in stores:
        named = frozenset(level_of[v] for v in store.indices if v in level_of)
        acc = accumulation(store)
        kind = "accumulate" if acc is not None else "other"
        if all(k in named for k, lv in enumerate(nest.levels) if not lv.parallel):
            kind = "map"  # one element per iteration (an accumulation of its own element too)
        result.stores.append(StoreInfo(store, kind, named, acc, store.parent is body_block))
    written = {root(s.buffer) for s in stores}
    element_of: dict[Value, tuple] = {}
    for s in stores:  # each written buffer: one element per point, the same in every store
        key = (s.buffer, tuple(s.indices))
        if element_of.setdefault(root(s.buffer), key) != key:
            result.opaque, result.reason = True, "it writes one buffer at two elements"
    for load in loads:
        if root(load.buffer) not in written:
            continue
        own = any(s.buffer is load.buffer and list(s.indices) == list(load.indices)
                  for s in stores)
        if not own:
            result.opaque = True
            result.reason = "it reads memory it writes at other elements"
    return result


# ---------------------------------------------------------------------------------------------
# Carried reductions: a loops.for chain folding values with one combining op


@dataclass
class CarriedReduction(Combining):
    """``%r = loops.for ... iter_args(%acc = %init) { ...; yield combine(%acc, x) }``, possibly
    as a chain of loops each carrying the same value into the next: ``levels`` are the chain's
    loops (outermost first), ``hoisted`` the write-free ops around the inner loops, ``body``
    the write-free ops of the innermost one, which yields ``combine`` of the carried value and
    ``value``."""

    op: ForOp
    levels: list[Level]
    hoisted: list[Operation]
    body: list[Operation]
    combine: Operation
    value: Value

    @property
    def init(self) -> Value:
        return self.op.inits[0]


def carried_reduction(op: Operation) -> CarriedReduction | None:
    """``op`` as a ``CarriedReduction`` when it is one (bounds of inner loops from outside the
    chain, nothing written inside), else None."""
    if not isinstance(op, ForOp) or len(op.inits) != 1:
        return None
    inside = defined_inside(op)
    levels = _levels_of(op)
    hoisted: list[Operation] = []
    loop = op
    while True:
        block = loop.body.block
        carried = loop.carried[0]
        ops = body_ops(block)
        (yielded,) = block.last_op.operands
        inner = ops[-1] if ops else None
        if isinstance(inner, ForOp) and len(inner.inits) == 1 and inner.inits[0] is carried \
                and yielded is inner.results[0] and len(carried.uses) == 1 \
                and not any(v in inside for v in (inner.lower, inner.upper, inner.step)) \
                and all(is_write_free(o) and not o.regions for o in ops[:-1]):
            hoisted.extend(ops[:-1])
            levels.extend(_levels_of(inner))
            loop = inner
            continue
        break
    if not all(is_write_free(o) and not o.regions for o in ops):
        return None
    if not isinstance(yielded, OpResult) or type(yielded.op) not in COMBINES:
        return None
    combine = yielded.op
    if len(carried.uses) != 1 or carried not in combine.operands or len(yielded.uses) != 1:
        return None
    other = combine.operands[1] if combine.operands[0] is carried else combine.operands[0]
    if other is carried:
        return None
    return CarriedReduction(op, levels, hoisted, [o for o in ops if o is not combine], combine,
                            other)


def contiguous_walkers(ops, levels) -> tuple[int, int]:
    """How much the loads among ``ops`` (walked) address their buffer's contiguous dimension
    (the one of stride 1, the last one when the type does not say) with the variable of one of
    ``levels`` (a set of Values), and how much with another loop variable, each load counting
    its buffer's rank (a matrix weighs more than a vector): which loops walk memory
    contiguously."""
    mine = others = 0
    for top in ops:
        for op in top.walk():
            if isinstance(op, LoadOp) and op.indices:
                index = op.indices[contiguous_dimension(op.buffer.type)]
                if index in levels:
                    mine += op.buffer.type.rank
                elif _is_loop_variable(index):
                    others += op.buffer.type.rank
    return mine, others


def contiguous_dimension(t: BufferType) -> int:
    """The dimension of a buffer type along which elements are adjacent: the one whose stride
    is 1, else the last.

    >>> from lowering.ir.types import F32
    >>> contiguous_dimension(BufferType((3, 4), F32, strides=(1, None)))
    0
    """
    strides = t.layout_strides
    for d in range(t.rank - 1, -1, -1):
        if strides[d] == 1 and t.shape[d] != 1:
            return d
    return t.rank - 1


def _is_loop_variable(value: Value) -> bool:
    if not isinstance(value, BlockArgument):
        return False
    parent = value.block.parent_op
    return isinstance(parent, ParallelOp) or (isinstance(parent, ForOp) and value.index == 0)
