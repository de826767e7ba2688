"""Buffers in LLVM IR: ``alloc``/``dealloc``, ``dim``, ``stride``, ``load``/``store``, ``copy``
and ``fill``.

- ``loops.alloc`` calls ``aligned_alloc(64, bytes)`` (bytes rounded up to a multiple of 64, at
  least 64 so that an empty buffer still has its own address): a fresh buffer is 64-byte aligned
  and ``noalias``, and what the native ABI hands to Python is freed there with ``free``. Negative
  sizes and a failed allocation are run-time errors (codes in the error table), not crashes. On
  Linux a buffer of 4 MiB or more is advised to use transparent huge pages, as NumPy does.
- ``loops.dealloc`` calls ``free``: only on what ``alloc`` makes, never on a view, a constant
  or an argument.
- an allocation marked ``workspace = k`` (``allow_gc=False``) is slot ``k`` of the function's
  workspace while the call holds it, and its ``dealloc`` frees nothing then
  (``cpu.workspace``).
- ``loops.constant`` is a read-only, 64-byte-aligned global holding the value's bytes (one per
  distinct value in the module).
- element ``[i, j]`` is at ``ptr + i * stride0 + j * stride1`` elements, in 64-bit arithmetic
  (``nsw``: an address inside the buffer does not overflow), one ``getelementptr inbounds``.
- ``copy`` checks at run time that the sizes agree where the types do not say so, then loops;
  ``copy`` and ``fill`` loops are parallel loops (independent iterations).

>>> AllocOp in CPU_LOWERING and StoreOp in CPU_LOWERING
True
"""
from __future__ import annotations

import sys

import llvmlite.ir as ir
import numpy as np

from lowering.dialects.builtin.ops import FuncOp
from lowering.dialects.loops import (AllocOp, BufferType, ConstantOp, CopyOp, DeallocOp, DimOp,
                                     FillOp, LoadOp, StoreOp, StrideOp)
from lowering.ir.core import Operation
from lowering.ir.sizes import MAX_ALLOCATION_BYTES

from .context import CPU_LOWERING, FunctionLowering, buffer_of, translation_error
from .loops import emit_loop_nest, new_access_group
from .values import I8, I8P, BufferValue, i64, itemsize, make_buffer
from .workspace import owned_by_call, slot_of, take

ALIGNMENT = 64


def element_address(fl: FunctionLowering, buffer: BufferValue, indices) -> ir.Value:
    """The address of the element at ``indices`` (``i64`` values)."""
    offset: ir.Value = i64(0)
    for index, stride in zip(indices, buffer.strides):
        offset = fl.add(offset, fl.mul(index, stride))
    if isinstance(offset, ir.Constant) and offset.constant == 0:
        return buffer.ptr
    return fl.builder.gep(buffer.ptr, [offset], inbounds=True)


def load_element(fl: FunctionLowering, buffer: BufferValue, indices) -> ir.Value:
    value = fl.builder.load(element_address(fl, buffer, indices),
                            align=itemsize(buffer.type.element))
    fl.tag_memory_access(value)
    if buffer.type.element.is_bool:
        return fl.builder.icmp_unsigned("!=", value, ir.Constant(I8, 0))
    return value


def store_element(fl: FunctionLowering, value: ir.Value, buffer: BufferValue, indices) -> None:
    if buffer.type.element.is_bool:
        value = fl.builder.zext(value, I8)
    store = fl.builder.store(value, element_address(fl, buffer, indices),
                             align=itemsize(buffer.type.element))
    fl.tag_memory_access(store)


def allocate(fl: FunctionLowering, t: BufferType, sizes, op, obtain=None) -> BufferValue:
    """A fresh 64-byte-aligned contiguous buffer of type ``t`` (``sizes``: one i64 per dim);
    ``obtain(bytes)`` gives the memory instead of ``aligned_alloc`` where given."""
    b = fl.builder
    for d, size in enumerate(sizes):
        if t.shape[d] is None:
            fl.check(fl.icmp(">=", size, i64(0)), f"{op.name}: negative size for dimension {d}",
                     op)
    nbytes, overflow = fl.checked_product(list(sizes) + [i64(itemsize(t.element))])
    fits = fl.all_of([fl.negate(overflow), fl.icmp("<=", nbytes, i64(MAX_ALLOCATION_BYTES))])
    fl.check(fits, f"{op.name}: a buffer of type {t} is too big (more than {MAX_ALLOCATION_BYTES} "
             f"bytes)", op)
    if isinstance(nbytes, ir.Constant):
        rounded = i64(max(ALIGNMENT, -(-nbytes.constant // ALIGNMENT) * ALIGNMENT))
    else:  # at most MAX_ALLOCATION_BYTES, so rounding up to the alignment does not wrap
        at_least = b.select(b.icmp_signed("<", nbytes, i64(1)), i64(1), nbytes)
        rounded = b.and_(b.add(at_least, i64(ALIGNMENT - 1)), i64(-ALIGNMENT))
    raw = b.call(fl.state.aligned_alloc(), [i64(ALIGNMENT), rounded]) if obtain is None \
        else obtain(rounded)
    fl.check(b.icmp_unsigned("!=", raw, ir.Constant(I8P, None)),
             f"{op.name}: out of memory (could not allocate a buffer of type {t})", op,
             kind="memory")
    if obtain is None and sys.platform.startswith("linux") and not (
            isinstance(rounded, ir.Constant) and rounded.constant < HUGE_PAGE_MIN_BYTES):
        b.call(_advise_huge_pages(fl.state), [raw, rounded])
    return make_buffer(b, t, raw, sizes)


# Fresh buffers of this many bytes and more are advised to use transparent huge pages (as NumPy
# does for its arrays): writing a new 40 MB result otherwise takes one page fault per 4 KiB
# (10,000 of them, a third of the time of a fast elementwise loop; measured in
# docs/performance.md).
HUGE_PAGE_MIN_BYTES = 1 << 22
_MADV_HUGEPAGE = 14  # Linux


def _advise_huge_pages(state) -> ir.Function:
    """``void lowering.advise_huge_pages(i8* p, i64 bytes)``: ``madvise(MADV_HUGEPAGE)`` on the
    whole pages inside ``[p, p + bytes)`` when ``bytes >= HUGE_PAGE_MIN_BYTES`` (advice only:
    nothing changes where the system does not follow it)."""
    name = "lowering.advise_huge_pages"
    existing = state.module.globals.get(name)
    if existing is not None:
        return existing
    i32, i64_ = ir.IntType(32), ir.IntType(64)
    fn = ir.Function(state.module, ir.FunctionType(ir.VoidType(), [I8P, i64_]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")
    madvise = state.function("madvise", ir.FunctionType(i32, [I8P, i64_, i32]))
    p, nbytes = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    advise, done = fn.append_basic_block("advise"), fn.append_basic_block("done")
    b.cbranch(b.icmp_signed(">=", nbytes, i64(HUGE_PAGE_MIN_BYTES)), advise, done)
    b.position_at_end(advise)
    offset = b.sub(i64(4096), b.and_(b.ptrtoint(p, i64_), i64(4095)))
    b.call(madvise, [b.gep(p, [offset]), b.sub(nbytes, offset), ir.Constant(i32, _MADV_HUGEPAGE)])
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return fn


@CPU_LOWERING.register(AllocOp)
def _alloc(fl: FunctionLowering, op):
    t = op.result.type
    if t.memory_space != "host":
        raise translation_error(op, f"the CPU backend allocates host memory only, not "
                                    f"'{t.memory_space}'")
    dynamic = iter(fl.get(v) for v in op.sizes)
    sizes = [next(dynamic) if d is None else i64(d) for d in t.shape]
    slot = slot_of(op)
    if slot is not None and fl.workspace is not None:
        buffer = allocate(fl, t, sizes, op, obtain=lambda nbytes: take(fl, slot, nbytes))
        fl.track(op.result, owned_by_call(fl, buffer.ptr))  # failures free only the call's own
        return [buffer]
    buffer = allocate(fl, t, sizes, op)
    fl.track(op.result, buffer.ptr)
    return [buffer]


@CPU_LOWERING.register(ConstantOp)
def _constant(fl: FunctionLowering, op):
    """A read-only global (64-byte aligned, one per distinct value in the module)."""
    array = op.attributes["value"].elements(op)
    t = op.result.type
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    module = fl.state.module
    key = (str(t), data)
    name = fl.state.constants.get(key)
    if name is None:
        name = fl.state.unique_name("lowering.constant")
        storage = ir.GlobalVariable(module, ir.ArrayType(I8, len(data)), name)
        storage.global_constant = True
        storage.linkage = "internal"
        storage.unnamed_addr = True
        storage.align = ALIGNMENT
        storage.initializer = ir.Constant(ir.ArrayType(I8, len(data)), bytearray(data))
        fl.state.constants[key] = name
    ptr = fl.builder.bitcast(module.globals[name], I8P)
    return [make_buffer(fl.builder, t, ptr, [i64(d) for d in t.shape])]


def _is_freeable(value) -> bool:
    """Whether ``value`` may be a buffer from ``loops.alloc`` (not a constant, an argument of the
    function or a view, whose memory nobody allocated here)."""
    owner = value.owner
    if isinstance(owner, Operation):
        return owner.name in ("loops.alloc", "func.call", "loops.for", "loops.if")
    return not isinstance(owner.parent_op, FuncOp)  # a loop-carried buffer may be one


@CPU_LOWERING.register(DeallocOp)
def _dealloc(fl: FunctionLowering, op):
    t = op.buffer.type
    if not t.is_contiguous or t.offset != 0 or not _is_freeable(op.buffer):
        raise translation_error(op, f"can only free a buffer made by loops.alloc, not a view, "
                                    f"a constant or an argument ({t})")
    pointer = buffer_of(fl, op.buffer).ptr
    if slot_of(op.buffer.owner) is not None and fl.workspace is not None:
        pointer = owned_by_call(fl, pointer)  # free(NULL) where it is the workspace's
    fl.free(pointer)
    if not fl.untrack(op.buffer):
        fl.forget_freed(pointer)
    return []


@CPU_LOWERING.register(DimOp)
def _dim(fl: FunctionLowering, op):
    return [buffer_of(fl, op.buffer).sizes[op.axis]]


@CPU_LOWERING.register(StrideOp)
def _stride(fl: FunctionLowering, op):
    return [buffer_of(fl, op.buffer).strides[op.axis]]


@CPU_LOWERING.register(LoadOp)
def _load(fl: FunctionLowering, op):
    return [load_element(fl, buffer_of(fl, op.buffer), [fl.get(v) for v in op.indices])]


@CPU_LOWERING.register(StoreOp)
def _store(fl: FunctionLowering, op):
    store_element(fl, fl.get(op.value), buffer_of(fl, op.buffer), [fl.get(v) for v in op.indices])
    return []


def _each_element(fl: FunctionLowering, sizes, body) -> None:
    """Run ``body(indices)`` for every index of a buffer with ``sizes``, as a parallel nest."""
    if not sizes:
        body([])
        return
    zero, one = i64(0), i64(1)
    emit_loop_nest(fl, [zero] * len(sizes), list(sizes), [one] * len(sizes), body,
                   new_access_group(fl))


@CPU_LOWERING.register(CopyOp)
def _copy(fl: FunctionLowering, op):
    source, target = buffer_of(fl, op.source), buffer_of(fl, op.target)
    same = [fl.icmp("==", a, c) for a, c in zip(source.sizes, target.sizes)]
    fl.check(fl.all_of(same), f"{op.name}: the source and target sizes differ", op)
    _each_element(fl, target.sizes, lambda ivs: store_element(
        fl, load_element(fl, source, ivs), target, ivs))
    return []


@CPU_LOWERING.register(FillOp)
def _fill(fl: FunctionLowering, op):
    target = buffer_of(fl, op.buffer)
    value = fl.get(op.value)
    _each_element(fl, target.sizes, lambda ivs: store_element(fl, value, target, ivs))
    return []

