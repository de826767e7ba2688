"""Small helpers that give each library's ports the same footing.

The Theano-style libraries (``lowering`` and PyTensor) run with ``floatX=float32``, as the seed
programs set it, so that Python float constants stay float32. JAX results are waited for
(``block_until_ready``), so a timed call includes the work, not only its dispatch. A PyTensor port
builds its graph once; ``pytensor_c_port`` makes from it the port of PyTensor's C backend, the
same graph compiled by ``pytensor_function`` with the ``cvm`` linker.

>>> inputs(lambda rng: rng.rand(3).astype("float32"), "demo", 3) is inputs(
...     lambda rng: rng.rand(3).astype("float32"), "demo", 3)
True
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

import numpy as np

_INPUTS: dict[tuple, Any] = {}
# How ``pytensor_function`` compiles: PyTensor's default mode, or its C backend (while a port of
# ``pytensor_c_port`` is built).
_PYTENSOR_BACKEND = {"c": False}


def inputs(make: Callable[[np.random.RandomState], Any], *key) -> Any:
    """``make(RandomState(0))``, made once per ``key`` and shared by every library's port (ports
    never write into their inputs)."""
    if key not in _INPUTS:
        _INPUTS[key] = make(np.random.RandomState(0))
    return _INPUTS[key]


def forget_inputs() -> None:
    """Drop the shared inputs (between workloads, to keep memory use down)."""
    _INPUTS.clear()


def lowering_modules():
    """``(lowering, lowering.tensor)`` with ``floatX=float32`` (set on every call: a caller such
    as a test may have restored the flag in between)."""
    import lowering
    import lowering.tensor
    lowering.config.floatX = "float32"
    return lowering, lowering.tensor


@functools.cache
def pytensor_modules():
    """``(pytensor, pytensor.tensor)`` with ``floatX=float32``."""
    import warnings

    import pytensor
    import pytensor.tensor
    warnings.filterwarnings("ignore", module="pytensor")  # e.g. "no BLAS flags": defaults kept
    pytensor.config.floatX = "float32"
    return pytensor, pytensor.tensor


def lowering_function(inputs_, outputs, **kwargs):
    """``lowering.function(..., mode="FAST_RUN")`` and a note saying how it executes."""
    from benchmarks.peers import lowering_execution
    lowering, _ = lowering_modules()
    f = lowering.function(inputs_, outputs, mode="FAST_RUN", **kwargs)
    return f, lowering_execution(f)


def pytensor_function(inputs_, outputs, **kwargs):
    """``pytensor.function(...)`` with PyTensor's default mode, or with its C backend inside
    ``pytensor_c_backend()``, and a note naming the linker (and, for the C backend, how many of
    the graph's ops run C code)."""
    from benchmarks.peers import pytensor_c_thunks, pytensor_linker
    pytensor, _ = pytensor_modules()
    if not _PYTENSOR_BACKEND["c"]:
        f = pytensor.function(inputs_, outputs, **kwargs)
        return f, f"default mode, {pytensor_linker(f)} linker"
    f = pytensor.function(inputs_, outputs, mode=pytensor_c_mode(), **kwargs)
    return f, f"{pytensor_linker(f)} linker, {pytensor_c_thunks(f)}"


def pytensor_c_mode():
    """PyTensor's C backend: the ``cvm`` linker (C thunks run by a C virtual machine; ops
    without C code run their Python ``perform``) and the ``fast_run`` rewrites."""
    from pytensor.compile.mode import Mode
    return Mode(linker="cvm", optimizer="fast_run")


@contextlib.contextmanager
def pytensor_c_backend():
    """While inside, ``pytensor_function`` compiles with ``pytensor_c_mode()``.

    >>> with pytensor_c_backend():
    ...     _PYTENSOR_BACKEND["c"]
    True
    >>> _PYTENSOR_BACKEND["c"]
    False
    """
    before = _PYTENSOR_BACKEND["c"]
    _PYTENSOR_BACKEND["c"] = True
    try:
        yield
    finally:
        _PYTENSOR_BACKEND["c"] = before


def pytensor_c_port(build: Callable[[dict], Any]) -> Callable[[dict], Any]:
    """The port of PyTensor's C backend made from the builder of a PyTensor port: the same
    graph, compiled with the C backend.

    >>> pytensor_c_port(lambda p: _PYTENSOR_BACKEND["c"])({})
    True
    """
    def build_c(params):
        with pytensor_c_backend():
            return build(params)
    return build_c


def jax_waiting(fn: Callable, *args) -> Callable[[], Any]:
    """A call of ``fn(*args)`` that returns once JAX has computed the result."""
    import jax

    def run():
        return jax.block_until_ready(fn(*args))
    return run
