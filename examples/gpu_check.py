#!/usr/bin/env python
"""Testing the GPU (seed 002, the gpuarray backend's check), with only the imports changed.

``exp`` of a shared vector, called many times; the compiled graph says where it ran: an
``Elemwise`` that is not a ``Gpu`` op means the CPU. It runs on the CPU by default; on a GPU
with the device flag::

    python examples/gpu_check.py [iterations]                          # Used the cpu
    LOWERING_FLAGS=device=cuda python examples/gpu_check.py            # Used the gpu (PyCUDA)
    LOWERING_FLAGS=device=cuda,gpuarray.simulate=True python examples/gpu_check.py 1
                                                  # Used the gpu (the interpreted device)

The seed loops 1000 times; ``iterations`` changes that.
"""
import sys

from lowering import function, config, shared, tensor, sandbox  # noqa: F401
import numpy
import time

vlen = 10 * 30 * 768  # 10 x #cores x # threads per core
iters = 1000

rng = numpy.random.RandomState(22)
x = shared(numpy.asarray(rng.rand(vlen), config.floatX))
f = function([], tensor.exp(x))


def used_device(fn) -> str:
    """The seed's check: 'cpu' when an elementwise node is not a GPU op, else 'gpu'."""
    if numpy.any([isinstance(x.op, tensor.Elemwise) and
                  ('Gpu' not in type(x.op).__name__)
                  for x in fn.maker.fgraph.toposort()]):
        return 'cpu'
    return 'gpu'


def main(iterations=iters):
    """The seed's program: print the graph, time the calls, print the result and the device."""
    print(f.maker.fgraph.toposort())
    t0 = time.time()
    for i in range(iterations):
        r = f()
    t1 = time.time()
    print('Looping %d times took' % iterations, t1 - t0, 'seconds')
    print('Result is', r)
    print('Used the', used_device(f))
    return r


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else iters)
