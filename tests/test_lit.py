"""Runs the lit + filecheck tests of ``lowering-opt`` (tests/lit) as one pytest test."""
import os
import subprocess
import sys

LIT_DIR = os.path.join(os.path.dirname(__file__), "lit")


def test_lit_suite_passes():
    # lit has no __main__ module; this is what its console script runs.
    command = [sys.executable, "-c", "from lit.main import main; main()", LIT_DIR, "-v"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert "Failed" not in report and "Passed:" in report, report
