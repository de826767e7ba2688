"""The Markdown report: machine and versions, one table of every workload on every library, the
targets of the CPU backend, and the IR figures; written into a file between two markers.

Ratios are speeds: "vs NumPy" is NumPy's time divided by this row's time (above 1: faster than
NumPy), "vs best peer" the fastest peer's time divided by this row's time. Rows whose result
disagrees keep their ratios and are marked; they, and rows that failed, are never references.

>>> format_seconds(0.0000912), format_seconds(1.5), format_rate(3.1e9, "B")
('91.2 µs', '1.50 s', '3.10 GB/s')
>>> text = f"a\\n{BEGIN}\\nold\\n{END}\\nb\\n"
>>> replace_between_markers(text, "new") == f"a\\n{BEGIN}\\nnew\\n{END}\\nb\\n"
True
"""
from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.harness import Measurement
from benchmarks.other_python import is_lowering
from benchmarks.peers import IMPLEMENTATIONS, LABELS

BEGIN = "<!-- benchmarks:begin -->"
END = "<!-- benchmarks:end -->"


@dataclass
class Section:
    """One workload's rows: its measurements and what is needed to present them.

    ``work`` is the work of one call (``(amount, "B" | "FLOP")``) or None; ``fixed_calls`` the
    number of calls of a repeat when the workload fixes it (the seed's 1,000 calls); ``not_run``
    the libraries left out, and why.
    """

    name: str
    title: str
    measurements: list[Measurement]
    unit: str = "call"
    work: tuple[float, str] | None = None
    fixed_calls: int | None = None
    not_run: dict[str, str] = field(default_factory=dict)


@dataclass
class RunInfo:
    """What the report says about the run itself."""

    command: str
    date: str
    quick: bool
    machine: dict[str, str]
    versions: dict[str, dict[str, str]]
    copy_bandwidth: float | None = None
    lowering_execution: str = ""
    load: str = ""


# -------------------------------------------------------------------------------------------
# Numbers


def format_seconds(seconds: float) -> str:
    """Seconds with three significant digits in ns, µs, ms or s."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            return f"{_three_digits(seconds / scale)} {unit}"
    return f"{_three_digits(seconds / 1e-9)} ns"


def _three_digits(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def format_rate(per_second: float, unit: str) -> str:
    """A throughput in GB/s (``unit="B"``) or GFLOP/s (``unit="FLOP"``)."""
    return f"{_three_digits(per_second / 1e9)} G{unit}/s"


def _ratio(reference: float | None, seconds: float | None) -> str:
    if reference is None or seconds is None or seconds <= 0:
        return "—"
    return f"{reference / seconds:.2f}x"


def reference_times(measurements: list[Measurement]) -> tuple[float | None, float | None]:
    """NumPy's time and the fastest peer's time among rows that ran and agree.

    >>> ms = [Measurement("w", "numpy", seconds=2.0), Measurement("w", "jax", seconds=1.0),
    ...       Measurement("w", "numba", seconds=0.5, agrees=False),
    ...       Measurement("w", "lowering", seconds=0.1)]
    >>> reference_times(ms)
    (2.0, 1.0)
    """
    ok = [m for m in measurements if m.ok and m.seconds is not None]
    numpy_time = next((m.seconds for m in ok if m.implementation == "numpy"), None)
    peers = [m.seconds for m in ok if not is_lowering(m.implementation)]
    return numpy_time, (min(peers) if peers else None)


# -------------------------------------------------------------------------------------------
# Tables


def _implementation_cell(m: Measurement) -> str:
    label = LABELS.get(m.implementation, m.implementation)
    how = m.note.split(";")[0].strip() if m.note else ""
    return f"{label} ({how})" if how else label


def _time_cell(m: Measurement, section: Section) -> str:
    if m.seconds is None:
        return "—"
    text = format_seconds(m.seconds)
    if section.name.startswith("compile") and "function_seconds" in m.extra:
        return (f"{text} (build {format_seconds(m.extra['function_seconds'])}, first call "
                f"{format_seconds(m.extra['first_call_seconds'])})")
    text += f" per {section.unit}"
    if section.fixed_calls:
        text += (f" ({section.fixed_calls:,} {section.unit}s: "
                 f"{format_seconds(m.seconds * section.fixed_calls)})")
    return text


def _throughput_cell(m: Measurement, section: Section, copy_bandwidth: float | None) -> str:
    if section.work is None or m.seconds is None:
        return "—"
    amount, unit = section.work
    rate = amount / m.seconds
    text = format_rate(rate, unit)
    if unit == "B" and copy_bandwidth:
        text += f" ({rate / copy_bandwidth:.2f} of copy)"
    return text


# Growth of the process over a workload's timed calls that the report points out.
LEAK_REPORT_BYTES = 64 * 2**20


def _result_cell(m: Measurement, section: Section) -> str:
    if m.error is not None:
        return "**FAILED**: " + _cell_text(m.error.splitlines()[0])
    if section.name.startswith("compile"):
        return "—"
    if m.agrees is None:
        text = "reference" if m.implementation == "numpy" else "not checked"
    elif m.agrees:
        text = "agrees"
    else:
        text = "**MISMATCH**: " + _cell_text(m.mismatch)
    if m.extra.get("memory_growth", 0) > LEAK_REPORT_BYTES:
        text += (f"; **memory grew** {m.extra['memory_growth'] / 2**20:.0f} MiB "
                 f"({m.extra['memory_growth_per_call'] / 2**10:.0f} KiB per {section.unit})")
    return text


def _cell_text(text: str, limit: int = 160) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def results_table(sections: list[Section], copy_bandwidth: float | None) -> str:
    """One row per workload and library, grouped by workload."""
    lines = ["| Workload | Implementation | Time | Throughput | vs NumPy | vs best peer | Result |",
             "|---|---|---|---|---|---|---|"]
    for section in sections:
        numpy_time, best_peer = reference_times(section.measurements)
        order = {name: i for i, name in enumerate(IMPLEMENTATIONS)}
        rows = sorted(section.measurements, key=lambda m: order.get(m.implementation, 99))
        for i, m in enumerate(rows):
            title = f"**{_cell_text(section.title, 200)}**" if i == 0 else ""
            lines.append(
                f"| {title} | {_cell_text(_implementation_cell(m))} | {_time_cell(m, section)} | "
                f"{_throughput_cell(m, section, copy_bandwidth)} | "
                f"{_ratio(numpy_time, m.seconds)} | {_ratio(best_peer, m.seconds)} | "
                f"{_result_cell(m, section)} |")
    return "\n".join(lines)


def figures_table(figures) -> str:
    """The IR-scale figures (``ir_scale.Figure``) as a table."""
    lines = ["| Figure | Time | Notes |", "|---|---|---|"]
    for f in figures:
        lines.append(f"| {f.name} | {format_seconds(f.seconds)} | {_cell_text(f.note, 200)} |")
    return "\n".join(lines)


# -------------------------------------------------------------------------------------------
# Targets of the CPU backend (issue 3), checked against this run's figures


def _find(sections: list[Section], name: str, implementation: str) -> Measurement | None:
    for section in sections:
        if section.name == name:
            for m in section.measurements:
                if m.implementation == implementation and m.ok and m.seconds is not None:
                    return m
    return None


def _executor(m: Measurement) -> str:
    """The executor named in a ``lowering`` note (``"FAST_RUN on interpreter; ..."``)."""
    first = m.note.split(";")[0]
    return first.split(" on ", 1)[1] if " on " in first else first


def targets_table(sections: list[Section]) -> str:
    """Each target, this run's figure, and whether it is met. Compile-time targets are not
    judged when ``lowering`` ran on the interpreter (it compiled nothing)."""
    rows = []

    def ratio_target(target, name, limit, faster, peer="numpy"):
        lo, ref = _find(sections, name, "lowering"), _find(sections, name, peer)
        if lo is None or ref is None:
            rows.append((target, "not measured", "—"))
            return
        whose = LABELS[peer] + ("'" if LABELS[peer].endswith("s") else "'s")
        how = f"{format_seconds(lo.seconds)} vs {format_seconds(ref.seconds)}; {_executor(lo)}"
        if faster:
            speed = ref.seconds / lo.seconds
            rows.append((target, f"{speed:.2f}x {whose} speed ({how})",
                         "met" if speed >= limit else "not met"))
        else:
            slowdown = lo.seconds / ref.seconds
            rows.append((target, f"{slowdown:.2f}x {whose} time ({how})",
                         "met" if slowdown <= limit else "not met"))

    def compile_target(target, value, met):
        m = _find(sections, "compile-cold", "lowering")
        if value is None:
            rows.append((target, "not measured", "—"))
        elif m is not None and "interpreter" in _executor(m):
            rows.append((target, f"{value}; interpreter", "not judged: nothing was compiled"))
        else:
            rows.append((target, value, "met" if met else "not met"))

    ratio_target("tiny call at most 2.5x NumPy's `x + 1`", "tiny-call", 2.5, faster=False)
    ratio_target("exp check at least 2x NumPy's speed", "exp-check", 2.0, faster=True)
    ratio_target("matmul at least NumPy's GFLOP/s", "matmul", 1.0, faster=True)
    for name, what in (("lenet-fwd", "LeNet layer forward"),
                       ("lenet-grad", "LeNet layer forward and gradient")):
        ratio_target(f"{what} faster than PyTensor's C backend", name, 1.0, faster=True,
                     peer="pytensor_c")
        ratio_target(f"{what} within 1.5x of JAX's time", name, 1.5, faster=False, peer="jax")
    cold, jax_cold = (_find(sections, "compile-cold", "lowering"),
                      _find(sections, "compile-cold", "jax"))
    compile_target("logistic regression compiled cold in at most JAX's time",
                   f"{format_seconds(cold.seconds)} vs JAX {format_seconds(jax_cold.seconds)}"
                   if cold and jax_cold else None,
                   cold is not None and jax_cold is not None and cold.seconds <= jax_cold.seconds)
    warm = _find(sections, "compile-warm", "lowering")
    compile_target("logistic regression compiled warm (disk cache) under 20 ms",
                   format_seconds(warm.seconds) if warm else None,
                   warm is not None and warm.seconds < 0.020)
    lines = ["| Target | This run | Status |", "|---|---|---|"]
    lines += [f"| {t} | {v} | {s} |" for t, v, s in rows]
    return "\n".join(lines)


# -------------------------------------------------------------------------------------------
# The whole report


def render(info: RunInfo, sections: list[Section], figures=None) -> str:
    """The Markdown written between the markers."""
    m = info.machine
    out = [f"Produced by `{info.command}` on {info.date}"
           + (" (`--quick`: fewer calls and steps than the full run)." if info.quick else "."),
           "",
           f"- Machine: {m['cpu']}, {m['cores']} cores, AVX-512: {m['avx512']}; {m['system']}; "
           f"Python {m['python']}.",
           ]
    if info.load:
        out.append(f"- Load average (1 min) of the machine: {info.load}; other processes share "
                   f"the cores, so each time is the best of its repeats.")
    if info.copy_bandwidth:
        out.append(f"- Memory copy bandwidth (`numpy.copyto`, bytes read + written): "
                   f"{format_rate(info.copy_bandwidth, 'B')}.")
    if info.lowering_execution:
        out.append(f"- lowering ran as: {info.lowering_execution}.")
    versions = []
    for name in IMPLEMENTATIONS:
        v = info.versions.get(name)
        if v is None:
            continue
        versions.append(f"{LABELS[name]}: {v['version']}" if "version" in v else
                        f"{LABELS[name]}: not available ({v['missing']})")
    out.append("- Versions: " + "; ".join(versions) + ".")
    skipped = sorted({f"{LABELS.get(k, k)} on {s.name} ({why})" for s in sections
                      for k, why in s.not_run.items()
                      if "version" in info.versions.get(k, {})})
    if skipped:
        out.append("- Not applicable: " + "; ".join(skipped) + ".")
    slow = slow_builds(sections)
    if slow:
        out.append(f"- Builds and first calls (graph, compilation, JIT compilation on the first "
                   f"call) over {SLOW_BUILD_SECONDS:.0f} s: {slow}.")
    if sections:
        out += ["", results_table(sections, info.copy_bandwidth)]
        out += ["", "Targets of the CPU backend (issue 3) and of the LeNet layer, checked against "
                "this run:", "",
                targets_table(sections)]
    if figures:
        out += ["", "IR core and interpreter (issue 2's figures):", "", figures_table(figures)]
    return "\n".join(out)


# A build and first call (the port's graph, ``function()``, a JIT's compilation on the first
# call) that the report points out.
SLOW_BUILD_SECONDS = 1.0


def _build_seconds(m: Measurement) -> float | None:
    if m.setup_seconds is None or m.first_seconds is None:
        return None
    return m.setup_seconds + m.first_seconds


def slow_builds(sections: list[Section]) -> str:
    """The builds and first calls that took over ``SLOW_BUILD_SECONDS``, as ``"PyTensor C
    backend on lenet-fwd 17.6 s"`` (the compile sections time compilation in their own rows).

    >>> slow_builds([Section("w", "w", [
    ...     Measurement("w", "pytensor_c", setup_seconds=17.5, first_seconds=0.1),
    ...     Measurement("w", "jax", setup_seconds=0.1, first_seconds=0.2)])])
    'PyTensor C backend on w 17.6 s'
    """
    return "; ".join(f"{LABELS.get(m.implementation, m.implementation)} on {s.name} "
                     f"{format_seconds(_build_seconds(m))}"
                     for s in sections if not s.name.startswith("compile")
                     for m in s.measurements
                     if (_build_seconds(m) or 0) > SLOW_BUILD_SECONDS)


class MarkerError(ValueError):
    """The report file has one marker without the other, or them in the wrong order."""


def replace_between_markers(text: str, content: str) -> str:
    """``text`` with what lies between the markers replaced by ``content`` (the markers are
    appended at the end when ``text`` has neither)."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin == -1 and end == -1:
        return text.rstrip("\n") + f"\n\n{BEGIN}\n{content}\n{END}\n"
    if begin == -1 or end == -1 or end < begin:
        raise MarkerError(f"the report file must contain {BEGIN} followed by {END}, or neither")
    return text[:begin + len(BEGIN)] + "\n" + content + "\n" + text[end:]


def write_report(path: str, content: str) -> None:
    """Put ``content`` between the markers of the file at ``path`` (created if missing)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = "# Performance\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(replace_between_markers(text, content))
