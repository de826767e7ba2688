"""The pass manager: runs passes in order, verifies after each, and calls instrumentations.

There is one instrumentation hook, ``PassInstrumentation`` (``before_pass``, ``after_pass`` with
whether the pass changed the IR, ``after_failure``); IR dumps, timing and crash reproducers are
all built on it::

    timing = PassTiming()
    pm = PassManager("canonicalize,cse", instrumentations=[IRPrinting(after_all=True), timing])
    pm.run(module)
    print(timing.report())

A pass fails by raising; the pass manager then calls ``after_failure`` and raises ``PassError``
naming the pass. Verification failures after a pass are failures of that pass.

``PassManager(..., context=...)`` gives a ``lowering.ir.context.Context`` to the passes that find
ops by name (their ``context_field``); without one they use the default context.

>>> from lowering.ir.core import Operation
>>> PassManager([]).run(Operation())
"""
from __future__ import annotations

import sys
import time
from typing import Iterable, TextIO

from .core import IRError, Operation, VerifyError
from .passes import ModulePass, PassFailure, parse_pipeline, pipeline_to_string
from .printer import print_op
from .verifier import verify


class PassInstrumentation:
    """Called around every pass a ``PassManager`` runs. Override what you need."""

    def before_pass(self, pass_: ModulePass, module: Operation) -> None:
        """``pass_`` is about to run on ``module``."""

    def after_pass(self, pass_: ModulePass, module: Operation, changed: bool) -> None:
        """``pass_`` ran and ``module`` verified; ``changed`` says whether the IR differs."""

    def after_failure(self, pass_: ModulePass, module: Operation, error: BaseException) -> None:
        """``pass_`` raised ``error``, or ``module`` did not verify after it."""


class PassError(IRError):
    """A pass failed: the message names the pass; ``op`` is the op at fault, when known.

    ``crashed`` is true when the pass raised something other than an IR error or a
    ``PassFailure`` (a bug rather than a property of the input).
    """

    def __init__(self, message: str, pass_: ModulePass, op: Operation | None = None,
                 crashed: bool = False):
        super().__init__(message, op)
        self.pass_ = pass_
        self.crashed = crashed


class PassManager:
    """Runs ``passes`` (pass objects or pipeline text) in order on a module.

    ``verify_each`` verifies the input and the IR after every pass. ``context`` (a
    ``lowering.ir.context.Context``; default: the default context) is given to the passes that
    find ops by name, such as ``canonicalize``.
    """

    def __init__(self, passes: Iterable[ModulePass] | str = (), verify_each: bool = True,
                 instrumentations: Iterable[PassInstrumentation] = (), context=None):
        self.context = context
        self.passes: list[ModulePass] = []
        for pass_ in parse_pipeline(passes) if isinstance(passes, str) else passes:
            self.add(pass_)
        self.verify_each = verify_each
        self.instrumentations: list[PassInstrumentation] = list(instrumentations)

    @property
    def pipeline(self) -> str:
        """The passes as pipeline text."""
        return pipeline_to_string(self.passes)

    def add(self, pass_: ModulePass) -> "PassManager":
        self.passes.append(pass_ if self.context is None else pass_.with_context(self.context))
        return self

    def add_instrumentation(self, instrumentation: PassInstrumentation) -> "PassManager":
        self.instrumentations.append(instrumentation)
        return self

    def run(self, module: Operation) -> None:
        """Run every pass on ``module`` (in place); raise ``PassError`` at the first failure."""
        if self.verify_each:
            try:
                verify(module)
            except VerifyError as exc:
                raise VerifyError(f"the input does not verify: {exc.message}", exc.op) from exc
        for pass_ in self.passes:
            self._run_one(pass_, module)

    def _run_one(self, pass_: ModulePass, module: Operation) -> None:
        watch = bool(self.instrumentations)
        before = fingerprint(module) if watch else None
        for inst in self.instrumentations:
            inst.before_pass(pass_, module)
        try:
            try:
                pass_.apply(module)
            except (IRError, PassFailure) as exc:
                raise PassError(f"pass '{pass_.name}' failed: {exc.message}", pass_,
                                exc.op) from exc
            except Exception as exc:
                raise PassError(f"pass '{pass_.name}' crashed: {type(exc).__name__}: {exc}",
                                pass_, op_in_traceback(exc, module), crashed=True) from exc
            if self.verify_each:
                try:
                    verify(module)
                except VerifyError as exc:
                    raise PassError(f"verification failed after pass '{pass_.name}': "
                                    f"{exc.message}", pass_, exc.op) from exc
        except PassError as error:
            for inst in self.instrumentations:
                inst.after_failure(pass_, module, error)
            raise
        changed = watch and fingerprint(module) != before
        for inst in self.instrumentations:
            inst.after_pass(pass_, module, changed)


def op_in_traceback(exc: BaseException, module: Operation) -> Operation | None:
    """The op that code failing with ``exc`` was working on, as far as its frames tell: the
    innermost frame with an op of ``module`` in a local variable (preferring one named ``op``).
    A crash is reported at that op's location.

    >>> def failing(op):
    ...     raise KeyError("x")
    >>> m = Operation()
    >>> try:
    ...     failing(m)
    ... except KeyError as exc:
    ...     op_in_traceback(exc, m) is m
    True
    """
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        local = frame.f_locals
        candidates = [local["op"]] if "op" in local else []
        candidates += [v for k, v in local.items() if k != "op"]
        for value in candidates:
            if isinstance(value, Operation) and _inside(value, module):
                return value
    return None


def _inside(op: Operation, module: Operation) -> bool:
    return op is module or any(a is module for a in op.ancestors())


def fingerprint(op: Operation) -> list:
    """A snapshot of ``op``'s IR that differs whenever the printed IR would (cheaper to take).

    It holds the ops, values and attributes themselves, so none of them can be freed and have its
    identity reused while the snapshot lives.

    >>> from lowering.ir.attributes import IntAttr
    >>> op = Operation()
    >>> snap = fingerprint(op)
    >>> op.attributes["k"] = IntAttr(1)
    >>> fingerprint(op) == snap
    False
    """
    entries: list = []
    for nested in op.walk():
        entries.append((nested, nested.name, tuple(nested.operands),
                        tuple(r.type for r in nested.results),
                        tuple(nested.attributes.items()), nested.location,
                        tuple((block, tuple(a.type for a in block.args), len(block))
                              for reg in nested.regions for block in reg.blocks)))
    return entries


# ---------------------------------------------------------------------------------------------
# Instrumentations


def _header(when: str, pass_: ModulePass, suffix: str = "") -> str:
    return f"// -----// IR Dump {when} {pass_.pipeline_element()}{suffix} //----- //"


class IRPrinting(PassInstrumentation):
    """Prints the IR around passes, like mlir-opt's ``--mlir-print-ir-*`` flags.

    ``before``/``after`` name passes to print around; ``before_all``/``after_all`` select every
    pass. ``after_change`` prints after a pass only if it changed the IR (alone: after every pass
    that did; with ``after``/``after_all``: only those of them that did). ``after_failure`` prints
    the IR a failing pass left behind. Output goes to ``stream`` (standard error by default).
    """

    def __init__(self, before: Iterable[str] = (), after: Iterable[str] = (),
                 before_all: bool = False, after_all: bool = False, after_change: bool = False,
                 after_failure: bool = False, stream: TextIO | None = None, generic: bool = False,
                 print_locations: bool = False):
        self.before = set(before)
        self.after = set(after)
        self.before_all = before_all
        self.after_all = after_all
        self.after_change = after_change
        self.on_failure = after_failure
        self.stream = stream
        self.generic = generic
        self.print_locations = print_locations

    def _emit(self, header: str, module: Operation) -> None:
        out = self.stream if self.stream is not None else sys.stderr
        text = print_op(module, generic=self.generic, print_locations=self.print_locations)
        out.write(f"{header}\n{text.rstrip()}\n\n")
        out.flush()

    def before_pass(self, pass_, module):
        if self.before_all or pass_.name in self.before:
            self._emit(_header("Before", pass_), module)

    def after_pass(self, pass_, module, changed):
        selected = self.after_all or pass_.name in self.after
        if self.after_change:
            wanted = changed and (selected or not (self.after_all or self.after))
        else:
            wanted = selected
        if wanted:
            self._emit(_header("After", pass_), module)

    def after_failure(self, pass_, module, error):
        if self.on_failure:
            self._emit(_header("After", pass_, " Failed"), module)


class PassTiming(PassInstrumentation):
    """Wall time of each pass (and of any other step ``record``ed), reported like mlir-opt's
    ``--mlir-timing``.

    >>> timing = PassTiming()
    >>> timing.record("parse", 0.5); timing.record("cse", 1.5)
    >>> print(timing.report())  # doctest: +NORMALIZE_WHITESPACE
    ===-------------------------------------------------------------------------===
                             ... Execution time report ...
    ===-------------------------------------------------------------------------===
      Total Execution Time: 2.0000 seconds
    <BLANKLINE>
      ----Wall Time----  ----Name----
        0.5000 ( 25.0%)  parse
        1.5000 ( 75.0%)  cse
        2.0000 (100.0%)  Total
    """

    def __init__(self):
        self.records: list[tuple[str, float]] = []
        self._started: float | None = None

    def record(self, name: str, seconds: float) -> None:
        """Add a row: ``name`` took ``seconds``."""
        self.records.append((name, seconds))

    def before_pass(self, pass_, module):
        self._started = time.perf_counter()

    def after_pass(self, pass_, module, changed):
        self._stop(pass_)

    def after_failure(self, pass_, module, error):
        self._stop(pass_)

    def _stop(self, pass_) -> None:
        if self._started is not None:
            self.record(pass_.pipeline_element(), time.perf_counter() - self._started)
            self._started = None

    def report(self) -> str:
        """The table: one row per pass run (in order), with its share of the total."""
        total = sum(seconds for _, seconds in self.records)
        rule = "===" + "-" * 73 + "==="
        lines = [rule, " " * 25 + "... Execution time report ...", rule,
                 f"  Total Execution Time: {total:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]
        for name, seconds in self.records + [("Total", total)]:
            share = 100.0 * seconds / total if total > 0 else 0.0
            lines.append(f"    {seconds:.4f} ({share:5.1f}%)  {name}")
        return "\n".join(lines)


class CrashReproducer(PassInstrumentation):
    """On a failure, writes the failing pass's input IR and a one-pass pipeline to ``path``.

    The file starts with ``// configuration: -p '<pass>'``, followed by ``--load-dialect NAME``
    for each of ``dialects`` (those loaded besides the default ones, which reading the input
    needs); ``lowering-opt --run-reproducer <path>`` (or ``lowering-opt <path> -p '<pass>'``)
    runs it again. ``written`` is the path once a reproducer was written.
    """

    def __init__(self, path: str, dialects: tuple[str, ...] = ()):
        self.path = path
        self.dialects = tuple(dialects)
        self.written: str | None = None
        self._input: str | None = None

    def before_pass(self, pass_, module):
        self._input = print_op(module, print_locations=True)

    def after_failure(self, pass_, module, error):
        if self._input is None:
            return
        pipeline = pass_.pipeline_element().replace("'", "'\\''")
        reason = (str(error) or type(error).__name__).splitlines()[0]
        with open(self.path, "w", encoding="utf-8") as f:
            loads = "".join(f" --load-dialect {name}" for name in self.dialects)
            f.write(f"// configuration: -p '{pipeline}'{loads}\n")
            f.write(f"// reproducer of: {reason}\n")
            f.write(self._input.rstrip() + "\n")
        self.written = self.path
