"""Random expression graphs through the public front end, run by ``function(mode="INTERP")``,
against the same computation written directly in NumPy (``graphs`` and ``mirror``).

Each example draws ``floatX``, 1-3 inputs of any dtype and broadcastable pattern (sizes 0-3),
and a chain of operations; it checks, for every node, the type the front end inferred
(dtype, rank, broadcastable and static sizes) against the NumPy value, then compiles the graph
and checks the function's results (dtype, shape and values; NaN where NumPy gives NaN), and that
the caller's input arrays are untouched. A second, smaller run compiles in ``FAST_RUN`` (every
graph optimization, and the compiled backend where one is installed).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.frontend.errors import GraphTypeError
from lowering.ir.interpreter import InterpreterError

from .graphs import GraphBuilder
from .results import assert_same_result, lowest_float_precision


def check_random_graph(data, floatx: str, mode: str) -> None:
    """Build a random graph, compile it in ``mode`` and compare its results with NumPy's."""
    with config.change_flags(floatX=floatx):
        builder = GraphBuilder(data.draw, floatx)
        try:
            builder.grow(data.draw(st.integers(1, 6)))
        finally:
            note("floatX=" + floatx + "\n" + "\n".join(builder.recipe))
        outputs = builder.outputs()
        note("outputs: " + ", ".join(o.name for o in outputs))
        inputs = [var for var, _ in builder.inputs]
        arrays = [array for _, array in builder.inputs]
        saved = [array.copy() for array in arrays]
        f = theano.function(inputs, [o.var for o in outputs], mode=mode,
                            on_unused_input="ignore")
        results = f(*arrays)
    for node, got in zip(outputs, results):
        assert_same_result(got, node.value, node.name, lowest_float_precision(node.var))
    for array, copy in zip(arrays, saved):
        np.testing.assert_array_equal(array, copy, err_msg="an input array was modified")


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), floatx=st.sampled_from(["float64", "float32"]))
def test_random_graphs_match_numpy(data, floatx):
    check_random_graph(data, floatx, "INTERP")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), floatx=st.sampled_from(["float64", "float32"]))
def test_random_graphs_compiled_with_all_optimizations_match_numpy(data, floatx):
    """FAST_RUN: the graph optimizations, and the compiled backend where one is installed."""
    check_random_graph(data, floatx, "FAST_RUN")


# -- Known differences from NumPy and Theano, found by the random graphs -------------------------
# Strict: each turns into a failure once fixed, so that the generator's exclusion (see graphs.py)
# can be removed.


@pytest.mark.xfail(strict=True, raises=GraphTypeError,
                   reason="x[:] is x itself, and set_subtensor refuses a variable that is not "
                          "the result of indexing")
def test_set_subtensor_of_a_full_slice():
    x = T.dvector("x")
    f = theano.function([x], T.set_subtensor(x[:], 5.0), mode="INTERP")
    np.testing.assert_array_equal(f(np.zeros(3)), [5.0, 5.0, 5.0])


@pytest.mark.xfail(strict=True, raises=InterpreterError,
                   reason="tensor.argmax refuses every empty input, not only empty reduced axes")
def test_argmax_along_a_full_axis_of_an_empty_array():
    x = T.dmatrix("x")
    f = theano.function([x], x.argmax(axis=1), mode="INTERP")
    got = f(np.zeros((0, 3)))
    assert got.shape == (0,) and got.dtype == np.int64
