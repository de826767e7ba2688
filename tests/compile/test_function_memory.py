"""Memory a compiled function holds is given back when it is garbage-collected
(docs/architecture.md, "Threads, processes and interrupts")."""
import subprocess
import sys

_MEASURE = """
import ctypes, gc, sys
import numpy as np
import lowering as theano, lowering.tensor as T
from lowering.config import config

libc = ctypes.CDLL(None)

def resident():
    gc.collect()
    libc.malloc_trim(0)
    return int(open("/proc/self/statm").read().split()[1]) * 4096

x = T.dmatrix("x")
w = theano.shared(np.ones(4), name="w")
outputs = [T.tanh(x).sum(axis=0), (x * 2).max()]
updates = {w: w + x.sum(axis=0)}
count = int(sys.argv[2])
with config.change_flags(cache=sys.argv[1] == "disk", allow_gc=True):
    for _ in range(5):  # warm-up: the wrappers, the caches, the allocator
        theano.function([x], outputs, updates=updates)(np.ones((3, 4)))
    before = resident()
    for _ in range(count):
        f = theano.function([x], outputs, updates=updates)
        f(np.ones((3, 4)))
        del f
    print((resident() - before) / count / 1024)
"""


def _growth_per_function(cache: str, count: int) -> float:
    done = subprocess.run([sys.executable, "-c", _MEASURE, cache, str(count)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


def test_the_same_function_built_again_and_dropped_keeps_no_memory():
    # Without the disk cache each build used to run LLVM again, which keeps ~160 KiB of every
    # optimization run of this module allocated.
    assert _growth_per_function("none", 200) < 30


def test_functions_loaded_from_the_disk_cache_and_dropped_keep_no_memory():
    assert _growth_per_function("disk", 200) < 30
