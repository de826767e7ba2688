"""The host program of a GPU function (gpu_host) on the interpreted device (gpu_device), from
gpu-stage IR written by hand: transfers, launches, views of device memory, checks, loops,
custom host rules, counters and timing."""
from __future__ import annotations

import numpy as np
import pytest

import lowering.dialects  # noqa: F401  (registers every op)
from lowering.compile.gpu.arrays import SimulatedGpuArray
from lowering.compile.gpu.build import GpuProgram
from lowering.compile.gpu.device import (DeviceCounters, InterpretedDevice, kernel_arguments,
                                         pack_kernel_arguments)
from lowering.compile.gpu.host import GPU_HOST, HostProgram, HostProgramError, host_rule
from lowering.config import config
from lowering.dialects.test import GenericOp
from lowering.dialects.loops import RuntimeCheckError
from lowering.ir.parser import parse_module

DEV = '!loops.buffer<?xf32, space="device">'
HOST_ANY = "!loops.buffer<?xf32, strides=[?], offset=?>"
HOST = "!loops.buffer<?xf32>"

# A kernel computing out[i] = exp(a[i]) * s for i < n, one element per thread.
EXP_KERNEL = f'''
  "gpu.module"() ({{
    "gpu.func"() ({{
    ^bb0(%a: {DEV}, %o: {DEV}, %s: f32, %n: index):
      %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
      %tid = "gpu.thread_id"() {{dimension = "x"}} : () -> index
      %bid = "gpu.block_id"() {{dimension = "x"}} : () -> index
      %dim = "gpu.block_dim"() {{dimension = "x"}} : () -> index
      %base = "scalar.mul"(%bid, %dim) : (index, index) -> index
      %i = "scalar.add"(%base, %tid) : (index, index) -> index
      %inside = "scalar.lt"(%i, %n) : (index, index) -> i1
      %next = "scalar.add"(%i, %c1) : (index, index) -> index
      %end = "scalar.select"(%inside, %next, %i) : (i1, index, index) -> index
      loops.for %k = %i to %end step %c1 {{
        %v = loops.load %a[%k] : {DEV}
        %e = "scalar.exp"(%v) : (f32) -> f32
        %r = "scalar.mul"(%e, %s) : (f32, f32) -> f32
        loops.store %r, %o[%k] : {DEV}
        loops.yield
      }}
      "gpu.return"() : () -> ()
    }}) {{sym_name = "exp_scaled", function_type = ({DEV}, {DEV}, f32, index) -> (), kernel}} : () -> ()
  }}) {{sym_name = "kernels"}} : () -> ()
'''


def exp_program(extra: str = "", result: str = "%r", result_type: str = HOST) -> str:
    """A host function: x to the device, the kernel over it, the result back (or not)."""
    return f'''
"builtin.module"() ({{
  func.func @f(%x: {HOST_ANY}, %s: !loops.buffer<f32>) -> {result_type} {{
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %c32 = "scalar.constant"() {{value = 32 : index}} : () -> index
    %c31 = "scalar.constant"() {{value = 31 : index}} : () -> index
    %scale = loops.load %s[] : !loops.buffer<f32>
    %d = "gpu.to_device"(%x) {{context = "cuda"}} : ({HOST_ANY}) -> {DEV}
    %n = loops.dim %d, 0 : {DEV}
    %out = loops.alloc(%n) : {DEV}
    %t = "scalar.add"(%n, %c31) : (index, index) -> index
    %g = "scalar.floordiv"(%t, %c32) : (index, index) -> index
    "gpu.launch_func"(%g, %c1, %c1, %c32, %c1, %c1, %d, %out, %scale, %n) {{kernel = @exp_scaled, module = @kernels}} : (index, index, index, index, index, index, {DEV}, {DEV}, f32, index) -> ()
    loops.dealloc %d : {DEV}
    {extra}
    %r = "gpu.to_host"(%out) {{context = "cuda"}} : ({DEV}) -> {HOST}
    func.return {result} : {result_type}
  }}
{EXP_KERNEL}
}}) : () -> ()
'''


def program(text: str, device=None, context=None) -> HostProgram:
    module = parse_module(text, context=context)
    device = device or InterpretedDevice("cuda")
    device.load(GpuProgram(module, "cuda", 32))
    return HostProgram(module.functions[0], device)


def test_transfers_and_a_launch_compute_what_numpy_does():
    p = program(exp_program())
    x = np.linspace(-2, 2, 70, dtype=np.float32)
    (out,) = p.run([x, np.array(3.0, np.float32)])
    np.testing.assert_allclose(out, np.exp(x) * 3, rtol=1e-6)
    counters = p.device.counters
    assert (counters.to_device, counters.to_host, counters.launches) == (1, 1, 1)
    assert (counters.bytes_to_device, counters.bytes_to_host) == (x.nbytes, x.nbytes)
    assert counters.allocations == 2 and counters.frees == 1  # to_device's copy and %out


def test_strided_host_input_reaches_the_device_contiguous():
    p = program(exp_program())
    x = np.arange(20, dtype=np.float32)[::-3] / 10
    (out,) = p.run([x, np.array(1.0, np.float32)])
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)


def test_an_empty_array_launches_nothing():
    p = program(exp_program())
    (out,) = p.run([np.zeros(0, np.float32), np.array(1.0, np.float32)])
    assert out.shape == (0,) and p.device.counters.launches == 0


def test_a_result_kept_on_the_device_is_a_device_array():
    p = program(exp_program(result="%out", result_type=DEV))
    x = np.ones(5, np.float32)
    (out,) = p.run([x, np.array(2.0, np.float32)])
    assert isinstance(out, SimulatedGpuArray)
    np.testing.assert_allclose(out.get(), np.full(5, 2 * np.e, np.float32), rtol=1e-6)


def test_freed_device_memory_is_poisoned():
    device = InterpretedDevice("cuda")
    a = device.to_device(np.ones(3, np.float32))
    view = device.view(a, (3,), (1,), 0)
    device.free(a)
    assert np.isnan(view.get()).all()


@pytest.mark.parametrize("flags", [{"gpuarray.sync": True}, {}])
def test_blocking_launches_wait_for_the_device(flags, monkeypatch):
    if not flags:
        monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    p = program(exp_program())
    with config.change_flags(flags):
        p.run([np.ones(40, np.float32), np.array(1.0, np.float32)])
    assert p.device.counters.syncs == p.device.counters.launches == 1


def test_launches_do_not_wait_by_default(monkeypatch):
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING", raising=False)
    p = program(exp_program())
    p.run([np.ones(40, np.float32), np.array(1.0, np.float32)])
    assert p.device.counters.syncs == 0


CHECKS = f'''
"builtin.module"() ({{
  func.func @f(%x: !loops.buffer<?x?xf32>) -> !loops.buffer<?x?xf32> {{
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %d = "gpu.to_device"(%x) {{context = "cuda"}} : (!loops.buffer<?x?xf32>) -> !loops.buffer<?x?xf32, space="device">
    %rows = loops.dim %d, 0 : !loops.buffer<?x?xf32, space="device">
    %last = "scalar.sub"(%rows, %c1) : (index, index) -> index
    %row = loops.subview %d[%last, 0] [1, 3] [1, 2] drop_dims [0] : !loops.buffer<?x?xf32, space="device"> -> !loops.buffer<3xf32, strides=[2], offset=?, space="device">
    %t = loops.transpose_view %d [1, 0] : !loops.buffer<?x?xf32, space="device"> -> !loops.buffer<?x?xf32, strides=[1, ?], space="device">
    %s = loops.stride %t, 1 : !loops.buffer<?x?xf32, strides=[1, ?], space="device">
    %ok = "scalar.eq"(%s, %c1) : (index, index) -> i1
    loops.assert %ok, "tensor.foo at a.py:7:1: rows must have one element" {{error_code = 4 : i64}}
    %flat = loops.reshape_view %d(%rows) : !loops.buffer<?x?xf32, space="device"> -> !loops.buffer<?x1xf32, space="device">
    %wide = loops.broadcast_view %flat(%rows) : !loops.buffer<?x1xf32, space="device"> -> !loops.buffer<?x?xf32, strides=[1, 0], space="device">
    %h = "gpu.to_host"(%wide) {{context = "cuda"}} : (!loops.buffer<?x?xf32, strides=[1, 0], space="device">) -> !loops.buffer<?x?xf32>
    func.return %h : !loops.buffer<?x?xf32>
  }}
}}) : () -> ()
'''


def test_failed_checks_and_bad_views_raise_what_the_cpu_backend_raises():
    p = program(CHECKS)
    # A row of 3 elements with step 2 does not fit in 2 columns: an IndexError naming the op.
    with pytest.raises(IndexError, match="loops.subview at .*out of bounds"):
        p.run([np.zeros((2, 2), np.float32)])
    # The transposed view's stride is 1 only for one-column inputs: the check fails here.
    with pytest.raises(RuntimeCheckError, match="^tensor.foo at a.py:7:1: rows must have one"):
        p.run([np.zeros((3, 6), np.float32)])
    # One column passes the check, and then a row of 3 elements does not fit in it.
    with pytest.raises(IndexError, match="loops.subview"):
        p.run([np.zeros((5, 1), np.float32)])


def test_broadcast_and_reshape_views_of_device_memory():
    text = CHECKS.replace("[1, 3] [1, 2]", "[1, 1] [1, 1]").replace(
        "!loops.buffer<3xf32, strides=[2], offset=?, space=\"device\">",
        "!loops.buffer<1xf32, offset=?, space=\"device\">")
    p = program(text)
    column = np.arange(5, dtype=np.float32).reshape(5, 1)
    (out,) = p.run([column])
    np.testing.assert_array_equal(out, np.broadcast_to(column, (5, 5)))


def test_views_read_the_right_device_elements():
    module = f'''
"builtin.module"() ({{
  func.func @f(%x: !loops.buffer<?x?xf32>) -> !loops.buffer<?x?xf32> {{
    %c1 = "scalar.constant"() {{value = 1 : index}} : () -> index
    %d = "gpu.to_device"(%x) {{context = "cuda"}} : (!loops.buffer<?x?xf32>) -> !loops.buffer<?x?xf32, space="device">
    %rows = loops.dim %d, 0 : !loops.buffer<?x?xf32, space="device">
    %cols = loops.dim %d, 1 : !loops.buffer<?x?xf32, space="device">
    %r1 = "scalar.sub"(%rows, %c1) : (index, index) -> index
    %c2 = "scalar.floordiv"(%cols, %c1) : (index, index) -> index
    %part = loops.subview %d[1, 0] [%r1, %c2] [1, 1] : !loops.buffer<?x?xf32, space="device"> -> !loops.buffer<?x?xf32, strides=[?, 1], offset=?, space="device">
    %t = loops.transpose_view %part [1, 0] : !loops.buffer<?x?xf32, strides=[?, 1], offset=?, space="device"> -> !loops.buffer<?x?xf32, strides=[1, ?], offset=?, space="device">
    %h = "gpu.to_host"(%t) {{context = "cuda"}} : (!loops.buffer<?x?xf32, strides=[1, ?], offset=?, space="device">) -> !loops.buffer<?x?xf32>
    func.return %h : !loops.buffer<?x?xf32>
  }}
}}) : () -> ()
'''
    p = program(module)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = p.run([x])
    np.testing.assert_array_equal(out, x[1:].T)


def test_loops_around_launches_run_them_each_time():
    extra = f'''%c0 = "scalar.constant"() {{value = 0 : index}} : () -> index
    %c3 = "scalar.constant"() {{value = 3 : index}} : () -> index
    loops.for %i = %c0 to %c3 step %c1 {{
      "gpu.launch_func"(%g, %c1, %c1, %c32, %c1, %c1, %out, %out, %scale, %n) {{kernel = @exp_scaled, module = @kernels}} : (index, index, index, index, index, index, {DEV}, {DEV}, f32, index) -> ()
      loops.yield
    }}'''
    p = program(exp_program(extra))
    x = np.full(3, -10.0, np.float32)
    (out,) = p.run([x, np.array(1.0, np.float32)])
    np.testing.assert_allclose(out, np.exp(np.exp(np.exp(np.exp(x)))), rtol=1e-6)
    assert p.device.counters.launches == 4


def test_custom_ops_run_through_their_host_rules(test_context):
    def twice(op, args, device):
        host = device.to_host(args[0])
        return [device.to_device(host * 2)]

    with GPU_HOST.registered(GenericOp, host_rule(twice)):
        extra = f'%twice = "test.op"(%out) : ({DEV}) -> {DEV}'
        text = exp_program(extra).replace('"gpu.to_host"(%out)', '"gpu.to_host"(%twice)')
        p = program(text, context=test_context)
        (out,) = p.run([np.zeros(4, np.float32), np.array(1.0, np.float32)])
    np.testing.assert_array_equal(out, np.full(4, 2.0, np.float32))


def test_an_op_on_device_memory_without_a_host_step_is_refused_by_name():
    text = exp_program('%v = loops.load %out[%c1] : ' + DEV)
    with pytest.raises(HostProgramError, match="loops.load at .* works on device memory"):
        program(text)


def test_a_transfer_to_another_context_is_refused():
    text = exp_program().replace('(%x) {context = "cuda"}', '(%x) {context = "dev1"}')
    with pytest.raises(HostProgramError, match="context 'dev1'.*one context"):
        program(text)


def test_timed_runs_report_each_step_with_its_kind():
    p = program(exp_program())
    seen = []
    p.run_timed([np.ones(8, np.float32), np.array(1.0, np.float32)],
                lambda step, seconds, frame: seen.append((step.op.name, step.kind, seconds())))
    assert [(name, kind) for name, kind, _ in seen] == [
        ("loops.load", "cpu"), ("gpu.to_device", "transfer"), ("loops.alloc", "gpu"),
        ("gpu.launch_func", "gpu"), ("loops.dealloc", "gpu"), ("gpu.to_host", "transfer")]
    assert all(seconds >= 0 for _, _, seconds in seen)


def test_counters_snapshot_and_difference():
    counters = DeviceCounters()
    before = counters.snapshot()
    counters.launches += 2
    assert counters.since(before)["launches"] == 2
    counters.reset()
    assert counters.launches == 0


def test_kernel_arguments_follow_the_kernel_abi():
    module = parse_module(exp_program())
    kernel = module.body.block.last_op.kernels[0]
    layout = kernel_arguments(kernel)
    assert layout == (("buffer", 1), ("buffer", 1), ("scalar", np.float32),
                      ("scalar", np.int64))
    a = np.zeros(6, np.float32)[::2]
    packed = pack_kernel_arguments(layout, [a, a, np.float32(0.5), np.int64(3)],
                                   lambda array: 1000)
    assert packed == [1000, 3, 2, 1000, 3, 2, 0.5, 3]
