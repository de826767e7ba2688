#!/usr/bin/env python
"""The "is the GPU used?" check of seed 002: ``exp`` of a shared float vector, called many times.

The check looks at the compiled graph: an ``Elemwise`` node means the exp ran on the CPU.
Run: ``python examples/exp_check.py [iterations]`` (the seed uses 1000).
"""
import sys
import time

import numpy

from lowering import config, function, shared
import lowering.tensor as T

vlen = 10 * 30 * 768  # 10 x #cores x # threads per core
iters = 1000

rng = numpy.random.RandomState(22)
x = shared(numpy.asarray(rng.rand(vlen), config.floatX))
f = function([], T.exp(x))


def used_device(fn) -> str:
    """'cpu' when the compiled graph computes elementwise ops on the CPU, else 'gpu'."""
    if numpy.any([isinstance(node.op, T.Elemwise) for node in fn.maker.fgraph.toposort()]):
        return "cpu"
    return "gpu"


def main(iterations=iters):
    """Call ``f`` ``iterations`` times; print the seed's report and return the last result."""
    print(f.maker.fgraph.toposort())
    t0 = time.time()
    for _ in range(iterations):
        r = f()
    t1 = time.time()
    print("Looping %d times took" % iterations, t1 - t0, "seconds")
    print("Result is", r)
    print("Used the", used_device(f))
    return r


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else iters)
