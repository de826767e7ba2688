#!/usr/bin/env python
"""Shared variables as state (seed 003): an accumulator, get_value/set_value, and givens.

``accumulator(inc)`` returns the state and adds ``inc`` to it; ``set_value`` sets the state;
``givens`` replaces the shared variable by an input in one function without touching its value.
Run: ``python examples/shared_state.py`` prints 0.0, 1.0, 11.0, 2.0 and 8.0.
"""
import numpy as np

import lowering as theano
import lowering.tensor as T

# The shared variable's dtype matters: inputs combined with it use state.dtype.
state = theano.shared(np.array(0, dtype=np.float64), "state")
inc = T.scalar("inc", dtype=state.dtype)
accumulator = theano.function([inc], state, updates=[(state, state + inc)])

# A temporary stand-in for the shared variable: state is replaced by a; its value is untouched.
a = T.scalar(dtype=state.dtype)
tmp_func = state * 2 + inc
skip_shared = theano.function([inc, a], tmp_func, givens=[(state, a)])


def main():
    """Run the seed's steps; return the printed values."""
    state.set_value(0.0)
    seen = [state.get_value()]
    print(seen[-1])           # 0.0
    accumulator(1)
    seen.append(state.get_value())
    print(seen[-1])           # 1.0
    accumulator(10)
    seen.append(state.get_value())
    print(seen[-1])           # 11.0
    state.set_value(-1)
    accumulator(3)
    seen.append(state.get_value())
    print(seen[-1])           # 2.0
    replaced = skip_shared(2, 3)
    print(replaced)           # 3 * 2 + 2 = 8.0
    seen.append(replaced)
    return seen


if __name__ == "__main__":
    main()
