"""Kernel bodies in LLVM IR for NVPTX: the gpu ops, and where kernel code differs from the CPU's.

A kernel body is lowered by :class:`KernelLowering`, a ``FunctionLowering`` that looks up the
rules of this module first (the ``GPU_KERNEL`` rule table) and, through its fallback, the CPU
backend's rules (``CPU_LOWERING``) for everything else: loops, loads and stores, views, copies
and fills are the same code on both. Ops that exist on the CPU but not in a kernel are declared
unsupported there, with the reason.

- ``gpu.thread_id``/``block_id``/``block_dim``/``grid_dim`` read PTX's special registers
  (``llvm.nvvm.read.ptx.sreg.tid.x``, ``ctaid``, ``ntid``, ``nctaid``), widened to ``index``;
- ``gpu.barrier`` is ``llvm.nvvm.barrier0`` (``bar.sync 0``, CUDA's
  ``__syncthreads``);
- ``gpu.shared_alloc`` is one ``addrspace(3)`` global per op (``.shared`` in PTX), used through
  a generic pointer that LLVM's address-space inference turns back into ``ld.shared`` and
  ``st.shared``;
- ``gpu.atomic_rmw`` is an ``atomicrmw`` (``add``/``fadd``, ``max``/``umax``, ``min``/``umin``,
  ``xchg``; relaxed, device scope on device memory, block scope on shared memory), except for
  float ``max``/``min``: a compare-and-swap loop storing the scalar dialect's ``maximum`` or
  ``minimum`` of the old element and the value, so that NaN propagates as everywhere else
  (LLVM's ``atomicrmw fmax`` ignores NaN);
- scalar ops are the CPU's ``ScalarEmitter`` with the GPU's math functions (``GpuMath``) and,
  in fast-math mode, approximate f32 ``div``, ``reciprocal`` and ``sqrt``;
- ``loops.alloc`` of a static shape is thread-private memory (an ``alloca``: PTX local memory,
  registers once LLVM promotes it) and its ``loops.dealloc`` frees nothing; a run-time size is
  a translation error, as is a call (``loops.call``, ``func.call``) in a kernel;
- a failing run-time check of the shared rules (a window out of bounds, a step that is not
  positive, a ``loops.assert``) executes ``trap``: the launch fails with an error the host
  sees when it synchronizes, instead of running on with wrong memory.

>>> sorted(c.name[4:] for c in GPU_KERNEL.classes() if c.name.startswith("gpu."))
... # doctest: +NORMALIZE_WHITESPACE
['atomic_rmw', 'barrier', 'block_dim', 'block_id', 'grid_dim', 'shared_alloc',
 'thread_id']
>>> GPU_KERNEL.find(LoadOp) is CPU_LOWERING.find(LoadOp), GPU_KERNEL.unsupported_reason(CallOp)
(True, 'external functions (BLAS, C) cannot be called from a GPU kernel')
"""
from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from lowering.dialects import builtin
from lowering.dialects.gpu import (AtomicRmwOp, BarrierOp, BlockDimOp, BlockIdOp, GridDimOp,
                                   SharedAllocOp, ThreadIdOp)
from lowering.dialects.loops import AllocOp, BufferType, CallOp, DeallocOp, LoadOp
from lowering.dialects.loops import PythonCallOp, PythonResultsOp
from lowering.dialects.scalar import MaximumOp, MinimumOp, ScalarOp, allows_reassociation
from lowering.ir.core import OpResult, Operation
from lowering.ir.rules import RuleTable
from lowering.ir.types import F32

# Importing the CPU backend's rule modules registers the rules kernels share with it.
from ..cpu import (control as lower_control, memory as lower_memory, scalar as lower_scalar,
                   views as lower_views)  # noqa: F401
from ..cpu.casts import convert, narrow, work_type
from ..cpu.context import (CPU_LOWERING, FunctionLowering, ModuleLowering, buffer_of,
                           translation_error)
from .kernel_math import GpuMath, KernelBuilder, fast_divide, fast_sqrt
from ..cpu.memory import element_address
from ..cpu.scalar import ScalarEmitter
from ..cpu.values import FLOAT, I8, I32, I64, VOID, make_buffer, memory_type

KernelRule = Callable[["KernelLowering", Operation], list]
GPU_KERNEL = RuleTable("GPU kernel lowering", fallback=CPU_LOWERING,
                       hint="kernels hold loops, scalar and gpu ops")

# Ops that exist on the CPU but cannot run inside a kernel.
GPU_KERNEL.unsupported(CallOp, "external functions (BLAS, C) cannot be called from a GPU kernel")
GPU_KERNEL.unsupported(builtin.CallOp, "a kernel cannot call a host function")
GPU_KERNEL.unsupported(builtin.ReturnOp, "a kernel ends with gpu.return")
for _python_op in (PythonCallOp, PythonResultsOp):
    GPU_KERNEL.unsupported(_python_op, "Python code runs on the host (the GPU's host program "
                                       "runs tensor.custom)")

_ADDRESS_SPACE_SHARED = 3
_SHARED_ALIGNMENT = 16


def trap(fl: FunctionLowering, code: ir.Value) -> None:
    """The failure handler of kernels: abort the launch (PTX ``trap``)."""
    fn = fl.state.function("llvm.trap", ir.FunctionType(VOID, []))
    fl.builder.call(fn, [])
    fl.builder.unreachable()


class KernelLowering(FunctionLowering):
    """Lowers one kernel body: kernel rules first, the CPU backend's rules for the rest.

    ``math`` gives the math functions (and says whether fast-math mode is on); nested parallel
    loops run sequentially in the thread (``outlined``).
    """

    rules = GPU_KERNEL

    def __init__(self, state: ModuleLowering, fn: ir.Function, math: GpuMath):
        super().__init__(state, fn, trap, outlined=True)
        self.math = math
        self.builder = KernelBuilder(self.builder.block, contract=math.fast)


# ---------------------------------------------------------------------------------------------
# Thread and block ids, barriers


_SPECIAL_REGISTERS = {ThreadIdOp: "tid", BlockIdOp: "ctaid", BlockDimOp: "ntid",
                      GridDimOp: "nctaid"}


@GPU_KERNEL.register(*_SPECIAL_REGISTERS)
def _special_register(fl: KernelLowering, op):
    name = f"llvm.nvvm.read.ptx.sreg.{_SPECIAL_REGISTERS[type(op)]}.{op.get_attr('dimension')}"
    fn = fl.state.function(name, ir.FunctionType(I32, []))
    return [fl.builder.zext(fl.builder.call(fn, []), I64)]


@GPU_KERNEL.register(BarrierOp)
def _barrier(fl: KernelLowering, op):
    # The name LLVM 20 knows; LLVM 22 reads it as llvm.nvvm.barrier.cta.sync.aligned.all(0).
    fn = fl.state.function("llvm.nvvm.barrier0", ir.FunctionType(VOID, []))
    fl.builder.call(fn, [])
    return []


# ---------------------------------------------------------------------------------------------
# Memory


@GPU_KERNEL.register(SharedAllocOp)
def _shared_alloc(fl: KernelLowering, op):
    t = op.result.type
    count = 1
    for size in t.shape:
        count *= size
    element = memory_type(t.element)
    storage = ir.GlobalVariable(fl.state.module, ir.ArrayType(element, count),
                                fl.state.unique_name("lowering.shared"),
                                addrspace=_ADDRESS_SPACE_SHARED)
    storage.linkage = "internal"
    storage.initializer = ir.Constant(storage.value_type, ir.Undefined)
    storage.align = _SHARED_ALIGNMENT
    b = fl.builder
    first = b.bitcast(storage, element.as_pointer(_ADDRESS_SPACE_SHARED))
    generic = b.addrspacecast(first, element.as_pointer())
    return [make_buffer(b, t, generic, [ir.Constant(I64, d) for d in t.shape])]


@GPU_KERNEL.register(AllocOp)
def _thread_private_alloc(fl: KernelLowering, op):
    t = op.result.type
    if t.dynamic_dims:
        raise translation_error(op, f"inside a kernel, loops.alloc makes thread-private memory "
                                    f"and needs a static shape, got {t}")
    count = 1
    for size in t.shape:
        count *= size
    element = memory_type(t.element)
    storage = fl.alloca(ir.ArrayType(element, max(count, 1)), name="private")
    pointer = fl.builder.bitcast(storage, element.as_pointer())
    return [make_buffer(fl.builder, t, pointer, [ir.Constant(I64, d) for d in t.shape])]


@GPU_KERNEL.register(DeallocOp)
def _thread_private_dealloc(fl: KernelLowering, op):
    if not (isinstance(op.buffer, OpResult) and op.buffer.owner.name == "loops.alloc"):
        raise translation_error(op, "inside a kernel, loops.dealloc frees only what a "
                                    "loops.alloc of the kernel made")
    return []  # thread-private memory lives until the thread ends


# ---------------------------------------------------------------------------------------------
# Atomics


def _atomicrmw_operation(kind: str, element) -> str:
    """LLVM's ``atomicrmw`` operation for ``kind`` on ``element`` (not float max/min)."""
    if kind == "exch":
        return "xchg"
    if kind == "add":
        return "fadd" if element.is_float else "add"
    return kind if element.is_signed else f"u{kind}"


def _ordering(t: BufferType) -> str:
    scope = "block" if t.memory_space == "shared" else "device"
    return f'syncscope("{scope}") monotonic'


def _compare_and_swap_loop(fl: KernelLowering, op, address: ir.Value, value: ir.Value) -> ir.Value:
    """Atomically store ``op``'s combination (the scalar dialect's ``maximum``/``minimum``) of
    the element at ``address`` and ``value``; return the element it replaced."""
    b = fl.builder
    element = op.buffer.type.element
    ordering = _ordering(op.buffer.type)
    bits_type = ir.IntType(element.bits)
    bits_address = b.bitcast(address, bits_type.as_pointer())
    first = b.load_atomic(bits_address, ordering, element.bits // 8)
    before = b.block
    loop, done = fl.fn.append_basic_block("atomic.loop"), fl.fn.append_basic_block("atomic.done")
    b.branch(loop)
    b.position_at_end(loop)
    expected = b.phi(bits_type)
    expected.add_incoming(first, before)
    old = b.bitcast(expected, value.type)
    combine = MaximumOp if op.kind == "max" else MinimumOp
    new = ScalarEmitter(b, math=fl.math.math_call).emit(combine, [old, value],
                                                         [element, element], element)
    swapped = b.cmpxchg(bits_address, expected, b.bitcast(new, bits_type), ordering, "monotonic")
    found = b.extract_value(swapped, 0)
    expected.add_incoming(found, b.block)
    b.cbranch(b.extract_value(swapped, 1), done, loop)
    b.position_at_end(done)
    return old


@GPU_KERNEL.register(AtomicRmwOp)
def _atomic_rmw(fl: KernelLowering, op):
    t = op.buffer.type
    buffer = buffer_of(fl, op.buffer)
    address = element_address(fl, buffer, [fl.get(v) for v in op.indices])
    value = fl.get(op.value)
    element = t.element
    b = fl.builder
    if element.is_float and op.kind in ("max", "min"):
        return [_compare_and_swap_loop(fl, op, address, value)]
    if element.is_bool:  # exch only (the verifier says so); one byte in memory
        old = b.atomic_rmw("xchg", address, b.zext(value, I8), _ordering(t))
        return [b.icmp_unsigned("!=", old, ir.Constant(I8, 0))]
    return [b.atomic_rmw(_atomicrmw_operation(op.kind, element), address, value, _ordering(t))]


# ---------------------------------------------------------------------------------------------
# Scalar ops


_FAST_F32 = {"div", "reciprocal", "sqrt"}


def _fast_f32_op(fl: KernelLowering, op, args, arg_types) -> ir.Value | None:
    """The fast-math form of f32 ``div``, ``reciprocal`` and ``sqrt`` (None for others)."""
    result = op.result.type
    if op.short not in _FAST_F32 or work_type(result) != F32:
        return None
    b = fl.builder
    values = [convert(b, v, t, work_type(result)) for v, t in zip(args, arg_types)]
    if op.short == "div":
        value = fast_divide(b, values[0], values[1])
    elif op.short == "reciprocal":
        value = fast_divide(b, ir.Constant(FLOAT, 1.0), values[0])
    else:
        value = fast_sqrt(b, values[0])
    return narrow(b, value, result)


@GPU_KERNEL.register(ScalarOp)
def _scalar_op(fl: KernelLowering, op):
    args = [fl.get(v) for v in op.operands]
    arg_types = [v.type for v in op.operands]
    if fl.math.fast:
        value = _fast_f32_op(fl, op, args, arg_types)
        if value is not None:
            return [value]
    try:
        value = ScalarEmitter(fl.builder, math=fl.math.math_call,
                              reassoc=allows_reassociation(op)).emit(
            type(op), args, arg_types, op.result.type)
    except ValueError as exc:
        raise translation_error(op, str(exc)) from None
    return [value]

