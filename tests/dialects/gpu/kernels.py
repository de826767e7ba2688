"""Kernels and host functions the gpu dialect tests build: an elementwise grid-stride map, a
block tree reduction in shared memory, atomic counters, and a kernel whose threads disagree about
a barrier.

>>> kernel = grid_stride_kernel()
>>> kernel.sym_name, len(kernel.args)
('affine', 3)
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.gpu import (AtomicRmwOp, BarrierOp, BlockDimOp, BlockIdOp, GpuFuncOp,
                                   GpuModuleOp, GridDimOp, LaunchFuncOp, SharedAllocOp,
                                   ThreadIdOp)
from lowering.dialects.loops import BufferType, ForOp, LoadOp, StoreOp
from lowering.ir.builder import Builder
from lowering.ir.types import F32, I64, INDEX


def device(shape, element=F32) -> BufferType:
    return BufferType(tuple(shape), element, memory_space="device")


def ins(b: Builder, op):
    """Insert ``op``; its only result, or the op when it has none."""
    b.insert(op)
    return op.results[0] if len(op.results) == 1 else op


def const(b: Builder, value, t=INDEX):
    return ins(b, scalar.ConstantOp.build(value, t))


def global_id(b: Builder):
    """blockIdx.x * blockDim.x + threadIdx.x, and the grid's thread count."""
    tid = ins(b, ThreadIdOp.build("x"))
    bid = ins(b, BlockIdOp.build("x"))
    bdim = ins(b, BlockDimOp.build("x"))
    gdim = ins(b, GridDimOp.build("x"))
    gid = ins(b, scalar.AddOp.build(ins(b, scalar.MulOp.build(bid, bdim)), tid))
    return gid, ins(b, scalar.MulOp.build(bdim, gdim))


def when(b: Builder, lower, upper, body):
    """Run ``body(builder)`` once if ``lower < upper`` (a loop of at most one iteration: the
    dialects have no ``if``)."""
    span = ins(b, scalar.SubOp.build(upper, lower))
    one = const(b, 1)
    step = ins(b, scalar.MaximumOp.build(span, one))

    def loop(bb, iv):
        body(bb)
    ins(b, ForOp.build(lower, upper, step, body=loop))


def grid_stride_kernel(name="affine") -> GpuFuncOp:
    """out[i] = 2 * x[i] + 1 for every i < n, each thread striding over the grid."""
    def body(b, x, out, n):
        gid, stride = global_id(b)

        def loop(bb, i):
            v = ins(bb, LoadOp.build(x, [i]))
            two, one = const(bb, 2.0, F32), const(bb, 1.0, F32)
            y = ins(bb, scalar.AddOp.build(ins(bb, scalar.MulOp.build(v, two)), one))
            ins(bb, StoreOp.build(y, out, [i]))
        ins(b, ForOp.build(gid, n, stride, body=loop))
    return GpuFuncOp.build(name, [device([None]), device([None]), INDEX], body)


def block_sum_kernel(block_size: int, name="block_sum") -> GpuFuncOp:
    """partial[blockIdx.x] = the sum of the elements of x this block strides over, reduced as a
    tree in shared memory with a barrier after every level (inside a loop)."""
    def body(b, x, partial, n):
        tid = ins(b, ThreadIdOp.build("x"))
        bid = ins(b, BlockIdOp.build("x"))
        bdim = ins(b, BlockDimOp.build("x"))
        gid, stride = global_id(b)
        cache = ins(b, SharedAllocOp.build((block_size,), F32))
        zero = const(b, 0.0, F32)
        acc = ins(b, ForOp.build(gid, n, stride, [zero], body=lambda bb, i, a: ins(
            bb, scalar.AddOp.build(a, ins(bb, LoadOp.build(x, [i]))))))
        ins(b, StoreOp.build(acc, cache, [tid]))
        ins(b, BarrierOp.build())
        levels = const(b, block_size.bit_length() - 1)

        def level(bb, k, width):
            half = ins(bb, scalar.FloorDivOp.build(width, const(bb, 2)))

            def add_partner(bbb):
                partner = ins(bbb, scalar.AddOp.build(tid, half))
                mine = ins(bbb, LoadOp.build(cache, [tid]))
                theirs = ins(bbb, LoadOp.build(cache, [partner]))
                ins(bbb, StoreOp.build(ins(bbb, scalar.AddOp.build(mine, theirs)), cache, [tid]))
            when(bb, tid, half, add_partner)
            ins(bb, BarrierOp.build())
            return half
        ins(b, ForOp.build(const(b, 0), levels, const(b, 1), [bdim], body=level))
        when(b, tid, const(b, 1), lambda bb: ins(
            bb, StoreOp.build(ins(bb, LoadOp.build(cache, [const(bb, 0)])), partial, [bid])))
    return GpuFuncOp.build(name, [device([None]), device([None]), INDEX], body)


def atomic_kernel(with_barrier: bool, name="count") -> GpuFuncOp:
    """tickets[gid] = atomic add of 1 to counter[0] (the old value); maximum[0] = max of gid;
    total[0] += 0.5 per thread. With ``with_barrier`` the threads of a block run together."""
    def body(b, counter, tickets, maximum, total):
        gid, _ = global_id(b)
        if with_barrier:
            ins(b, BarrierOp.build())
        zero = const(b, 0)
        ticket = ins(b, AtomicRmwOp.build("add", const(b, 1, I64), counter, [zero]))
        ins(b, StoreOp.build(ticket, tickets, [gid]))
        ins(b, AtomicRmwOp.build("max", ins(b, scalar.CastOp.build(gid, I64)), maximum, [zero]))
        ins(b, AtomicRmwOp.build("add", const(b, 0.5, F32), total, []))
    return GpuFuncOp.build(name, [device([1], I64), device([None], I64), device([1], I64),
                                  device([], F32)], body)


def divergent_kernel(name="divergent") -> GpuFuncOp:
    """Every thread but thread 0 waits at a barrier that thread 0 never reaches."""
    def body(b, x):
        tid = ins(b, ThreadIdOp.build("x"))
        when(b, const(b, 0), tid, lambda bb: ins(bb, BarrierOp.build()))
    return GpuFuncOp.build(name, [device([None])], body)


def host_module(kernel: GpuFuncOp, grid, block, module_name="kernels"):
    """A builtin.module with ``kernel`` in a gpu.module and a host function ``main`` taking the
    kernel's arguments and launching it on ``grid`` x ``block`` (static sizes)."""
    inputs = list(kernel.function_type.inputs)
    host = FuncOp.build("main", inputs, [])
    b = Builder.at_end(host.body.block)
    grid_values = [const(b, s) for s in grid]
    block_values = [const(b, s) for s in block]
    ins(b, LaunchFuncOp.build(module_name, kernel.sym_name, grid_values, block_values,
                              list(host.args)))
    b.insert(ReturnOp.create([]))
    return ModuleOp.build([GpuModuleOp.build(module_name, [kernel]), host])
