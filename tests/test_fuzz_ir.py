"""A small seeded run of the IR mutation fuzzer (tools/fuzz_ir.py): every mutant of the lit inputs
gives a diagnostic at a file:line:col or a result; no traceback, crash or hang."""
import importlib.util
import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_ir", ROOT / "tools" / "fuzz_ir.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_seeded_run_finds_nothing():
    fuzz_ir = load_fuzzer()
    seeds = fuzz_ir.build_corpus("lit")
    assert len(seeds) > 20 and {s.level for s in seeds} == {"tensor", "loops", "gpu"}
    report = fuzz_ir.fuzz(seeds, count=300, seed=7, timeout=20.0)
    assert sum(report.counts.values()) == 300
    assert report.findings == []
    assert report.counts.get("diagnostic", 0) > 0 and report.counts.get("ok", 0) > 0


def test_the_fuzzer_flags_what_it_should(tmp_path):
    fuzz_ir = load_fuzzer()
    path = str(tmp_path / "mutant.mlir")
    good = "func.func @f(%x: f32) -> f32 {\n  func.return %x : f32\n}\n"
    assert fuzz_ir.run_mutant(good, "tensor", path, 20.0).status == "ok"
    bad = good.replace("%x : f32", "%y : f32")
    outcome = fuzz_ir.run_mutant(bad, "tensor", path, 20.0)
    assert outcome.status == "diagnostic"
    mutated, done = fuzz_ir.mutate(good, random.Random(1))
    assert mutated != good and done
