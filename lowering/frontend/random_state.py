"""The state of a random variable as programs see it: ``variable.rng.get_value()``.

Theano keeps a NumPy ``RandomState`` in each variable's shared ``rng``, and its tutorial seeds one
variable by hand: ``rng = v.rng.get_value(borrow=True); rng.seed(89234); v.rng.set_value(rng,
borrow=True)``, or saves and restores it with ``get_state()`` / ``set_state()``. Here the state
is a ``uint64`` vector ``[key, counter]`` (``lowering.frontend.random_streams``); its value comes
back as a ``GeneratorState``, that vector with those three methods.

>>> from lowering.tensor.shared_randomstreams import RandomStreams
>>> u = RandomStreams(seed=1).uniform((2,))
>>> rng = u.rng.get_value(borrow=True)
>>> rng.seed(89234)
>>> u.rng.set_value(rng, borrow=True)
>>> u.rng.get_value().tolist()
[89234, 0]
"""
from __future__ import annotations

import numpy as np

from .shared import SharedVariable, shared


class GeneratorState(np.ndarray):
    """A random variable's ``[key, counter]`` with ``RandomState``'s seeding methods. With
    ``get_value(borrow=True)`` it is the stored vector itself, so the methods change the
    variable's state in place, as they change Theano's stored ``RandomState``."""

    def seed(self, seed=None) -> None:
        """Restart from ``seed``: the key it gives, the counter at 0 (as ``RandomStreams.seed``
        starts each variable). ``None`` takes a seed from the operating system's entropy."""
        if seed is None:
            seed = np.random.SeedSequence().entropy % 2 ** 30
        self[...] = initial_state(seed)

    def get_state(self) -> np.ndarray:
        """A copy of the state, for ``set_state`` later."""
        return np.array(self, dtype=np.uint64)

    def set_state(self, state) -> None:
        """Go back to a state ``get_state`` returned."""
        state = np.asarray(state)
        if state.shape != self.shape or state.dtype != np.uint64:
            raise ValueError(f"set_state needs a state of this generator (a uint64 vector "
                             f"[key, counter], what get_state returns), got {state.dtype} "
                             f"{state.shape}")
        self[...] = state


def initial_state(seed: int) -> np.ndarray:
    """The state of a stream seeded with ``seed``: ``[key, counter]``, the counter at 0.

    >>> initial_state(7).tolist()
    [7, 0]
    """
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"a seed must be an integer in [0, 2**64), got {seed}")
    return np.array([seed, 0], dtype=np.uint64)


class RandomStateSharedVariable(SharedVariable):
    """The shared state of one random variable (Theano's class of ``variable.rng``): its value
    is a ``GeneratorState``."""

    def get_value(self, borrow: bool = False, return_internal_type: bool = False):
        value = super().get_value(borrow, return_internal_type)
        # A state resident on a GPU comes back as its device array, as other variables' do.
        return value.view(GeneratorState) if isinstance(value, np.ndarray) else value


def fresh_state(seed: int) -> RandomStateSharedVariable:
    """A fresh state seeded with ``seed``, for one random variable."""
    return RandomStateSharedVariable(shared(initial_state(seed)).container)
