"""Running front-end graphs in the reference interpreter, and finite-difference gradients.

``evaluate(outputs, {x: data, ...})`` interprets the ops computing the outputs (variables), fed
with the given values for the inputs; no compilation is involved, so these tests check the graphs
the front end builds, not the compiler.
"""
from __future__ import annotations

import numpy as np
import pytest

from lowering.config import config
from lowering.frontend.graph import toposort
from lowering.ir.interpreter import Interpreter


def evaluate(outputs, feeds: dict | None = None):
    """The values of ``outputs`` (a variable or a list) for input values ``feeds``."""
    single = not isinstance(outputs, (list, tuple))
    outputs = [outputs] if single else list(outputs)
    interp = Interpreter()
    for var, data in (feeds or {}).items():
        interp.env[var.value] = var.type.filter(data, allow_downcast=True)
    values = [o.value for o in outputs]
    for op in toposort(values, stop=interp.env):
        interp.run_op(op)
    results = [interp.value(v) for v in values]
    return results[0] if single else results


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar function ``f`` at ``x`` (float64)."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for pos in np.ndindex(*x.shape):
        old = x[pos]
        x[pos] = old + eps
        up = f(x)
        x[pos] = old - eps
        down = f(x)
        x[pos] = old
        grad[pos] = (up - down) / (2 * eps)
    return grad


def numeric_jacobian(fn, args: list, k: int, eps: float = 1e-6) -> np.ndarray:
    """d fn(*args) / d args[k] by central differences, of shape out.shape + args[k].shape."""
    base = np.asarray(fn(*args))
    J = np.zeros(base.shape + args[k].shape)
    for idx in np.ndindex(*args[k].shape):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[k][idx] += eps
        down[k][idx] -= eps
        J[(...,) + idx] = (np.asarray(fn(*up)) - np.asarray(fn(*down))) / (2 * eps)
    return J


@pytest.fixture(autouse=True)
def float64_by_default():
    """Tests written for the default floatX (float64) keep it whatever ``LOWERING_FLAGS`` sets:
    a module imports this fixture to use it."""
    with config.change_flags(floatX="float64"):
        yield


def tapped_step_total(args, n_sequence_taps: int):
    """The pre-activation of the tapped recurrences the scan tests draw: a step's arguments are
    ``n_sequence_taps`` sequence rows, then the fed-back states, then the weight ``w``; the total
    is the rows' sum plus ``(k + 1) * dot(w, state_k)`` for each state."""
    import lowering.tensor as T
    rows, states, w = args[:n_sequence_taps], args[n_sequence_taps:-1], args[-1]
    total = sum(rows[1:], rows[0])
    for k, s in enumerate(states):
        total = total + (k + 1) * T.dot(w, s)
    return total
