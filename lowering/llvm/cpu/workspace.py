"""Workspaces: the temporaries of a compiled function kept between its calls (``allow_gc=False``).

``plan-memory{allow-gc=false}`` marks each temporary's ``loops.alloc`` with ``workspace = k``
(one slot per temporary that is left after buffers are reused). A function with such slots gets
a workspace, an internal global ``{i32 busy, [n x {i8* data, i64 bytes}]}`` that lives as long
as the loaded code:

- a call *takes* the workspace when it starts (an atomic exchange of ``busy``) and gives it back
  when it returns, also with an error code;
- while it holds the workspace, allocation ``k`` is slot ``k``'s memory, reallocated only when
  a call needs more bytes than the slot has (so the slots grow to the largest sizes the function
  has seen: one workspace serves every shape), and its ``loops.dealloc`` frees nothing;
- a call that finds the workspace taken (the same code running on another thread, or a call of
  the function from itself) allocates and frees its temporaries as with ``allow_gc=True``, so
  concurrent calls stay correct.

The exported ``<name>_release_workspace()`` frees the slots (returning 0), or returns 1 and
frees nothing while a call holds the workspace; the CPU executor calls it when the last function
using the code goes away.

>>> release_name("train")
'train_release_workspace'
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from lowering.dialects.builtin.ops import FuncOp
from lowering.dialects.loops import AllocOp

from .values import I8P, I32, I64, i64

if TYPE_CHECKING:  # (the executor imports this module for release_name alone)
    from .context import FunctionLowering, ModuleLowering

ATTRIBUTE = "workspace"
_SLOT = ir.LiteralStructType([I8P, I64])


def release_name(name: str) -> str:
    """The exported symbol freeing the workspace of ``func.func @name``."""
    return f"{name}_release_workspace"


def slot_of(op) -> int | None:
    """The workspace slot of a ``loops.alloc`` (None for an ordinary allocation)."""
    attribute = op.attributes.get(ATTRIBUTE) if isinstance(op, AllocOp) else None
    return None if attribute is None else int(attribute.value)


def _slots(func: FuncOp) -> int:
    found = [slot_of(op) for op in func.body.block.ops]
    return 1 + max((s for s in found if s is not None), default=-1)


class Workspace:
    """The workspace of one function being lowered: its global and whether this call holds it
    (``mine``, an ``i1`` computed when the call starts)."""

    def __init__(self, storage: ir.GlobalVariable, mine: ir.Value):
        self.storage = storage
        self.mine = mine

    def field(self, b: ir.IRBuilder, slot: int, part: int) -> ir.Value:
        return b.gep(self.storage, [ir.Constant(I32, 0), ir.Constant(I32, 1),
                                    ir.Constant(I32, slot), ir.Constant(I32, part)],
                     inbounds=True)


def _storage(state: ModuleLowering, func: FuncOp, slots: int) -> ir.GlobalVariable:
    name = f"lowering.workspace.{func.sym_name}"
    existing = state.module.globals.get(name)
    if existing is not None:
        return existing
    ty = ir.LiteralStructType([I32, ir.ArrayType(_SLOT, slots)])
    storage = ir.GlobalVariable(state.module, ty, name)
    storage.linkage = "internal"
    storage.initializer = ir.Constant(ty, None)
    return storage


def open_workspace(fl: FunctionLowering, func: FuncOp) -> Workspace | None:
    """At the start of ``func``'s implementation: take its workspace if it has one (and make the
    failure paths give it back). None when ``func`` has no workspace allocations."""
    slots = _slots(func)
    if not slots:
        return None
    storage = _storage(fl.state, func, slots)
    b = fl.builder
    busy = b.gep(storage, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    before = b.atomic_rmw("xchg", busy, ir.Constant(I32, 1), "acquire")
    workspace = Workspace(storage, b.icmp_unsigned("==", before, ir.Constant(I32, 0)))
    fl.workspace = workspace
    on_failure = fl.on_failure

    def give_back_then_fail(fl_: FunctionLowering, code: ir.Value) -> None:
        close_workspace(fl_)
        on_failure(fl_, code)
    fl.on_failure = give_back_then_fail
    return workspace


def close_workspace(fl: FunctionLowering) -> None:
    """Give the workspace back (where this call took it), before returning."""
    workspace = fl.workspace
    if workspace is None:
        return
    b = fl.builder
    busy = b.gep(workspace.storage, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    with b.if_then(workspace.mine):
        b.store_atomic(ir.Constant(I32, 0), busy, "release", 4)


def take(fl: FunctionLowering, slot: int, nbytes: ir.Value) -> ir.Value:
    """Memory of ``nbytes`` (a multiple of 64) for workspace slot ``slot``: the slot's own when
    this call holds the workspace (reallocated if too small), else a fresh allocation. Null when
    memory runs out (the caller checks)."""
    workspace = fl.workspace
    b = fl.builder
    result = fl.alloca(I8P, name="workspace_memory")
    aligned_alloc = fl.state.aligned_alloc()
    with b.if_else(workspace.mine) as (held, not_held):
        with held:
            data, size = workspace.field(b, slot, 0), workspace.field(b, slot, 1)
            with b.if_then(b.icmp_unsigned("<", b.load(size), nbytes)):
                fl.free(b.load(data))
                fresh = b.call(aligned_alloc, [i64(64), nbytes])
                b.store(fresh, data)
                empty = b.icmp_unsigned("==", fresh, ir.Constant(I8P, None))
                b.store(b.select(empty, i64(0), nbytes), size)
            b.store(b.load(data), result)
        with not_held:
            b.store(b.call(aligned_alloc, [i64(64), nbytes]), result)
    return b.load(result)


def owned_by_call(fl: FunctionLowering, pointer: ir.Value) -> ir.Value:
    """``pointer`` where this call must free it (it does not hold the workspace), else null."""
    b = fl.builder
    return b.select(fl.workspace.mine, ir.Constant(I8P, None), b.bitcast(pointer, I8P))


def define_release(state: ModuleLowering, func: FuncOp) -> None:
    """Define the exported ``<name>_release_workspace`` of a function with a workspace."""
    slots = _slots(func)
    if not slots:
        return
    storage = _storage(state, func, slots)
    fn = ir.Function(state.module, ir.FunctionType(I32, []), release_name(func.sym_name))
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    busy = b.gep(storage, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    before = b.atomic_rmw("xchg", busy, ir.Constant(I32, 1), "acquire")
    held = fn.append_basic_block("held_by_a_call")
    free_all = fn.append_basic_block("free")
    b.cbranch(b.icmp_unsigned("!=", before, ir.Constant(I32, 0)), held, free_all)
    ir.IRBuilder(held).ret(ir.Constant(I32, 1))
    b.position_at_end(free_all)
    free = state.free()
    for slot in range(slots):
        parts = [b.gep(storage, [ir.Constant(I32, 0), ir.Constant(I32, 1), ir.Constant(I32, slot),
                                 ir.Constant(I32, part)], inbounds=True) for part in (0, 1)]
        b.call(free, [b.load(parts[0])])
        b.store(ir.Constant(I8P, None), parts[0])
        b.store(i64(0), parts[1])
    b.store_atomic(ir.Constant(I32, 0), busy, "release", 4)
    b.ret(ir.Constant(I32, 0))
