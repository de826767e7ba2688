"""What the memory passes (``inplace``, ``plan-memory``) know about buffers in loops IR.

- **Aliases**: a view (``loops.subview``, ``reshape_view``, ``transpose_view``,
  ``broadcast_view``) shares the memory of its source; ``root(v)`` follows views back to the
  buffer that owns the memory (an ``alloc``, an argument, a constant), ``aliases(root)`` gives
  the root and every view of it.
- **Accesses**: ops that read or write elements (``load``, ``store``, ``copy``, ``fill``,
  ``call``, ``dealloc``). ``loops.dim`` and view ops only compute sizes and addresses, so they
  do not keep memory alive. A buffer *escapes* when an op this module does not know takes it
  (a ``func.call``, a loop-carried value, ...): the passes then leave it alone.
- **Effects** of an op (with everything nested in it): the roots it reads and writes.
- **Fallible ops**: those the CPU backend may stop at with an error code (a ``loops.assert``,
  an allocation running out of memory, a copy or view whose sizes are checked at run time, a
  loop with a run-time step, a call of another function).
- **Equal sizes**: ``SizeFacts`` tells when two ``index`` values are equal at run time: the same
  constant, the same dimension of the same buffer, the size an allocation was made with, or a
  pair that a ``loops.assert`` of ``scalar.eq`` checked earlier.

>>> from lowering.ir.parser import parse_module
>>> m = parse_module('''
... func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
...   %c0 = "scalar.constant"() {value = 0 : index} : () -> index
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %n = loops.dim %x, 0 : !loops.buffer<?xf32>
...   %b = loops.alloc(%n) : !loops.buffer<?xf32>
...   %v = loops.transpose_view %b [x, 0] : !loops.buffer<?xf32> -> !loops.buffer<1x?xf32>
...   loops.parallel (%i) = (%c0) to (%n) step (%c1) {
...     %e = loops.load %x[%i] : !loops.buffer<?xf32>
...     loops.store %e, %b[%i] : !loops.buffer<?xf32>
...     loops.yield
...   }
...   func.return %b : !loops.buffer<?xf32>
... }''')
>>> _, _, _, alloc, view, loop, ret = m.functions[0].body.block.ops
>>> b = alloc.result
>>> root(view.result) is b, len(aliases(b)), [op.name for op in content_uses(b)]
(True, 2, ['loops.store', 'func.return'])
>>> escapes(b), is_returned(b), top_ancestor(content_uses(b)[0], ret.parent) is loop
(False, True, True)
>>> fx = effects(loop)
>>> [v.name_hint for v in fx.reads], [v.name_hint for v in fx.writes]
(['x'], ['b'])
>>> may_fail(loop), may_fail(alloc)
(False, True)
>>> reads_then_writes_pointwise(loop, m.functions[0].args[0], b)
True
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.builtin import FuncOp, ReturnOp
from lowering.dialects.gpu import MemcpyOp, ToDeviceOp, ToHostOp
from lowering.dialects.loops import (AllocOp, AssertOp, BroadcastViewOp, BufferType, CallOp,
                                     ConstantOp, CopyOp, DeallocOp, DimOp, FillOp, ForOp,
                                     LoadOp, ParallelOp, ReshapeViewOp, StoreOp, StrideOp,
                                     SubviewOp, TransposeViewOp, YieldOp)
from lowering.dialects.loops.python_calls import PythonCallOp, PythonResultsOp
from lowering.dialects.loops.views import ViewOp
from lowering.ir.core import Block, Operation, OpResult, Value
from lowering.ir.traits import MemoryEffects, get_trait

# ---------------------------------------------------------------------------------------------
# Aliases and accesses


def is_buffer(value: Value) -> bool:
    return isinstance(value.type, BufferType)


def root(value: Value) -> Value:
    """The buffer owning the memory ``value`` addresses (views followed to their source)."""
    while isinstance(value, OpResult) and isinstance(value.op, ViewOp):
        value = value.op.source
    return value


def aliases(buffer: Value) -> list[Value]:
    """``buffer`` and every view of it, directly or through other views."""
    found, stack = [], [buffer]
    while stack:
        value = stack.pop()
        found.append(value)
        for use in value.uses:
            if isinstance(use.op, ViewOp) and use.index == 0:
                stack.append(use.op.result)
    return found


# Ops that use a buffer operand without keeping it: they read or write its elements while they
# run, or only its sizes and address. A transfer reads its operand into a fresh buffer.
_ACCESSES = (LoadOp, StoreOp, CopyOp, FillOp, CallOp, DeallocOp, ToDeviceOp, ToHostOp, MemcpyOp,
             PythonCallOp, PythonResultsOp)
TRANSFERS = (ToDeviceOp, ToHostOp)


def content_uses(buffer: Value) -> list[Operation]:
    """The ops that read or write elements of ``buffer`` or of a view of it (not ``dim``,
    ``stride`` and the views themselves), plus any other op taking one of them (returns,
    unknown ops)."""
    ops = []
    for value in aliases(buffer):
        for use in value.uses:
            op = use.op
            if isinstance(op, (DimOp, StrideOp)) or (isinstance(op, ViewOp) and use.index == 0):
                continue
            ops.append(op)
    return ops


def escapes(buffer: Value) -> bool:
    """Whether ``buffer`` (or a view of it) reaches an op that may keep it beyond its own run:
    anything but element accesses, ``dim``, views and the function's ``func.return``."""
    for op in content_uses(buffer):
        if isinstance(op, _ACCESSES):
            continue
        if isinstance(op, ReturnOp) and isinstance(op.parent_op, FuncOp):
            continue
        return True
    return False


def is_returned(buffer: Value) -> bool:
    """Whether the function returns ``buffer`` or a view of it."""
    return any(isinstance(op, ReturnOp) for op in content_uses(buffer))


def top_ancestor(op: Operation, block: Block) -> Operation | None:
    """``op`` or the op enclosing it that lies directly in ``block`` (None if none does)."""
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


# ---------------------------------------------------------------------------------------------
# Effects on memory

# The buffer arguments each known external function writes (the others it only reads).
_CALL_WRITES = {"cblas_sgemm": (12,), "cblas_dgemm": (12,), "cblas_sgemv": (10,),
                "cblas_dgemv": (10,), "cblas_sdot": (), "cblas_ddot": ()}


class Effects:
    """The roots an op reads and writes (``unknown``: it may touch any memory)."""

    __slots__ = ("reads", "writes", "unknown")

    def __init__(self):
        self.reads: set[Value] = set()
        self.writes: set[Value] = set()
        self.unknown = False

    def conflicts_with(self, other: "Effects") -> bool:
        """Whether the two cannot swap places: one writes what the other reads or writes."""
        if self.unknown or other.unknown:
            return True
        return bool(self.writes & (other.reads | other.writes) or self.reads & other.writes)


def effects(op: Operation) -> Effects:
    """The memory ``op`` and everything nested in it read and write."""
    found = Effects()
    for inner in op.walk():
        declared = get_trait(inner, MemoryEffects)  # loads, stores, copies, fills, deallocs
        if declared is not None:
            found.reads.update(root(v) for v in declared.read_values(inner))
            found.writes.update(root(v) for v in declared.written_values(inner))
        elif isinstance(inner, TRANSFERS) and is_buffer(inner.input):
            found.reads.add(root(inner.input))
            found.writes.add(inner.result)  # fresh memory, written by the transfer
        elif isinstance(inner, CallOp):
            written = _CALL_WRITES.get(inner.callee)
            for index, v in enumerate(inner.args):
                if is_buffer(v):
                    found.reads.add(root(v))
                    if written is None or index in written:
                        found.writes.add(root(v))
        elif isinstance(inner, (DimOp, ViewOp, AllocOp, ConstantOp, AssertOp, ForOp,
                                ParallelOp, YieldOp)) or inner.name.startswith("scalar."):
            continue
        elif any(is_buffer(v) for v in inner.operands):
            found.unknown = True
    return found


# ---------------------------------------------------------------------------------------------
# Ops that may stop the function with an error


def _positive_constant(value: Value) -> bool:
    return isinstance(value, OpResult) and isinstance(value.op, scalar.ConstantOp) \
        and value.op.numpy_value > 0


def _static_same_shape(a: BufferType, b: BufferType) -> bool:
    return None not in a.shape and a.shape == b.shape


_INFALLIBLE = (LoadOp, StoreOp, FillOp, DimOp, DeallocOp, YieldOp, ConstantOp, TransposeViewOp,
               ReturnOp)


def may_fail(op: Operation, calls_may_fail: bool = False) -> bool:
    """Whether the CPU backend may stop at ``op`` (or at an op nested in it) with an error code.

    External calls fail only with ``calls_may_fail`` (a BLAS taking 32-bit integers checks that
    the sizes fit).
    """
    for inner in op.walk():
        if isinstance(inner, _INFALLIBLE) or inner.name.startswith("scalar."):
            continue
        if isinstance(inner, CallOp):
            if calls_may_fail:
                return True
            continue
        if isinstance(inner, CopyOp):
            if not _static_same_shape(inner.source.type, inner.target.type):
                return True
            continue
        if isinstance(inner, ForOp):
            if not _positive_constant(inner.step):
                return True
            continue
        if isinstance(inner, ParallelOp):
            if not all(_positive_constant(s) for s in inner.steps):
                return True
            continue
        if isinstance(inner, SubviewOp):
            if inner.dynamic or None in inner.source.type.shape:
                return True
            continue
        if isinstance(inner, (ReshapeViewOp, BroadcastViewOp)):
            if inner.sizes:
                return True
            continue
        return True  # asserts, allocations, calls of functions, anything unknown
    return False


# ---------------------------------------------------------------------------------------------
# Equal sizes


class SizeFacts:
    """Which ``index`` values of a function are equal at run time, after a given top-level op.

    A size is known by its *key*: an int for a constant, ``(buffer, axis)`` for a dimension of
    a buffer that is not a view (an allocation's dimension is the size it was made with), or
    the value itself. Checks ``loops.assert %c`` at the function's top level whose condition is
    ``scalar.eq`` (or a ``scalar.and`` of them) make their two sides equal for what follows.

    >>> from lowering.ir.parser import parse_module
    >>> m = parse_module('''
    ... func.func @f(%x: !loops.buffer<?xf32>, %y: !loops.buffer<?xf32>) {
    ...   %n = loops.dim %x, 0 : !loops.buffer<?xf32>
    ...   %m = loops.dim %y, 0 : !loops.buffer<?xf32>
    ...   %ok = "scalar.eq"(%n, %m) : (index, index) -> i1
    ...   loops.assert %ok, "sizes differ" {error_code = 1 : i64}
    ...   %b = loops.alloc(%m) : !loops.buffer<?xf32>
    ...   func.return
    ... }''')
    >>> facts = SizeFacts(m.functions[0])
    >>> ops = list(m.functions[0].body.block.ops)
    >>> facts.equal(ops[0].result, ops[1].result, before=ops[4])
    True
    >>> facts.equal(ops[0].result, ops[1].result, before=ops[2])
    False
    """

    def __init__(self, func: FuncOp):
        self.block = func.body.block
        self._facts: list[tuple[Operation, object, object]] = []
        for op in self.block.ops:
            if isinstance(op, AssertOp):
                for a, b in _equalities(op.condition):
                    self._facts.append((op, self.key(a), self.key(b)))

    def key(self, value: Value):
        """The canonical form of an ``index`` value (see the class doc)."""
        if isinstance(value, int):
            return value
        if isinstance(value, OpResult):
            op = value.op
            if isinstance(op, scalar.ConstantOp):
                return int(op.numpy_value)
            if isinstance(op, DimOp):
                return self.dim_key(op.buffer, op.axis)
        return value

    def dim_key(self, buffer: Value, axis: int):
        """The key of dimension ``axis`` of ``buffer``."""
        static = buffer.type.shape[axis]
        if static is not None:
            return static
        if isinstance(buffer, OpResult) and isinstance(buffer.op, AllocOp):
            dynamic = [d for d, s in enumerate(buffer.type.shape[:axis]) if s is None]
            return self.key(buffer.op.sizes[len(dynamic)])
        if isinstance(buffer, OpResult) and isinstance(buffer.op, (ToDeviceOp, ToHostOp)):
            return self.dim_key(buffer.op.input, axis)  # a copy has its source's sizes
        return (buffer, axis)  # an argument's, a call's or a view's own size

    def equal(self, a, b, before: Operation | None = None) -> bool:
        """Whether ``a`` and ``b`` (values, ints or keys) are equal whenever the function reaches
        ``before`` (an op of the top-level block; None: its end)."""
        ka = a if isinstance(a, tuple) else self.key(a)
        kb = b if isinstance(b, tuple) else self.key(b)
        if _same_key(ka, kb):
            return True
        parent: dict = {}

        def find(k):
            while k in parent:
                k = parent[k]
            return k

        for x, y in self._facts_before(before):
            rx, ry = find(x), find(y)
            if not _same_key(rx, ry):
                parent[rx] = ry
        return _same_key(find(ka), find(kb))

    def _facts_before(self, before: Operation | None) -> list[tuple]:
        if before is None:
            return [(x, y) for _, x, y in self._facts]
        seen = set()
        for op in self.block.ops:
            if op is before:
                break
            seen.add(id(op))
        return [(x, y) for op, x, y in self._facts if id(op) in seen]

    def same_sizes(self, a: Value, b: Value, before: Operation | None = None) -> bool:
        """Whether buffers ``a`` and ``b`` have the same rank and sizes when ``before`` runs."""
        ta, tb = a.type, b.type
        if ta.rank != tb.rank:
            return False
        return all(self.equal(self.dim_key(a, d), self.dim_key(b, d), before)
                   for d in range(ta.rank))


def _same_key(a, b) -> bool:
    # Keys are ints, (buffer, axis) pairs and Values; Values compare by identity.
    return a is b or (type(a) is type(b) and not isinstance(a, Value) and a == b)


def _equalities(condition: Value) -> list[tuple[Value, Value]]:
    """The pairs ``condition`` (an i1) being true makes equal: ``scalar.eq`` of indices, and
    the parts of a ``scalar.and``."""
    if not isinstance(condition, OpResult):
        return []
    op = condition.op
    if isinstance(op, scalar.EqOp) and op.operands[0].type.name == "index":
        return [(op.operands[0], op.operands[1])]
    if isinstance(op, scalar.AndOp):
        return [pair for v in op.operands for pair in _equalities(v)]
    return []


# ---------------------------------------------------------------------------------------------
# Element-for-element access


def _enclosing_loops(block: Block, outermost: Operation) -> list[Operation] | None:
    """The loops around ``block`` up to and including ``outermost``, innermost first; None when
    one of them has a step that is not a positive constant, or another op is in between."""
    loops = []
    op = block.parent_op
    while op is not None:
        if isinstance(op, ForOp) and _positive_constant(op.step):
            loops.append(op)
        elif isinstance(op, ParallelOp) and all(_positive_constant(s) for s in op.steps):
            loops.append(op)
        else:
            return None
        if op is outermost:
            return loops
        op = op.parent_op
    return None


def _constant_index(value: Value):
    return value.op.numpy_value if isinstance(value, OpResult) and \
        isinstance(value.op, scalar.ConstantOp) else None


def _single_trip(loop: Operation) -> bool:
    """Whether ``loop`` runs exactly once (a kernel of one thread, ``loops.parallel`` from 0 to
    1): its induction variables are always 0, so they need not address what it touches."""
    if isinstance(loop, ForOp):
        bounds = [(loop.lower, loop.upper)]
    else:
        bounds = list(zip(loop.lowers, loop.uppers))
    return all(_constant_index(lo) == 0 and _constant_index(up) == 1 for lo, up in bounds)


def reads_then_writes_pointwise(op: Operation, source: Value, target: Value) -> bool:
    """Whether ``op`` may write ``target``'s elements into ``source``'s memory instead: inside
    it, ``source`` is only loaded and ``target`` only loaded and stored (no views, copies or
    calls), all at one list of indices made of the induction variables of every loop around
    them (so each element is touched in one iteration only), in one block, with every load of
    ``source`` before every store into ``target``.

    A ``loops.copy`` from ``source`` itself into ``target`` qualifies too, and so does a
    ``loops.store`` into a rank-0 ``target`` (which reads nothing).
    """
    if isinstance(op, CopyOp):
        return op.source is source and op.target is target
    accesses: list[Operation] = []
    for buffer, allowed in ((source, (LoadOp,)), (target, (LoadOp, StoreOp))):
        for user in content_uses(buffer):
            if top_ancestor(user, op.parent) is not op:
                continue
            if not isinstance(user, allowed) or user.buffer is not buffer:
                return False
            accesses.append(user)
    if not accesses:
        return True
    block = accesses[0].parent
    if any(a.parent is not block for a in accesses):
        return False
    indices = tuple(accesses[0].indices)
    if any(tuple(a.indices) != indices for a in accesses):
        return False
    if block is not op.parent:  # inside loops: the indices are exactly their variables
        loops = _enclosing_loops(block, op)
        if loops is None:
            return False
        ivs = [iv for loop in loops if not _single_trip(loop) for iv in
               ([loop.induction_var] if isinstance(loop, ForOp) else loop.induction_vars)]
        if len(ivs) != len(indices) or {id(v) for v in ivs} != {id(v) for v in indices}:
            return False
    elif indices:
        return False
    loads = [a for a in accesses if isinstance(a, LoadOp) and a.buffer is source]
    stores = [a for a in accesses if isinstance(a, StoreOp)]
    return all(load.is_before_in_block(store) for load in loads for store in stores)
