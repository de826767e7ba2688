"""``lowering``'s rows measured in another Python interpreter, e.g. one with an older llvmlite.

``run.py --python PATH`` runs ``PATH benchmarks/run.py --libraries lowering --json FILE`` with the
same workloads (this checkout's code comes first on its path) before measuring here; the child
checks its results against its own NumPy and writes its measurements, which join the tables as
rows of their own, labelled with the child's llvmlite version.

>>> m = Measurement("exp-check", "lowering", seconds=3e-5, note="FAST_RUN on compiled code")
>>> back = from_json(to_json([m], "0.47.0"))
>>> back[0].implementation, back[0].seconds, back[0].note
('lowering, llvmlite 0.47.0', 3e-05, 'FAST_RUN on compiled code')
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

from benchmarks.harness import Measurement

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FIELDS = ("workload", "seconds", "calls", "setup_seconds", "first_seconds", "note", "error",
           "agrees", "mismatch")
PREFIX = "lowering, llvmlite "


def is_lowering(implementation: str) -> bool:
    """Whether a row is ``lowering``'s, in this interpreter or another (never a peer).

    >>> is_lowering("lowering"), is_lowering(PREFIX + "0.47.0"), is_lowering("jax")
    (True, True, False)
    """
    return implementation == "lowering" or implementation.startswith(PREFIX)


def to_json(measurements: list[Measurement], llvmlite_version: str) -> str:
    """The measurements of this interpreter's ``lowering`` rows, results left out."""
    rows = [{k: getattr(m, k) for k in _FIELDS} for m in measurements
            if m.implementation == "lowering"]
    return json.dumps({"llvmlite": llvmlite_version, "measurements": rows})


def from_json(text: str) -> list[Measurement]:
    data = json.loads(text)
    return [Measurement(implementation=PREFIX + data["llvmlite"], **row)
            for row in data["measurements"]]


def measure_in(python: str, argv: list[str]) -> list[Measurement]:
    """Run ``benchmarks/run.py`` with ``argv`` under ``python`` for ``lowering`` only; its
    measurements. Its progress is printed as it goes; a failure to run is an error."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.json")
        env = {**os.environ,
               "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
        command = [python, os.path.join(ROOT, "benchmarks", "run.py"), *argv,
                   "--libraries", "lowering", "--no-write", "--json", out]
        print(f"lowering under {python}:", flush=True)
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True)
        for line in done.stdout.splitlines():
            if line.startswith("  "):          # the progress rows, not the child's report
                print(line)
        if not os.path.exists(out):
            raise SystemExit(f"{python} did not measure lowering (exit status {done.returncode})")
        with open(out) as f:
            return from_json(f.read())


def llvmlite_version() -> str:
    import llvmlite
    return llvmlite.__version__
