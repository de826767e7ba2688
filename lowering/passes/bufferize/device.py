"""Bufferize on a GPU: tensor transfers, and keeping the host's hands off device memory.

An op that ``place-on-device`` marked ``device = "<context>"`` is lowered by its usual lowering,
with every buffer it allocates in device memory (``!loops.buffer<..., space="device">``): the
same loop nests, which ``map-to-gpu`` turns into kernels. Views of device buffers are device
buffers.

Transfers: ``gpu.to_device`` / ``gpu.to_host`` of a tensor become the buffer-level transfers
(a fresh contiguous buffer in the other memory). A value known as one scalar (a rank-0 value, a
splat constant) needs no memory on either side: the scalar is handed to kernels as an argument.

**The host never reads or writes device memory.** Some lowerings compute a scalar at the
function's top level, between loop nests: the element of a rank-0 operand, the final sum of a
reduction to one element, a bounds check of index arrays. For an op on a device these top-level
computations (loads and stores of device buffers, and the scalar ops and carried loops that
depend on them) are moved into a kernel of one thread, a ``loops.parallel`` of one iteration,
and each value needed outside it is stored into a rank-0 device buffer there:

- a rank-0 result of the op is that buffer (a splat result is broadcast from it by a loop nest);
- a loop nest reading the value loads it in its body;
- a host op needing it (a ``loops.assert``, a loop bound, a size) reads it from a
  ``gpu.to_host`` copy of that buffer.

``confine_to_device`` does this after each device op is lowered; ``host_accesses_to_device``
lists what would break the rule (``bufferize`` checks that nothing does).

>>> from lowering.ir.parser import parse_module
>>> from lowering.passes.bufferize.bufferize import Bufferize
>>> m = parse_module('''
... func.func @f(%s: tensor<f32>) -> tensor<f32> attributes {lowering.arg_devices = ["cuda"]} {
...   %e = "tensor.exp"(%s) {device = "cuda"} : (tensor<f32>) -> tensor<f32>
...   %h = "gpu.to_host"(%e) {context = "cuda"} : (tensor<f32>) -> tensor<f32>
...   func.return %h : tensor<f32>
... }''')
>>> Bufferize().apply(m)
>>> ops = list(m.functions[0].body.block.ops)
>>> [op.name for op in ops if not op.name.startswith("scalar")]
['loops.alloc', 'loops.parallel', 'gpu.to_host', 'func.return']
>>> kernel = next(op for op in ops if op.name == "loops.parallel")  # from 0 to 1: one thread
>>> [op.name for op in kernel.body.block.ops]
['loops.load', 'scalar.exp', 'loops.store', 'loops.yield']
"""
from __future__ import annotations

from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.dialects.loops import (AllocOp, BufferType, CallOp, CopyOp, FillOp, ForOp, IfOp,
                                     LoadOp, ParallelOp, StoreOp, YieldOp)
from lowering.dialects.loops.control import WhileOp
from lowering.ir.core import Block, Operation, Value
from lowering.ir.passes import PassFailure

from ..gpu.host_loops import is_host_loop
from .core import BUFFERIZE, FunctionLowering, Lowered, result_buffer_type

DEVICE_SPACE = "device"

# Ops that touch the elements of the buffers they are given.
_ELEMENT_ACCESSES = (LoadOp, StoreOp, CopyOp, FillOp, CallOp)


# ---------------------------------------------------------------------------------------------
# Transfers


@BUFFERIZE.register(ToDeviceOp)
def _lower_to_device(ctx: FunctionLowering, op):
    return [move(ctx, op.input, DEVICE_SPACE, op.context)]


@BUFFERIZE.register(ToHostOp)
def _lower_to_host(ctx: FunctionLowering, op):
    return [move(ctx, op.input, "host", op.context)]


def move(ctx: FunctionLowering, value: Value, space: str, context: str) -> Lowered:
    """The lowered form of tensor ``value`` moved to memory ``space`` (``"host"`` or
    ``"device"``) of GPU context ``context``: a buffer transfer, or the scalar itself when
    ``value`` is known as one (needing no memory on either side). Used for the tensor transfers,
    and where a result is returned elsewhere than it was computed."""
    lowered = ctx.lowered(value)
    if lowered.space == space:
        return lowered
    splat = ctx.splat(value)
    if splat is not None:
        return Lowered(lowered.type, scalar=splat, sizes=list(lowered.sizes), space=space)
    if lowered.type.rank == 0 and space == DEVICE_SPACE:  # the host reads its own memory
        return Lowered(lowered.type, scalar=ctx.element(value), space=space)
    sizes = ctx.sizes(value)
    transfer = ToDeviceOp if space == DEVICE_SPACE else ToHostOp
    moved = ctx.b.insert(transfer.build(ctx.buffer(value), context)).result
    # The copy is fresh; the function may return it as is when its type is the tensor's (a
    # view may know more static sizes than the tensor type says).
    owned = moved.type == result_buffer_type(lowered.type, space)
    return Lowered(lowered.type, buffer=moved, sizes=sizes, owned=owned, space=space)


# ---------------------------------------------------------------------------------------------
# Keeping the host out of device memory


def is_device_buffer(value: Value) -> bool:
    """Whether ``value`` is a buffer in device memory."""
    return isinstance(value.type, BufferType) and value.type.memory_space == DEVICE_SPACE


def _accesses_device(op: Operation) -> bool:
    """Whether ``op`` or an op nested in it reads or writes elements of device memory."""
    return any(isinstance(inner, _ELEMENT_ACCESSES) and any(map(is_device_buffer, inner.operands))
               for inner in op.walk())


def _movable(op: Operation) -> bool:
    """Whether ``op`` may run inside a kernel: loads, stores, scalar ops and loops, but not a
    loop the host runs around whole constructs (a scan's steps, each launching its kernels)."""
    if isinstance(op, (ForOp, WhileOp)) and is_host_loop(op):
        return False
    return isinstance(op, (LoadOp, StoreOp, ForOp, ParallelOp)) or op.name.startswith("scalar.")


def _is_kernel_loop(op: Operation) -> bool:
    """Whether ``op`` is a loop nest run as a kernel: a ``loops.parallel``, or a ``loops.for``
    around no parallel loop and no call (one that is, is the host's branch or loop), without
    results."""
    if op.results or not isinstance(op, (ForOp, ParallelOp)):
        return False
    return isinstance(op, ParallelOp) or not any(
        isinstance(inner, (ParallelOp, CallOp)) for inner in op.walk() if inner is not op)


def _used_values(op: Operation) -> set[Value]:
    return {v for inner in op.walk() for v in inner.operands}


def host_accesses_to_device(block: Block) -> list[Operation]:
    """The ops at the top level of ``block`` (host code) that read or write device memory
    themselves: a load or store of a device buffer, or an op giving the host a value computed
    from device memory (a loop carrying a sum of device elements). Loop nests without results,
    copies, fills and calls on device buffers are the device's work (kernels) and not listed.

    >>> from lowering.ir.types import F32, INDEX
    >>> block = Block([BufferType((), F32, memory_space="device")])
    >>> load = block.append(LoadOp.build(block.args[0], []))
    >>> host_accesses_to_device(block) == [load]
    True
    """
    found = []
    for op in block.ops:
        if isinstance(op, (LoadOp, StoreOp)):
            if is_device_buffer(op.buffer):
                found.append(op)
        elif op.results and _movable(op) and _accesses_device(op):
            found.append(op)
        elif isinstance(op, ForOp) and not op.results and not _is_kernel_loop(op):
            found += host_accesses_to_device(op.body.block)  # a branch or loop of the host
        elif isinstance(op, IfOp):
            for region in op.regions:
                found += host_accesses_to_device(region.block)
    return found


class _Confinement:
    """The moving of one device op's top-level scalar work into one-thread kernels (see the
    module docstring). ``tainted``: values computed from device memory (or from such values);
    ``spills``: the rank-0 device buffer holding each one needed outside its kernel."""

    def __init__(self, ctx: FunctionLowering, results: list[Lowered], context: str):
        self.ctx = ctx
        self.block = ctx.block
        self.results = results
        self.context = context
        self.tainted: set[Value] = set()
        self.pending: list[Operation] = []
        self.spills: dict[Value, Value] = {}
        self.host_copies: dict[Value, Value] = {}

    def run(self, new_ops: list[Operation]) -> None:
        for op in new_ops:
            if self._is_tainted(op):
                self._reload_spilled(op)
                self.pending.append(op)
                self.tainted.update(op.results)
                continue
            needed = _used_values(op) & self.tainted
            if not needed:
                continue
            pending_results = {r for p in self.pending for r in p.results}
            if needed & pending_results:
                self._flush(before=op)
            self._give_spilled(op, needed)
        self._flush(before=None)

    def _is_tainted(self, op: Operation) -> bool:
        if not _movable(op):
            return False
        if isinstance(op, (LoadOp, StoreOp)) and is_device_buffer(op.buffer):
            return True
        return bool(op.results) and (_accesses_device(op) or bool(_used_values(op) & self.tainted))

    # -- kernels of one thread ------------------------------------------------------------

    def _referenced_by_results(self) -> set[Value]:
        refs = set()
        for lw in self.results:
            if lw.scalar is not None:
                refs.add(lw.scalar)
            refs.update(s for s in lw.sizes if isinstance(s, Value))
        return refs

    def _flush(self, before: Operation | None) -> None:
        """Move the pending ops into a one-thread kernel placed before ``before`` (at the end
        when None), storing the values used after it into rank-0 device buffers."""
        if not self.pending:
            return
        pending_ids = {id(op) for op in self.pending}
        referenced = self._referenced_by_results()
        escaping = []
        for op in self.pending:
            for value in op.results:
                outside = any(id(_top_level(use.op, self.block)) not in pending_ids
                              for use in value.uses)
                if outside or value in referenced:
                    escaping.append(value)
        ctx = self.ctx
        one = ctx.constant(1)
        kernel = ParallelOp.build([ctx.constant(0)], [one], [one])
        self._insert(kernel, before)
        body = kernel.body.block
        for op in self.pending:
            op.detach()
            body.append(op)
        for value in escaping:
            spill = AllocOp.build([], value.type, DEVICE_SPACE, location=kernel.location)
            self.block.insert_before(spill, kernel)
            body.append(StoreOp.build(value, spill.result, []))
            self.spills[value] = spill.result
        body.append(YieldOp.build())
        self.pending = []

    def _insert(self, op: Operation, before: Operation | None) -> Operation:
        if before is None:
            return self.block.append(op)
        return self.block.insert_before(op, before)

    # -- the values needed outside -------------------------------------------------------

    def _reload_spilled(self, op: Operation) -> None:
        """``op`` goes into a later kernel: it reads the spilled values it uses from their
        buffers (loads placed before it, moved into the kernel with it)."""
        for value in _used_values(op) & set(self.spills):
            load = self.block.insert_before(LoadOp.build(self.spills[value], []), op)
            _replace_uses_in(value, load.result, op)
            self.pending.append(load)
            self.tainted.add(load.result)

    def _give_spilled(self, op: Operation, values: set[Value]) -> None:
        """Make ``op`` (host code or a kernel loop nest) read ``values`` from their spills."""
        own_operands = set(op.operands)
        kernel_loop = _is_kernel_loop(op)
        for value in values:
            if kernel_loop and value not in own_operands:
                body = op.regions[0].block
                load = LoadOp.build(self.spills[value], [])
                if body.first_op is None:
                    body.append(load)
                else:
                    body.insert_before(load, body.first_op)
                _replace_uses_in(value, load.result, op)
            else:
                _replace_uses_in(value, self.host_copy(value, op), op)

    def host_copy(self, value: Value, before: Operation | None) -> Value:
        """``value`` on the host: loaded from a ``gpu.to_host`` copy of its spill buffer (made
        once, before ``before``, or at the end)."""
        if value not in self.host_copies:
            moved = self._insert(ToHostOp.build(self.spills[value], self.context), before)
            load = self._insert(LoadOp.build(moved.result, []), before)
            self.host_copies[value] = load.result
        return self.host_copies[value]

    # -- the op's results and what the lowering remembers ---------------------------------

    def finish(self) -> None:
        if not self.tainted:
            return
        ctx = self.ctx
        for lw in self.results:
            lw.sizes = [self._on_host(s) for s in lw.sizes]
            if lw.scalar in self.tainted:
                if lw.buffer is None:
                    self._materialize(lw)
                lw.scalar = None
        for lw in ctx.values.values():
            if lw.scalar in self.tainted:
                lw.scalar = None  # a load of device memory moved into a kernel: read it again
            if any(isinstance(s, Value) and s in self.tainted for s in lw.sizes):
                lw.sizes = [self._on_host(s) for s in lw.sizes]
        ctx.ix.forget(self.tainted)

    def _on_host(self, size):
        if isinstance(size, Value) and size in self.tainted:
            return self.host_copy(size, None)
        return size

    def _materialize(self, lw: Lowered) -> None:
        """A result known only as a scalar computed on the device: its spill buffer (rank 0),
        or a buffer filled from it by a loop nest."""
        spill = self.spills[lw.scalar]
        if spill.type.element != lw.type.element:
            raise PassFailure(f"bufferize: a {lw.type} result computed as a {spill.type.element} "
                              f"scalar on the device", self.ctx.op)
        if lw.type.rank == 0:
            lw.buffer, lw.owned = spill, True
            return
        ctx = self.ctx
        out = ctx.alloc(lw.type, lw.sizes, space=DEVICE_SPACE)

        def body(b, ivs):
            element = b.insert(LoadOp.build(spill, [])).result
            ctx.store(b, element, out, ivs)

        ctx.loop_nest(lw.sizes, body)
        lw.buffer, lw.owned = out, True


def confine_to_device(ctx: FunctionLowering, before: Operation | None, results: list[Lowered],
                      context: str) -> list[Lowered]:
    """After the lowering of a device op (its top-level ops follow ``before``, or start the
    block when it is None): move the top-level work on device memory into one-thread kernels
    and give ``results`` (the op's lowered results) device buffers where they were scalars
    computed there (see the module docstring). Returns ``results``, marked as device values."""
    block = ctx.block
    first = before.next_op if before is not None else block.first_op
    new_ops = []
    op = first
    while op is not None:
        new_ops.append(op)
        op = op.next_op
    confinement = _Confinement(ctx, results, context)
    confinement.run(new_ops)
    confinement.finish()
    for lw in results:
        if lw.buffer is not None and not is_device_buffer(lw.buffer):
            # Host data the op stands for (a constant's global): copied to the device.
            lw.buffer = ctx.b.insert(ToDeviceOp.build(lw.buffer, context)).result
            lw.owned = True
        lw.space = DEVICE_SPACE
    return results


def _top_level(op: Operation, block: Block) -> Operation | None:
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


def _replace_uses_in(value: Value, new: Value, op: Operation) -> None:
    """Make ``op`` and the ops nested in it read ``new`` where they read ``value``."""
    inside = {id(inner) for inner in op.walk()}
    for use in list(value.uses):
        if id(use.op) in inside:
            use.op.set_operand(use.index, new)


def memory_space_of(place: str) -> str:
    """The memory space of a value whose place is ``place`` (``"cpu"`` or a GPU context).

    >>> memory_space_of("cpu"), memory_space_of("dev0")
    ('host', 'device')
    """
    return "host" if place == "cpu" else DEVICE_SPACE
