#!/usr/bin/env python
"""IfElse vs Switch, Theano's tutorial example: ``ifelse`` computes only the branch it takes.

``T.switch`` is elementwise and computes both means; ``ifelse`` computes one. The program is
the tutorial's but for its imports (and ``time.perf_counter``: Python 3 has no
``time.clock``); ``profiled()`` then runs the lazy function with the profiler, whose tables
show that the mean of ``y`` (the branch not taken) never ran.

Run: ``python examples/ifelse_switch.py [rows]`` (``rows`` of the big matrices, 10000 by
default) prints both timings and the profile of the lazy function.
"""
import sys

from lowering import tensor as T
from lowering.ifelse import ifelse
import lowering as theano, time, numpy

a,b = T.scalars('a', 'b')
x,y = T.matrices('x', 'y')

z_switch = T.switch(T.lt(a, b), T.mean(x), T.mean(y))
z_lazy = ifelse(T.lt(a, b), T.mean(x), T.mean(y))

f_switch = theano.function([a, b, x, y], z_switch,
                           mode=theano.Mode(linker='vm'))
f_lazyifelse = theano.function([a, b, x, y], z_lazy,
                               mode=theano.Mode(linker='vm'))

val1 = 0.
val2 = 1.
rows = int(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 10000
big_mat1 = numpy.ones((rows, 1000))
big_mat2 = numpy.ones((rows, 1000))

n_times = 10


def main():
    """The tutorial's two timings (seconds for ``n_times`` calls each)."""
    tic = time.perf_counter()
    for i in range(n_times):
        f_switch(val1, val2, big_mat1, big_mat2)
    both = time.perf_counter() - tic
    print('time spent evaluating both values %f sec' % both)

    tic = time.perf_counter()
    for i in range(n_times):
        f_lazyifelse(val1, val2, big_mat1, big_mat2)
    one = time.perf_counter() - tic
    print('time spent evaluating one value %f sec' % one)
    return both, one


def profiled(calls=n_times, stream=None):
    """The lazy function run ``calls`` times with the profiler; its ``ProfileStats``, printed
    to ``stream`` (standard output by default)."""
    stats = theano.compile.profiling.ProfileStats(atexit_print=False)
    f = theano.function([a, b, x, y], z_lazy, profile=stats)
    for i in range(calls):
        f(val1, val2, big_mat1, big_mat2)
    stats.summary(file=stream or sys.stdout)
    return stats


if __name__ == "__main__":
    main()
    profiled()
