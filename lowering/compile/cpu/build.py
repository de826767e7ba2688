"""Compiling a function's module for the CPU: tensor → loops → LLVM IR → loaded machine code.

``compile_for_cpu(module)`` takes the optimized tensor-level module of a ``Function`` and returns
a :class:`CompiledModule`: the loaded code (``JitLibrary``), its entry point and signature, and
the error table that turns the entry's codes into messages.

The disk cache (``cache.DiskCache``; flags ``cache``, ``cache_dir`` and ``cache_max_bytes``) holds
the object code with, as metadata, the signature and the error table. Its key is the module's text
with locations (they are in the error messages), the target (triple, CPU, features, llvmlite), the
backend's options (threads, the BLAS) and the compiler's version: the package version and a
fingerprint of every source file of ``lowering`` (path, size and modification time), since
everything from ``bufferize`` to LLVM shapes the code. Everything after the optimized module is
determined by those, so a warm compile only prints the module, reads the entry and loads the
object code: no ``bufferize``, no ``to-llvm``, no LLVM. On a miss:

- ``lower_to_loops`` runs ``bufferize`` (with CBLAS calls for products when NumPy ships a BLAS);
- ``to-llvm`` translates the module and LLVM compiles it at O3 for this CPU.

Loaded code is also shared inside the process while some function uses it, so building the
same function twice loads it once.

>>> options = cpu_options()
>>> options.num_threads >= 1
True
"""
from __future__ import annotations

import functools
import os
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from lowering.ir.core import Operation
# (Every CPU function needs these two at its first build; imported with the package, not then.)
from lowering.llvm.cpu.blas import blas_available, find_blas, register_blas_symbols
from lowering.llvm.cpu.thread_pool import POOL_FUNCTION, install_thread_pool

from ..cache import DiskCache, compiler_fingerprint, open_disk_cache
from ..shared_storage import lock_rank


@dataclass(frozen=True)
class CpuOptions:
    """What the CPU backend's code depends on besides the IR."""

    num_threads: int
    use_blas: bool
    allow_gc: bool = True  # false: temporaries are kept between calls (a workspace)

    def key(self) -> str:
        blas = find_blas().key() if self.use_blas else "no-blas"
        return f"threads={self.num_threads}|{blas}|gc={self.allow_gc}|{compiler_fingerprint()}"


def cpu_options() -> CpuOptions:
    """The options the flags ask for: ``openmp`` (threads at all) and ``cpu_threads`` (how many;
    0 means every core this process may use), ``allow_gc``; BLAS whenever NumPy ships one."""
    from lowering.config import config
    threads = 1
    if config.openmp:
        threads = config.cpu_threads or _available_cores()
    return CpuOptions(num_threads=threads, use_blas=blas_available(), allow_gc=config.allow_gc)


@functools.cache
def _available_cores() -> int:
    # (As lowering.llvm.cpu.runtime.default_num_threads, without importing the code generator.)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def lower_to_loops(module: Operation, options: CpuOptions | None = None,
                   report: dict | None = None) -> Operation:
    """``module`` (tensor level, left unchanged) bufferized into a new loops-level module, with
    in-place updates where the ``inplace`` stage allowed them and temporaries freed after their
    last use (``plan-memory``). ``report["inplace"]`` gets what ``inplace`` did.

    >>> from lowering.ir.parser import parse_module
    >>> module = parse_module('''
    ... func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
    ...   %y = "tensor.neg"(%x) : (tensor<?xf64>) -> tensor<?xf64>
    ...   func.return %y : tensor<?xf64>
    ... }''')
    >>> has_tensors(module), has_tensors(lower_to_loops(module)), has_tensors(module)
    (True, False, True)
    """
    from lowering.passes.bufferize.bufferize import Bufferize
    from lowering.passes.inplace import bufferize_in_place
    from lowering.passes.plan_memory import PlanMemory
    from lowering.passes.python_calls import PythonCalls
    options = options or cpu_options()
    narrow_blas = options.use_blas and find_blas().int_bits == 32  # it checks sizes at calls
    loops, inplace = bufferize_in_place(module, Bufferize(use_blas=options.use_blas).lower,
                                        calls_may_fail=narrow_blas)
    PythonCalls().apply(loops)  # ops written in Python: calls into Python, fresh allocations
    PlanMemory(allow_gc=options.allow_gc).apply(loops)
    if report is not None:
        report["inplace"] = inplace
    return loops


def has_tensors(module: Operation) -> bool:
    """Whether anything in ``module`` still works on tensors (so it needs ``bufferize``)."""
    from lowering.ir.types import TensorType
    for op in module.walk():
        if any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)):
            return True
        for region in op.regions:
            for block in region.blocks:
                if any(isinstance(a.type, TensorType) for a in block.args):
                    return True
    return False


# ---------------------------------------------------------------------------------------------
# The compiled module


@dataclass(frozen=True)
class EntrySignature:
    """The native entry of a function and the (dtype, rank) of its arguments and results."""

    entry: str
    inputs: tuple[tuple[np.dtype, int], ...]
    outputs: tuple[tuple[np.dtype, int], ...]
    # (result, argument): results of the tensor-level function that are not outputs of the
    # entry, because the code writes them into the argument's memory (shared variables updated
    # in place); results are numbered as in the tensor-level function.
    updated_in_place: tuple[tuple[int, int], ...] = ()
    # (op, result, operand): the result of the tensor-level op (by position in its function)
    # written into that operand's memory, for Theano's view of the graph.
    inplace_patterns: tuple[tuple[int, int, int], ...] = ()


@dataclass
class CompiledModule:
    """Machine code of a one-function module, loaded, with what calling it needs.

    ``timings`` has the seconds each step took (``key``, ``bufferize``, ``to-llvm``, ``llvm``,
    ``load``); ``from_disk`` says whether the code came from the disk cache.
    """

    key: str
    library: object  # lowering.llvm.jit.JitLibrary
    signature: EntrySignature
    errors: dict[int, tuple[str, str]]
    error_kinds: dict[int, str]
    from_disk: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    # (rank, lock) serializing calls of code that keeps a workspace between calls
    call_lock: tuple = field(default_factory=lambda: (lock_rank(), threading.RLock()))

    @property
    def entry_address(self) -> int:
        return self.library.address(self.signature.entry)


def _signature_meta(signature: EntrySignature) -> dict:
    return {"entry": signature.entry,
            "inputs": [[dt.str, rank] for dt, rank in signature.inputs],
            "outputs": [[dt.str, rank] for dt, rank in signature.outputs],
            "updated_in_place": [list(p) for p in signature.updated_in_place],
            "inplace_patterns": [list(p) for p in signature.inplace_patterns]}


def _signature_from_meta(meta: dict) -> EntrySignature:
    # np.dtype(...) of a builtin type is NumPy's own dtype object, which the wrapper compares.
    return EntrySignature(meta["entry"],
                          tuple((np.dtype(dt), rank) for dt, rank in meta["inputs"]),
                          tuple((np.dtype(dt), rank) for dt, rank in meta["outputs"]),
                          tuple((int(r), int(a)) for r, a in meta["updated_in_place"]),
                          tuple((int(o), int(r), int(k)) for o, r, k in meta["inplace_patterns"]))


def open_cache() -> DiskCache | None:
    """The disk cache the flags ask for (``cache_dir``, bounded by ``cache_max_bytes``), or None:
    with ``cache=False``, or (after a ``CacheWarning``) when the directory is unsafe or cannot
    be made, and then compiled code stays in memory."""
    from lowering.config import config
    if not config.cache:
        return None
    return open_disk_cache(config.cache_dir, config.cache_max_bytes)


_loaded: "weakref.WeakValueDictionary[str, CompiledModule]" = weakref.WeakValueDictionary()
_loading = threading.Lock()


def compile_for_cpu(module: Operation, options: CpuOptions | None = None) -> CompiledModule:
    """Machine code for the one function of ``module`` (tensor level; it is not changed).

    >>> from lowering.ir.parser import parse_module
    >>> compiled = compile_for_cpu(parse_module('''
    ... func.func @twice(%x: tensor<?xf32>) -> tensor<?xf32> {
    ...   %y = "tensor.add"(%x, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    ...   func.return %y : tensor<?xf32>
    ... }'''))
    >>> compiled.signature.entry, compiled.signature.inputs
    ('twice_entry', ((dtype('float32'), 1),))
    """
    from lowering.ir.printer import print_op
    from lowering.llvm.jit import target_key
    start = time.perf_counter()
    options = options or cpu_options()
    cache = open_cache()
    key = DiskCache.key(print_op(module, generic=True, print_locations=True), target_key(),
                        options.key())
    timings = {"key": time.perf_counter() - start}
    if options.num_threads > 1:
        _install_thread_pool()
    _install_interrupts()
    with _loading:
        found = _loaded.get(key)
        if found is not None:
            return found
        compiled = _load_or_build(key, module, cache, options, timings)
        _loaded[key] = compiled
    return compiled


# Object code compiled in this process, most recent last, up to ``_RECENT_BYTES``: building a
# function again (without the disk cache, or after it was evicted) loads it instead of running
# LLVM, whose optimization pipeline keeps ~50-200 KiB of every run allocated for good.
_recent: "OrderedDict[str, tuple[bytes, dict]]" = OrderedDict()
_RECENT_BYTES = 32 << 20


def _remember(key: str, obj: bytes, meta: dict) -> None:
    _recent[key] = (obj, meta)
    _recent.move_to_end(key)
    total = sum(len(o) for o, _ in _recent.values())
    while total > _RECENT_BYTES and len(_recent) > 1:
        _, (dropped, _) = _recent.popitem(last=False)
        total -= len(dropped)


def _load_or_build(key: str, module: Operation, cache: DiskCache | None, options: CpuOptions,
                   timings: dict) -> CompiledModule:
    entry = cache.load(key) if cache is not None else None
    if entry is not None:
        loaded = _load(*entry, timings)
        if loaded is not None:
            return CompiledModule(key, *loaded, from_disk=True, timings=timings)
    entry = _recent.get(key)
    if entry is not None:
        loaded = _load(*entry, timings)
        if loaded is not None:
            _recent.move_to_end(key)
            if cache is not None:
                cache.store(key, *entry)  # (the disk's entry was missing or damaged)
            return CompiledModule(key, *loaded, from_disk=False, timings=timings)
    obj, meta = _build(module, options, timings)
    _remember(key, obj, meta)
    if cache is not None:
        cache.store(key, obj, meta)
    loaded = _load(obj, meta, timings)
    if loaded is None:
        raise RuntimeError("freshly compiled code could not be loaded")
    return CompiledModule(key, *loaded, from_disk=False, timings=timings)


def _install_thread_pool() -> None:
    """Load the process's thread pool (``lowering.llvm.cpu.thread_pool``) through the disk cache,
    before compiled code needs its symbol (else it would be compiled, uncached, on first use)."""
    install_thread_pool(load_llvm)
    _registered.add(POOL_FUNCTION)


def _install_interrupts() -> None:
    """Load the SIGINT counter compiled loops poll (``lowering.llvm.cpu.interrupts``) through the
    disk cache, before compiled code needs its symbol."""
    from lowering.llvm.cpu.interrupts import INTERRUPTS_FUNCTION, install_interrupts, use_loader
    use_loader(load_llvm)
    install_interrupts(load_llvm)
    _registered.add(INTERRUPTS_FUNCTION)


def _load(obj: bytes, meta: dict, timings: dict):
    """(library, signature, errors, error kinds) from object code and its metadata, or None
    when they do not load (an entry from the cache that is not what it should be)."""
    from lowering.llvm.jit import JitLibrary
    if not obj.startswith(b"\x7fELF"):  # LLVM would crash on anything but object code
        return None
    start = time.perf_counter()
    try:
        signature = _signature_from_meta(meta)
        errors = {int(code): (message, location) for code, message, location, _ in meta["errors"]}
        kinds = {int(code): kind for code, _, _, kind in meta["errors"]}
        register_symbols(meta["symbols"])
        library = JitLibrary(obj)
        library.address(signature.entry)
    except (KeyError, ValueError, TypeError, RuntimeError):
        return None
    timings["load"] = time.perf_counter() - start
    return library, signature, errors, kinds


def _build(module: Operation, options: CpuOptions, timings: dict) -> tuple[bytes, dict]:
    from lowering.llvm.jit import compile_object
    from lowering.llvm.cpu.to_llvm import translate_module
    start = time.perf_counter()
    report: dict = {}
    loops = lower_to_loops(module, options, report)
    timings["bufferize"] = time.perf_counter() - start
    start = time.perf_counter()
    lowered = translate_module(loops, num_threads=options.num_threads)
    timings["to-llvm"] = time.perf_counter() - start
    if len(lowered.signatures) != 1:
        raise ValueError(f"expected a module with one function, got {len(lowered.signatures)}")
    (sig,) = lowered.signatures.values()
    inplace = report["inplace"]
    signature = EntrySignature(sig.entry, tuple((a.dtype, a.rank) for a in sig.inputs),
                               tuple((a.dtype, a.rank) for a in sig.outputs),
                               tuple(inplace.updated),
                               tuple((op, r, k) for op, pattern in sorted(inplace.patterns.items())
                                     for r, k in sorted(pattern.items())))
    start = time.perf_counter()
    obj = compile_object(lowered.llvm_ir)
    timings["llvm"] = time.perf_counter() - start
    meta = _signature_meta(signature)
    meta["symbols"] = list(lowered.symbols)
    meta["errors"] = [[code, message, location, lowered.error_kinds.get(code, "value")]
                      for code, (message, location) in sorted(lowered.errors.items())]
    return obj, meta


# ---------------------------------------------------------------------------------------------
# External symbols


# Symbols LLVM itself may call in optimized code (loop idioms), whatever the IR declares.
_ALWAYS = ("memcpy", "memmove", "memset", "malloc", "free", "aligned_alloc")
_registered: set[str] = set()


def register_symbols(names) -> None:
    """Make the external symbols ``names`` (and the C library's memory functions) visible to
    compiled code before it is loaded: from the process itself (the C and math libraries), from
    the BLAS NumPy ships, or else through ``runtime.register_runtime_symbols``. A symbol found
    nowhere is an error here (LLVM would end the process on it).

    >>> register_symbols(["expf"])
    >>> "expf" in _registered
    True
    """
    import ctypes
    from lowering.llvm.jit import register_symbol
    wanted = [n for n in (*_ALWAYS, *names) if n not in _registered]
    if not wanted:
        return
    process = ctypes.CDLL(None)
    missing = []
    for name in wanted:
        function = getattr(process, name, None) if not name.startswith("_") else None
        if function is None:
            missing.append(name)
            continue
        register_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)
        _registered.add(name)
    if missing:
        _register_elsewhere(missing)
        _registered.update(missing)


def _register_elsewhere(missing: list[str]) -> None:
    blas = find_blas()
    blas_symbols = {symbol for symbol, _ in blas.routines.values()} if blas is not None else set()
    if blas_symbols & set(missing):
        register_blas_symbols()
    rest = [n for n in missing if n not in blas_symbols]
    if rest:
        from lowering.llvm.cpu.runtime import register_runtime_symbols, registered_symbols
        register_runtime_symbols()
        unknown = [n for n in rest if n not in registered_symbols()]
        if unknown:
            raise RuntimeError(f"compiled code needs {', '.join(unknown)}, which this process "
                               f"does not have")


# ---------------------------------------------------------------------------------------------
# Other LLVM code (the Python-facing wrappers), kept for the process


_libraries: dict[str, object] = {}


def library_key(description: str, opt: int = 3) -> str:
    """The disk cache's key of the code ``load_llvm(description, ..., opt)`` loads.

    >>> library_key("the constant seven") != library_key("the constant seven", opt=0)
    True
    """
    from lowering.llvm.jit import target_key
    return DiskCache.key(description, target_key(), f"O{opt}|{compiler_fingerprint()}")


def load_llvm(description: str, produce_ir: Callable[[], str], opt: int = 3):
    """The code ``produce_ir()`` gives (LLVM IR text), compiled at O``opt`` and loaded (a
    ``JitLibrary``), found by ``description`` (which must determine the IR) and ``opt`` in this
    process or the disk cache.

    Such libraries live as long as the process: the wrappers' capsules free output memory with
    a function in them, whenever the last array dies.

    >>> library = load_llvm("the constant seven", lambda: "define i64 @seven() { ret i64 7 }")
    >>> library is load_llvm("the constant seven", lambda: "not used: found by description")
    True
    """
    from lowering.llvm.jit import JitLibrary, compile_object
    key = library_key(description, opt)
    with _loading:
        library = _libraries.get(key)
        if library is not None:
            return library
        cache = open_cache()
        entry = cache.load(key) if cache is not None else None
        if entry is None or not entry[0].startswith(b"\x7fELF"):
            obj = compile_object(produce_ir(), opt)
            if cache is not None:
                cache.store(key, obj, {})
        else:
            obj = entry[0]
        library = _libraries[key] = JitLibrary(obj)
        return library
