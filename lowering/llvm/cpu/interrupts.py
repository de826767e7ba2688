"""Ctrl-C during a compiled call: a counter of SIGINTs that long loops poll.

Compiled calls run without the GIL, so Python's own handler (which only notes the signal for
the main thread's next bytecode) cannot stop them. This module adds, once per process, a small
LLVM library with:

- ``i64 lowering_interrupts()``: how many SIGINTs arrived so far in this process;
- ``void lowering_on_sigint(i32)``: the C-level SIGINT handler, which counts the signal and then
  calls the handler it replaced (Python's, which still raises ``KeyboardInterrupt``).

``watch_sigint()`` puts the handler in front of Python's, only while Python's handler is the
default one (``signal.default_int_handler``): a program with its own SIGINT handler (or none)
is left alone. ``signal.signal(SIGINT, ...)`` later replaces it; building a compiled function
watches again.

Generated code reads the counter when the function starts and compares at the start of each
piece of a parallel loop (``cpu.parallel``); a change stops the call with ``INTERRUPT_CODE``,
like a failed check: nothing is returned, no shared variable changed, the temporaries are freed.
The executor then lets Python run its handler.

>>> "lowering_on_sigint" in interrupts_ir()
True
"""
from __future__ import annotations

import atexit
import ctypes
import signal
import threading

import llvmlite.ir as ir

from ..jit import Loader, ProcessLibrary

INTERRUPTS_FUNCTION = "lowering_interrupts"
HANDLER_FUNCTION = "lowering_on_sigint"
# The entry's status for a call stopped by SIGINT (other codes count up from 1 and down from -1).
INTERRUPT_CODE = -(1 << 31) + 1
# Bump when the library's code changes (it is part of the disk cache's description).
INTERRUPTS_VERSION = 1

_I32, _I64 = ir.IntType(32), ir.IntType(64)
_HANDLER_TYPE = ir.FunctionType(ir.VoidType(), [_I32])


def interrupts_ir() -> str:
    """The LLVM IR of the counter, its reader and the handler."""
    module = ir.Module(name="lowering.interrupts")
    count = ir.GlobalVariable(module, _I64, "interrupts.count")
    count.linkage = "internal"
    count.initializer = ir.Constant(_I64, 0)
    previous = ir.GlobalVariable(module, _HANDLER_TYPE.as_pointer(), "interrupts.previous")
    previous.initializer = ir.Constant(_HANDLER_TYPE.as_pointer(), None)

    reader = ir.Function(module, ir.FunctionType(_I64, []), INTERRUPTS_FUNCTION)
    b = ir.IRBuilder(reader.append_basic_block("entry"))
    b.ret(b.load_atomic(count, "acquire", 8))

    handler = ir.Function(module, _HANDLER_TYPE, HANDLER_FUNCTION)
    b = ir.IRBuilder(handler.append_basic_block("entry"))
    b.atomic_rmw("add", count, ir.Constant(_I64, 1), "seq_cst")
    chained = b.load_atomic(previous, "acquire", 8)
    # SIG_DFL is 0 and SIG_IGN 1: only a real handler is called.
    real = b.icmp_unsigned(">", b.ptrtoint(chained, _I64), ir.Constant(_I64, 1))
    with b.if_then(real):
        b.call(chained, [handler.args[0]])
    b.ret_void()
    return str(module)


def interrupts_description() -> str:
    """What determines the library's code (a key for caches of its object code)."""
    return f"lowering interrupts v{INTERRUPTS_VERSION}"


_LIBRARY = ProcessLibrary(INTERRUPTS_FUNCTION, interrupts_description, interrupts_ir, opt=1)
_lock = threading.Lock()
_loader: list = []  # the loader compiled code uses (a disk cache), once it is known
_restore_at_exit: list = []


def install_interrupts(load: Loader | None = None) -> int:
    """Load the library once per process (``load(description, produce_ir, opt)`` gives it, e.g.
    from a disk cache), register ``INTERRUPTS_FUNCTION`` for the JIT and return its address.

    >>> install_interrupts() == install_interrupts()
    True
    """
    return _LIBRARY.install(load)


_api = ctypes.pythonapi
_HANDLER_POINTER = ctypes.c_void_p


def _sigaction_api():
    getsig, setsig = _api.PyOS_getsig, _api.PyOS_setsig
    getsig.restype = setsig.restype = _HANDLER_POINTER
    getsig.argtypes = [ctypes.c_int]
    setsig.argtypes = [ctypes.c_int, _HANDLER_POINTER]
    return getsig, setsig


def watch_sigint() -> bool:
    """Count SIGINTs for compiled loops while Python's handler is the default one (raising
    ``KeyboardInterrupt``); whether they are counted now.

    >>> import signal
    >>> watch_sigint() == (signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    True
    """
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    install_interrupts(_loader[0] if _loader else None)
    library = _LIBRARY.library
    ours = library.address(HANDLER_FUNCTION)
    getsig, setsig = _sigaction_api()
    with _lock:
        current = getsig(signal.SIGINT) or 0
        if current == ours:
            return True
        if current <= 1:  # SIG_DFL or SIG_IGN at the C level: Python does not handle SIGINT
            return False
        ctypes.c_void_p.from_address(library.global_address("interrupts.previous")).value = \
            current
        setsig(signal.SIGINT, ours)
        if not _restore_at_exit:
            atexit.register(_stop_watching)
            _restore_at_exit.append(True)
    return True


def use_loader(load: Loader) -> None:
    """Load the library with ``load`` (a disk cache) when it is first needed."""
    if not _loader:
        _loader.append(load)


def _stop_watching() -> None:
    """Give SIGINT back to the handler ours replaced (at exit, before the code is unloaded)."""
    library = _LIBRARY.library
    if library is None:
        return
    getsig, setsig = _sigaction_api()
    previous = ctypes.c_void_p.from_address(library.global_address("interrupts.previous"))
    if getsig(signal.SIGINT) == library.address(HANDLER_FUNCTION) and previous.value:
        setsig(signal.SIGINT, previous.value)
