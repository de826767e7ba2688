"""The hypothesis profiles: under CI a failure is reported without shrinking, with the blob that
replays it, and leaves no example database behind; the default profile shrinks."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# A property failing from n = 10 on: shrinking takes it down to exactly 10.
FAILING_PROPERTY = '''
from hypothesis import given, strategies as st

@given(st.integers(0, 10 ** 9))
def test_small(n):
    with open("calls", "a") as log:
        log.write(f"{n}\\n")
    assert n < 10
'''


def run_failing_property(tmp_path: Path, ci: bool) -> tuple[str, list[int]]:
    """Runs FAILING_PROPERTY with the suite's profile loaded as in ``tests/conftest.py``, ``CI``
    set or not; its output and the values it was called with."""
    (tmp_path / "test_property.py").write_text(FAILING_PROPERTY)
    (tmp_path / "conftest.py").write_text("from hypothesis_profiles import load_profile\n"
                                          "load_profile()\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get(
        "PYTHONPATH", "")])}
    env.pop("HYPOTHESIS_PROFILE", None)
    env.pop("CI", None)
    if ci:
        env["CI"] = "true"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "test_property.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    calls = [int(n) for n in (tmp_path / "calls").read_text().split()]
    return done.stdout, calls


def test_the_ci_profile_reports_a_failure_unshrunk_with_its_blob_and_no_database(tmp_path):
    out, calls = run_failing_property(tmp_path, ci=True)
    assert "@reproduce_failure(" in out
    # The first failing example is the one reported (it is run once more for the report).
    failures = [n for n in calls if n >= 10]
    assert len(set(failures)) == 1 and f"n={failures[0]}" in out, out
    assert not (tmp_path / ".hypothesis" / "examples").exists()


def test_the_dev_profile_shrinks_and_prints_the_blob(tmp_path):
    out, _ = run_failing_property(tmp_path, ci=False)
    assert "n=10," in out or "n=10\n" in out, out
    assert "@reproduce_failure(" in out
    # The failing example is kept (.hypothesis/ is git-ignored) for the next run.
    assert (tmp_path / ".hypothesis" / "examples").is_dir()


@pytest.mark.parametrize("environ, profile", [
    ({"CI": "true"}, "ci"), ({}, "dev"), ({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}, "dev")])
def test_the_environment_selects_the_profile(environ, profile):
    from hypothesis_profiles import profile_for
    assert profile_for(environ) == profile
