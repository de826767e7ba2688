"""``to-ptx``: a ``gpu.module`` of kernels to PTX through llvmlite's NVPTX target.

``translate_gpu_module(gpu_module, arch, fast_math)`` gives a :class:`PtxModule`: the LLVM IR
of the kernels, the PTX text the CUDA driver loads (``module_from_buffer``) and, for every
kernel, its parameter format in PyCUDA's prepared-call notation (the kernel ABI, in
``gpu.kernels``; ``kernel_param_format(func_op)`` gives it for one kernel).

Each ``gpu.func`` becomes a ``ptx_kernel`` function, a ``.entry`` of the same name. Its body is
lowered by the CPU backend's rules (loops, loads and stores, views, scalar ops: one description
of each op) with the GPU's own rules where code differs (``gpu.ops``: thread ids,
barriers, shared memory, atomics, math functions, thread-private allocations). The module is
optimized by LLVM's O3 pipeline for the target and printed as PTX for ``arch``, declaring the
oldest PTX ISA version the architecture allows (``gpu.target``). ``ptxas.assemble_ptx``
checks it without a GPU.

By default every operation computes what the scalar dialect says, as on the CPU: IEEE division
and square root, subnormals kept, no contraction into ``fma``, the vector math library's
functions. ``fast_math=True`` (what the flag ``nvcc.fastmath`` asks for) trades f32 accuracy
for speed as ``--use_fast_math`` does (``gpu.kernel_math``).

>>> from lowering.ir.parser import parse_module
>>> module = parse_module('''
... "gpu.module"() ({
...   "gpu.func"() ({
...   ^bb0(%x: !loops.buffer<?xf32, space="device">):
...     %i = "gpu.thread_id"() {dimension = "x"} : () -> index
...     %v = loops.load %x[%i] : !loops.buffer<?xf32, space="device">
...     %y = "scalar.exp"(%v) : (f32) -> f32
...     loops.store %y, %x[%i] : !loops.buffer<?xf32, space="device">
...     "gpu.return"() : () -> ()
...   }) {sym_name = "exp_in_place", function_type = (!loops.buffer<?xf32, space="device">) -> (),
...       kernel} : () -> ()
... }) {sym_name = "kernels"} : () -> ()''')
>>> ptx = translate_gpu_module(module, arch="sm_80")
>>> ptx.kernels
{'exp_in_place': 'Pqq'}
>>> ".entry exp_in_place(" in ptx.ptx and ".target sm_80" in ptx.ptx
True
"""
from __future__ import annotations

from dataclasses import dataclass, field

import llvmlite.binding as llvm

from lowering.dialects.builtin.ops import ModuleOp
from lowering.dialects.gpu import GpuModuleOp
from lowering.ir.core import Operation

from ..jit import _lock as llvm_lock  # LLVM's global state is shared with the CPU backend
from ..cpu.context import ModuleLowering, TranslationError
from .kernels import declare_max_threads, define_kernel, kernel_param_format
from .kernel_math import GpuMath
from .target import (NVPTX_TRIPLE, arch_number, check_arch, default_arch, nvptx_target_machine,
                     ptx_isa)

__all__ = ["PtxModule", "translate_gpu_module", "kernel_param_format", "emit_ptx",
           "default_arch", "optimize_and_emit"]

# fast-math: f32 operations flush subnormal inputs and results to zero (PTX ``.ftz``).
_FLUSH_TO_ZERO = '"denormal-fp-math-f32"="preserve-sign,preserve-sign"'


@dataclass(frozen=True)
class PtxModule:
    """What ``to-ptx`` produces: ``llvm_ir`` (the kernels as LLVM IR, before optimization),
    ``ptx`` (the text the driver loads), ``kernels`` (kernel name -> PyCUDA parameter format,
    in the module's order), ``arch`` (``sm_90``), ``fast_math`` and ``max_threads`` (kernel
    name -> the launch bound declared in the PTX, ``.maxntid``, for the kernels given one)."""

    llvm_ir: str
    ptx: str
    kernels: dict[str, str]
    arch: str
    fast_math: bool
    max_threads: dict[str, int] = field(default_factory=dict)


def _gpu_module(op: Operation) -> GpuModuleOp:
    if isinstance(op, GpuModuleOp):
        return op
    if isinstance(op, ModuleOp):
        found = [o for o in op.body.block.ops if isinstance(o, GpuModuleOp)]
        if len(found) == 1:
            return found[0]
        raise TranslationError(f"to-ptx translates one gpu.module; the builtin.module holds "
                               f"{len(found)}", op)
    raise TranslationError(f"to-ptx translates a gpu.module, got {op.name}", op)


def optimize_and_emit(llvm_ir: str, arch: str, opt: int = 3) -> str:
    """LLVM IR text of kernels -> PTX for ``arch`` after LLVM's O``opt`` pipeline."""
    tm = nvptx_target_machine(arch)
    with llvm_lock:
        module = llvm.parse_assembly(llvm_ir)
        module.triple = NVPTX_TRIPLE
        module.data_layout = str(tm.target_data)
        module.verify()
        if opt > 0:
            pto = llvm.create_pipeline_tuning_options(speed_level=opt)
            pass_builder = llvm.create_pass_builder(tm, pto)
            pass_builder.getModulePassManager().run(module, pass_builder)
        return tm.emit_assembly(module)


def translate_gpu_module(gpu_module_op: Operation, arch: str = "sm_90",
                         fast_math: bool = False,
                         max_threads: dict[str, int] | None = None) -> PtxModule:
    """Translate every kernel of ``gpu_module_op`` (a ``gpu.module``, or a ``builtin.module``
    holding exactly one) to PTX for ``arch``.

    ``max_threads`` (kernel name -> threads) declares each kernel's launch bound, the most
    threads a block it is launched with has (``.maxntid``): ptxas then keeps its registers few
    enough for a block that size, and the driver refuses bigger blocks."""
    check_arch(arch)
    gpu_module = _gpu_module(gpu_module_op)
    state = ModuleLowering(num_threads=1, parallel_threshold=1 << 62,
                           name=f"lowering.gpu.{gpu_module.sym_name}")
    state.module.triple = NVPTX_TRIPLE
    state.module.data_layout = str(nvptx_target_machine(arch).target_data)
    math = GpuMath(fast=fast_math, approx_tanh=arch_number(arch) >= 75 and ptx_isa(arch) >= (7, 0))
    kernels = {}
    for kernel in gpu_module.kernels:
        fn = define_kernel(state, kernel, math)
        kernels[kernel.sym_name] = kernel_param_format(kernel)
        bound = (max_threads or {}).get(kernel.sym_name)
        if bound is not None:
            declare_max_threads(state.module, fn, bound)
    if fast_math:
        for fn in state.module.functions:
            if not fn.is_declaration:
                # llvmlite knows no string attributes: added to the set, printed as given.
                set.add(fn.attributes, _FLUSH_TO_ZERO)
    llvm_ir = str(state.module)
    bounds = {k: int(v) for k, v in (max_threads or {}).items() if k in kernels}
    return PtxModule(llvm_ir, optimize_and_emit(llvm_ir, arch), kernels, arch, fast_math, bounds)


def emit_ptx(module: Operation, arch: str | None = None, fast_math: bool = False) -> str:
    """The PTX of the gpu.module in ``module`` (``lowering-opt --emit ptx``); ``arch`` defaults
    to ``default_arch()``."""
    return translate_gpu_module(module, arch or default_arch(), fast_math).ptx
