"""``plan-memory``: free every temporary buffer after its last use, and reuse dead ones.

Bufferized code allocates a fresh buffer for every intermediate result (``loops.alloc``) and
frees nothing; this pass, run on loops IR after ``bufferize`` and ``inplace``, makes each
function release what it allocates, so that calling a compiled function again and again does
not grow the process's memory.

- **Deallocation**: every ``loops.alloc`` that the function does not return gets a
  ``loops.dealloc`` right after the op (in the allocation's own block) that contains its last
  use. A use through a view counts as a use of the buffer (a buffer lives while any view of it is
  used); a use inside a loop counts as a use by the loop. ``loops.dim``, ``loops.stride`` and
  the view ops read no element, so they do not keep a buffer alive. A buffer that reaches an op
  this pass does not understand (a loop-carried value, a ``func.call``) is left alone.
- **Reuse** (option ``reuse``, on by default): an allocation whose first use comes after the last
  use of an earlier temporary of the same type (element type, static shape) and provably equal
  run-time sizes (the same dimension values, sizes checked equal by a ``loops.assert`` before)
  takes that temporary's memory instead of allocating (sizes must be known equal where the new
  allocation was made, so that anything reading its sizes reads the same). A returned
  allocation may take a temporary's memory too (it is then returned instead of freed).

What happens when a check fails: the backend frees the allocations live at that point (the
entry's error path, ``lowering.llvm.cpu.context``), so a failed call leaks nothing either.

With ``allow-gc=false`` (the ``allow_gc`` flag), the temporaries of the function's top level
(those left after reuse) are also marked ``workspace = k``, one slot each: the CPU backend then
keeps their memory between calls in the function's workspace and their ``loops.dealloc`` frees
nothing (``lowering.llvm.cpu.workspace``); the interpreter ignores the mark.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> m = parse_module('''
... func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
...   %c0 = "scalar.constant"() {value = 0 : index} : () -> index
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %n = loops.dim %x, 0 : !loops.buffer<?xf32>
...   %t = loops.alloc(%n) : !loops.buffer<?xf32>
...   loops.copy %x, %t : !loops.buffer<?xf32>, !loops.buffer<?xf32>
...   %y = loops.alloc(%n) : !loops.buffer<?xf32>
...   loops.parallel (%i) = (%c0) to (%n) step (%c1) {
...     %v = loops.load %t[%i] : !loops.buffer<?xf32>
...     %w = "scalar.exp"(%v) : (f32) -> f32
...     loops.store %w, %y[%i] : !loops.buffer<?xf32>
...     loops.yield
...   }
...   func.return %y : !loops.buffer<?xf32>
... }''')
>>> PlanMemory(reuse=False).apply(m)
>>> [op.name for op in m.functions[0].body.block.ops][-3:]
['loops.parallel', 'loops.dealloc', 'func.return']
"""
from __future__ import annotations

from dataclasses import dataclass

from lowering.dialects.builtin import FuncOp
from lowering.dialects.loops import AllocOp, DeallocOp, IfOp
from lowering.ir.attributes import IntAttr
from lowering.ir.core import Block, Operation, Value
from lowering.ir.passes import ModulePass, option, register_pass

from .buffer_analysis import (TRANSFERS, SizeFacts, content_uses, escapes, is_buffer,
                              is_returned, top_ancestor)

# The attribute numbering a temporary's slot in the function's workspace (allow-gc=false).
WORKSPACE = "workspace"

@register_pass
class PlanMemory(ModulePass):
    """Free temporary buffers after their last use and reuse dead ones for later allocations."""

    name = "plan-memory"
    reuse: bool = option(True, "give a new allocation the memory of a dead temporary of the "
                               "same type and size")
    allow_gc: bool = option(True, "false: keep the temporaries between calls (each marked "
                                  "workspace = slot)")

    def apply(self, module: Operation) -> None:
        for func in _functions(module):
            plan_function(func, reuse=self.reuse, allow_gc=self.allow_gc)


def _functions(module: Operation) -> list[FuncOp]:
    if isinstance(module, FuncOp):
        return [module]
    return [op for op in module.walk() if isinstance(op, FuncOp)]


@dataclass
class _Buffer:
    """One allocation of a block and the span of top-level ops that use it: positions (for
    comparisons; they stay valid while ops are only erased) and the ops themselves."""

    alloc: Operation  # a loops.alloc, or a transfer (its result is a fresh buffer too)
    first: int
    last: int
    first_op: Operation
    last_op: Operation
    returned: bool
    at: int  # the position of the allocation
    first_direct: int  # of the first op taking the buffer itself (a view of it, a dim, ...)
    index: int = 0  # which result of ``alloc`` (a loops.if may give several buffers)

    @property
    def value(self) -> Value:
        return self.alloc.results[self.index]


def plan_function(func: FuncOp, reuse: bool = True, allow_gc: bool = True) -> None:
    """Insert deallocations (and reuse dead buffers) in every block of ``func``; without
    ``allow_gc``, number the top level's temporaries as workspace slots."""
    blocks = [block for op in func.walk() for reg in op.regions for block in reg.blocks]
    facts = SizeFacts(func) if reuse else None
    for block in blocks:
        buffers = _buffers(block)
        if reuse and block is func.body.block:
            buffers = _reuse(buffers, facts)
        slots = 0
        for buf in buffers:
            if buf.returned:
                continue
            block.insert_after(DeallocOp.build(buf.value, location=buf.alloc.location),
                               buf.last_op)
            if not allow_gc and block is func.body.block and isinstance(buf.alloc, AllocOp):
                buf.alloc.attributes[WORKSPACE] = IntAttr(slots)
                slots += 1


def _buffers(block: Block) -> list[_Buffer]:
    """The allocations of ``block`` that this pass may manage, with their spans of use (an
    unused one spans its own allocation)."""
    position = {id(op): i for i, op in enumerate(block.ops)}
    found = []
    for op in block.ops:
        for result in _allocated(op):
            if escapes(result):
                continue
            users = [top_ancestor(user, block) for user in content_uses(result)] or [op]
            if any(user is None for user in users):
                continue  # used outside the block (verified IR never does)
            users.sort(key=lambda user: position[id(user)])
            direct = [top_ancestor(use.op, block) for use in result.uses]
            first_direct = min((position[id(user)] for user in direct if user is not None),
                               default=position[id(op)])
            found.append(_Buffer(op, position[id(users[0])], position[id(users[-1])], users[0],
                                 users[-1], is_returned(result), position[id(op)], first_direct,
                                 result.index))
    return found


def _allocated(op: Operation) -> list[Value]:
    """The fresh buffers ``op`` makes that the function owns: an allocation's, a transfer's
    between host and device memory (``gpu.to_device``/``gpu.to_host`` of a buffer), the results
    of a ``loops.if`` for which both branches yield an allocation of their own."""
    if isinstance(op, IfOp):
        return [r for r in op.results if is_buffer(r) and op.yields_fresh_allocation(r.index)]
    if isinstance(op, AllocOp) or (isinstance(op, TRANSFERS) and is_buffer(op.result)):
        return [op.result]
    return []


def _reuse(buffers: list[_Buffer], facts: SizeFacts) -> list[_Buffer]:
    """Give each allocation the memory of a temporary that is dead before its first use, when
    the types match and the sizes are provably equal; returns the buffers left."""
    kept: list[_Buffer] = []
    active: list[_Buffer] = []
    dead: list[_Buffer] = []
    for buf in sorted(buffers, key=lambda b: b.first):
        for other in list(active):
            if other.last < buf.first and not other.returned:
                active.remove(other)
                dead.append(other)
        # The donor's allocation must come before every op taking the buffer: a view made
        # before the buffer's contents are first used would otherwise precede the donor.
        donor = next((d for d in dead if d.value.type == buf.value.type and buf.first_op is not
                      buf.alloc and isinstance(buf.alloc, AllocOp) and d.at < buf.first_direct
                      and facts.same_sizes(d.value, buf.value, before=buf.alloc)), None)
        if donor is None:
            kept.append(buf)
            active.append(buf)
            continue
        dead.remove(donor)
        buf.value.replace_all_uses_with(donor.value)
        buf.alloc.erase()
        if buf.last > donor.last:
            donor.last, donor.last_op = buf.last, buf.last_op
        donor.returned = buf.returned
        active.append(donor)
    return kept
