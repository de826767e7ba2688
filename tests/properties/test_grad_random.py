"""Gradients of random scalar costs against central finite differences (float64).

A random smooth graph (``smooth_graphs.SmoothGraphBuilder``: elementwise math, switch and clip,
reductions with axes, dot, dimshuffle, reshape, indexing with slices and repeated integer
indices, set/inc_subtensor, nnet functions, joins) gives a cost ``sum_i sum(node_i * w_i)``
over all its nodes, with constant random weights. ``T.grad`` of the cost with respect to every
float input is compiled with ``function(mode="INTERP")``; each gradient must have its input's
type (dtype and broadcastable pattern) and match central differences of the compiled cost.
"""
import numpy as np
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T

from .smooth_graphs import SmoothGraphBuilder

STEP = 1e-6


def central_differences(cost, arrays: list, index: int) -> np.ndarray:
    """d cost / d arrays[index] by central differences (``cost`` takes every array)."""
    arrays = [a.copy() for a in arrays]
    x = arrays[index]
    grad = np.zeros_like(x)
    for pos in np.ndindex(*x.shape):
        old = x[pos]
        x[pos] = old + STEP
        up = float(cost(*arrays))
        x[pos] = old - STEP
        down = float(cost(*arrays))
        x[pos] = old
        grad[pos] = (up - down) / (2 * STEP)
    return grad


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(data=st.data())
def test_gradients_of_random_costs_match_finite_differences(data):
    draw = data.draw
    builder = SmoothGraphBuilder(draw)
    try:
        builder.grow(draw(st.integers(2, 10)))
    finally:
        note("\n".join(builder.recipe))
    # Every node is a term, so that every op's gradient rule counts.
    terms = builder.pool
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    cost = 0.0
    for node in terms:
        weights = rng.uniform(0.5, 1.5, node.value.shape)
        cost = cost + (node.var * T.constant(weights)).sum()
    note("cost = " + " + ".join(f"sum({n.name} * w)" for n in terms))

    inputs = [var for var, _ in builder.inputs]
    arrays = [array for _, array in builder.inputs]
    wrt = [(i, var) for i, var in enumerate(inputs) if var.dtype == "float64"]
    grads = T.grad(cost, [var for _, var in wrt], disconnected_inputs="ignore")
    for (_, var), g in zip(wrt, grads):
        assert g.type == var.type, f"gradient of {var.name}: {g.type}, expected {var.type}"
    f_cost = theano.function(inputs, cost, mode="INTERP", on_unused_input="ignore")
    f_grads = theano.function(inputs, grads, mode="INTERP", on_unused_input="ignore")
    value = float(f_cost(*arrays))
    assume(np.isfinite(value) and abs(value) < 1e6)
    got = f_grads(*arrays)
    for (index, var), g in zip(wrt, got):
        expected = central_differences(f_cost, arrays, index)
        scale = max(1.0, abs(value), float(np.max(np.abs(expected), initial=0)))
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-6 * scale,
                                   err_msg=f"d cost / d {var.name}")
