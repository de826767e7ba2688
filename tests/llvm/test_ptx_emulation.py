"""Kernels of ``to-ptx`` run on the host CPU, to check what they compute without a GPU.

``EmulatedKernels(ptx_module)`` compiles the module's LLVM IR (the very IR the NVPTX backend
gets) for the host, with the few GPU intrinsics it uses replaced by host functions: special
registers (thread and block ids and sizes) read the emulated thread's values, ``bar.sync``
waits on a ``threading.Barrier`` of the block, ``trap`` records the failure and ends the thread.
A launch runs the blocks one after the other; the threads of a block one after the other, or
as OS threads when the kernel has a barrier. Arguments are passed by the kernel ABI
(``kernel_param_format``), so the ABI is checked too. Shared memory (an ``addrspace(3)``
global) is one array all emulated blocks reuse, as blocks run one at a time.

What this cannot check is LLVM's NVPTX code generation; ptxas checks that the PTX assembles.
The results are compared with the reference interpreter (``lowering.dialects.gpu.run_kernel``).
"""
from __future__ import annotations

import ctypes
import re
import threading

import numpy as np

import lowering.dialects  # noqa: F401  (registers every op)
from lowering.dialects.gpu import GpuModuleOp, run_kernel
from lowering.ir.parser import parse_module
from lowering.ir.verifier import verify
from lowering.llvm.jit import JitLibrary, compile_object, register_symbol
from lowering.llvm.gpu.to_ptx import PtxModule, translate_gpu_module

_CTYPES = {"P": ctypes.c_void_p, "q": ctypes.c_int64, "Q": ctypes.c_uint64, "i": ctypes.c_int32,
           "I": ctypes.c_uint32, "h": ctypes.c_int16, "H": ctypes.c_uint16, "b": ctypes.c_int8,
           "B": ctypes.c_uint8, "f": ctypes.c_float, "d": ctypes.c_double}
_REGISTERS = ("tid", "ctaid", "ntid", "nctaid")


class _Thread(threading.local):
    """The emulated GPU thread running on this OS thread."""

    ids: dict[str, tuple[int, int, int]] = {}
    barrier: threading.Barrier | None = None
    trapped: list | None = None


_THREAD = _Thread()
_CALLBACKS = []  # keeps the ctypes callbacks alive


def _register_callbacks() -> None:
    if _CALLBACKS:
        return
    for register in _REGISTERS:
        for axis, dim in enumerate("xyz"):
            callback = ctypes.CFUNCTYPE(ctypes.c_int32)(
                lambda register=register, axis=axis: _THREAD.ids[register][axis])
            _CALLBACKS.append(callback)
            address = ctypes.cast(callback, ctypes.c_void_p).value
            register_symbol(f"emulated.{register}.{dim}", address)

    def barrier():
        _THREAD.barrier.wait(timeout=30)

    def trap():
        _THREAD.trapped.append(_THREAD.ids)

    for name, fn in (("emulated.barrier", barrier), ("emulated.trap", trap)):
        callback = ctypes.CFUNCTYPE(None)(fn)
        _CALLBACKS.append(callback)
        register_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)


def host_ir(llvm_ir: str) -> str:
    """The kernels' LLVM IR with the GPU intrinsics replaced by the emulator's functions."""
    text = llvm_ir.replace("ptx_kernel ", "")
    text = re.sub(r'@"llvm\.nvvm\.read\.ptx\.sreg\.(\w+)\.([xyz])"', r'@"emulated.\1.\2"', text)
    text = text.replace('@"llvm.nvvm.barrier0"', '@"emulated.barrier"')
    text = text.replace('@"llvm.trap"', '@"emulated.trap"')
    text = re.sub(r'(call void @"emulated\.trap"\(\)\s*\n\s*)unreachable', r"\1ret void", text)
    if "llvm.nvvm" in text:
        raise ValueError("the kernels use GPU intrinsics the emulator does not know "
                         "(fast-math approximations?)")
    return text


def _arguments(format_: str, args) -> list:
    """ctypes values of ``args`` as the kernel ABI passes them."""
    values = []
    codes = iter(format_)
    for arg in args:
        code = next(codes)
        if isinstance(arg, np.ndarray):
            assert code == "P"
            values.append(ctypes.c_void_p(arg.ctypes.data))
            for _ in range(2 * arg.ndim):
                next(codes)
            values += [ctypes.c_int64(n) for n in arg.shape]
            values += [ctypes.c_int64(s // arg.itemsize) for s in arg.strides]
        elif isinstance(arg, np.float16):
            values.append(ctypes.c_uint16(int(arg.view(np.uint16))))
        elif code in "fd":
            values.append(_CTYPES[code](float(arg)))
        else:
            values.append(_CTYPES[code](int(arg)))
    return values


class EmulatedKernels:
    """The kernels of a PtxModule, compiled for the host: ``launch(name, grid, block, args)``."""

    def __init__(self, ptx: PtxModule):
        _register_callbacks()
        self.ptx = ptx
        self.text = host_ir(ptx.llvm_ir)
        self.library = JitLibrary(compile_object(self.text))
        self.trapped: list = []

    def launch(self, name: str, grid, block, args) -> None:
        format_ = self.ptx.kernels[name]
        fn = ctypes.CFUNCTYPE(None, *(_CTYPES[c] for c in format_))(self.library.address(name))
        values = _arguments(format_, args)
        grid, block = _triple(grid), _triple(block)
        threads = [(x, y, z) for z in range(block[2]) for y in range(block[1])
                   for x in range(block[0])]
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    self._run_block(fn, values, (bx, by, bz), threads, grid, block)

    def _run_block(self, fn, values, block_id, threads, grid, block) -> None:
        barrier = threading.Barrier(len(threads)) if self._has_barrier() else None

        def run(thread_id):
            _THREAD.ids = {"tid": thread_id, "ctaid": block_id, "ntid": block, "nctaid": grid}
            _THREAD.barrier = barrier
            _THREAD.trapped = self.trapped
            fn(*values)

        if barrier is None:
            for thread_id in threads:
                run(thread_id)
            return
        workers = [threading.Thread(target=run, args=(t,)) for t in threads]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    def _has_barrier(self) -> bool:
        return "emulated.barrier" in self.text


def _triple(sizes) -> tuple[int, int, int]:
    sizes = [sizes] if isinstance(sizes, int) else list(sizes)
    return tuple(sizes + [1] * (3 - len(sizes)))


def gpu_module_of(text: str) -> GpuModuleOp:
    """The gpu.module of IR text (parsed and verified)."""
    module = parse_module(text)
    verify(module)
    (gpu_module,) = [op for op in module.body.block.ops if isinstance(op, GpuModuleOp)]
    return gpu_module


def run_both(gpu_module: GpuModuleOp, name: str, grid, block, args, emulated=None):
    """Run kernel ``name`` in the interpreter and emulated from its LLVM IR, on copies of
    ``args``; returns (interpreter's args, emulated args) after the launches."""
    emulated = emulated or EmulatedKernels(translate_gpu_module(gpu_module))
    reference = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(gpu_module.lookup(name), grid, block, reference)
    ours = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    emulated.launch(name, grid, block, ours)
    return reference, ours


# ---------------------------------------------------------------------------------------------
# The emulator itself


AXPY = '''
"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%a: f32, %x: !loops.buffer<?xf32, strides=[?], space="device">,
       %y: !loops.buffer<?xf32, space="device">):
    %t = "gpu.thread_id"() {dimension = "x"} : () -> index
    %b = "gpu.block_id"() {dimension = "x"} : () -> index
    %d = "gpu.block_dim"() {dimension = "x"} : () -> index
    %o = "scalar.mul"(%b, %d) : (index, index) -> index
    %i = "scalar.add"(%o, %t) : (index, index) -> index
    %xi = loops.load %x[%i] : !loops.buffer<?xf32, strides=[?], space="device">
    %yi = loops.load %y[%i] : !loops.buffer<?xf32, space="device">
    %p = "scalar.mul"(%a, %xi) : (f32, f32) -> f32
    %s = "scalar.add"(%p, %yi) : (f32, f32) -> f32
    loops.store %s, %y[%i] : !loops.buffer<?xf32, space="device">
    "gpu.return"() : () -> ()
  }) {sym_name = "axpy", function_type = (f32, !loops.buffer<?xf32, strides=[?], space="device">,
      !loops.buffer<?xf32, space="device">) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()'''


def test_emulated_kernel_matches_the_interpreter():
    gpu_module = gpu_module_of(AXPY)
    x = np.arange(24, dtype=np.float32)[::-2]  # stride -2: the ABI passes strides in elements
    y = np.linspace(-1, 1, 12, dtype=np.float32)
    reference, ours = run_both(gpu_module, "axpy", 3, 4, [np.float32(0.5), x, y])
    np.testing.assert_array_equal(ours[2], reference[2])
    np.testing.assert_array_equal(ours[2], np.float32(0.5) * x + y)


def test_host_ir_replaces_every_gpu_intrinsic():
    text = host_ir(translate_gpu_module(gpu_module_of(AXPY)).llvm_ir)
    assert "llvm.nvvm" not in text and "ptx_kernel" not in text
    assert '@"emulated.tid.x"' in text and '@"emulated.ctaid.x"' in text
