#!/usr/bin/env python3
"""A mutation fuzzer for the IR text and ``lowering-opt``: every mutant gives a diagnostic or a
result, never a Python traceback or a hang.

The corpus is the IR of the examples at every stage (``tensor``, ``optimized``, ``loops``,
``gpu``: what ``lowering-opt examples/logreg.py:train`` and ``Function.ir(stage)`` give) and the
inputs of the lit tests (each ``// -----`` chunk). A mutant is a corpus entry with one to three
token mutations: a token deleted, duplicated, swapped for another token of the same text,
retyped (a type swapped for another type), or renumbered (a number or value number changed, to
edge values such as 0, -1 and 2**64 among others). Each mutant is run in this process through
``lowering.cli.main`` (parse, verify, then a pass pipeline fit for its level: the graph passes
and ``bufferize`` for tensor-level IR, ``canonicalize,cse`` and the memory passes below it).

A finding is a mutant where ``main`` raised (other than ``SystemExit``), printed a traceback,
reported a pass crash, ran past the per-mutant time limit, or reported an error that does not
start with ``file:line:col: error:`` (or ``lowering-opt: error:`` for a bad command line)::

    python tools/fuzz_ir.py --count 10000 --seed 1
    python tools/fuzz_ir.py --count 200 --seed 3 --corpus lit --save-findings /tmp/findings

It prints one line per finding (with the mutant saved under ``--save-findings``) and a summary;
the exit status is 1 when there were findings.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import pathlib
import random
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lowering import cli  # noqa: E402

# Example files and the module-level functions whose IR seeds the corpus.
EXAMPLES = {"logreg.py": ("train", "predict"), "logreg_shared.py": ("train", "predict"),
            "exp_check.py": ("f",)}
STAGES = ("tensor", "optimized", "loops", "gpu")

# The pipeline each mutant runs through, by the level of its IR.
PIPELINES = {
    "tensor": "canonicalize,cse,stabilize,specialize,fuse,inplace,bufferize,plan-memory",
    "loops": "canonicalize,cse,dce,plan-memory",
    "gpu": "canonicalize,cse,dce",
}

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|%[\w$.\-#]+|\^[\w$.\-]+|@[\w$.\-]+|->|'
                    r'-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|[A-Za-z_!][\w$.]*|\S')
_TYPES = ("f16", "f32", "f64", "i1", "i8", "i32", "i64", "ui8", "index", "tensor<?xf32>",
          "tensor<4x?xf64>", "tensor<f32>", "tensor<0xi64>", "tensor<3xi1>", "tensor<2x2xf32>",
          "!loops.buffer<?xf32>", "(f32) -> f32", "tensor<4294967296xf32>")
_NUMBERS = ("0", "1", "-1", "2", "3", "7", "64", "255", "256", "65536", "2147483648",
            "9223372036854775807", "9223372036854775808", "18446744073709551616",
            "-9223372036854775809", "4294967296", "1.5", "-0.0", "1e309", "1e-320")
_LOCATED = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: error: ")
_USAGE = "lowering-opt: "


@dataclass
class Seed:
    """One corpus entry: its name, IR text and level (tensor, loops or gpu)."""

    name: str
    text: str
    level: str


@dataclass
class Outcome:
    status: str  # "ok", "diagnostic" or a finding: "exception", "traceback", "crash", "hang",
    #              "unlocated"
    detail: str = ""


@dataclass
class Report:
    counts: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.counts[outcome.status] = self.counts.get(outcome.status, 0) + 1


# ---------------------------------------------------------------------------------------------
# The corpus


def level_of(text: str) -> str:
    """The pipeline level of IR text: ``gpu`` for kernels, ``loops`` for buffers, else tensor."""
    if "gpu." in text:
        return "gpu"
    if "loops." in text or "buffer<" in text:
        return "loops"
    return "tensor"


def lit_seeds() -> list[Seed]:
    """Each ``// -----`` chunk of the lit tests' inputs (RUN and CHECK lines are comments)."""
    seeds = []
    for path in sorted((ROOT / "tests" / "lit").rglob("*.mlir")):
        text = path.read_text(encoding="utf-8")
        for n, chunk in enumerate(cli.SPLIT_MARKER.split(text)):
            body = "\n".join(line for line in chunk.splitlines()
                             if not line.lstrip().startswith("//"))
            if body.strip():
                name = f"{path.relative_to(ROOT)}#{n}"
                seeds.append(Seed(name, body + "\n", level_of(body)))
    return seeds


def example_seeds() -> list[Seed]:
    """The examples' functions at every stage (``Function.ir(stage)``)."""
    import runpy
    seeds = []
    sys.path.insert(0, str(ROOT / "examples"))
    for filename, names in EXAMPLES.items():
        with contextlib.redirect_stdout(io.StringIO()):
            namespace = runpy.run_path(str(ROOT / "examples" / filename),
                                       run_name="__lowering_opt__")
        for name in names:
            for stage in STAGES:
                text = _stage_text(namespace[name], stage)
                seeds.append(Seed(f"examples/{filename}:{name}@{stage}", text, level_of(text)))
    return seeds


def _stage_text(function, stage: str) -> str:
    if stage == "gpu":  # what `lowering-opt --emit gpu` gives, for a function built for the CPU
        from lowering.compile.gpu.build import gpu_stage
        from lowering.ir.printer import print_op
        return print_op(gpu_stage(function.ir_module("optimized")))
    return function.ir(stage)


def build_corpus(which: str) -> list[Seed]:
    seeds = []
    if which in ("lit", "all"):
        seeds += lit_seeds()
    if which in ("examples", "all"):
        seeds += example_seeds()
    return seeds


# ---------------------------------------------------------------------------------------------
# Mutations


def _spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def mutate(text: str, rng: random.Random) -> tuple[str, list[str]]:
    """``text`` with one to three token mutations, and what they were."""
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        spans = _spans(text)
        if not spans:
            break
        start, end = spans[rng.randrange(len(spans))]
        token = text[start:end]
        kind = rng.choice(("delete", "duplicate", "swap", "retype", "renumber"))
        if kind == "delete":
            replacement = ""
        elif kind == "duplicate":
            replacement = token + " " + token
        elif kind == "swap":  # with a token of the same kind, so more mutants still parse
            same = [sp for sp in spans if _kind(text[sp[0]:sp[1]]) == _kind(token)]
            other = same[rng.randrange(len(same))]
            replacement = text[other[0]:other[1]]
        elif kind == "retype":
            replacement = rng.choice(_TYPES)
        else:
            replacement = _renumber(token, rng)
        text = text[:start] + replacement + text[end:]
        done.append(f"{kind} {token[:20]!r}@{start}")
    return text, done


def _kind(token: str) -> str:
    """A token's kind for swaps: a number, a value, a name, a string, or the punctuation itself."""
    if token[0].isdigit() or (token[0] == "-" and len(token) > 1 and token[1].isdigit()):
        return "number"
    if token[0] in "%^@\"":
        return token[0]
    return "name" if token[0].isalpha() or token[0] in "_!" else token


def _renumber(token: str, rng: random.Random) -> str:
    if token.startswith("%"):
        return "%" + rng.choice(("0", "1", "2", "7", "99", "arg0", "0#1", "1#5"))
    if token.startswith("^"):
        return "^bb" + rng.choice(("0", "1", "9"))
    if re.fullmatch(r"[a-z]+\d+", token):  # a type such as i32: another width
        return re.sub(r"\d+", rng.choice(("1", "8", "16", "32", "64", "128", "0")), token)
    return rng.choice(_NUMBERS)


# ---------------------------------------------------------------------------------------------
# Running a mutant


class _Timeout(BaseException):
    """Raised by the alarm in a mutant that runs too long (not an Exception: passes catch those)."""


def _on_alarm(signum, frame):
    raise _Timeout()


def run_mutant(text: str, level: str, path: str, timeout: float) -> Outcome:
    """Run ``lowering-opt path -p <pipeline>`` on ``text`` in this process; classify the result."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    out, err = io.StringIO(), io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main([path, "-p", PIPELINES[level]])
    except _Timeout:
        return Outcome("hang", f"ran past {timeout} s")
    except SystemExit as exc:
        status = exc.code
    except BaseException:  # noqa: BLE001 - any escape is what the fuzzer looks for
        return Outcome("exception", traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    stderr = err.getvalue()
    if "Traceback (most recent call last)" in stderr:
        return Outcome("traceback", stderr)
    if " crashed: " in stderr:
        return Outcome("crash", stderr)
    if status == 0:
        return Outcome("ok")
    first = stderr.lstrip("\n").split("\n", 1)[0]
    if _LOCATED.match(first) or (status == 2 and first.startswith(_USAGE)):
        return Outcome("diagnostic")
    return Outcome("unlocated", f"exit {status}: {stderr}")


def fuzz(seeds: list[Seed], count: int, seed: int, timeout: float,
         save_dir: str | None = None, progress: bool = False) -> Report:
    """Run ``count`` mutants of ``seeds`` (reproducible from ``seed``)."""
    rng = random.Random(seed)
    report = Report()
    old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutant.mlir")
        try:
            for n in range(count):
                source = seeds[rng.randrange(len(seeds))]
                text, mutations = mutate(source.text, rng)
                outcome = run_mutant(text, source.level, path, timeout)
                report.add(outcome)
                if outcome.status not in ("ok", "diagnostic"):
                    report.findings.append((n, source.name, mutations, outcome))
                    _report_finding(n, source, mutations, outcome, text, save_dir)
                if progress and (n + 1) % 500 == 0:
                    print(f"... {n + 1} mutants: {report.counts}", file=sys.stderr, flush=True)
        finally:
            signal.signal(signal.SIGALRM, old_handler)
    return report


def _report_finding(n, source, mutations, outcome, text, save_dir) -> None:
    last = outcome.detail.strip().splitlines()[-1:] or [""]
    print(f"finding #{n} [{outcome.status}] {source.name} {'; '.join(mutations)}: {last[0]}",
          flush=True)
    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
        with open(os.path.join(save_dir, f"{n}-{outcome.status}.mlir"), "w") as f:
            f.write(f"// from {source.name}: {'; '.join(mutations)}\n"
                    f"// run: lowering-opt <file> -p '{PIPELINES[source.level]}'\n")
            f.write("".join(f"// {line}\n" for line in outcome.detail.splitlines()))
            f.write(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=1000, help="how many mutants (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--corpus", choices=("lit", "examples", "all"), default="all")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per mutant (default 10)")
    p.add_argument("--memory-limit-gb", type=float, default=4.0,
                   help="address-space limit, so a huge allocation fails instead of swapping")
    p.add_argument("--save-findings", metavar="DIR", help="write each finding's mutant here")
    args = p.parse_args(argv)
    limit = int(args.memory_limit_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    start = time.perf_counter()
    seeds = build_corpus(args.corpus)
    corpus_time = time.perf_counter() - start
    report = fuzz(seeds, args.count, args.seed, args.timeout, args.save_findings, progress=True)
    elapsed = time.perf_counter() - start
    print(f"{args.count} mutants of {len(seeds)} corpus entries (seed {args.seed}) in "
          f"{elapsed:.0f} s (corpus {corpus_time:.0f} s): "
          + ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()))
          + f"; {len(report.findings)} finding(s)")
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
