"""Compiling a function's module for a GPU: tensor → placed tensor → loops → gpu → PTX.

``compile_for_gpu(module)`` takes the optimized tensor-level module of a ``Function`` and returns
a :class:`GpuProgram`: the ``gpu`` stage (the host ``func.func`` beside the ``gpu.module`` of
its kernels) and, on demand, the PTX of the kernels. The pipeline is the contract's
(docs/gpu.md)::

    place-on-device{context} , elide-transfers      tensor level: where each op runs, transfers
    bufferize + inplace , plan-memory               loops level, as the CPU path (cpu_build)
    map-to-gpu{block-size} , outline-kernels        "gpu" stage: host function + gpu.module
    to-ptx (lowering.llvm.gpu.to_ptx)                   PTX for the GPU's architecture

Placement comes from the function's ``arg_devices``/``result_devices`` attributes (set by
``function()``, see ``gpu.placement``); ``context`` is the GPU context used when they name none.
A function's GPU values live in one context.

Both products are kept in the disk cache (flags ``cache`` and ``cache_dir``), as the CPU path
keeps its object code: the ``gpu`` stage's text (with locations) keyed by the tensor module's
text, the options and the compiler's version, so a warm compile parses it back instead of
running the passes; and each ``gpu.module``'s PTX keyed by its text, the architecture and the
fast-math setting. Stages ``gpu`` and ``ptx`` of ``Function.ir`` are registered here.

>>> from lowering.ir.parser import parse_module
>>> program = compile_for_gpu(parse_module('''
... func.func @twice(%x: tensor<?xf32>) -> tensor<?xf32> {
...   %y = "tensor.add"(%x, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
...   func.return %y : tensor<?xf32>
... }'''), block_size=32)
>>> program.context, [op.name for op in program.module.body.block.ops]
('cuda', ['func.func', 'gpu.module'])
"""
from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass, field

from lowering.dialects.function_attrs import ARG_DEVICES, RESULT_DEVICES
from lowering.ir.core import Operation

from ..cache import DiskCache

DEFAULT_BLOCK_SIZE = 256
HOST = "cpu"


class GpuCompileError(Exception):
    """The GPU backend cannot compile a function (the message names the op and line)."""


@dataclass
class GpuProgram:
    """A function compiled for a GPU.

    ``module`` is the ``gpu`` stage (a ``builtin.module``); ``host`` its host ``func.func`` and
    ``gpu_modules`` its ``gpu.module`` ops; ``context`` the GPU context its values live in;
    ``updated_in_place`` the ``(result, argument)`` pairs of results written into an argument's
    buffer instead of returned (numbered as in the tensor-level function); ``inplace_patterns``
    the ``(op, result, operand)`` triples of tensor-level ops (numbered in the optimized
    function's order) whose result reuses an operand's device buffer; ``timings`` the
    seconds of each step of the compile; ``from_disk`` whether the stage came from the cache.
    """

    module: Operation
    context: str
    block_size: int
    key: str = ""
    updated_in_place: tuple[tuple[int, int], ...] = ()
    inplace_patterns: tuple[tuple[int, int, int], ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    from_disk: bool = False
    _ptx: dict = field(default_factory=dict, repr=False)

    @property
    def host(self) -> Operation:
        return next(op for op in self.module.body.block.ops if op.name == "func.func")

    @property
    def gpu_modules(self) -> list:
        return [op for op in self.module.body.block.ops if op.name == "gpu.module"]

    def ptx_modules(self, arch: str | None = None, fast_math: bool | None = None) -> dict:
        """The ``to_ptx.PtxModule`` of each ``gpu.module`` by name, for ``arch`` (default: the
        GPU's own, else the flag ``gpuarray.arch``) and ``fast_math`` (default: the flags
        ``nvcc.fastmath`` / ``nvcc.flags=--use_fast_math``); made once, from the disk cache
        when it has them."""
        from lowering.llvm.gpu.to_ptx import default_arch
        arch = arch or default_arch(self.context)
        fast_math = fast_math_flag() if fast_math is None else fast_math
        found = self._ptx.get((arch, fast_math))
        if found is None:
            started = time.perf_counter()
            from .launch_bounds import module_bounds
            found = {m.sym_name: translate_cached(m, arch, fast_math,
                                                  module_bounds(self.module, m.sym_name,
                                                                self.block_size or
                                                                DEFAULT_BLOCK_SIZE))
                     for m in self.gpu_modules}
            self._ptx[(arch, fast_math)] = found
            self.timings["to-ptx"] = time.perf_counter() - started
        return found

    def ptx(self, arch: str | None = None, fast_math: bool | None = None) -> str:
        """The PTX text of every ``gpu.module`` (one after the other)."""
        return "\n".join(m.ptx for m in self.ptx_modules(arch, fast_math).values())


def fast_math_flag() -> bool:
    """Whether the flags ask for fast, less precise GPU math (``nvcc.fastmath=True`` or
    ``--use_fast_math`` in ``nvcc.flags``)."""
    from lowering.config import config
    return bool(config.nvcc.fastmath) or "--use_fast_math" in config.nvcc.flags.split()


# ---------------------------------------------------------------------------------------------
# Placement


def placement_contexts(module: Operation) -> list[str]:
    """The GPU contexts the function of ``module`` names in ``lowering.arg_devices`` /
    ``lowering.result_devices``, in order of first mention.

    >>> from lowering.ir.parser import parse_module
    >>> placement_contexts(parse_module('''
    ... func.func @f(%x: tensor<f32>) -> tensor<f32>
    ...     attributes {lowering.arg_devices = ["cpu"], lowering.result_devices = ["dev1"]} {
    ...   func.return %x : tensor<f32>
    ... }'''))
    ['dev1']
    """
    found: dict[str, None] = {}
    for func in _functions(module):
        for name in ARG_DEVICES.get(func, []) + RESULT_DEVICES.get(func, []):
            if name != HOST:
                found.setdefault(name, None)
    return list(found)


def program_context(module: Operation, context: str = "cuda") -> str:
    """The one GPU context the function's values live in: the one its attributes name, else
    ``context``. A function naming several is refused (GpuCompileError)."""
    named = placement_contexts(module)
    if len(named) > 1:
        raise GpuCompileError(f"the function's values live on several GPU contexts "
                              f"({', '.join(named)}); a compiled function uses one context: "
                              f"move the values to one (x.transfer(...), shared(..., target=...))")
    return named[0] if named else context


def place(module: Operation, context: str = "cuda") -> None:
    """Run ``place-on-device`` and ``elide-transfers`` on ``module`` (tensor level) in place."""
    import lowering.passes  # noqa: F401  (registers every pass)
    from lowering.ir.pass_manager import PassManager
    PassManager(f"place-on-device{{context={program_context(module, context)}}},"
                f"elide-transfers").run(module)


def _functions(module: Operation) -> list:
    return [op for op in module.regions[0].block.ops if op.name == "func.func"]


# ---------------------------------------------------------------------------------------------
# The gpu stage


def lower_to_gpu(module: Operation, context: str = "cuda", block_size: int = DEFAULT_BLOCK_SIZE,
                 report: dict | None = None) -> Operation:
    """The ``gpu`` stage of ``module`` (tensor level, placed or not; left unchanged): placed,
    bufferized with in-place updates, memory planned, mapped to kernels and outlined."""
    from lowering.config import config
    from lowering.ir.pass_manager import PassManager
    from lowering.passes.bufferize.bufferize import Bufferize
    from lowering.passes.inplace import bufferize_in_place
    from lowering.passes.plan_memory import PlanMemory
    timings = report.setdefault("timings", {}) if report is not None else {}
    started = time.perf_counter()
    placed = module.clone()
    place(placed, context)
    timings["place"] = time.perf_counter() - started
    started = time.perf_counter()
    # Products as CBLAS calls: map-to-gpu turns those into its block-reduction gemv and tiled
    # shared-memory gemm kernels (a loop nest would become one thread per output element).
    loops, inplace = bufferize_in_place(placed, Bufferize(use_blas=True).lower)
    PlanMemory(allow_gc=config.allow_gc).apply(loops)
    timings["bufferize"] = time.perf_counter() - started
    started = time.perf_counter()
    PassManager(f"map-to-gpu{{block-size={int(block_size)}}},outline-kernels").run(loops)
    timings["map-to-gpu"] = time.perf_counter() - started
    if report is not None:
        report["updated_in_place"] = tuple(inplace.updated)
        report["inplace_patterns"] = tuple((op, r, k) for op, pattern
                                           in sorted(inplace.patterns.items())
                                           for r, k in sorted(pattern.items()))
    return loops


# Programs in use, shared inside the process (building one function twice compiles it once).
_built: "weakref.WeakValueDictionary[str, GpuProgram]" = weakref.WeakValueDictionary()
_building = threading.Lock()
_KIND = "gpu program"


def compile_for_gpu(module: Operation, context: str = "cuda", arch: str | None = None,
                    block_size: int = DEFAULT_BLOCK_SIZE) -> GpuProgram:
    """The GPU program of the one function of ``module`` (tensor level; it is not changed).
    ``arch`` is the architecture PTX is made for right away (None: later, on demand, for the
    device that loads it)."""
    from lowering.config import config
    from lowering.ir.printer import print_op

    from ..cpu.build import compiler_fingerprint, open_cache
    started = time.perf_counter()
    context = program_context(module, context)
    options = f"context={context}|block={int(block_size)}|gc={config.allow_gc}"
    key = DiskCache.key(print_op(module, generic=True, print_locations=True), _KIND,
                        f"{options}|{compiler_fingerprint()}")
    with _building:
        program = _built.get(key)
        if program is None:
            program = _load_or_build(key, module, context, block_size, open_cache())
            program.timings["key"] = time.perf_counter() - started
            _built[key] = program
    if arch is not None:
        program.ptx_modules(arch)
    return program


def _load_or_build(key: str, module: Operation, context: str, block_size: int,
                   cache: DiskCache | None) -> GpuProgram:
    from lowering.ir.printer import print_op
    entry = cache.load(key) if cache is not None else None
    if entry is not None:
        loaded = _parse_stage(entry[0], entry[1])
        if loaded is not None:
            stage, updated, patterns = loaded
            return GpuProgram(stage, context, block_size, key, updated, patterns,
                              from_disk=True)
    report: dict = {}
    stage = lower_to_gpu(module, context, block_size, report)
    updated, patterns = report["updated_in_place"], report["inplace_patterns"]
    if cache is not None:
        cache.store(key, print_op(stage, generic=True, print_locations=True).encode(),
                    {"updated_in_place": [list(p) for p in updated],
                     "inplace_patterns": [list(p) for p in patterns]})
    return GpuProgram(stage, context, block_size, key, updated, patterns,
                      timings=report["timings"])


def _parse_stage(payload: bytes, meta: dict):
    """The cached gpu stage, its in-place pairs and patterns, or None when the entry is not
    usable."""
    from lowering.ir.core import IRError
    from lowering.ir.parser import parse_module
    try:
        stage = parse_module(payload.decode())
        updated = tuple((int(r), int(a)) for r, a in meta["updated_in_place"])
        patterns = tuple((int(o), int(r), int(k)) for o, r, k in meta["inplace_patterns"])
    except (IRError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return stage, updated, patterns


def translate_cached(gpu_module: Operation, arch: str, fast_math: bool,
                     max_threads: dict[str, int] | None = None):
    """``to_ptx.translate_gpu_module`` through the disk cache (keyed by the module's text, the
    architecture, fast-math, the kernels' launch bounds and the compiler's version)."""
    from lowering.ir.printer import print_op
    from lowering.llvm.gpu.to_ptx import PtxModule, translate_gpu_module

    from ..cpu.build import compiler_fingerprint, open_cache
    cache = open_cache()
    bounds = dict(sorted((max_threads or {}).items()))
    key = DiskCache.key(print_op(gpu_module, generic=True), f"ptx {arch}",
                        f"fast_math={fast_math}|max_threads={bounds}|{compiler_fingerprint()}")
    entry = cache.load(key) if cache is not None else None
    if entry is not None:
        payload, meta = entry
        kernels = meta.get("kernels")
        if isinstance(kernels, dict) and payload.startswith(b"//"):
            return PtxModule(meta.get("llvm_ir", ""), payload.decode(), dict(kernels), arch,
                             fast_math, bounds)
    ptx = translate_gpu_module(gpu_module, arch, fast_math, bounds)
    if cache is not None:
        cache.store(key, ptx.ptx.encode(), {"kernels": ptx.kernels, "llvm_ir": ptx.llvm_ir})
    return ptx


# ---------------------------------------------------------------------------------------------
# IR stages and text output


def gpu_stage(module: Operation) -> Operation:
    """The ``gpu`` stage of a tensor-level ``module`` (``lowering-opt --emit gpu``); a module
    already at that stage is returned as it is."""
    if any(op.name == "gpu.module" for op in module.regions[0].block.ops):
        return module
    return compile_for_gpu(module).module.clone()


def function_gpu_stage(module: Operation) -> Operation:
    """``Function.ir("gpu")``: the ``gpu`` stage of a function compiled for a GPU (one whose
    placement attributes ``function()`` set, with ``device=cuda*``)."""
    from lowering.config import config

    from ..pipeline import StageUnavailableError
    placed = any(ARG_DEVICES.present(f) or RESULT_DEVICES.present(f) for f in _functions(module))
    if not placed and not config.device.startswith(("cuda", "gpu")):
        raise StageUnavailableError(
            "IR stage 'gpu' exists for functions compiled for a GPU; this function was compiled "
            "with device=cpu (build it with device=cuda, or run lowering-opt --target cuda "
            "--emit gpu on its IR)")
    return gpu_stage(module)


def emit_ptx(module: Operation, arch: str | None = None) -> str:
    """The PTX of ``module``'s kernels: of its ``gpu.module`` ops when it is at the ``gpu``
    stage, else of the ``gpu`` stage made from it (``Function.ir("ptx")``, ``--emit ptx``)."""
    stage = gpu_stage(module)
    program = GpuProgram(stage, program_context(stage) if _functions(stage) else "cuda", 0)
    return program.ptx(arch)


def _register_stages() -> None:
    from ..pipeline import register_stage
    register_stage("gpu", "optimized", function_gpu_stage)
    register_stage("ptx", "gpu", emit_ptx)


_register_stages()
