"""The native entry point of a function: ``i32 @<name>_entry(i8** packed)``.

``packed[0 .. n_in-1]`` point to the input descriptors, ``packed[n_in .. n_in+n_out-1]`` to the
output descriptors the entry fills (``cpu.values.descriptor_type``: data pointer, then shape and
strides in elements; rank 0 is the data pointer alone). A scalar argument or result is passed as
a rank-0 descriptor.

The entry first checks that every input fits its type, since the code relies on what the type
states: static sizes must match (and dynamic ones be >= 0); static strides, and the strides of a
contiguous type, must match wherever they are used (not for a dimension of size 1, nor in an
empty array). A mismatch returns a (negative) error code before anything runs. Then it calls the
function's implementation with the output descriptors as result slots; a scalar result gets a
fresh 64-byte block, which the output descriptor's data points to. It returns 0, or the failing
check's code with no output written and nothing left allocated.

>>> entry_name("train")
'train_entry'
"""
from __future__ import annotations

import llvmlite.ir as ir

from lowering.dialects.builtin.ops import FuncOp
from lowering.dialects.loops import BufferType

from .context import FunctionLowering, ModuleLowering, return_code
from .functions import read_slot
from .memory import allocate
from .values import (I1, I8P, I32, contiguous_stride_values, descriptor_type, flatten, i64,
                     make_buffer, memory_type)


def entry_name(name: str) -> str:
    """The exported symbol of ``func.func @name``'s entry point."""
    return f"{name}_entry"


def _check_input(fl: FunctionLowering, func: FuncOp, index: int, t: BufferType, sizes,
                 strides) -> None:
    name = func.sym_name
    fits = [fl.icmp(">=", s, i64(0)) if d is None else fl.icmp("==", s, i64(d))
            for d, s in zip(t.shape, sizes)]
    fl.check(fl.all_of(fits), f"@{name}: input {index} does not have the shape of {t}", func)
    expected = (contiguous_stride_values(fl.builder, sizes) if t.is_contiguous
                else [None if s is None else i64(s) for s in t.strides])
    b = fl.builder
    conditions = []
    for size, stride, want in zip(sizes, strides, expected):
        if want is None:
            continue
        conditions.append(b.or_(fl.icmp("==", size, i64(1)), fl.icmp("==", stride, want)))
    if not conditions:
        return
    empty = ir.Constant(I1, 0)
    for size in sizes:
        empty = b.or_(empty, fl.icmp("==", size, i64(0)))
    fl.check(b.or_(empty, fl.all_of(conditions)),
             f"@{name}: input {index} does not have the strides (in elements) of {t}", func)


def _descriptor(b: ir.IRBuilder, packed: ir.Value, position: int, rank: int) -> ir.Value:
    raw = b.load(b.gep(packed, [i64(position)], inbounds=True))
    return b.bitcast(raw, descriptor_type(rank).as_pointer())


def define_entry(state: ModuleLowering, func: FuncOp) -> ir.Function:
    """Define ``<name>_entry`` calling ``func``'s implementation (declared already)."""
    impl, _ = state.functions[func.sym_name]
    fn = ir.Function(state.module, ir.FunctionType(I32, [I8P.as_pointer()]),
                     entry_name(func.sym_name))
    fn.attributes.add("nounwind")
    fl = FunctionLowering(state, fn, return_code)
    b = fl.builder
    packed = fn.args[0]
    ftype = func.function_type
    zero = ir.Constant(I32, 0)
    args = []
    for index, t in enumerate(ftype.inputs):
        rank = t.rank if isinstance(t, BufferType) else 0
        desc = _descriptor(b, packed, index, rank)
        data = b.load(b.gep(desc, [zero, zero], inbounds=True))
        if not isinstance(t, BufferType):
            value = read_slot(b, b.bitcast(data, memory_type(t).as_pointer()), t)
            args.append(value)
            continue
        fields = [[b.load(b.gep(desc, [zero, ir.Constant(I32, f), ir.Constant(I32, d)],
                                inbounds=True)) for d in range(rank)] for f in (1, 2)]
        _check_input(fl, func, index, t, *fields)
        args.extend(flatten(make_buffer(b, t, data, fields[0], fields[1])))
    slots, scalar_outputs = [], []
    n_in = len(ftype.inputs)
    for index, t in enumerate(ftype.results):
        rank = t.rank if isinstance(t, BufferType) else 0
        desc = _descriptor(b, packed, n_in + index, rank)
        if isinstance(t, BufferType):
            slots.append(desc)
            continue
        storage = allocate(fl, BufferType((), t), [], func)
        fl.track(None, storage.ptr)
        scalar_outputs.append((desc, storage.ptr))
        slots.append(storage.ptr)
    code = b.call(impl, args + slots)
    fl.fail_if(b.icmp_signed("!=", code, zero), code)
    for desc, ptr in scalar_outputs:
        b.store(b.bitcast(ptr, I8P), b.gep(desc, [zero, zero], inbounds=True))
    b.ret(zero)
    return fn
