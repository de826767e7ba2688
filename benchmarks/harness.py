"""Timing and result checking shared by every workload.

A workload's implementation for one library is a ``Port``: a ``run`` callable that does one unit
of work (one call, one training step) and returns its result. ``measure`` builds the port, calls it
once (so that JIT compilers compile outside the timing), times ``calls`` calls ``repeats`` times,
keeps the best repeat, and returns a ``Measurement`` carrying the last result for the agreement
check. The process's memory is watched meanwhile: an implementation that keeps growing it is
stopped with an error that says by how much each call grew it.

>>> m = measure("demo", "numpy", lambda: Port(lambda: 1 + 1), calls=10, repeats=2)
>>> m.result, m.calls, m.seconds > 0
(2, 10, True)
>>> check_agreement(np.float32([1, 2]), np.float32([1, 2.0001]), rtol=1e-3, atol=0)
(True, '')
"""
from __future__ import annotations

import gc
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from benchmarks.memory import MemoryGuard


@dataclass
class Port:
    """One library's implementation of a workload.

    ``run()`` does one unit of work and returns its result; ``result(last)``, when given, turns
    the last call's result into what is compared after the timing (e.g. adds the trained
    weights); ``note`` says how it ran (``lowering``'s executor, a peer's linker).
    """

    run: Callable[[], Any]
    result: Callable[[Any], Any] | None = None
    note: str = ""


@dataclass
class Measurement:
    """The outcome of one workload on one implementation.

    ``seconds`` is the best time of one unit (call, step); ``setup_seconds`` the time to build the
    port (graph building and ``function()`` for the Theano-style libraries) and ``first_seconds``
    its first call (where JIT compilers compile). ``error`` is set when the implementation failed;
    ``agrees`` is None until the agreement check ran.
    """

    workload: str
    implementation: str
    seconds: float | None = None
    calls: int = 0
    setup_seconds: float | None = None
    first_seconds: float | None = None
    note: str = ""
    error: str | None = None
    result: Any = None
    agrees: bool | None = None
    mismatch: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Ran, and its result was not found to disagree."""
        return self.error is None and self.agrees is not False


# Calls between two looks at the process's memory (a look costs a few microseconds).
_CHUNK = 256


def _timed_loop(run: Callable[[], Any], calls: int,
                guard: MemoryGuard | None = None) -> tuple[float, Any]:
    """Seconds for ``calls`` calls of ``run`` (garbage collection paused) and the last result.
    With a ``guard``, memory is checked every ``_CHUNK`` calls, outside the timing."""
    out = None
    elapsed = 0.0
    enabled = gc.isenabled()
    gc.disable()
    try:
        done = 0
        while done < calls:
            chunk = min(_CHUNK, calls - done) if guard is not None else calls
            start = time.perf_counter()
            for _ in range(chunk):
                out = run()
            elapsed += time.perf_counter() - start
            done += chunk
            if guard is not None:
                guard.check(chunk)
    finally:
        if enabled:
            gc.enable()
    return elapsed, out


def autorange(run: Callable[[], Any], min_seconds: float) -> int:
    """The number of calls (1, 2, 5, 10, 20, 50, ...) that takes at least ``min_seconds``.

    >>> autorange(lambda: None, 0.0)
    1
    """
    calls = 1
    while True:
        for factor in (1, 2, 5):
            n = calls * factor
            elapsed, _ = _timed_loop(run, n)
            if elapsed >= min_seconds:
                return n
        calls *= 10


def measure(workload: str, implementation: str, build: Callable[[], Port], *,
            calls: int | None, repeats: int, min_seconds: float = 0.2) -> Measurement:
    """Build a port, call it once, then time it; failures are recorded, never raised.

    ``calls=None`` picks the number of calls per repeat so that a repeat takes ``min_seconds``.
    The per-unit time is that of the fastest repeat (the least disturbed by other processes).

    >>> m = measure("demo", "broken", lambda: Port(lambda: 1 / 0), calls=1, repeats=1)
    >>> m.error.splitlines()[0]
    'ZeroDivisionError: division by zero'
    """
    m = Measurement(workload, implementation)
    try:
        start = time.perf_counter()
        port = build()
        m.setup_seconds = time.perf_counter() - start
        m.note = port.note
        m.first_seconds, out = _timed_loop(port.run, 1)
        n = calls if calls is not None else autorange(port.run, min_seconds)
        guard = MemoryGuard()
        best = None
        for _ in range(repeats):
            elapsed, out = _timed_loop(port.run, n, guard)
            best = elapsed if best is None else min(best, elapsed)
        m.seconds, m.calls = best / n, n
        m.result = port.result(out) if port.result is not None else out
        m.extra["memory_growth_per_call"] = guard.growth_per_call()
        m.extra["memory_growth"] = guard.growth_per_call() * guard.calls
    except Exception as exc:  # a failing library is reported in its row, not fatal
        m.error = _describe(exc)
    return m


def _describe(exc: BaseException) -> str:
    """The exception's type and message, then where it was raised."""
    where = traceback.extract_tb(exc.__traceback__)
    last = f"\n  at {where[-1].filename}:{where[-1].lineno}" if where else ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}{last}"


# -------------------------------------------------------------------------------------------
# Agreement


def as_arrays(result: Any) -> list[np.ndarray]:
    """A result as a list of host arrays (tuples and lists are flattened one level; device
    arrays of JAX and the like are converted with ``numpy.asarray``).

    >>> [a.shape for a in as_arrays((np.zeros(3), 1.0))]
    [(3,), ()]
    """
    items = result if isinstance(result, (list, tuple)) else [result]
    return [np.asarray(item) for item in items]


def check_agreement(result: Any, reference: Any, *, rtol: float, atol: float,
                    names: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Whether ``result`` matches ``reference`` (same number of parts, shapes and dtypes, values
    within ``numpy.allclose(rtol, atol)``, NaN only where the reference has NaN), and if not, why.
    ``names`` names the parts in the explanation (else ``part 0``, ``part 1``, ...).

    >>> print(check_agreement(np.float32([1, 2]), np.float32([1, 3]), rtol=1e-5, atol=0)[1])
    part 0: 1 of 2 values differ (max abs err 1, max rel err 0.333 at index (1,): got 2, expected 3)
    >>> check_agreement(np.float64([1]), np.float32([1]), rtol=1e-5, atol=0)[1]
    'part 0: dtype float64, expected float32'
    """
    got, want = as_arrays(result), as_arrays(reference)
    if len(got) != len(want):
        return False, f"{len(got)} result(s), expected {len(want)}"
    problems = []
    for part, (g, w) in enumerate(zip(got, want)):
        problem = _compare(g, w, rtol, atol)
        if problem:
            problems.append(f"{names[part] if part < len(names) else f'part {part}'}: {problem}")
    return not problems, "; ".join(problems)


def _compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str:
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.dtype.kind not in "fc":
        bad = got != want
        return f"{int(bad.sum())} of {got.size} values differ" if bad.any() else ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return ""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_err = np.where(close, 0.0, np.nan_to_num(np.abs(g - w), nan=np.inf))
        rel_err = np.where(close, 0.0, abs_err / np.abs(w))
    finite_rel = np.where(np.isnan(rel_err), np.inf, rel_err)
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(finite_rel)), got.shape))
    return (f"{int((~close).sum())} of {got.size} values differ (max abs err "
            f"{abs_err.max():.3g}, max rel err {finite_rel.max():.3g} at index "
            f"{worst}: got {g[worst]:.6g}, expected {w[worst]:.6g})")
