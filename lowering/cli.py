"""``lowering-opt``: read IR (or build it from a Python file), run passes, print the result.

In the spirit of ``mlir-opt`` and ``xdsl-opt``::

    lowering-opt model.mlir -p 'canonicalize,cse' --print-ir-after-all
    lowering-opt examples/logreg.py:train -p fuse --emit ir
    lowering-opt examples/logreg.py:train --target cuda --emit ptx
    lowering-opt tests.mlir --split-input-file --verify-diagnostics
    lowering-opt test-ops.mlir --load-dialect test -p canonicalize
    lowering-opt --cache-info
    lowering-opt --cache-clear

Input is a file, ``-`` or nothing for standard input, or ``file.py:name``: the Python file is run
(not as ``__main__``) and its module-level object ``name`` gives the IR through its
``ir_module()`` method (compiled functions have one), or is itself an IR module.

Ops are read through the default context (``lowering.ir.context``); ``--load-dialect NAME`` reads
and transforms them through a context that has dialect ``NAME`` of ``lowering.dialects.DIALECTS``
too, such as ``test``, the dialect of the tests' ops.

Output stages are the ``EMITTERS`` registry: a name and a function from the final module to text.
``ir`` (the default) prints the IR with ``--generic`` and ``--print-locations`` honoured; a backend
adds its stages (``llvm``, ``asm``, ``gpu``, ``ptx``, ...) with ``register_emitter``. ``--target
cuda`` builds a Python input's functions for the GPU (any machine: without a GPU they are built
for the interpreted device) and makes ``--emit llvm``/``asm`` give the kernels' LLVM IR and PTX.
A compiled function's backend stages (``--emit gpu``, ``ptx``, ``llvm``, ``asm``) are made from
its optimized graph, what ``function()`` runs (``f.ir("ptx")``); ``--unoptimized`` makes them
from the graph as built.

>>> import contextlib, io
>>> out = io.StringIO()
>>> with contextlib.redirect_stdout(out):
...     status = main(["--list-passes"])
>>> status, "cse" in out.getvalue()
(0, True)
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import runpy
import shlex
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from lowering.dialects import DIALECTS  # (importing it defines every op)
import lowering.passes  # noqa: F401  (registers every pass)
from lowering.ir.context import Context, default_context
from lowering.ir.core import IRError, Operation, did_you_mean
from lowering.ir.diagnostics import render_op_error
from lowering.ir.location import UNKNOWN
from lowering.ir.parser import ParseError, parse_module
from lowering.ir.pass_manager import (CrashReproducer, IRPrinting, PassError, PassManager,
                                      PassTiming, op_in_traceback)
from lowering.ir.passes import (PASS_REGISTRY, ModulePass, PipelineError, format_option_value,
                                 parse_pipeline)
from lowering.ir.printer import print_op
from lowering.ir.verifier import verify

Emitter = Callable[[Operation], str]

EMITTERS: dict[str, Emitter] = {"ir": print_op}


def register_emitter(name: str, emit: Emitter) -> None:
    """Make ``--emit name`` print ``emit(module)`` (e.g. LLVM IR or assembly of the module)."""
    EMITTERS[name] = emit


def _emit_llvm(module: Operation) -> str:
    """``--emit llvm``: the CPU backend's LLVM IR after LLVM's O3 pipeline, from tensor-level
    (bufferized first) or loops-level input."""
    from lowering.compile.cpu.executor import emit_llvm  # imported when used: a fast start
    return emit_llvm(module)


def _emit_asm(module: Operation) -> str:
    """``--emit asm``: the host assembly the CPU backend makes of the module."""
    from lowering.compile.cpu.executor import emit_asm
    return emit_asm(module)


def _emit_gpu(module: Operation) -> str:
    """``--emit gpu``: the GPU backend's ``gpu`` stage (the host function beside the
    ``gpu.module`` of its kernels), from tensor-level input or the stage itself."""
    from lowering.compile.gpu.build import gpu_stage
    return print_op(gpu_stage(module))


def _emit_ptx(module: Operation) -> str:
    """``--emit ptx``: the PTX of the module's kernels (no GPU needed: the architecture is the
    GPU's when one is present, else the flag ``gpuarray.arch``)."""
    from lowering.compile.gpu.build import emit_ptx
    return emit_ptx(module)


def _emit_gpu_llvm(module: Operation) -> str:
    """``--target cuda --emit llvm``: the kernels' LLVM IR (NVPTX, before LLVM's pipeline)."""
    from lowering.compile.gpu.build import GpuProgram, gpu_stage
    program = GpuProgram(gpu_stage(module), "cuda", 0)
    return "\n".join(m.llvm_ir for m in program.ptx_modules().values())


register_emitter("llvm", _emit_llvm)
register_emitter("asm", _emit_asm)
register_emitter("gpu", _emit_gpu)
register_emitter("ptx", _emit_ptx)

# What --emit gives for each --target where the two differ.
TARGET_EMITTERS: dict[tuple[str, str], Emitter] = {("cuda", "llvm"): _emit_gpu_llvm,
                                                    ("cuda", "asm"): _emit_ptx}
TARGETS = ("cpu", "cuda")


SPLIT_MARKER = re.compile(r"^// -----[ \t]*$", re.MULTILINE)
_PYTHON_INPUT = re.compile(r"^(?P<path>.+\.py):(?P<name>[A-Za-z_][\w.]*)$")


class UsageError(Exception):
    """A bad command line: unknown flag, pass or stage. Printed without a traceback."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _argument_parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="lowering-opt", allow_abbrev=False,
                        description="Run a pass pipeline on lowering IR and print the result.")
    p.add_argument("input", nargs="?", default="-",
                   help="IR file, '-' for standard input, or file.py:name")
    p.add_argument("-p", "--pass-pipeline", default="", metavar="PIPELINE",
                   help="passes to run, e.g. 'canonicalize,fuse{max-inputs=8}'")
    p.add_argument("-o", "--output", default="-", help="output file ('-': standard output)")
    p.add_argument("--print-ir-before", action="append", default=[], metavar="PASS",
                   help="print the IR before this pass (repeatable, or comma-separated)")
    p.add_argument("--print-ir-after", action="append", default=[], metavar="PASS",
                   help="print the IR after this pass (repeatable, or comma-separated)")
    p.add_argument("--print-ir-before-all", action="store_true",
                   help="print the IR before every pass")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR after every pass")
    p.add_argument("--print-ir-after-change", action="store_true",
                   help="print the IR after a pass only if it changed it")
    p.add_argument("--print-ir-after-failure", action="store_true",
                   help="print the IR a failing pass left behind")
    p.add_argument("--timing", action="store_true", help="report the time of each pass")
    p.add_argument("--emit", default="ir", metavar="STAGE",
                   help="what to print at the end: " + ", ".join(sorted(EMITTERS)))
    p.add_argument("--target", default="cpu", choices=TARGETS,
                   help="the backend --emit and Python input are for: cpu (default) or cuda "
                        "(a file.py:name input is run with device=cuda; --emit llvm/asm give "
                        "the kernels' LLVM IR / PTX)")
    p.add_argument("--unoptimized", action="store_true",
                   help="for a file.py:name function, lower the graph as built to the --emit "
                        "stage (gpu, ptx, llvm, asm) instead of the optimized graph that "
                        "function() runs")
    p.add_argument("--generic", action="store_true", help="print ops in the generic form")
    p.add_argument("--print-locations", action="store_true", help="print op locations")
    p.add_argument("--split-input-file", action="store_true",
                   help="process each '// -----' chunk of the input on its own")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check errors against '// expected-error {{...}}' comments")
    p.add_argument("--no-verify-each", dest="verify_each", action="store_false",
                   help="do not verify the IR after each pass")
    p.add_argument("--list-passes", action="store_true", help="list the passes and their options")
    p.add_argument("--load-dialect", action="append", default=[], metavar="NAME",
                   help="load dialect NAME besides the default ones (e.g. 'test', the ops the "
                        "tests use)")
    p.add_argument("--reproducer", metavar="FILE",
                   help="when a pass fails, write its input IR and pipeline to FILE")
    p.add_argument("--run-reproducer", action="store_true",
                   help="take the pipeline from the input's '// configuration:' line")
    p.add_argument("--cache-info", action="store_true",
                   help="print the compile cache's location, entries, size and bound")
    p.add_argument("--cache-clear", action="store_true",
                   help="remove every entry of the compile cache")
    p.add_argument("--crash-traceback", action="store_true",
                   help="when lowering-opt itself fails (a bug), print the Python traceback")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run ``lowering-opt`` with ``argv`` (default: the command line); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _run(argv)
    except UsageError as exc:
        print(f"lowering-opt: error: {exc}", file=sys.stderr)
        return 2
    except PipelineError as exc:
        print(f"lowering-opt: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a bug, told as one
        print(f"lowering-opt: internal error: {type(exc).__name__}: {exc}\n"
              f"{_bug_note(exc, '--crash-traceback' in argv)}", file=sys.stderr)
        return 1


def _bug_note(exc: BaseException, with_traceback: bool) -> str:
    """What to tell about an unexpected exception: where it was raised and how to report it."""
    if with_traceback:
        return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    frame = traceback.extract_tb(exc.__traceback__)[-1:] or None
    where = f" (raised at {os.path.basename(frame[0].filename)}:{frame[0].lineno} in " \
            f"{frame[0].name})" if frame else ""
    return (f"note: this is a bug in lowering{where}; please report it with the input "
            f"(--reproducer FILE saves a failing pass's input; --crash-traceback shows the "
            f"Python traceback)")


# ---------------------------------------------------------------------------------------------
# Options


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _argument_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        flags = [s for action in parser._actions for s in action.option_strings]
        bad = unknown[0]
        hint = did_you_mean(bad.split("=")[0], flags) if bad.startswith("-") else ""
        what = "unknown option" if bad.startswith("-") else "unexpected argument"
        raise UsageError(f"{what} '{bad}'{hint}")
    args.print_ir_before = _pass_names(args.print_ir_before, "--print-ir-before")
    args.print_ir_after = _pass_names(args.print_ir_after, "--print-ir-after")
    args.context = _context(args.load_dialect)
    if args.emit not in EMITTERS:
        raise UsageError(f"unknown --emit stage '{args.emit}'{did_you_mean(args.emit, EMITTERS)} "
                         f"(stages: {', '.join(sorted(EMITTERS))})")
    return args


def _pass_names(values: list[str], flag: str) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    for name in names:
        if name not in PASS_REGISTRY:
            raise UsageError(f"{flag}: unknown pass '{name}'{did_you_mean(name, PASS_REGISTRY)}")
    return names


def _context(dialect_names: list[str]) -> Context:
    """The default context, or a new one with the dialects ``--load-dialect`` names as well."""
    if not dialect_names:
        return default_context()
    context = Context()
    for name in dialect_names:
        if name not in DIALECTS:
            raise UsageError(f"--load-dialect: unknown dialect '{name}'"
                             f"{did_you_mean(name, DIALECTS)} (dialects: "
                             f"{', '.join(sorted(DIALECTS))})")
        context.load_dialect(DIALECTS[name])
    return context


def list_passes() -> str:
    """Every registered pass with its summary and options (for ``--list-passes``).

    >>> print(list_passes().splitlines()[0])
    Passes:
    """
    lines = ["Passes:"]
    for name in sorted(PASS_REGISTRY):
        cls = PASS_REGISTRY[name]
        lines.append(f"  {name:<22} {cls.summary()}")
        for opt in cls.options():
            shown = format_option_value(opt.default, opt.type) or "empty"
            allowed = f", {opt.range_text()}" if opt.range_text() else ""
            lines.append(f"      {opt.key}=<{opt.type_name()}>  (default: {shown}{allowed})"
                         + (f"  {opt.help}" if opt.help else ""))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Running


@dataclass
class Diagnostic:
    """An error to report: ``message`` (what expected-error comments match), the ``text`` to
    print (with source context), and the input ``line`` it points at, if any."""

    message: str
    text: str
    line: int | None


def _run(argv: list[str]) -> int:
    args = _parse_args(argv)
    if args.list_passes:
        print(list_passes())
        return 0
    if args.cache_info or args.cache_clear:
        return _cache_command(clear=args.cache_clear, info=args.cache_info)
    match = _PYTHON_INPUT.match(args.input)
    if match is None and args.input.endswith(".py"):
        raise UsageError(f"'{args.input}': name the object that gives the IR, as "
                         f"{args.input}:<name>")
    text = None if match else _read_input(args.input)
    if args.run_reproducer:
        if text is None:
            raise UsageError("--run-reproducer needs an IR file written by --reproducer")
        _apply_reproducer_configuration(args, text)
    passes = parse_pipeline(args.pass_pipeline)
    timing = PassTiming() if args.timing else None
    session = _Session(args, passes, timing)
    if match:
        ok = session.process_python(match.group("path"), match.group("name"))
    else:
        filename = "<stdin>" if args.input == "-" else args.input
        ok = session.process_text(text, filename)
    _write_output(args.output, session.output())
    if timing is not None:
        print(timing.report(), file=sys.stderr)
    return 0 if ok else 1


def _cache_command(clear: bool, info: bool) -> int:
    """``--cache-clear`` then ``--cache-info``, on the directory of the ``cache_dir`` flag (opened
    and checked as compiling does, so a clear removes nothing outside it)."""
    from lowering.compile.cache import CacheDirectoryError, DiskCache, format_bytes
    from lowering.config import config
    bound = config.cache_max_bytes
    try:
        cache = DiskCache(config.cache_dir, bound, create=False)
    except FileNotFoundError:
        cache = None
    except CacheDirectoryError as exc:
        print(f"lowering-opt: error: {exc}", file=sys.stderr)
        return 1
    with cache if cache is not None else contextlib.nullcontext():
        if clear and cache is not None:
            print(f"removed {cache.clear()} entries from {cache.directory}")
        if info:
            entries, size = cache.usage() if cache is not None else (0, 0)
            print(f"location: {os.path.abspath(config.cache_dir)}"
                  + ("" if cache is not None else " (does not exist yet)"))
            print(f"entries:  {entries}")
            print(f"size:     {format_bytes(size)} ({size} bytes)")
            print("bound:    " + (f"{format_bytes(bound)} ({bound} bytes, flag cache_max_bytes)"
                                   if bound else "none (flag cache_max_bytes=0)"))
            if not config.cache:
                print("(the cache flag is off: compiling neither reads nor writes it)")
    return 0


def _read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"cannot read '{path}': {exc.strerror}") from None


def _write_output(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write '{path}': {exc.strerror}") from None


def _apply_reproducer_configuration(args, text: str) -> None:
    first = text.split("\n", 1)[0]
    prefix = "// configuration:"
    if not first.startswith(prefix):
        raise UsageError(f"--run-reproducer: the first line of '{args.input}' is not "
                         f"'{prefix} ...'")
    config = _parse_args(shlex.split(first[len(prefix):]))
    if not args.pass_pipeline:
        args.pass_pipeline = config.pass_pipeline
    if config.load_dialect:  # the dialects the failing run had loaded read the input
        args.load_dialect = list(dict.fromkeys(args.load_dialect + config.load_dialect))
        args.context = _context(args.load_dialect)


class _Session:
    """Processes the input (all of it, or chunk by chunk) and collects outputs and errors."""

    def __init__(self, args, passes: list[ModulePass], timing: PassTiming | None):
        self.args = args
        self.passes = passes
        self.timing = timing
        self.outputs: list[str] = []

    def output(self) -> str:
        return "// -----\n".join(self.outputs)

    # -- inputs -------------------------------------------------------------------------------

    def process_text(self, text: str, filename: str) -> bool:
        ok = True
        for first_line, chunk in _chunks(text, self.args.split_input_file):
            diagnostics = self._process_chunk(chunk, filename, first_line)
            if self.args.verify_diagnostics:
                problems = _check_expectations(chunk, first_line, diagnostics, filename)
                for problem in problems:
                    print(problem, file=sys.stderr)
                ok = ok and not problems
            else:
                for diagnostic in diagnostics:
                    print(diagnostic.text, file=sys.stderr)
                ok = ok and not diagnostics
        return ok

    def process_python(self, path: str, name: str) -> bool:
        module = _module_from_python(path, name, self.args.target, _python_stage(self.args))
        diagnostics = self._run_passes_and_emit(module, path)
        for diagnostic in diagnostics:
            print(diagnostic.text, file=sys.stderr)
        return not diagnostics

    def _process_chunk(self, chunk: str, filename: str, first_line: int) -> list[Diagnostic]:
        # Blank lines in front keep line numbers those of the whole file.
        start = time.perf_counter()
        try:
            module = parse_module("\n" * (first_line - 1) + chunk, filename, self.args.context)
        except ParseError as exc:
            return [Diagnostic(exc.reason, str(exc), exc.line)]
        except IRError as exc:
            return [_op_diagnostic(exc.message, exc.op, filename)]
        except Exception as exc:  # noqa: BLE001 - a bug in the parser or an op's parse hook
            return [self._internal_error("reading the input", exc, None, filename)]
        finally:
            if self.timing is not None:
                self.timing.record("parse", time.perf_counter() - start)
        return self._run_passes_and_emit(module, filename)

    # -- passes and output --------------------------------------------------------------------

    def _internal_error(self, doing: str, exc: Exception, op: Operation | None,
                        filename: str) -> Diagnostic:
        message = f"internal error {doing}: {type(exc).__name__}: {exc}"
        diagnostic = _op_diagnostic(message, op, filename)
        diagnostic.text += "\n" + _bug_note(exc, self.args.crash_traceback)
        return diagnostic

    def _run_passes_and_emit(self, module: Operation, filename: str) -> list[Diagnostic]:
        try:
            verify(module)
        except IRError as exc:
            return [_op_diagnostic(exc.message, exc.op, filename)]
        except Exception as exc:  # noqa: BLE001 - a bug in an op's verifier
            return [self._internal_error("verifying", exc, op_in_traceback(exc, module),
                                         filename)]
        reproducer = (CrashReproducer(self.args.reproducer, tuple(self.args.load_dialect))
                      if self.args.reproducer else None)
        manager = PassManager(self.passes, verify_each=self.args.verify_each,
                              instrumentations=self._instrumentations(reproducer),
                              context=self.args.context)
        try:
            manager.run(module)
        except PassError as exc:
            diagnostic = _op_diagnostic(exc.message, exc.op, filename)
            if exc.crashed:
                diagnostic.text += "\n" + _bug_note(exc.__cause__, self.args.crash_traceback)
            if reproducer is not None and reproducer.written:
                diagnostic.text += f"\nnote: reproducer written to {reproducer.written}"
            return [diagnostic]
        start = time.perf_counter()
        try:
            if self.args.emit == "ir":
                text = print_op(module, generic=self.args.generic,
                                print_locations=self.args.print_locations)
            else:
                emit = TARGET_EMITTERS.get((self.args.target, self.args.emit),
                                           EMITTERS[self.args.emit])
                text = emit(module)
        except IRError as exc:
            return [_op_diagnostic(exc.message, exc.op, filename)]
        except Exception as exc:  # noqa: BLE001 - a bug in a printer or backend
            return [self._internal_error(f"emitting '{self.args.emit}'", exc,
                                         op_in_traceback(exc, module), filename)]
        finally:
            if self.timing is not None:
                self.timing.record("output", time.perf_counter() - start)
        self.outputs.append(text if text.endswith("\n") else text + "\n")
        return []

    def _instrumentations(self, reproducer: CrashReproducer | None) -> list:
        a = self.args
        found = []
        if (a.print_ir_before or a.print_ir_after or a.print_ir_before_all or a.print_ir_after_all
                or a.print_ir_after_change or a.print_ir_after_failure):
            found.append(IRPrinting(before=a.print_ir_before, after=a.print_ir_after,
                                    before_all=a.print_ir_before_all,
                                    after_all=a.print_ir_after_all,
                                    after_change=a.print_ir_after_change,
                                    after_failure=a.print_ir_after_failure,
                                    generic=a.generic, print_locations=a.print_locations))
        if self.timing is not None:
            found.append(self.timing)
        if reproducer is not None:
            found.append(reproducer)
        return found


def _op_diagnostic(message: str, op: Operation | None, filename: str) -> Diagnostic:
    if op is None:
        return Diagnostic(message, f"{filename}: error: {message}", None)
    lines = [loc.line for loc in op.location.locations if loc != UNKNOWN and loc.file == filename]
    try:
        text = render_op_error(op, message)
    except Exception:  # noqa: BLE001 - IR too broken to print: the location and message alone
        where = op.location.locations[0]
        text = f"{where.short()}: error: {message}" if where != UNKNOWN else f"error: {message}"
    return Diagnostic(message, text, lines[0] if lines else None)


def _chunks(text: str, split: bool) -> list[tuple[int, str]]:
    """(first line number, text) of each chunk: the whole text, or split at ``// -----`` lines.

    >>> [(line, chunk.strip()) for line, chunk in _chunks("a\\n// -----\\nb\\nc\\n", True)]
    [(1, 'a'), (3, 'b\\nc')]
    """
    if not split:
        return [(1, text)]
    chunks, line, pos = [], 1, 0
    for marker in SPLIT_MARKER.finditer(text):
        chunks.append((line, text[pos:marker.start()]))
        line += text.count("\n", pos, marker.end()) + 1
        pos = marker.end() + 1
    chunks.append((line, text[pos:]))
    return chunks


# ---------------------------------------------------------------------------------------------
# --verify-diagnostics

_EXPECTED = re.compile(r"//\s*expected-(?P<kind>error|warning|note|remark)"
                       r"(?:\s*@(?P<where>[+-]\d+|above|below|unknown))?\s*\{\{(?P<text>.*?)\}\}")


@dataclass
class _Expected:
    kind: str
    text: str
    line: int | None  # the line it is about; None for @unknown
    written_at: int
    seen: bool = False


def _expectations(chunk: str, first_line: int) -> list[_Expected]:
    found = []
    for number, line in enumerate(chunk.split("\n"), start=first_line):
        for m in _EXPECTED.finditer(line):
            where = m.group("where")
            if where is None:
                target = number
            elif where == "unknown":
                target = None
            elif where in ("above", "below"):
                target = number - 1 if where == "above" else number + 1
            else:
                target = number + int(where)
            found.append(_Expected(m.group("kind"), m.group("text"), target, number))
    return found


def _check_expectations(chunk: str, first_line: int, diagnostics: list[Diagnostic],
                        filename: str) -> list[str]:
    """Problems: errors no comment expected, and expected errors that did not happen."""
    expected = _expectations(chunk, first_line)
    problems = []
    for d in diagnostics:
        match = next((e for e in expected if not e.seen and e.kind == "error"
                      and e.line == d.line and e.text in d.message), None)
        if match is None:
            where = f"{filename}:{d.line}" if d.line is not None else filename
            problems.append(f"{where}: error: unexpected error: {d.message}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            problems.append(f"{filename}:{e.written_at}: error: expected {e.kind} "
                            f"\"{e.text}\" was not produced")
    return problems


# ---------------------------------------------------------------------------------------------
# Python input


def _target_flags(target: str) -> dict:
    """The flags a Python input runs with for ``--target``: for ``cuda``, ``device=cuda`` (its
    functions are built for the GPU: placement, device-resident shared variables) and, where no
    GPU can be used, the interpreted device (only their IR is needed)."""
    if target != "cuda":
        return {}
    from lowering.llvm.gpu.cuda_runtime import cuda_available
    return {"device": "cuda", "gpuarray.simulate": not cuda_available()}


def _python_stage(args: argparse.Namespace) -> str:
    """The stage of a compiled function a Python input starts from: its graph as built for
    ``--emit ir`` (the passes of ``-p`` run on it) and with ``--unoptimized``, else the
    optimized graph, so that the backend stages shown are those ``function()`` runs.

    >>> _python_stage(argparse.Namespace(emit="ptx", unoptimized=False))
    'optimized'
    """
    return "tensor" if args.emit == "ir" or args.unoptimized else "optimized"


def _module_from_python(path: str, name: str, target: str = "cpu",
                        stage: str = "tensor") -> Operation:
    if not os.path.isfile(path):
        raise UsageError(f"no such Python file: '{path}'")
    from lowering.config import config
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)  # so the file can import its neighbours
    try:
        with config.change_flags(_target_flags(target)):
            namespace = runpy.run_path(path, run_name="__lowering_opt__")
    except SystemExit:
        raise UsageError(f"running '{path}' called sys.exit()") from None
    except Exception:
        raise UsageError(f"running '{path}' failed:\n{traceback.format_exc().rstrip()}") from None
    finally:
        if sys.path and sys.path[0] == directory:
            del sys.path[0]
    head, *rest = name.split(".")
    if head not in namespace:
        public = [k for k in namespace if not k.startswith("__")]
        raise UsageError(f"'{path}' defines no '{head}'{did_you_mean(head, public)}")
    obj = namespace[head]
    for part in rest:
        if not hasattr(obj, part):
            raise UsageError(f"'{name}' in '{path}': no attribute '{part}'")
        obj = getattr(obj, part)
    if hasattr(obj, "ir_module"):
        obj = obj.ir_module(stage) if callable(obj.ir_module) else obj.ir_module
    if not isinstance(obj, Operation):
        raise UsageError(f"'{name}' in '{path}' is of type {type(obj).__name__}; expected a "
                         f"compiled function (with an ir_module() method) or an IR module")
    return obj


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
