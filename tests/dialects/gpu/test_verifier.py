"""The gpu ops' verifiers: each broken rule gives a VerifyError that names the op and the rule."""
from __future__ import annotations

import pytest

import lowering.dialects  # noqa: F401  (registers every dialect)
from lowering.dialects.gpu import (AtomicRmwOp, GpuFuncOp, LaunchFuncOp, LaunchOp, ThreadIdOp,
                                   ToDeviceOp)
from lowering.dialects.loops import BufferType
from lowering.ir.core import Block, VerifyError
from lowering.ir.parser import parse_module
from lowering.ir.types import F32, I1, INDEX
from lowering.ir.verifier import verify

DEV = '!loops.buffer<?xf32, space="device">'
HOST = "!loops.buffer<?xf32>"
SIZES = "(index, index, index, index, index, index"


def _signature(args) -> tuple[str, str]:
    """``(("x", "f32"), ...)`` as the entry block's ``%x: f32, ...`` and the types ``f32, ...``."""
    return (", ".join(f"%{name}: {t}" for name, t in args), ", ".join(t for _, t in args))


def kernel(body: str, args=(("x", DEV), ("n", "index")), name: str = "k") -> str:
    """The text of a gpu.func whose body is ``body`` followed by gpu.return."""
    block_args, types = _signature(args)
    return f'''"gpu.func"() ({{
    ^bb0({block_args}):
      {body}
      "gpu.return"() : () -> ()
    }}) {{sym_name = "{name}", function_type = ({types}) -> (), kernel}} : () -> ()'''


def module(host_body: str, kernels: str = "", host_args=(("h", HOST), ("n", "index"))) -> str:
    """A builtin.module with the host function ``main`` running ``host_body`` and, when given,
    a gpu.module @kernels holding ``kernels``."""
    block_args, types = _signature(host_args)
    gpu_module = f'"gpu.module"() ({{\n{kernels}\n}}) {{sym_name = "kernels"}} : () -> ()' \
        if kernels else ""
    return f'''"builtin.module"() ({{
  {gpu_module}
  "func.func"() ({{
  ^bb0({block_args}):
    {host_body}
    "func.return"() : () -> ()
  }}) {{sym_name = "main", function_type = ({types}) -> ()}} : () -> ()
}}) : () -> ()'''


def launch_func(args="%d, %n", types=f"{DEV}, index", sizes="%n, %n, %n, %n, %n, %n",
                kernel_name="k", module_name="kernels") -> str:
    return (f'%d = "gpu.to_device"(%h) : ({HOST}) -> {DEV}\n'
            f'"gpu.launch_func"({sizes}, {args}) {{module = @{module_name}, '
            f'kernel = @{kernel_name}}} : {SIZES}, {types}) -> ()')


def check_fails(text: str, message: str) -> VerifyError:
    m = parse_module(text)
    with pytest.raises(VerifyError, match=message) as info:
        verify(m)
    return info.value


def test_a_good_module_verifies():
    verify(parse_module(module(launch_func(), kernels=kernel(
        '%t = "gpu.thread_id"() {dimension = "x"} : () -> index'))))


@pytest.mark.parametrize("op", [
    '%t = "gpu.thread_id"() {dimension = "x"} : () -> index',
    '%t = "gpu.block_id"() {dimension = "y"} : () -> index',
    '%t = "gpu.block_dim"() {dimension = "z"} : () -> index',
    '%t = "gpu.grid_dim"() {dimension = "x"} : () -> index',
    '"gpu.barrier"() : () -> ()',
    '%s = "gpu.shared_alloc"() : () -> !loops.buffer<4xf32, space="shared">',
])
def test_device_ops_outside_a_kernel(op):
    name = op.split('"')[1]
    check_fails(module(op), rf"{name} is only valid inside a gpu.func or a gpu.launch, found in "
                            r"func.func")


def test_atomic_outside_a_kernel():
    text = module(f'%v = "scalar.constant"() {{value = 1.0 : f32}} : () -> f32\n'
                  f'%d = "gpu.to_device"(%h) : ({HOST}) -> {DEV}\n'
                  f'%o = "gpu.atomic_rmw"(%v, %d, %n) {{kind = "add"}} : '
                  f'(f32, {DEV}, index) -> f32')
    check_fails(text, "gpu.atomic_rmw is only valid inside a gpu.func or a gpu.launch")


@pytest.mark.parametrize("op, message", [
    (f'%d = "gpu.to_device"(%x) : ({DEV}) -> {DEV}',
     "gpu.to_device runs on the host and cannot be used inside gpu.func"),
    (f'"gpu.memcpy"(%x, %x) : ({DEV}, {DEV}) -> ()',
     "gpu.memcpy runs on the host and cannot be used inside gpu.func"),
    ('"gpu.sync"() : () -> ()', "gpu.sync runs on the host"),
])
def test_host_ops_inside_a_kernel(op, message):
    check_fails(module("", kernels=kernel(op)), message)


def test_transfer_inside_a_kernel():
    body = f'%y = "gpu.to_host"(%x) : ({DEV}) -> {HOST}'
    check_fails(module("", kernels=kernel(body)), "gpu.to_host runs on the host and cannot be "
                                                  "used inside gpu.func")


@pytest.mark.parametrize("op, message", [
    (f'%d = "gpu.to_device"(%h) : ({HOST}) -> {HOST}',
     r'result !loops.buffer<\?xf32> should be !loops.buffer<\?xf32, space="device">'),
    (f'%d = "gpu.to_device"(%h) : ({HOST}) -> !loops.buffer<?xf32, offset=?, space="device">',
     "a fresh contiguous buffer with offset 0"),
    (f'%d = "gpu.to_device"(%h) : ({HOST}) -> !loops.buffer<3xf32, space="device">',
     "same shape and element"),
    (f'%d = "gpu.to_host"(%h) : ({HOST}) -> {HOST}',
     'gpu.to_host: operand must be a buffer in space "device"'),
    ('%d = "gpu.to_device"(%n) : (index) -> index',
     "gpu.to_device: the input must be a tensor or a buffer, got index"),
    ('%c = "tensor.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>\n'
     '%d = "gpu.to_device"(%c) : (tensor<2xf32>) -> tensor<3xf32>',
     "a tensor keeps its type, result tensor<3xf32> should be tensor<2xf32>"),
    (f'%d = "gpu.to_device"(%h) {{context = 3}} : ({HOST}) -> {DEV}',
     "attribute 'context' must be StringAttr"),
])
def test_transfer_types(op, message):
    check_fails(module(op), message)


@pytest.mark.parametrize("a, b, message", [
    ("!loops.buffer<?xf32, strides=[2]>", "!loops.buffer<?xf32>",
     r"the source must be a contiguous buffer .*, got !loops.buffer<\?xf32, strides=\[2\]>"),
    ("!loops.buffer<?xf32>", "!loops.buffer<?xf64>", 
     r"the target must be a contiguous buffer of f32 of shape \?.*, got !loops.buffer<\?xf64>"),
    ("!loops.buffer<3xf32>", "!loops.buffer<4xf32>", 
     "the target must be a contiguous buffer of f32 of shape 3 .*, got !loops.buffer<4xf32>"),
    ("!loops.buffer<3xf32>", '!loops.buffer<3xf32, space="shared">',
     'the target must be .* in space "host" or "device", got .*space="shared"'),
    ("index", HOST,
     'the source must be a contiguous buffer in space "host" or "device", got index'),
])
def test_memcpy_operands(a, b, message):
    check_fails(module(f'"gpu.memcpy"(%a, %b) : ({a}, {b}) -> ()', host_args=(("a", a), ("b", b))),
                message)


@pytest.mark.parametrize("kernel_text, message", [
    (kernel("", args=(("x", HOST),)),
     r'argument #0 has type !loops.buffer<\?xf32>; a kernel takes device buffers'),
    (kernel("", args=(("x", "tensor<2xf32>"),)), "argument #0 has type tensor<2xf32>"),
    ('"gpu.func"() ({\n^bb0(%x: f32):\n "gpu.return"() : () -> ()\n}) '
     '{sym_name = "k", function_type = (f32) -> f32, kernel} : () -> ()',
     "a kernel returns nothing"),
    ('"gpu.func"() ({\n^bb0(%x: f32):\n "gpu.return"() : () -> ()\n}) '
     '{sym_name = "k", function_type = (f32) -> ()} : () -> ()', "missing attribute 'kernel'"),
    ('"gpu.func"() ({\n^bb0(%x: f32):\n "gpu.return"() : () -> ()\n}) '
     '{sym_name = "k", function_type = (f32) -> (), kernel = 1} : () -> ()',
     "attribute 'kernel' must be UnitAttr"),
    ('"gpu.func"() ({\n^bb0(%x: f32):\n "gpu.return"() : () -> ()\n}) '
     '{sym_name = "k", function_type = (f64) -> (), kernel} : () -> ()',
     "entry block argument types differ from function_type inputs"),
    ('"gpu.func"() ({\n^bb0(%x: f32):\n "gpu.barrier"() : () -> ()\n}) '
     '{sym_name = "k", function_type = (f32) -> (), kernel} : () -> ()',
     "the body must end with gpu.return"),
    (kernel("", name="k") + "\n" + kernel("", name="k"), "kernel @k is defined twice"),
    ('"func.func"() ({\n "func.return"() : () -> ()\n}) '
     '{sym_name = "f", function_type = () -> ()} : () -> ()',
     "gpu.module holds only gpu.func kernels, found func.func"),
])
def test_kernels(kernel_text, message):
    check_fails(module("", kernels=kernel_text), message)


def test_gpu_func_outside_a_gpu_module():
    text = '"builtin.module"() ({\n' + kernel("", args=(("x", "f32"),)) + "\n}) : () -> ()"
    check_fails(text, "gpu.func must be directly inside gpu.module, found in builtin.module")


def test_gpu_module_outside_a_builtin_module():
    inner = '"gpu.module"() ({\n^bb0:\n}) {sym_name = "inner"} : () -> ()'
    text = f'"builtin.module"() ({{\n"gpu.module"() ({{\n{inner}\n}}) {{sym_name = "outer"}} ' \
           f': () -> ()\n}}) : () -> ()'
    check_fails(text, "gpu.module must be directly inside builtin.module, found in gpu.module")


def test_return_and_terminator_placement():
    launch_ending_in_return = ('"gpu.launch"(%n, %n, %n, %n, %n, %n) ({\n'
                               ' "gpu.return"() : () -> ()\n}) ' f': {SIZES}) -> ()')
    check_fails(module(launch_ending_in_return),
                "gpu.return must be directly inside gpu.func, found in gpu.launch")
    kernel_ending_in_terminator = (
        '"gpu.func"() ({\n^bb0(%x: f32):\n "gpu.terminator"() : () -> ()\n}) '
        '{sym_name = "k", function_type = (f32) -> (), kernel} : () -> ()')
    check_fails(module("", kernels=kernel_ending_in_terminator),
                "gpu.terminator must be directly inside gpu.launch, found in gpu.func")


@pytest.mark.parametrize("launch, message", [
    (launch_func(kernel_name="missing"),
     r"no kernel @kernels::@missing \(kernels of @kernels: @k\)"),
    (launch_func(module_name="nowhere"), "no gpu.module named @nowhere in the enclosing module"),
    (launch_func(module_name="main"), "@main is a func.func, not a gpu.module"),
    (launch_func(args="%d", types=DEV), r"@kernels::@k takes 2 argument\(s\), got 1"),
    (launch_func(args="%h, %n", types=f"{HOST}, index"),
     r'argument #0 has type !loops.buffer<\?xf32>, but @kernels::@k takes '
     r'!loops.buffer<\?xf32, space="device">'),
])
def test_launch_func_callee_and_arguments(launch, message):
    check_fails(module(launch, kernels=kernel("")), message)


def test_launch_sizes_must_be_index():
    text = module(f'%i = "scalar.constant"() {{value = 1 : i32}} : () -> i32\n'
                  f'%d = "gpu.to_device"(%h) : ({HOST}) -> {DEV}\n'
                  f'"gpu.launch_func"(%n, %n, %n, %n, %i, %n, %d, %n) '
                  f'{{module = @kernels, kernel = @k}} : (index, index, index, index, i32, index, '
                  f'{DEV}, index) -> ()', kernels=kernel(""))
    check_fails(text, "gpu.launch_func: the block_y must be index, got i32")


def test_launch_func_outside_a_module():
    block = Block([INDEX])
    n = block.args[0]
    op = block.append(LaunchFuncOp.build("kernels", "k", [n] * 3, [n] * 3))
    with pytest.raises(VerifyError, match=r"cannot resolve @kernels::@k outside a builtin.module"):
        op.verify_()


def test_launch_inside_a_kernel_and_its_body():
    inner = ('"gpu.launch"(%n, %n, %n, %n, %n, %n) ({\n "gpu.terminator"() : () -> ()\n}) '
             f': {SIZES}) -> ()')
    check_fails(module("", kernels=kernel(inner)),
                "gpu.launch runs on the host and cannot be used inside gpu.func")
    no_terminator = ('"gpu.launch"(%n, %n, %n, %n, %n, %n) ({\n "gpu.barrier"() : () -> ()\n}) '
                     f': {SIZES}) -> ()')
    check_fails(module(no_terminator), "gpu.launch: the body must end with gpu.terminator")
    with_args = ('"gpu.launch"(%n, %n, %n, %n, %n, %n) ({\n^bb0(%i: index):\n'
                 ' "gpu.terminator"() : () -> ()\n}) ' f': {SIZES}) -> ()')
    check_fails(module(with_args), "gpu.launch: the body block takes no arguments")


def test_launch_structure_is_checked():
    text = module('"gpu.launch"(%n, %n, %n) ({\n "gpu.terminator"() : () -> ()\n}) '
                  ': (index, index, index) -> ()')
    check_fails(text, r"expected 6 operand\(s\), got 3")


@pytest.mark.parametrize("op, message", [
    ('%t = "gpu.thread_id"() {dimension = "w"} : () -> index',
     "gpu.thread_id: attribute 'dimension' must be one of x, y, z, got 'w'"),
    ('%t = "gpu.block_id"() {dimension = "x"} : () -> i64',
     "gpu.block_id: the result must be index, got i64"),
    ('%s = "gpu.shared_alloc"() : () -> !loops.buffer<?xf32, space="shared">',
     'the result must be a static contiguous buffer with offset 0 in space "shared", got '
     r'!loops.buffer<\?xf32, space="shared">'),
    ('%s = "gpu.shared_alloc"() : () -> !loops.buffer<4xf32, space="device">',
     'the result must be .* in space "shared", got !loops.buffer<4xf32, space="device">'),
    ('%s = "gpu.shared_alloc"() : () -> !loops.buffer<4xf32, offset=2, space="shared">',
     'the result must be a static contiguous buffer with offset 0 in space "shared", got '
     '!loops.buffer<4xf32, offset=2, space="shared">'),
    ('%s = "gpu.shared_alloc"() : () -> index', "the result must be .*, got index"),
    (f'%v = "scalar.constant"() {{value = 1.0 : f32}} : () -> f32\n'
     f'%o = "gpu.atomic_rmw"(%v, %x, %n) {{kind = "mul"}} : (f32, {DEV}, index) -> f32',
     "attribute 'kind' must be one of add, max, min, exch, got 'mul'"),
    (f'%v = "scalar.constant"() {{value = 1.0 : f64}} : () -> f64\n'
     f'%o = "gpu.atomic_rmw"(%v, %x, %n) {{kind = "add"}} : (f64, {DEV}, index) -> f64',
     r"the buffer must be a buffer of f64 .*, got !loops.buffer<\?xf32, space=\"device\">"),
    (f'%v = "scalar.constant"() {{value = 1.0 : f32}} : () -> f32\n'
     f'%o = "gpu.atomic_rmw"(%v, %x, %n, %n) {{kind = "add"}} : (f32, {DEV}, index, index) -> f32',
     r"expected 1 index operand\(s\) for a rank-1 buffer, got 2"),
    (f'%v = "scalar.constant"() {{value = 1.0 : f32}} : () -> f32\n'
     f'%o = "gpu.atomic_rmw"(%v, %x, %n) {{kind = "add"}} : (f32, {DEV}, index) -> f64',
     "the result must be f32, got f64"),
    ('%v = "scalar.constant"() {value = 1.0 : f32} : () -> f32\n'
     '%s = "gpu.shared_alloc"() : () -> !loops.buffer<4xf32, space="shared">\n'
     '%i = "scalar.constant"() {value = 1 : i32} : () -> i32\n'
     '%o = "gpu.atomic_rmw"(%v, %s, %i) {kind = "min"} : '
     '(f32, !loops.buffer<4xf32, space="shared">, i32) -> f32',
     "indices #0 must be index, got i32"),
])
def test_device_op_rules(op, message):
    check_fails(module("", kernels=kernel(op)), message)


def test_atomic_rules_without_parsing():
    block = Block([I1, BufferType((2,), I1, memory_space="device"), INDEX, F32,
                   BufferType((2,), F32)])
    flag, flags, i, v, host = block.args
    launch = LaunchOp.build([i] * 3, [i] * 3)
    body = launch.body.block
    add = body.append(AtomicRmwOp.build("add", flag, flags, [i]))
    with pytest.raises(VerifyError, match='kind "add" needs a numeric element type, got i1'):
        add.verify_()
    exch = body.append(AtomicRmwOp.build("exch", flag, flags, [i]))
    exch.verify_()
    on_host = body.append(AtomicRmwOp.build("add", v, host, [i]))
    with pytest.raises(VerifyError, match='the buffer must be a buffer of f32 in space "device" '
                                          'or "shared", got !loops.buffer<2xf32>'):
        on_host.verify_structure()


def test_builders_reject_bad_arguments():
    with pytest.raises(ValueError, match="dimension must be"):
        ThreadIdOp.build("w")
    with pytest.raises(TypeError, match="grid takes 3 index values"):
        LaunchOp.build([], [])
    with pytest.raises(TypeError, match="block takes 3 index values"):
        LaunchFuncOp.build("kernels", "k", Block([INDEX] * 3).args, [])
    block = Block([F32])
    with pytest.raises(TypeError, match="expected a tensor or a buffer, got f32"):
        ToDeviceOp.build(block.args[0])


def test_verifier_error_points_at_the_op():
    error = check_fails(module('%t = "gpu.thread_id"() {dimension = "x"} : () -> index'),
                        "gpu.thread_id is only valid")
    assert error.op.name == "gpu.thread_id"


def test_a_kernel_built_without_a_body_needs_its_return():
    k = GpuFuncOp.build("k", [F32])
    with pytest.raises(VerifyError, match="the body must end with gpu.return"):
        k.verify_()
