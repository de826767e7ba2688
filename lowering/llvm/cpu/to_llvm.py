"""``to-llvm``: a loops-dialect module (loops, scalar and func ops) to one LLVM module.

``translate_module(module)`` gives a :class:`LoweredModule`: the LLVM IR text, and for every
``func.func @f`` its exported entry point ``i32 @f_entry(i8** packed)`` (the native ABI of
``cpu.entry``), the descriptors of its arguments and results, and the error table that maps
each code the entry may return to its message and source location. Object code comes from
``jit.compile_object(lowered.llvm_ir)``; ``abi.call_entry`` calls an entry with NumPy arrays.

How each part is lowered is in its own module: ``cpu.scalar`` (scalar ops, with
``cpu.casts``, ``cpu.division`` and ``cpu.math_calls``), ``cpu.memory`` and ``cpu.views``
(buffers), ``cpu.control`` and ``cpu.loops`` (loops and asserts), ``cpu.parallel``
(threads), ``cpu.calls`` (external calls and BLAS), ``cpu.functions`` and ``cpu.entry``
(functions and the ABI).

The result is LLVM IR, not IR of this project, so ``to-llvm`` is not a ``ModulePass``;
``emit_llvm`` and ``emit_asm`` turn a module into text for ``lowering-opt --emit llvm|asm``.

>>> from lowering.ir.parser import parse_module
>>> module = parse_module('''
... func.func @twice(%x: !loops.buffer<f64>) -> !loops.buffer<f64> {
...   %v = loops.load %x[] : !loops.buffer<f64>
...   %y = "scalar.add"(%v, %v) : (f64, f64) -> f64
...   %out = loops.alloc() : !loops.buffer<f64>
...   loops.store %y, %out[] : !loops.buffer<f64>
...   func.return %out : !loops.buffer<f64>
... }''')
>>> lowered = translate_module(module)
>>> lowered.entries, lowered.signatures["twice"].outputs[0].rank
({'twice': 'twice_entry'}, 0)
>>> import numpy as np
>>> from lowering.llvm.cpu.abi import call_entry
>>> from lowering.llvm.jit import JitLibrary, compile_object
>>> library = JitLibrary(compile_object(lowered.llvm_ir))
>>> code, (out,) = call_entry(library.address("twice_entry"), lowered.signatures["twice"],
...                           [np.array(1.5)])
>>> code, float(out)
(0, 3.0)
"""
from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir
import numpy as np

from lowering.dialects.builtin.ops import FuncOp, ModuleOp
from lowering.dialects.loops import BufferType
from lowering.ir.core import Operation
from lowering.ir.types import ScalarType

# Importing the rule modules registers their lowerings.
from . import (calls as lower_calls, control as lower_control, memory as lower_memory,
               scalar as lower_scalar, views as lower_views)  # noqa: F401
from . import control_while as lower_control_while  # noqa: F401
from . import python_calls as lower_python_calls  # noqa: F401
from ..jit import emit_assembly
from .context import ModuleLowering, TranslationError
from .entry import define_entry, entry_name
from .functions import declare_function, define_function
from .runtime import default_num_threads, register_runtime_symbols

# Estimated innermost iterations from which a parallel loop runs on several threads: about the
# work that takes as long as starting and joining the threads (tens of microseconds).
DEFAULT_PARALLEL_THRESHOLD = 1 << 16


@dataclass(frozen=True)
class ArgInfo:
    """One argument or result at the native ABI: a buffer descriptor of ``rank`` (a scalar is a
    rank-0 descriptor) holding ``element``s; ``type`` is the IR type."""

    type: BufferType | ScalarType

    @property
    def is_buffer(self) -> bool:
        return isinstance(self.type, BufferType)

    @property
    def rank(self) -> int:
        return self.type.rank if self.is_buffer else 0

    @property
    def element(self) -> ScalarType:
        return self.type.element if self.is_buffer else self.type

    @property
    def dtype(self) -> np.dtype:
        return self.element.dtype

    @property
    def shape(self) -> tuple[int | None, ...]:
        """Static sizes (None where the size is known at run time only)."""
        return self.type.shape if self.is_buffer else ()


@dataclass(frozen=True)
class FunctionSignature:
    """A function's entry point and the descriptors it reads and writes."""

    name: str
    entry: str
    inputs: tuple[ArgInfo, ...]
    outputs: tuple[ArgInfo, ...]


@dataclass(frozen=True)
class LoweredModule:
    """What ``to-llvm`` produces.

    ``errors[code] = (message, location)`` for every code an entry may return (``loops.assert``
    codes are positive, codes of checks the backend adds negative); ``error_kinds[code]`` is
    ``"value"``, ``"index"`` or ``"memory"`` (which Python exception fits); ``symbols`` are the
    external symbols the code calls (``runtime.register_runtime_symbols`` provides them).
    """

    llvm_ir: str
    entries: dict[str, str]
    signatures: dict[str, FunctionSignature]
    errors: dict[int, tuple[str, str]]
    error_kinds: dict[int, str]
    symbols: tuple[str, ...]
    num_threads: int


def _functions(module: Operation) -> list[FuncOp]:
    if isinstance(module, FuncOp):
        return [module]
    if not isinstance(module, ModuleOp):
        raise TranslationError(f"to-llvm translates a builtin.module, got {module.name}", module)
    return module.functions


def translate_module(module: Operation, num_threads: int | None = None,
                     parallel_threshold: int = DEFAULT_PARALLEL_THRESHOLD) -> LoweredModule:
    """Translate every function of ``module`` (a ``builtin.module`` in the loops dialect).

    ``num_threads`` (default: the cores this process may use) bounds the threads a parallel
    loop runs on; 1 makes every loop sequential. ``parallel_threshold`` is the estimated number
    of innermost iterations from which a parallel loop uses threads.
    """
    threads = default_num_threads() if num_threads is None else int(num_threads)
    if threads < 1:
        raise ValueError(f"num_threads must be at least 1, got {num_threads}")
    state = ModuleLowering(threads, int(parallel_threshold))
    functions = _functions(module)
    for func in functions:
        declare_function(state, func)
    signatures = {}
    for func in functions:
        define_function(state, func)
        define_entry(state, func)
        ftype = func.function_type
        signatures[func.sym_name] = FunctionSignature(
            func.sym_name, entry_name(func.sym_name), tuple(ArgInfo(t) for t in ftype.inputs),
            tuple(ArgInfo(t) for t in ftype.results))
    symbols = tuple(sorted(name for name, value in state.module.globals.items()
                           if isinstance(value, ir.Function) and value.is_declaration
                           and not name.startswith("llvm.")))
    register_runtime_symbols()
    return LoweredModule(str(state.module), {f: s.entry for f, s in signatures.items()},
                         signatures, dict(state.errors), dict(state.error_kinds), symbols, threads)


def emit_llvm(module: Operation) -> str:
    """The LLVM IR of ``module`` (``lowering-opt --emit llvm``).

    >>> from lowering.ir.parser import parse_module
    >>> text = emit_llvm(parse_module("func.func @nothing() { func.return }"))
    >>> 'define i32 @"nothing_entry"(i8** ' in text
    True
    """
    return translate_module(module).llvm_ir


def emit_asm(module: Operation) -> str:
    """The host assembly of ``module`` after LLVM's O3 pipeline (``lowering-opt --emit asm``).

    >>> from lowering.ir.parser import parse_module
    >>> "nothing_entry:" in emit_asm(parse_module("func.func @nothing() { func.return }"))
    True
    """
    return emit_assembly(translate_module(module).llvm_ir)
