#!/usr/bin/env python
"""Memory and variables (seed 000), the parts that run on the CPU.

floatX, evaluating a variable with ``eval``, the graph of ``a.transfer(None)`` (a GpuFromHost
node), ``transfer('cpu')`` (a host variable stays itself), ``debugprint`` of a variable and of a
compiled function, and a shared integer scalar with ``get_value``/``set_value``. Evaluating a GPU
transfer needs ``device=cuda`` and the GPU backend; ``gpu_transfer()`` shows what happens without
them.
Run: ``python examples/memory_variables.py``.
"""
import numpy

import lowering as theano
import lowering.tensor as T
from lowering import shared


def main():
    """Run the seed's CPU steps in float32; return what they printed, by step."""
    seen = {}
    with theano.config.change_flags(floatX="float32"):
        a = T.matrix()
        seen["eval"] = (a * 1).eval({a: numpy.ones((2, 2)).astype(theano.config.floatX)})
        print(seen["eval"])

        b = a.transfer(None)  # asks for the value on the default GPU context
        seen["transfer_gpu_graph"] = theano.printing.debugprint(b, file="str")
        print(seen["transfer_gpu_graph"], end="")

        b = a.transfer("cpu")  # the default context of the CPU: the variable itself
        seen["transfer_cpu"] = theano.printing.debugprint(b, file="str")
        print(seen["transfer_cpu"], end="")

        a = T.matrix("a")
        b = a ** 2
        sq = theano.function([a], b)
        seen["debugprint_function"] = theano.printing.debugprint(sq, file="str")
        print(seen["debugprint_function"], end="")
        seen["squares"] = sq(numpy.arange(4, dtype="float32").reshape(2, 2))
        print(seen["squares"])

        state = shared(0)
        seen["state_repr"] = repr(state)
        print(seen["state_repr"])
        seen["state_initial"] = state.get_value()
        print(repr(seen["state_initial"]))
        state.set_value(1)
        seen["state_set"] = state.get_value()
        print(repr(seen["state_set"]))
    return seen


def gpu_transfer():
    """The seed's ``a.transfer(None)``: without a GPU, evaluating it says what is missing."""
    a = T.matrix()
    b = a.transfer(None)
    return b.eval({a: numpy.ones((2, 2)).astype(theano.config.floatX)})


if __name__ == "__main__":
    main()
