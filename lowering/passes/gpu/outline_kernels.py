"""``outline-kernels``: each ``gpu.launch`` becomes a ``gpu.func`` kernel in the module's
``gpu.module @kernels`` and a ``gpu.launch_func`` in its place.

The values the launch body uses from outside become the kernel's arguments, in first-use
order: device buffers (with their layout, as their types say) and scalars. Scalar constants are
copied into the kernel instead of passed. A body using anything else (a host buffer, a tensor)
is an error naming the value. Kernels are named by what they do, from the ``kernel_name``
attribute ``map-to-gpu`` puts on each launch (``kernel`` without one), numbered in program order
across the module: ``fused_0``, ``sum_1``, ``gemm_2``.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> m = parse_module('''
... func.func @f(%x: !loops.buffer<8xf32, space="device">) {
...   %c1 = "scalar.constant"() {value = 1 : index} : () -> index
...   %c8 = "scalar.constant"() {value = 8 : index} : () -> index
...   %two = "scalar.constant"() {value = 2.0 : f32} : () -> f32
...   "gpu.launch"(%c1, %c1, %c1, %c8, %c1, %c1) ({
...     %i = "gpu.thread_id"() {dimension = "x"} : () -> index
...     loops.store %two, %x[%i] : !loops.buffer<8xf32, space="device">
...     "gpu.terminator"() : () -> ()
...   }) {kernel_name = "fill"} : (index, index, index, index, index, index) -> ()
...   func.return
... }''')
>>> OutlineKernels().apply(m)
>>> launch = [op for op in m.functions[0].body.block.ops if op.name == "gpu.launch_func"][0]
>>> launch.kernel, [a.name_hint for a in launch.args]
('fill_0', ['x'])
>>> [op.name for op in m.lookup("kernels").lookup("fill_0").body.block.ops]
['scalar.constant', 'gpu.thread_id', 'loops.store', 'gpu.return']
"""
from __future__ import annotations

from lowering.dialects import scalar
from lowering.dialects.builtin import ModuleOp
from lowering.dialects.gpu import (GpuFuncOp, GpuModuleOp, LaunchFuncOp, LaunchOp, ReturnOp,
                                   TerminatorOp, captured_values, is_kernel_argument_type)
from lowering.ir.core import Operation, OpResult, Value
from lowering.ir.passes import ModulePass, PassFailure, option, register_pass


@register_pass
class OutlineKernels(ModulePass):
    """Move each gpu.launch body into a gpu.func kernel launched by gpu.launch_func."""

    name = "outline-kernels"
    module_name: str = option("kernels", "the gpu.module that receives the kernels")

    def apply(self, module: Operation) -> None:
        launches = [op for op in module.walk() if isinstance(op, LaunchOp)]
        if not launches:
            return
        if not isinstance(module, ModuleOp):
            raise PassFailure(f"outline-kernels: runs on a builtin.module, got {module.name}",
                              module)
        kernels = kernel_module(module, self.module_name)
        names = KernelNames(kernels)
        for launch in launches:
            outline(launch, kernels, names.next(launch.get_attr("kernel_name") or "kernel"))


def kernel_module(module: ModuleOp, name: str) -> GpuModuleOp:
    """The ``gpu.module @name`` of ``module``, made at its end when it has none."""
    found = module.lookup(name)
    if found is None:
        found = module.body.block.append(GpuModuleOp.build(name, location=module.location))
    elif not isinstance(found, GpuModuleOp):
        raise PassFailure(f"outline-kernels: @{name} is a {found.name}, not a gpu.module", found)
    return found


class KernelNames:
    """``hint_n`` names, ``n`` counting every kernel named so far, skipping names taken.

    >>> names = KernelNames(GpuModuleOp.build("kernels"))
    >>> names.next("fused"), names.next("sum")
    ('fused_0', 'sum_1')
    """

    def __init__(self, kernels: GpuModuleOp):
        self.taken = {k.sym_name for k in kernels.kernels}
        self.count = 0

    def next(self, hint: str) -> str:
        while True:
            name = f"{hint}_{self.count}"
            self.count += 1
            if name not in self.taken:
                self.taken.add(name)
                return name


def _is_constant(value: Value) -> bool:
    return isinstance(value, OpResult) and isinstance(value.op, scalar.ConstantOp)


def outline(launch: LaunchOp, kernels: GpuModuleOp, name: str) -> LaunchFuncOp:
    """Move ``launch``'s body into kernel ``name`` of ``kernels``; returns the launch_func
    that replaces it."""
    captured = captured_values(launch)
    constants = [v for v in captured if _is_constant(v)]
    args = [v for v in captured if not _is_constant(v)]
    for v in args:
        if not is_kernel_argument_type(v.type):
            what = f"%{v.name_hint}" if v.name_hint else f"a value of {_origin(v)}"
            raise PassFailure(f"outline-kernels: the kernel at {launch.location.short()} uses "
                              f"{what} of type {v.type}; a kernel takes only device buffers "
                              f"(space \"device\") and scalars", launch)
    kernel = GpuFuncOp.build(name, [v.type for v in args], location=launch.location)
    block = kernel.body.block
    value_map: dict[Value, Value] = {}
    for outer, arg in zip(args, block.args):
        arg.name_hint = outer.name_hint
        value_map[outer] = arg
    for c in constants:
        copy = block.append(c.op.clone({}))
        value_map[c] = copy.result
    for op in launch.body.block.ops:
        if not isinstance(op, TerminatorOp):
            block.append(op.clone(value_map))
    block.append(ReturnOp.build(location=launch.location))
    kernels.body.block.append(kernel)
    call = LaunchFuncOp.build(kernels.sym_name, name, launch.grid_sizes, launch.block_sizes, args,
                              location=launch.location)
    launch.parent.insert_before(call, launch)
    launch.erase()
    return call


def _origin(value: Value) -> str:
    owner = value.owner
    return owner.name if isinstance(owner, Operation) else "a block argument"
