"""``func.func``, ``func.return`` and ``func.call`` in LLVM IR.

Each ``func.func @f`` becomes an internal function ``i32 @"lowering.func.f"(args..., slots...)``:

- each argument is passed as its run-time parts (``cpu.values.flatten``: for a buffer, its
  element pointer and the sizes and strides its type leaves dynamic; for a scalar, the value);
- each result has a slot the callee writes on success: for a buffer, a descriptor
  ``{i8* data, [r x i64] shape, [r x i64] strides}`` (the native ABI's layout), for a scalar, a
  pointer to one element;
- it returns 0, or the code of the check that failed (everything it allocated is freed then and
  no slot is written);
- a function whose temporaries are kept between calls (``allow_gc=False``) takes its workspace
  first and gives it back on every return (``cpu.workspace``).

A returned buffer must be a fresh allocation (``loops.alloc`` or a buffer returned by a call),
since its memory passes to the caller, who frees it; returning a view or an argument is a
translation error.

>>> impl_name("f")
'lowering.func.f'
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.dialects.builtin.ops import CallOp, FuncOp
from lowering.dialects.loops import AllocOp, BufferType, IfOp
from lowering.ir.core import OpResult, Operation
from lowering.ir.types import ScalarType

from .context import CPU_LOWERING, FunctionLowering, ModuleLowering, return_code, translation_error
from .values import (I8, I8P, I32, BufferValue, descriptor_type, flat_types, flatten, make_buffer,
                     memory_type, rebuild)
from .workspace import close_workspace, define_release, open_workspace


def impl_name(name: str) -> str:
    """The LLVM symbol of the body of ``func.func @name``."""
    return f"lowering.func.{name}"


def slot_type(t) -> ir.PointerType:
    """The type of the slot a function writes one result of IR type ``t`` into."""
    if isinstance(t, BufferType):
        return descriptor_type(t.rank).as_pointer()
    return memory_type(t).as_pointer()


def declare_function(state: ModuleLowering, func: FuncOp) -> ir.Function:
    """Declare the implementation of ``func`` (so calls can refer to it before it is defined)."""
    ftype = func.function_type
    for t in (*ftype.inputs, *ftype.results):
        if not isinstance(t, (BufferType, ScalarType)):
            raise translation_error(func, f"@{func.sym_name} takes or returns {t}: compiled "
                                          f"functions take and return buffers and scalars "
                                          f"(bufferize tensor functions first)")
    params = [ty for t in ftype.inputs for ty in flat_types(t)]
    params += [slot_type(t) for t in ftype.results]
    fn = ir.Function(state.module, ir.FunctionType(I32, params), impl_name(func.sym_name))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    state.functions[func.sym_name] = (fn, func)
    return fn


def _check_fresh(func: FuncOp, returned) -> None:
    seen: set[int] = set()
    for index, value in enumerate(returned):
        if not isinstance(value.type, BufferType):
            continue
        owner = value.owner if isinstance(value, OpResult) else None
        if not isinstance(owner, (AllocOp, CallOp)) and not (
                isinstance(owner, IfOp) and owner.yields_fresh_allocation(value.index)):
            raise translation_error(owner or func, f"func.return: result #{index} of "
                                    f"@{func.sym_name} must be a buffer made by loops.alloc (its "
                                    f"memory passes to the caller), not a view or an argument")
        if id(value) in seen:
            raise translation_error(func, f"func.return: @{func.sym_name} returns the same "
                                          f"buffer twice (result #{index})")
        seen.add(id(value))


def write_slot(b: ir.IRBuilder, slot: ir.Value, value) -> None:
    """Store a lowered result (BufferValue or scalar) into its slot."""
    if not isinstance(value, BufferValue):
        if value.type == ir.IntType(1):
            value = b.zext(value, I8)
        b.store(value, slot)
        return
    zero = ir.Constant(I32, 0)
    b.store(b.bitcast(value.ptr, I8P), b.gep(slot, [zero, zero], inbounds=True))
    for field, parts in ((1, value.sizes), (2, value.strides)):
        for d, part in enumerate(parts):
            b.store(part, b.gep(slot, [zero, ir.Constant(I32, field), ir.Constant(I32, d)],
                                inbounds=True))


def read_slot(b: ir.IRBuilder, slot: ir.Value, t):
    """The lowered value of IR type ``t`` in a slot (as ``write_slot`` left it)."""
    if not isinstance(t, BufferType):
        value = b.load(slot)
        return b.icmp_unsigned("!=", value, ir.Constant(I8, 0)) if t.is_bool else value
    zero = ir.Constant(I32, 0)
    data = b.load(b.gep(slot, [zero, zero], inbounds=True))
    fields = []
    for field in (1, 2):
        fields.append([b.load(b.gep(slot, [zero, ir.Constant(I32, field), ir.Constant(I32, d)],
                                    inbounds=True)) for d in range(t.rank)])
    return make_buffer(b, t, data, fields[0], fields[1])


def define_function(state: ModuleLowering, func: FuncOp) -> None:
    """Lower the body of ``func`` into its declared implementation."""
    fn, _ = state.functions[func.sym_name]
    if not func.body.blocks:
        raise translation_error(func, f"@{func.sym_name} has no body")
    fl = FunctionLowering(state, fn, return_code)
    open_workspace(fl, func)
    ftype = func.function_type
    n_parts = sum(len(flat_types(t)) for t in ftype.inputs)
    parts = iter(fn.args[:n_parts])
    args = [rebuild(fl.builder, t, parts) for t in ftype.inputs]
    slots = fn.args[n_parts:]
    terminator = fl.lower_block(func.body.block, args)
    if terminator is None or terminator.name != "func.return":
        raise translation_error(func, f"@{func.sym_name} must end with func.return")
    _check_fresh(func, terminator.operands)
    for slot, value in zip(slots, terminator.operands):
        write_slot(fl.builder, slot, fl.get(value))
    close_workspace(fl)
    fl.builder.ret(ir.Constant(I32, 0))
    define_release(state, func)


@CPU_LOWERING.register(CallOp)
def _call(fl: FunctionLowering, op: Operation):
    callee = fl.state.functions.get(op.callee)
    if callee is None:
        raise translation_error(op, f"no function named @{op.callee} in the module")
    fn, func = callee
    ftype = func.function_type
    if [v.type for v in op.operands] != list(ftype.inputs) or \
            [r.type for r in op.results] != list(ftype.results):
        raise translation_error(op, f"the call's types do not match @{op.callee}: {ftype}")
    args = [x for v in op.operands for x in flatten(fl.get(v))]
    slots = [fl.alloca(slot_type(t).pointee) for t in ftype.results]
    b = fl.builder
    code = b.call(fn, args + slots)
    fl.fail_if(b.icmp_signed("!=", code, ir.Constant(I32, 0)), code)
    results = []
    for res, slot in zip(op.results, slots):
        value = read_slot(b, slot, res.type)
        if isinstance(value, BufferValue):
            fl.track(res, value.ptr)
        results.append(value)
    return results

