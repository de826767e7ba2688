#!/usr/bin/env python
"""Run every benchmark on ``lowering`` and on each installed peer, check that the results agree,
and write the table into ``docs/performance.md``.

    python benchmarks/run.py [--quick] [--only NAME[,NAME...]] [--no-write] [--output PATH]
                             [--python PATH]

``--python PATH`` also measures ``lowering`` under another interpreter (for example one with the
lowest supported llvmlite), in rows of its own (``benchmarks/other_python.py``).

Workloads (``--only`` takes these names): tiny-call, exp-check, expr-1e6, expr-1e7, logreg,
sum-axis1, mean, matmul, scan-rnn, scan-rnn-grad, lenet-fwd, lenet-grad, compile (cold and warm
compile of the logistic regression, in fresh processes), ir-scale (issue 2's IR and interpreter
figures).

The report is written between ``<!-- benchmarks:begin -->`` and ``<!-- benchmarks:end -->``
when every workload ran (with ``--only``, pass ``--write`` to write anyway). A result that
disagrees with NumPy's is printed on stderr and marked in its row; the exit status is 1 when
one of ``lowering``'s results disagrees or fails, else 0.
"""
from __future__ import annotations

import argparse
import datetime
import difflib
import os
import shlex
import sys

if __package__ in (None, ""):  # run as a script: make the ``benchmarks`` package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import compile_time, ir_scale  # noqa: E402
from benchmarks.harness import Measurement, check_agreement, measure  # noqa: E402
from benchmarks import other_python  # noqa: E402
from benchmarks.machine import copy_bandwidth, describe_machine  # noqa: E402
from benchmarks.peers import IMPLEMENTATIONS, LABELS, detect_peers  # noqa: E402
from benchmarks.report import RunInfo, Section, render, write_report  # noqa: E402
from benchmarks.workloads import WORKLOADS, Workload  # noqa: E402
from benchmarks.workloads.libs import forget_inputs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(ROOT, "docs", "performance.md")
NAMES = [w.name for w in WORKLOADS] + ["compile", "ir-scale"]
COPY_ELEMENTS = {False: 1 << 26, True: 1 << 24}  # 256 MiB / 64 MiB per array: beyond the caches


def check_results(measurements: list[Measurement], rtol: float, atol: float,
                  names: tuple[str, ...] = ()) -> list[str]:
    """Compare every result with NumPy's (the reference); set ``agrees`` and ``mismatch`` on
    each measurement and return one message per disagreement. Without a NumPy result nothing
    is compared.

    >>> import numpy as np
    >>> ms = [Measurement("w", "numpy", result=np.float32([1, 2])),
    ...       Measurement("w", "lowering", result=np.float32([1, 2])),
    ...       Measurement("w", "jax", result=np.float32([1, 5]))]
    >>> [m[:28] for m in check_results(ms, rtol=1e-5, atol=0)], [m.agrees for m in ms]
    (['MISMATCH in w: JAX disagrees'], [None, True, False])
    """
    reference = next((m for m in measurements if m.implementation == "numpy"
                      and m.error is None), None)
    if reference is None:
        return []
    messages = []
    for m in measurements:
        if m is reference or m.error is not None:
            continue
        m.agrees, m.mismatch = check_agreement(m.result, reference.result, rtol=rtol, atol=atol,
                                               names=names)
        if not m.agrees:
            messages.append(f"MISMATCH in {m.workload}: {LABELS.get(m.implementation)} "
                            f"disagrees with NumPy: {m.mismatch}")
    return messages


def run_workload(workload: Workload, params: dict, implementations, progress=print) -> Section:
    """Measure ``workload`` with ``params`` on each of ``implementations`` that has a port,
    then check the results against NumPy's."""
    measurements = []
    for name in implementations:
        if name not in workload.ports:
            continue
        m = measure(workload.name, name, lambda: workload.ports[name](params),
                    calls=params.get("calls"), repeats=params["repeats"],
                    min_seconds=params.get("min_seconds", 0.2))
        measurements.append(m)
        progress(f"  {workload.name:10} {name:10} " + (
            f"{m.seconds * 1e6:12.2f} µs per {workload.unit}  (build {m.setup_seconds:.2f} s, "
            f"first call {m.first_seconds:.2f} s)" if m.error is None
            else f"FAILED {m.error}") + (f"  [{m.note}]" if m.note else ""))
    for message in check_results(measurements, workload.rtol, workload.atol, workload.parts):
        print(f"\n*** {message}\n", file=sys.stderr)
    for m in measurements:
        m.result = None  # results can be large; the check is done
    return Section(workload.name, workload.title(params), measurements, unit=workload.unit,
                   work=workload.work(params) if workload.work else None,
                   fixed_calls=params.get("calls"),
                   not_run={k: v for k, v in workload.not_applicable.items()
                            if k in implementations})


def _selected(only: str | None) -> list[str]:
    if not only:
        return list(NAMES)
    chosen = [n.strip() for n in only.split(",") if n.strip()]
    for name in chosen:
        if name not in NAMES:
            close = difflib.get_close_matches(name, NAMES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SystemExit(f"unknown workload {name!r}{hint}; workloads: {', '.join(NAMES)}")
    return chosen


def _libraries(text: str | None) -> list[str]:
    if not text:
        return list(IMPLEMENTATIONS)
    chosen = [n.strip() for n in text.split(",") if n.strip()]
    for name in chosen:
        if name not in IMPLEMENTATIONS:
            raise SystemExit(f"unknown library {name!r}; libraries: {', '.join(IMPLEMENTATIONS)}")
    if "numpy" not in chosen:
        chosen.append("numpy")  # the reference every result is checked against
    return [n for n in IMPLEMENTATIONS if n in chosen]


def _lowering_execution(sections: list[Section]) -> str:
    for section in sections:
        for m in section.measurements:
            if m.implementation == "lowering" and m.note and not section.name.startswith(
                    "compile"):
                return m.note
    return ""


def _load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Benchmarks of lowering against NumPy, numexpr, Numba, PyTensor and JAX.")
    parser.add_argument("--quick", action="store_true",
                        help="fewer calls, steps and repeats (a few minutes)")
    parser.add_argument("--only", metavar="NAME[,NAME...]",
                        help=f"run only these workloads: {', '.join(NAMES)}")
    parser.add_argument("--libraries", metavar="NAME[,NAME...]",
                        help=f"run only these of {', '.join(IMPLEMENTATIONS)} (default: every "
                             f"installed one)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT,
                        help="the Markdown file to write between its markers")
    write = parser.add_mutually_exclusive_group()
    write.add_argument("--write", action="store_true", default=None,
                       help="write the report even with --only")
    write.add_argument("--no-write", dest="write", action="store_false",
                       help="print the report only")
    parser.add_argument("--python", metavar="PATH",
                        help="also measure lowering under this Python interpreter")
    parser.add_argument("--json", metavar="PATH", help=argparse.SUPPRESS)  # for --python's child
    args = parser.parse_args(argv)
    selected = _selected(args.only)
    command = "python benchmarks/run.py " + " ".join(shlex.quote(a) for a in
                                                     (argv if argv is not None else sys.argv[1:]))

    wanted = _libraries(args.libraries)
    versions = detect_peers(wanted)
    available = [n for n in wanted if "version" in versions[n]]
    for name in wanted:
        if name not in available:
            print(f"skipping {LABELS[name]}: not available ({versions[name]['missing']})")
    machine = describe_machine()
    load_start = _load_average()
    print(f"{machine['cpu']}, {machine['cores']} cores, AVX-512: {machine['avx512']}")
    bandwidth = copy_bandwidth(COPY_ELEMENTS[args.quick])
    print(f"memory copy bandwidth: {bandwidth / 1e9:.2f} GB/s")

    elsewhere = []
    if args.python:
        elsewhere = other_python.measure_in(
            args.python, (["--quick"] if args.quick else []) + (["--only", args.only] if args.only
                                                                 else []))
    sections: list[Section] = []
    for workload in WORKLOADS:
        if workload.name in selected:
            params = workload.parameters(args.quick)
            print(f"{workload.name}: {workload.title(params)}")
            sections.append(run_workload(workload, params, available))
            forget_inputs()
    if "compile" in selected:
        print("compile: the logistic regression, in fresh processes")
        params = {**compile_time.PARAMS, **(compile_time.QUICK if args.quick else {})}
        measured = compile_time.measure_compile(
            [n for n in compile_time.LIBRARIES if n in available], params)
        for key in ("compile-cold", "compile-warm"):
            sections.append(Section(key, compile_time.TITLES[key],
                                    [m for m in measured if m.workload == key], unit="compile"))
    figures = None
    if "ir-scale" in selected:
        print("ir-scale: build, print, parse, verify; one interpreted training step")
        if "lowering" in available:
            params = {**ir_scale.PARAMS, **(ir_scale.QUICK if args.quick else {})}
            figures = ir_scale.measure(params)
        else:
            print("  skipped: lowering is not importable")

    for section in sections:
        section.measurements += [m for m in elsewhere if m.workload == section.name]
    if args.json:
        with open(args.json, "w") as f:
            f.write(other_python.to_json([m for s in sections for m in s.measurements],
                                         other_python.llvmlite_version()))
    info = RunInfo(command=command.strip(), date=datetime.date.today().isoformat(),
                   quick=args.quick, machine=machine, versions=versions,
                   copy_bandwidth=bandwidth, lowering_execution=_lowering_execution(sections),
                   load=f"{load_start} at the start, {_load_average()} at the end")
    report = render(info, sections, figures)
    print("\n" + report)
    write_it = args.write if args.write is not None else args.only is None
    if write_it:
        write_report(args.output, report)
        shown = os.path.relpath(args.output)
        print(f"\nwrote {args.output if shown.startswith('..') else shown}")
    lowering_bad = [m for s in sections for m in s.measurements
                    if other_python.is_lowering(m.implementation) and not m.ok]
    return 1 if lowering_bad else 0


if __name__ == "__main__":
    sys.exit(main())
