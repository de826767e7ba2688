"""Ctrl-C stops a long compiled call soon, with every shared variable as it was before the call
(docs/architecture.md, "Threads, processes and interrupts")."""
import subprocess
import sys

_LONG_CALL = """
import os, signal, sys, threading, time
import numpy as np
import lowering as theano, lowering.tensor as T

x, y = T.dvector("x"), T.dvector("y")
w = theano.shared(np.zeros(3), name="w")
total = T.exp(x[:, None] * y[None, :]).sum()
f = theano.function([x, y], total, updates={w: w + total}, mode=sys.argv[1])
small = np.linspace(0, 1e-3, 50)
expected = float(np.exp(small[:, None] * small[None, :]).sum())
# 200,000 x 200,000 exponentials: over a minute uninterrupted, longer than the test waits.
big = np.linspace(0, 1e-3, 200_000)
before = w.get_value()

def interrupt():
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=interrupt).start()
started = time.perf_counter()
try:
    f(big, big)
    print("finished")
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - started)
assert np.array_equal(w.get_value(), before), w.get_value()
# The function still works, and its update still applies.
assert abs(float(f(small, small)) - expected) < 1e-9 * expected
assert np.allclose(w.get_value(), expected)
print("ok")
"""


def _interrupted(mode: str) -> str:
    done = subprocess.run([sys.executable, "-c", _LONG_CALL, mode], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ctrl_c_stops_a_long_compiled_call_and_changes_nothing():
    out = _interrupted("FAST_RUN")
    assert out.startswith("interrupted") and out.rstrip().endswith("ok"), out
