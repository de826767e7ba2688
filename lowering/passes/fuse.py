"""``fuse``: maximal groups of elementwise ops, and the reductions consuming them, as one
``tensor.fused`` op each (one loop nest, one kernel).

Members of a group are elementwise ops (any ``tensor`` elementwise op, ``tensor.fill`` of a value
of the model's rank, fused ops without reductions) and reductions (``sum prod max min mean``),
all over one *iteration space*: the same rank and the same broadcast dims (a dim typed ``1``). A
reduction ends a group: its result is no longer in the space. Groups grow in two ways, each merge
allowed only while the merged group

- reads at most ``max-inputs`` inputs (constants of one element go into the body instead), and
- does not depend on itself: no value of the group may reach the group again through an op
  outside it (the fused op would need its own result);

first a producer merges with its consumers, from the function's results back to its inputs; then
groups that read one input of the full space (sibling reductions of a matrix, say) merge, so that
the input is read once. A value computed in a group and used outside it becomes one more result
of the fused op, so nothing is computed twice. Groups of one op stay as they are.

``fuse{explain=true}`` prints the groups and, for each edge between an op in a group and an op
outside it, why fusion stops there (to stderr; ``fuse_module`` returns the same report).
The fused op's location is that of all the ops it replaces.

>>> from lowering.ir.parser import parse_module
>>> module = parse_module('''
... func.func @f(%x: tensor<?xf32>) -> tensor<f32> {
...   %e = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
...   %s = "tensor.sum"(%e) {axes = [0], keepdims = false} : (tensor<?xf32>) -> tensor<f32>
...   func.return %s : tensor<f32>
... }''')
>>> report = fuse_module(module)
>>> [op.name for op in module.functions[0].body.block.ops], report.fused_ops
(['tensor.fused', 'func.return'], 1)
"""
from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass, field


from lowering.dialects import scalar
from lowering.dialects.scalar.philox import Emitter
from lowering.dialects.scalar.position import LinearIndexOp
from lowering.dialects.tensor import (ConstantOp, ElementwiseOp, FillOp, FusedOp, RandomOp,
                                      ReductionOp, Reduction)
from lowering.dialects.tensor.fused import REDUCTION_KINDS
from lowering.ir.core import TERMINATOR, Block, OpResult, Operation, Value, VerifyError
from lowering.ir.location import fuse_locations
from lowering.ir.passes import ModulePass, option, register_pass
from lowering.ir.rewriter import Rewriter
from lowering.ir.types import TensorType

# ---------------------------------------------------------------------------------------------
# What may be fused


def _describe(op: Operation) -> str:
    return f"{op.name} at {op.location.short()}"


def member_kind(op: Operation) -> str | None:
    """``"elementwise"``, ``"reduction"``, or None for an op no group may hold."""
    if isinstance(op, ElementwiseOp):
        return "elementwise"
    if isinstance(op, FillOp) and op.value.type.rank == op.model.type.rank:
        return "elementwise"
    if isinstance(op, FusedOp) and op.attributes.get("reductions") is None:
        return "elementwise"
    if isinstance(op, ReductionOp) and op.name.split(".", 1)[1] in REDUCTION_KINDS:
        return "reduction"
    if isinstance(op, RandomOp) and op.shape_source() is not None:
        return "elementwise"
    return None


def fused_operands(op: Operation) -> list[Value]:
    """The values a member reads element by element: its operands, but for a random op its
    key, its counter and the array whose shape it has (its dims are that shape, not data)."""
    if isinstance(op, RandomOp):
        return [op.key, op.counter, op.shape_source()]
    return list(op.operands)


def _not_fusible_reason(op: Operation) -> str:
    if isinstance(op, FillOp):
        return f"{op.name} broadcasts a value of lower rank (only a same-rank fill is fused)"
    if isinstance(op, ReductionOp):
        return f"{op.name} is not a fold of a scalar function"
    if isinstance(op, FusedOp):
        return f"{op.name} already ends with a reduction"
    if isinstance(op, RandomOp):
        return (f"{op.name}'s size is not the shape of an array (a fused loop takes its shape "
                f"from its inputs)")
    return f"{op.name} is not elementwise"


def space_of(op: Operation) -> TensorType:
    """The iteration space an op of a group works over (a reduction: its input's)."""
    if isinstance(op, ReductionOp):
        return op.input.type
    if isinstance(op, FusedOp):
        return op.space
    return op.results[0].type


def same_space(a: TensorType, b: TensorType) -> bool:
    """The same rank and broadcast dims, and no two different static sizes.

    >>> from lowering.ir.types import F32, I1
    >>> same_space(TensorType((None, 3), F32), TensorType((4, 3), I1))
    True
    >>> same_space(TensorType((1, 3), F32), TensorType((None, 3), F32))
    False
    """
    return a.rank == b.rank and all(
        (x == 1) == (y == 1) and (x is None or y is None or x == y)
        for x, y in zip(a.shape, b.shape))


def inlined_constant(value: Value) -> bool:
    """A one-element ``tensor.constant``: it goes into the fused body as a scalar constant."""
    return (isinstance(value, OpResult) and isinstance(value.op, ConstantOp)
            and all(d == 1 for d in value.type.shape))


# ---------------------------------------------------------------------------------------------
# The report


@dataclass
class FuseReport:
    """What ``fuse`` did: one line per fused op and per boundary, with its reason."""

    groups: list[str] = field(default_factory=list)
    boundaries: list[str] = field(default_factory=list)

    @property
    def fused_ops(self) -> int:
        return len(self.groups)

    def text(self) -> str:
        lines = [f"fuse: {g}" for g in self.groups]
        lines += [f"fuse: boundary {b}" for b in self.boundaries]
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Grouping


class _Grouping:
    """Groups of one block's ops, merged by union; ``group[id(op)]`` is an op's group id.

    Each group keeps what merging needs without walking its members: its inputs, the ops
    outside it that read its values, and its reductions."""

    def __init__(self, block: Block, max_inputs: int):
        self.block = block
        self.max_inputs = max_inputs
        self.ops = list(block.ops)
        self.position = {id(op): i for i, op in enumerate(self.ops)}
        self.group: dict[int, int] = {}
        self.members: dict[int, list[Operation]] = {}
        self.space: dict[int, TensorType] = {}
        self.inputs: dict[int, dict[Value, None]] = {}
        self.readers: dict[int, dict[Operation, None]] = {}  # ops outside that read the group
        self.reductions: dict[int, list[Operation]] = {}
        for op in self.ops:
            kind = member_kind(op)
            if kind is not None:
                gid = id(op)
                self.group[gid] = gid
                self.members[gid] = [op]
                self.space[gid] = space_of(op)
                self.inputs[gid] = dict.fromkeys(v for v in fused_operands(op)
                                                 if not inlined_constant(v))
                self.readers[gid] = dict.fromkeys(u for u in self._users(op) if u is not op)
                self.reductions[gid] = [op] if kind == "reduction" else []
        self.boundaries: dict[tuple[int, int], str] = {}

    def group_of(self, op: Operation) -> int | None:
        return self.group.get(id(op))

    def _produced_in(self, value: Value, groups) -> bool:
        return isinstance(value, OpResult) and self.group.get(id(value.op)) in groups

    def merged_inputs(self, a: int, b: int) -> dict[Value, None]:
        """The inputs of the union of groups ``a`` and ``b``."""
        both = (a, b)
        return {v: None for gid in both for v in self.inputs[gid]
                if not self._produced_in(v, both)}

    def merge(self, a: int, b: int) -> None:
        keep, gone = (a, b) if len(self.members[a]) >= len(self.members[b]) else (b, a)
        both = (keep, gone)
        self.inputs[keep] = self.merged_inputs(keep, gone)
        self.readers[keep] = {u: None for gid in both for u in self.readers[gid]
                              if self.group.get(id(u)) not in both}
        for op in self.members[gone]:
            self.group[id(op)] = keep
        self.members[keep] += self.members.pop(gone)
        self.reductions[keep] += self.reductions.pop(gone)
        del self.inputs[gone], self.readers[gone]
        other = self.space.pop(gone)  # a static size known on either side holds for both
        self.space[keep] = self.space[keep].with_shape(
            x if x is not None else y for x, y in zip(self.space[keep].shape, other.shape))

    def why_not_merge(self, a: int, b: int) -> str | None:
        """Why groups ``a`` and ``b`` cannot merge, or None when they can."""
        if not same_space(self.space[a], self.space[b]):
            return (f"different shapes: {self.space[a]} and {self.space[b]} (fusing would compute "
                    f"the values of the smaller shape once per element of the larger)")
        for op in self.reductions[a] + self.reductions[b]:
            if any(self.group.get(id(u)) in (a, b) for u in self._users(op)):
                return (f"{_describe(op)} would feed the group it ends (its result is not in "
                        f"the space it reduces)")
        count = len(self.merged_inputs(a, b))
        if count > self.max_inputs:
            return (f"operand cap: the merged group would read {count} inputs, more than "
                    f"max-inputs={self.max_inputs}")
        through = self.path_back(a, b)
        if through is not None:
            return (f"fusing would create a cycle: a value of the group reaches it again "
                    f"through {_describe(through)}")
        return None

    def path_back(self, a: int, b: int) -> Operation | None:
        """An op outside groups ``a`` and ``b`` through which a value of one reaches the other
        (so that their union would depend on itself): the first op on the path that no group
        may hold, else the first op on it; None when there is no such path."""
        union = (a, b)
        stack = [(u, u if member_kind(u) is None else None, u)
                 for gid in union for u in self.readers[gid]
                 if self.group.get(id(u)) not in union]
        seen: set = set()
        while stack:
            op, blocker, first = stack.pop()
            gid = self.group.get(id(op))
            if gid in union:
                return blocker or first
            node = gid if gid is not None else ("op", id(op))
            if node in seen:
                continue
            seen.add(node)
            for user in (self.readers[gid] if gid is not None else self._users(op)):
                found = blocker or (user if member_kind(user) is None else None)
                stack.append((user, found, first))
        return None

    def _users(self, op: Operation) -> list[Operation]:
        """The ops of the block that read ``op``'s results (an op holding a use in one of its
        regions counts as the reader)."""
        users = []
        for res in op.results:
            for use in res.uses:
                user = use.op
                while user.parent is not self.block and user.parent_op is not None:
                    user = user.parent_op
                if user.parent is self.block:
                    users.append(user)
        return users

    # -- the two phases -----------------------------------------------------------------------

    def fuse_producers(self) -> None:
        """Merge each op's group with its producers' groups, from the last op back."""
        for consumer in reversed(self.ops):
            for value in consumer.operands:
                if not isinstance(value, OpResult) or value.op.parent is not self.block:
                    continue
                self.consider(value.op, consumer)

    def consider(self, producer: Operation, consumer: Operation) -> None:
        if isinstance(producer, ConstantOp):
            return
        gp, gc = self.group_of(producer), self.group_of(consumer)
        if (gp is None and gc is None) or TERMINATOR in consumer.traits:
            return  # a function result is stored whatever fusion does
        key = (id(producer), id(consumer))
        if gp is None:
            self.boundaries[key] = _edge(producer, consumer, _not_fusible_reason(producer))
            return
        if gc is None:
            self.boundaries[key] = _edge(producer, consumer, _not_fusible_reason(consumer))
            return
        if gp == gc:
            self.boundaries.pop(key, None)
            return
        if member_kind(producer) == "reduction":
            self.boundaries[key] = _edge(producer, consumer, f"{producer.name} is a reduction: "
                                         f"its result is not in the space it reduces")
            return
        reason = self.why_not_merge(gp, gc)
        if reason is None:
            self.merge(gp, gc)
            self.boundaries.pop(key, None)
        else:
            self.boundaries[key] = _edge(producer, consumer, reason)

    def fuse_siblings(self) -> None:
        """Merge groups that read the same input of the full space, so it is read once."""
        by_input: dict[Value, list[Operation]] = {}
        for op in self.ops:
            if self.group_of(op) is None:
                continue
            for v in fused_operands(op):
                if isinstance(v, OpResult) and self.group_of(v.op) == self.group_of(op):
                    continue
                if not inlined_constant(v) and all(d != 1 or s == 1 for d, s in zip(
                        v.type.shape, space_of(op).shape)):
                    by_input.setdefault(v, []).append(op)
        for ops in by_input.values():
            for other in ops[1:]:
                a, b = self.group_of(ops[0]), self.group_of(other)
                if a != b and self.why_not_merge(a, b) is None:
                    self.merge(a, b)

    def recheck_boundaries(self) -> dict[tuple[int, int], str]:
        """Boundaries whose two ops did not end up in one group anyway."""
        kept = {}
        by_id = {id(op): op for op in self.ops}
        for (p, c), text in self.boundaries.items():
            gp, gc = self.group.get(p), self.group.get(c)
            if gp is None or gp != gc or p not in by_id:
                kept[(p, c)] = text
        return kept


def _edge(producer: Operation, consumer: Operation, reason: str) -> str:
    return f"{_describe(producer)} -> {_describe(consumer)}: {reason}"


# ---------------------------------------------------------------------------------------------
# Building the fused ops


def build_fused(members: list[Operation], rewriter: Rewriter) -> FusedOp:
    """Replace the ops ``members`` (in block order, one group) by one ``tensor.fused`` op."""
    inside = {id(op) for op in members}
    inputs: list[Value] = []
    for op in members:
        for v in fused_operands(op):
            if not (isinstance(v, OpResult) and id(v.op) in inside) and not inlined_constant(v) \
                    and v not in inputs:
                inputs.append(v)
    if not inputs:  # every input is a constant: keep one as an input to give the space
        inputs.append(members[0].operands[0])
    body = Block([v.type.element for v in inputs])
    scalars: dict[Value, Value] = dict(zip(inputs, body.args))

    def scalar_of(v: Value) -> Value:
        if v not in scalars:  # a one-element constant
            array = v.op.attributes["value"].array
            const = scalar.ConstantOp.build(array.reshape(-1)[0], v.type.element,
                                            location=v.op.location)
            body.append(const)
            scalars[v] = const.result
        return scalars[v]

    outputs: list[tuple[Value, Value, Reduction | None]] = []  # (scalar, replaced, reduction)
    position: LinearIndexOp | None = None  # the element's position, for random ops
    for op in members:
        if isinstance(op, ReductionOp):
            reduction = Reduction(op.name.split(".", 1)[1], tuple(op.axes), bool(op.keepdims))
            outputs.append((scalar_of(op.input), op.result, reduction))
            continue
        if isinstance(op, FillOp):
            scalars[op.result] = scalar_of(op.value)
        elif isinstance(op, RandomOp):
            if position is None:
                position = LinearIndexOp.build(location=op.location)
                body.append(position)
            scalars[op.result] = op.emit_element(Emitter(body.append), scalar_of(op.key),
                                                 scalar_of(op.counter), position.result)
        elif isinstance(op, FusedOp):
            mapping = dict(zip(op.body.block.args, [scalar_of(v) for v in op.operands]))
            for inner in op.body.block.ops:
                if inner is op.body.block.last_op:
                    for res, v in zip(op.results, inner.operands):
                        scalars[res] = mapping.get(v, v)
                    break
                body.append(inner.clone(mapping))
        else:
            s = op.build_scalar(*[scalar_of(v) for v in op.operands])
            body.append(s)
            scalars[op.result] = s.result
        for res in op.results:
            if any(id(u.op) not in inside for u in res.uses):
                outputs.append((scalars[res], res, None))
    body.append(scalar.YieldOp.create([s for s, _, _ in outputs]))
    fused = FusedOp.build(inputs, body, [r for _, _, r in outputs],
                          result_types=[v.type for _, v, _ in outputs],
                          location=fuse_locations(op.location for op in members))
    rewriter.insert_op_before(fused, members[-1])
    for (_, replaced, _), new in zip(outputs, fused.results):
        rewriter.replace_all_uses_with(replaced, new)
    for op in reversed(members):
        rewriter.erase_op(op)
    for v in scalars:  # constants now in the body that nothing else reads
        if inlined_constant(v) and not v.uses and v.op.parent is not None:
            rewriter.erase_op(v.op)
    return fused


def sort_block(block: Block) -> None:
    """Reorder ``block`` so that every op comes after the ops it reads, keeping the order where
    it already does (the terminator stays last)."""
    ops = list(block.ops)
    index = {id(op): i for i, op in enumerate(ops)}
    waiting = {id(op): 0 for op in ops}
    users: dict[int, list[Operation]] = {id(op): [] for op in ops}
    for op in ops:
        for nested in op.walk():
            for v in nested.operands:
                if isinstance(v, OpResult) and id(v.op) in index and v.op is not op:
                    waiting[id(op)] += 1
                    users[id(v.op)].append(op)
    ready = [(index[id(op)], id(op), op) for op in ops if waiting[id(op)] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, _, op = heapq.heappop(ready)
        order.append(op)
        for user in users[id(op)]:
            waiting[id(user)] -= 1
            if waiting[id(user)] == 0:
                heapq.heappush(ready, (index[id(user)], id(user), user))
    if len(order) != len(ops):
        raise VerifyError("fuse: the fused groups depend on each other in a cycle")
    terminator = block.terminator
    if terminator is not None and order[-1] is not terminator:
        order.remove(terminator)
        order.append(terminator)
    if order == ops:
        return
    for op in ops:
        op.detach()
    for op in order:
        block.append(op)


# ---------------------------------------------------------------------------------------------
# The pass


def fuse_block(block: Block, max_inputs: int = 32, report: FuseReport | None = None,
               rewriter: Rewriter | None = None) -> FuseReport:
    """Fuse the ops of one block; returns (and extends) the report."""
    report = report if report is not None else FuseReport()
    rewriter = rewriter or Rewriter()
    grouping = _Grouping(block, max_inputs)
    grouping.fuse_producers()
    grouping.fuse_siblings()
    boundaries = grouping.recheck_boundaries()
    groups = [sorted(members, key=lambda op: grouping.position[id(op)])
              for members in grouping.members.values() if len(members) > 1]
    groups.sort(key=lambda members: grouping.position[id(members[0])])
    report.boundaries.extend(dict.fromkeys(boundaries.values()))
    for members in groups:
        names = ", ".join(op.name.split(".", 1)[1] for op in members)
        fused = build_fused(members, rewriter)
        parts = fused.location.locations
        where = parts[0].short() + (f" and {len(parts) - 1} more" if len(parts) > 1 else "")
        report.groups.append(f"fused {len(members)} ops ({names}) at {where}: "
                             f"{len(fused.operands)} inputs, {len(fused.results)} results")
    if groups:
        sort_block(block)
    return report


def fuse_module(module: Operation, max_inputs: int = 32) -> FuseReport:
    """Fuse every function of ``module`` (and every loop body, ``tensor.scan``'s); the report
    says what was fused and where it stopped."""
    report = FuseReport()
    rewriter = Rewriter()
    for op in list(module.walk()):
        if op.name in ("func.func", "tensor.if", "tensor.scan"):  # bodies are fused like a function's
            for region in op.regions:
                for block in region.blocks:
                    fuse_block(block, max_inputs, report, rewriter)
    return report


@register_pass
class Fuse(ModulePass):
    """Fuse elementwise ops (and the reductions consuming them) into tensor.fused ops."""

    name = "fuse"
    max_inputs: int = option(32, "most inputs (operands) of one fused op", minimum=1)
    explain: bool = option(False, "print the fused groups and why each boundary exists, to "
                                  "stderr")

    def apply(self, module: Operation) -> None:
        if self.max_inputs < 1:
            from lowering.ir.passes import PassFailure
            raise PassFailure(f"fuse: max-inputs must be at least 1, got {self.max_inputs}")
        report = fuse_module(module, self.max_inputs)
        if self.explain:
            print(report.text() or "fuse: nothing to fuse", file=sys.stderr)
