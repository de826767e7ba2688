"""The checking mode (``mode="DebugMode"``): every call runs the IR as built and the IR after each
optimization pass in the reference interpreter, and names the first pass that changed a result.

Snapshots are taken once, when the function is built (``SnapshotPasses`` on the pass manager);
each call interprets them all, so this mode is slow and meant for finding a faulty rewrite.
Results are compared with a tolerance for floats; where the earlier stage gives ``inf`` or
``nan``, any value is accepted (stabilizing rewrites make such results finite on purpose).
Where a float result differs beyond the tolerance, it is judged against a more precise run of
the IR as built (``wide_reference``): a pass is named only when its result is farther from that
reference than the earlier stage's (stabilizing ``log(1 - sigmoid(30))`` moves the result from
-30.00102 to the right -30.0000000000001, and is no error).

>>> import numpy as np
>>> same_results([np.array([1.0, np.inf])], [np.array([1.0, 7.0])]) is None
True
>>> same_results([np.array([1, 2])], [np.array([1, 3])])
'result #0 differs at 1 element(s) (first at index (1,): 2 before, 3 after)'
>>> same_results([np.array([1.5])], [np.array([1.0])], reference=[np.array([1.01])]) is None
True
>>> same_results([np.array([1.0])], [np.array([1.5])], reference=[np.array([1.01])])
'result #0 differs at 1 element(s) (first at index (0,): 1.0 before, 1.5 after, 1.01 in a more precise run)'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import Operation
from lowering.ir.pass_manager import PassInstrumentation

from .interpreter_executor import InterpreterExecutor
from .wide_reference import WideInterpreter


class PassCheckError(AssertionError):
    """A pass changed what the function computes (the message names the pass and the result)."""


class SnapshotPasses(PassInstrumentation):
    """Keeps ``(pass, copy of the module)`` after every pass that changed the module."""

    def __init__(self):
        self.snapshots: list[tuple[str, Operation]] = []

    def after_pass(self, pass_, module, changed):
        if changed:
            self.snapshots.append((pass_.pipeline_element(), module.clone()))


class CheckingExecutor:
    """Runs every stage and checks each against the one before it; returns the last results."""

    def __init__(self, stages: list[tuple[str, Operation]]):
        self.stages = [(name, InterpreterExecutor(module)) for name, module in stages]

    def __call__(self, args: list) -> list:
        before, before_name = None, None
        reference = None  # run once, where a float result differs
        for name, run in self.stages:
            results = run(list(args))
            if before is not None:
                problem = same_results(before, results)
                if problem is not None:
                    reference = reference or self.reference(args)
                    problem = same_results(before, results, reference)
                if problem is not None:
                    raise PassCheckError(f"pass '{name}' changed what the function computes: "
                                         f"{problem} (compared with the IR after {before_name})")
            before, before_name = results, name
        return before

    def reference(self, args: list) -> list:
        """The results of the IR as built, in the more precise ``WideInterpreter``."""
        return WideInterpreter().run_region(self.stages[0][1].body, list(args))


def same_results(before: list, after: list, reference: list | None = None) -> str | None:
    """None when ``after`` agrees with ``before``, else what differs. With ``reference`` (the
    results of a more precise run), a float that differs is accepted where it is no farther
    from the reference than ``before`` was."""
    if len(before) != len(after):
        return f"{len(before)} results before, {len(after)} after"
    for index, (a, b) in enumerate(zip(before, after)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return (f"result #{index} was {a.dtype}{list(a.shape)}, is now "
                    f"{b.dtype}{list(b.shape)}")
        exact = reference is not None and a.dtype.kind == "f"
        if a.dtype.kind in "fc":
            rtol = 1e-4 if a.dtype.itemsize <= 4 else 1e-7
            ok = ~np.isfinite(a) | np.isclose(b, a, rtol=rtol, atol=rtol)
            if exact:
                ok |= _no_farther(a, b, np.asarray(reference[index]), rtol)
        else:
            ok = a == b
        if not np.all(ok):
            bad = np.argwhere(~np.asarray(ok))
            first = tuple(int(i) for i in bad[0])
            more = f", {np.asarray(reference[index])[first]} in a more precise run" if exact else ""
            return (f"result #{index} differs at {len(bad)} element(s) (first at index {first}: "
                    f"{a[first]} before, {b[first]} after{more})")
    return None


def _no_farther(before: np.ndarray, after: np.ndarray, reference: np.ndarray,
                rtol: float) -> np.ndarray:
    """Where ``after`` is finite and no farther from the finite ``reference`` than ``before``
    (within the tolerance ``rtol``, relative and absolute)."""
    with np.errstate(invalid="ignore", over="ignore"):
        wide = [np.asarray(v, dtype=np.longdouble) for v in (before, after, reference)]
        before, after, reference = np.broadcast_arrays(*wide)
        slack = rtol * (1 + np.abs(reference))
        return (np.isfinite(reference) & np.isfinite(after)
                & (np.abs(after - reference) <= np.abs(before - reference) + slack))
