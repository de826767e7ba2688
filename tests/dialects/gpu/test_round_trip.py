"""Every gpu op prints and parses back to the same IR (generic and default forms), and the
parsed IR verifies and runs like the built one."""
from __future__ import annotations

import numpy as np

import lowering.dialects  # noqa: F401  (registers every dialect)
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.gpu import (DIALECT, AtomicRmwOp, BarrierOp, BlockDimOp, BlockIdOp,
                                   GpuFuncOp, GpuModuleOp, GridDimOp, LaunchFuncOp, LaunchOp,
                                   MemcpyOp, SharedAllocOp, SyncOp, ThreadIdOp, ToDeviceOp, ToHostOp)
from lowering.dialects.loops import BufferType, LoadOp, StoreOp
from lowering.ir.builder import Builder
from lowering.ir.parser import parse_module
from lowering.ir.printer import print_op
from lowering.ir.types import F32, INDEX, TensorType
from lowering.ir.verifier import verify

from .kernels import block_sum_kernel, const, device, grid_stride_kernel, host_module, ins


def every_op_module() -> ModuleOp:
    """A module using every gpu op, built with the builders."""
    def kernel_body(b, x, n):
        tid = ins(b, ThreadIdOp.build("x"))
        bid = ins(b, BlockIdOp.build("y"))
        ins(b, BlockDimOp.build("z"))
        ins(b, GridDimOp.build("x"))
        shared = ins(b, SharedAllocOp.build((4, 8), F32))
        v = ins(b, LoadOp.build(x, [tid]))
        ins(b, StoreOp.build(v, shared, [bid, tid]))
        ins(b, BarrierOp.build())
        for kind in ("add", "max", "min", "exch"):
            ins(b, AtomicRmwOp.build(kind, v, x, [n]))
    kernel = GpuFuncOp.build("k", [device([None]), INDEX], kernel_body)
    host_type = BufferType((None,), F32)
    host = FuncOp.build("main", [host_type, INDEX, TensorType((2, 3), F32)],
                        [TensorType((2, 3), F32)])
    b = Builder.at_end(host.body.block)
    h, n, t = host.args
    d = ins(b, ToDeviceOp.build(h, context="dev0"))
    one = const(b, 1)
    ins(b, LaunchFuncOp.build("kernels", "k", [n, one, one], [one, one, one], [d, n]))

    def inline(bb):
        ins(bb, StoreOp.build(ins(bb, LoadOp.build(d, [ins(bb, ThreadIdOp.build("x"))])), d,
                              [one]))
    ins(b, LaunchOp.build([one, one, one], [n, one, one], inline))
    ins(b, SyncOp.build())
    back = ins(b, ToHostOp.build(d))
    ins(b, MemcpyOp.build(back, h))
    moved = ins(b, ToHostOp.build(ins(b, ToDeviceOp.build(t))))
    b.insert(ReturnOp.create([moved]))
    return ModuleOp.build([GpuModuleOp.build("kernels", [kernel]), host])


def test_every_gpu_op_round_trips_in_the_generic_form():
    module = every_op_module()
    verify(module)
    text = print_op(module, generic=True)
    used = {op.name for op in module.walk()}
    assert {op.name for op in DIALECT.ops} <= used
    parsed = parse_module(text)
    verify(parsed)
    assert print_op(parsed, generic=True) == text


def test_default_form_round_trips_with_locations():
    module = every_op_module()
    text = print_op(module, print_locations=True)
    parsed = parse_module(text)
    assert print_op(parsed, print_locations=True) == text
    assert print_op(parsed, generic=True) == print_op(module, generic=True)


def test_parsed_kernels_compute_what_the_built_ones_do():
    for kernel, block in ((grid_stride_kernel(), 32), (block_sum_kernel(32), 32)):
        module = host_module(kernel, grid=(2, 1, 1), block=(block, 1, 1))
        parsed = parse_module(print_op(module, generic=True))
        verify(parsed)
        x = np.linspace(-1, 1, 100, dtype=np.float32)
        results = []
        for m in (module, parsed):
            out = np.zeros(100, np.float32)
            run_function(m.lookup("main"), [x, out, np.int64(100)])
            results.append(out)
        np.testing.assert_array_equal(results[0], results[1])


def test_generic_text_of_the_kernel_attributes():
    text = print_op(host_module(grid_stride_kernel(), (1, 1, 1), (1, 1, 1)), generic=True)
    assert 'sym_name = "kernels"' in text
    assert "kernel = unit" in text
    assert "{module = @kernels, kernel = @affine}" in text
