"""Where building the logistic regression's training step takes its time, cold and warm.

``benchmarks/compile_time.py`` times ``function()`` plus the first call in a new process, with an
empty disk cache (cold) and then with the cache that run filled (warm). This script runs the same
probe in child processes with some of the compiler's steps timed (``time.perf_counter`` around
each call, wherever the function is referenced; a step includes the steps it calls, so the rows
overlap) and prints, per step, the best time over the runs in milliseconds. ``imports`` counts the
modules first imported during the build.

Run: ``python benchmarks/compile_breakdown.py [--repeats 5]`` (about 10 s per repeat); the
figures go in ``docs/performance.md`` under "Compile time". For more detail, the same child under
the profiler: ``LOWERING_CACHE_DIR=DIR LOWERING_FLAGS=cache=True,cache_dir=DIR python -m cProfile
-s cumulative -m benchmarks.compile_time lowering``.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.compile_time import ROOT, probe_environment  # noqa: E402

# (module, attribute path, row name), in the order of a build.
STEPS = [
    ("lowering.compile.graph_to_module", "build_module", "graph -> module"),
    ("lowering.compile.graph_cache", "graph_key", "graph cache key (print + SHA-256)"),
    ("lowering.compile.graph_cache", "_load", "graph cache hit (read + parse)"),
    ("lowering.compile.pipeline", "optimization_pipeline", "graph passes: import"),
    ("lowering.compile.pipeline", "optimize", "graph passes: run"),
    ("lowering.compile.cpu.build", "compile_for_cpu", "CPU backend, all"),
    ("lowering.compile.cpu.build", "cpu_options", "  options (threads, BLAS)"),
    ("lowering.compile.cpu.build", "_install_thread_pool", "  thread pool"),
    ("lowering.compile.cpu.build", "_install_interrupts", "  Ctrl-C counter"),
    ("lowering.compile.cpu.build", "lower_to_loops", "  bufferize (with imports)"),
    ("lowering.compile.cpu.build", "_build", "  function's code: bufferize, to-llvm, LLVM"),
    ("lowering.llvm.jit", "parse_and_optimize", "LLVM: parse + optimize (all libraries)"),
    ("lowering.llvm.jit", "compile_object", "LLVM: + code generation (all libraries)"),
    ("lowering.llvm.jit", "JitLibrary.__init__", "load object code (engines)"),
    ("lowering.compile.cpu.native_call", "NativeCall.__init__", "Python call wrapper"),
]


def _timed(function, row: str, totals: dict):
    @functools.wraps(function)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            totals[row] = totals.get(row, 0.0) + time.perf_counter() - start
    return timed


def _instrument(totals: dict) -> None:
    """Wrap each step, in its module and in every module that imported it by name."""
    for module_name, path, row in STEPS:
        owner = importlib.import_module(module_name)
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        original = getattr(owner, name)
        wrapped = _timed(original, row, totals)
        setattr(owner, name, wrapped)
        if not outer:
            for module in list(sys.modules.values()):
                if getattr(module, name, None) is original:
                    setattr(module, name, wrapped)


def child() -> dict:
    """One build in this process, with the steps timed (seconds)."""
    # What the probe imports before its clock starts, imported before counting.
    import benchmarks.peers  # noqa: F401
    import benchmarks.workloads.logreg  # noqa: F401
    import numpy.random  # noqa: F401  (the probe's data)
    import lowering.tensor  # noqa: F401
    from benchmarks.compile_time import probe
    totals: dict = {}
    _instrument(totals)
    before = set(sys.modules)
    result = probe("lowering", 400, 784)
    return {"total": result["seconds"], "steps": totals, "imports": len(set(sys.modules) - before)}


def _run_child(cache_dir: str) -> dict:
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], cwd=ROOT,
                          env=probe_environment("lowering", cache_dir), capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def breakdown(repeats: int) -> dict[str, list[dict]]:
    """``{"cold": [...], "warm": [...]}``: each run's timings, a new cache for each pair."""
    runs: dict[str, list[dict]] = {"cold": [], "warm": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
            cache_dir = os.path.join(tmp, "cache")
            runs["cold"].append(_run_child(cache_dir))
            runs["warm"].append(_run_child(cache_dir))
    return runs


def table(runs: dict[str, list[dict]]) -> str:
    """A Markdown table of the best milliseconds of each step, cold and warm.

    >>> print(table({"cold": [{"total": 0.5, "steps": {"graph -> module": 0.01}, "imports": 9}],
    ...              "warm": [{"total": 0.02, "steps": {}, "imports": 0}]}))
    | step | cold (ms) | warm (ms) |
    |---|---|---|
    | whole build (function() + first call) | 500.0 | 20.0 |
    | graph -> module | 10.0 | — |
    | modules imported during the build | 9 | 0 |
    """
    def best(kind: str, row: str) -> str:
        values = [r["steps"][row] for r in runs[kind] if row in r["steps"]]
        return f"{min(values) * 1e3:.1f}" if values else "—"
    lines = ["| step | cold (ms) | warm (ms) |", "|---|---|---|",
             "| whole build (function() + first call) | "
             f"{min(r['total'] for r in runs['cold']) * 1e3:.1f} | "
             f"{min(r['total'] for r in runs['warm']) * 1e3:.1f} |"]
    for _, _, row in STEPS:
        if any(row in r["steps"] for kind in runs for r in runs[kind]):
            lines.append(f"| {row} | {best('cold', row)} | {best('warm', row)} |")
    lines.append(f"| modules imported during the build | "
                 f"{min(r['imports'] for r in runs['cold'])} | "
                 f"{min(r['imports'] for r in runs['warm'])} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child()))
        return
    print(table(breakdown(args.repeats)))


if __name__ == "__main__":
    main()
