"""The benchmark harness runs, on tiny sizes, for lowering and NumPy; its agreement check catches
wrong results; its report keeps the text around its markers. Nothing here is timed."""
import doctest
import importlib
import importlib.util
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_run():
    """benchmarks/run.py as a module (it makes the ``benchmarks`` package importable)."""
    spec = importlib.util.spec_from_file_location("benchmarks_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load_run()
from benchmarks.harness import Measurement, Port, check_agreement  # noqa: E402
from benchmarks.memory import MemoryGrowthError, MemoryGuard  # noqa: E402
from benchmarks.report import (BEGIN, END, MarkerError, Section,  # noqa: E402
                               replace_between_markers, results_table)
from benchmarks.workloads import WORKLOADS, Workload  # noqa: E402

TINY = {
    "tiny-call": {"n": 8},
    "exp-check": {"n": 64, "calls": 2},
    "expr-1e6": {"n": 100},
    "mean": {"n": 16},
    "matmul": {"n": 8},
    "logreg": {"n": 6, "features": 4, "calls": 3},
    "scan-rnn": {"units": 4, "steps": 6},
    "scan-rnn-grad": {"units": 4, "steps": 6},
    "lenet-fwd": {"batch": 2, "filters": 3},
    "lenet-grad": {"batch": 2, "filters": 3},
    "sparse-matmul": {"m": 30, "n": 3, "density": 0.2},
}
QUIET = {"repeats": 1, "min_seconds": 0.0}


@pytest.mark.parametrize("name", sorted(TINY))
def test_tiny_workload_runs_on_lowering_and_numpy_and_agrees(name):
    workload = next(w for w in WORKLOADS if w.name == name)
    params = {**workload.params, **QUIET, **TINY[name]}
    section = run.run_workload(workload, params, ["lowering", "numpy"], progress=lambda _: None)
    by_name = {m.implementation: m for m in section.measurements}
    assert set(by_name) == {"lowering", "numpy"}
    for m in section.measurements:
        assert m.error is None, f"{m.implementation}: {m.error}"
        assert m.seconds is not None and m.seconds >= 0
    assert by_name["lowering"].agrees is True, by_name["lowering"].mismatch
    assert "lowering (" in results_table([section], None)  # its row names how lowering ran


def _fake_workload(wrong):
    right = np.float32([1.0, 2.0, 3.0])
    ports = {"lowering": lambda p: Port(lambda: wrong), "numpy": lambda p: Port(lambda: right)}
    return Workload("fake", lambda p: "fake", {"calls": 1, "repeats": 1}, {}, ports,
                    rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("wrong, why", [
    (np.float32([1.0, 2.0, 3.1]), "1 of 3 values differ"),
    (np.float32([1.0, np.nan, 3.0]), "1 of 3 values differ"),
    (np.float64([1.0, 2.0, 3.0]), "dtype float64, expected float32"),
    (np.float32([1.0, 2.0]), "shape (2,), expected (3,)"),
    ((np.float32([1.0, 2.0, 3.0]), np.float32([0.0])), "2 result(s), expected 1"),
])
def test_a_wrong_result_is_reported_and_marks_its_row(wrong, why, capsys):
    section = run.run_workload(_fake_workload(wrong), {"calls": 1, "repeats": 1},
                               ["lowering", "numpy"], progress=lambda _: None)
    lowering = next(m for m in section.measurements if m.implementation == "lowering")
    assert lowering.agrees is False and why in lowering.mismatch
    assert "MISMATCH in fake: lowering disagrees with NumPy" in capsys.readouterr().err
    assert "**MISMATCH**" in results_table([section], None)


def test_a_right_result_agrees_within_float32_tolerance():
    section = run.run_workload(_fake_workload(np.float32([1.0, 2.0, 3.0000024])),
                               {"calls": 1, "repeats": 1}, ["lowering", "numpy"],
                               progress=lambda _: None)
    assert [m.agrees for m in section.measurements] == [True, None]


def test_a_failing_implementation_is_reported_not_raised():
    def broken(p):
        raise RuntimeError("no such op")
    workload = Workload("fake", lambda p: "fake", {}, {}, {"lowering": broken,
                        "numpy": lambda p: Port(lambda: 1.0)}, rtol=0, atol=0)
    section = run.run_workload(workload, {"calls": 1, "repeats": 1}, ["lowering", "numpy"],
                               progress=lambda _: None)
    assert section.measurements[0].error.startswith("RuntimeError: no such op")
    assert "**FAILED**: RuntimeError: no such op" in results_table([section], None)


def test_mismatching_rows_are_never_the_reference():
    ms = [Measurement("w", "numpy", seconds=1.0, result=np.float32([1])),
          Measurement("w", "jax", seconds=0.1, result=np.float32([9]))]
    run.check_results(ms, rtol=1e-5, atol=0)
    table = results_table([Section("w", "w", ms)], None)
    assert "| NumPy | 1.00 s per call | — | 1.00x | 1.00x | reference |" in table


def test_nan_agrees_only_with_nan():
    nan = np.float32([np.nan])
    assert check_agreement(nan, nan, rtol=1e-5, atol=0)[0]
    assert not check_agreement(np.float32([1]), nan, rtol=1e-5, atol=0)[0]


def test_report_replaces_only_the_text_between_markers(tmp_path):
    text = f"# Performance\nintro\n{BEGIN}\nold table\n{END}\nnotes\n"
    new = replace_between_markers(text, "new table")
    assert new == f"# Performance\nintro\n{BEGIN}\nnew table\n{END}\nnotes\n"
    with pytest.raises(MarkerError):
        replace_between_markers(f"{END}\n{BEGIN}\n", "x")


def test_memory_guard_stops_a_process_that_keeps_growing():
    guard = MemoryGuard(cap=4 * 2**20)
    if guard.limit is None:
        pytest.skip("this system does not report its memory")
    kept = [np.ones(2**20) for _ in range(4)]  # 32 MiB, written so it is resident
    with pytest.raises(MemoryGrowthError, match="KiB per call"):
        guard.check(calls=len(kept))


def test_rows_from_another_interpreter_are_lowering_not_a_peer():
    from benchmarks.other_python import PREFIX
    from benchmarks.report import reference_times
    ms = [Measurement("w", "numpy", seconds=2.0), Measurement("w", "jax", seconds=1.0),
          Measurement("w", PREFIX + "0.47.0", seconds=0.5)]
    assert reference_times(ms) == (2.0, 1.0)


def test_an_interpreter_that_measures_nothing_is_an_error():
    from benchmarks.other_python import measure_in
    with pytest.raises(SystemExit, match="did not measure lowering"):
        measure_in("false", ["--only", "tiny-call"])


def test_unknown_workload_names_the_nearest():
    with pytest.raises(SystemExit, match="did you mean 'matmul'"):
        run.main(["--only", "matmull"])


@pytest.mark.parametrize("module", ["benchmarks.harness", "benchmarks.report",
                                    "benchmarks.peers", "benchmarks.machine", "benchmarks.memory",
                                    "benchmarks.compile_time", "benchmarks.compile_breakdown",
                                    "benchmarks.ir_scale",
                                    "benchmarks.workloads", "benchmarks.workloads.base",
                                    "benchmarks.workloads.libs", "benchmarks.workloads.logreg",
                                    "benchmarks.other_python"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
