"""The CPU JIT: llvmlite at O3 for the host CPU's features, object code loaded into MCJIT.

Compilation and loading are separate steps so that object code can be cached on disk:

>>> lib = JitLibrary(compile_object('define i64 @one() { ret i64 1 }'))
>>> import ctypes
>>> ctypes.CFUNCTYPE(ctypes.c_int64)(lib.address("one"))()
1
"""
from __future__ import annotations

import functools
import threading
from typing import Callable

import llvmlite
import llvmlite.binding as llvm

_lock = threading.Lock()  # LLVM's global state is not thread-safe


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()


def host_features() -> str:
    """The LLVM feature string CPU code is compiled for: the ``cpu_features`` flag where set,
    else every feature of this CPU. On AVX-512 hosts, 512-bit vectors are allowed.

    LLVM prefers 256-bit vectors on AVX-512 CPUs by default; the vector math library's loops run
    1.3-1.7x faster with 512-bit ones (docs/vecmath.md).

    >>> from lowering.config import config
    >>> with config.change_flags(cpu_features="-avx512f"):
    ...     host_features()
    '-avx512f'
    """
    from lowering.config import config
    return _features(config.cpu_features)


@functools.cache
def _features(forced: str) -> str:
    if forced:
        return forced
    _initialize()
    features = llvm.get_host_cpu_features().flatten()
    if "+avx512f" in features.split(","):
        features += ",-prefer-256-bit"
    return features


def host_target_machine(opt: int = 3):
    """A target machine for this CPU (name and ``host_features``), shared by the compile
    steps. Never hand it to an execution engine: an engine owns its target machine and
    destroys it with itself (``new_host_target_machine`` makes one for an engine)."""
    return _shared_target_machine(opt, host_features())


@functools.cache
def _shared_target_machine(opt: int, features: str):
    return new_host_target_machine(opt, features)


def new_host_target_machine(opt: int = 3, features: str | None = None):
    """A fresh target machine for this CPU, for one owner (e.g. an execution engine)."""
    _initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=host_features() if features is None else features,
        opt=opt, codemodel="jitdefault")


def target_key() -> str:
    """What compiled code depends on besides the IR: triple, CPU, features, llvmlite version
    (which fixes the LLVM version, and with it the IR the vector math library emits)."""
    return _target_key(host_features())


@functools.cache
def _target_key(features: str) -> str:
    _initialize()
    return "|".join((llvm.get_process_triple(), llvm.get_host_cpu_name(),
                     features, llvmlite.__version__))


def parse_and_optimize(ir_text: str, opt: int = 3):
    """Parse LLVM IR text, verify it, and run LLVM's O``opt`` pipeline (vectorizers included)."""
    _initialize()
    with _lock:
        mod = llvm.parse_assembly(ir_text)
        mod.triple = llvm.get_process_triple()
        mod.data_layout = str(host_target_machine().target_data)
        mod.verify()
        if opt > 0:
            tm = host_target_machine()
            pto = llvm.create_pipeline_tuning_options(speed_level=opt)
            pto.loop_vectorization = True
            pto.slp_vectorization = True
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
        return mod


def compile_object(ir_text: str, opt: int = 3) -> bytes:
    """LLVM IR text → optimized x86-64 object code."""
    mod = parse_and_optimize(ir_text, opt)
    with _lock:
        return host_target_machine().emit_object(mod)


def emit_assembly(ir_text: str, opt: int = 3) -> str:
    """LLVM IR text → the host assembly LLVM generates for it."""
    mod = parse_and_optimize(ir_text, opt)
    with _lock:
        return host_target_machine().emit_assembly(mod)


def optimized_ir(ir_text: str, opt: int = 3) -> str:
    """LLVM IR text after LLVM's optimization pipeline."""
    return str(parse_and_optimize(ir_text, opt))


def register_symbol(name: str, address: int) -> None:
    """Make an external symbol (e.g. a BLAS routine found with ctypes) visible to JIT code."""
    _initialize()
    llvm.add_symbol(name, address)


def _loading_target_machine():
    """A target machine for an engine that loads object code: it compiles only the engine's
    empty module (the code comes compiled), so it neither optimizes nor names the CPU and its
    features. Made that way, it takes a sixth of the time to create, and the engine a third of
    the time to finalize (about 1 ms less per library loaded)."""
    return llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        opt=0, codemodel="jitdefault")


class JitLibrary:
    """Object code loaded into memory; ``address(name)`` gives a function's entry address."""

    def __init__(self, object_code: bytes):
        _initialize()
        with _lock:
            empty = llvm.parse_assembly("")
            empty.triple = llvm.get_process_triple()
            # The engine owns (and frees) its target machine, so it gets its own.
            self._engine = llvm.create_mcjit_compiler(empty, _loading_target_machine())
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
            self._engine.finalize_object()

    def address(self, name: str) -> int:
        with _lock:
            addr = self._engine.get_function_address(name)
        if not addr:
            raise KeyError(f"no function '{name}' in compiled code")
        return addr

    def global_address(self, name: str) -> int:
        """The address of the global variable ``name`` of the code."""
        with _lock:
            addr = self._engine.get_global_value_address(name)
        if not addr:
            raise KeyError(f"no global '{name}' in compiled code")
        return addr


Loader = Callable[[str, Callable[[], str], int], object]


class ProcessLibrary:
    """A runtime library of the process (the thread pool, the SIGINT counter): its LLVM IR is
    compiled and loaded once, and its entry function registered for JIT code that calls it.
    ``install(load)`` takes ``load(description, produce_ir, opt)``, which gives a loaded library
    (with ``address(name)``) compiled at O``opt``, e.g. from a disk cache; by default the IR is
    compiled here. The
    library stays loaded for the life of the process.

    >>> seven = ProcessLibrary("seven_lib", lambda: "seven v1",
    ...                        lambda: "define i64 @seven_lib() { ret i64 7 }", opt=0)
    >>> seven.install() == seven.install() == seven.library.address("seven_lib")
    True
    """

    def __init__(self, function: str, description: Callable[[], str],
                 produce_ir: Callable[[], str], opt: int):
        self.function, self.description, self.produce_ir, self.opt = \
            function, description, produce_ir, opt
        self.library = None
        self._address = 0
        self._lock = threading.Lock()

    def install(self, load: Loader | None = None) -> int:
        """Load the library if this process has not yet; the entry function's address."""
        with self._lock:
            if self.library is None:
                if load is None:
                    library = JitLibrary(compile_object(self.produce_ir(), opt=self.opt))
                else:
                    library = load(self.description(), self.produce_ir, self.opt)
                self._address = library.address(self.function)
                register_symbol(self.function, self._address)
                self.library = library
            return self._address
