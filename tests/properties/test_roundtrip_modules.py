"""Print/parse round trips of modules made of real ops of every dialect.

Random front-end graphs (``graphs.GraphBuilder``, plus nnet, shape, join, advanced-indexing and
gradient ops) are compiled with ``function(mode="INTERP")``; the module of each function is taken
at three points: as built (``Function.ir_module("tensor")``: builtin and tensor ops), after
``canonicalize,cse`` (folded constants), and after ``bufferize`` (loops and scalar ops on
buffers). Each is printed in the generic and the pretty form, with and without locations, and
parsed back: printing the parsed module gives the same text, the other form's text parses to
the same module, the parsed module verifies, and it interprets to the same results as the
module that was printed (bit for bit) and as the function (within rounding, for rewritten and
bufferized modules, whose sums may associate differently).
"""
import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.dialects.builtin.interpret import run_function
from lowering.ir.parser import parse_module
from lowering.ir.pass_manager import PassManager
from lowering.ir.printer import print_op
from lowering.ir.verifier import verify
from lowering.passes.bufferize.bufferize import Bufferize

from .graphs import GraphBuilder
from .results import assert_same_result, least_precise, lowest_float_precision

TOLERANCE = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def extra_outputs(draw, builder: GraphBuilder) -> list:
    """0-2 more outputs built from the graph's nodes with ops the NumPy mirror does not cover:
    nnet functions, shapes, joins, allocations, integer-array updates and gradients."""
    floats = [n for n in builder.pool if n.var.dtype.startswith("float")]
    arrays = [n for n in builder.pool if n.var.ndim]
    extras = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["nnet", "shape", "join", "alloc", "inc_array", "grad"]))
        if kind == "nnet" and floats:
            x = draw(st.sampled_from(floats)).var
            fn = draw(st.sampled_from([T.nnet.sigmoid, T.nnet.softplus, T.nnet.relu,
                                       T.nnet.softmax, T.nnet.log_softmax]))
            if fn in (T.nnet.softmax, T.nnet.log_softmax) and x.ndim == 0:
                continue
            extras.append(fn(x))
        elif kind == "shape" and arrays:
            x = draw(st.sampled_from(arrays)).var
            extras.append(draw(st.sampled_from([x.shape, x.shape[-1], x.size])))
        elif kind == "join" and arrays:
            x = draw(st.sampled_from(arrays)).var
            axis = draw(st.integers(0, x.ndim - 1))
            extras.append(T.concatenate([x, x], axis=axis) if draw(st.booleans())
                          else T.stack([x, x], axis=axis))
        elif kind == "alloc" and arrays:
            x = draw(st.sampled_from(arrays)).var
            extras.append(draw(st.sampled_from([
                T.zeros_like(x), T.ones((x.shape[0], 2)), T.arange(x.shape[0]),
                T.alloc(1.5, 2, x.shape[0])])))
        elif kind == "inc_array" and arrays:
            node = draw(st.sampled_from(arrays))
            size = node.value.shape[0]
            if size and node.var.dtype != "bool":
                index = draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=3))
                extras.append(T.inc_subtensor(node.var[index], 1))
        elif kind == "grad" and floats:
            inputs = [v for v, _ in builder.inputs if v.dtype.startswith("float")]
            cost = T.cast(draw(st.sampled_from(floats)).var, "float64").sum()
            if inputs:
                extras.extend(T.grad(cost, inputs, disconnected_inputs="ignore"))
    return extras


def interpret(module, arrays) -> list:
    return [np.asarray(r) for r in run_function(module.functions[0], list(arrays))]


def assert_round_trips(module, arrays, what: str) -> list:
    """Every printed form of ``module`` parses back to itself; returns the parsed module's
    results, which equal ``module``'s bit for bit."""
    expected = interpret(module, arrays)
    for locations in (False, True):
        texts = {generic: print_op(module, generic=generic, print_locations=locations)
                 for generic in (True, False)}
        for generic, text in texts.items():
            parsed = parse_module(text, f"{what}.mlir")
            verify(parsed)
            assert print_op(parsed, generic=generic, print_locations=locations) == text, what
            # The other form reads back to the same module.
            other = parse_module(texts[not generic], f"{what}.mlir")
            assert print_op(other, generic=generic, print_locations=locations) == text, what
            got = interpret(parsed, arrays)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert g.dtype == e.dtype and g.shape == e.shape, what
                np.testing.assert_array_equal(g, e, err_msg=what)
    return expected


def assert_close_results(got, expected, what: str, precisions: list) -> None:
    """Floats within the rounding of their dtype, or of the lowest float precision on the way
    to them (``precisions``, one per result: float32 sums added in another order and then
    upcast differ by float32's rounding)."""
    for g, e, precision in zip(got, expected, precisions):
        assert g.dtype == e.dtype and g.shape == e.shape, (what, g.dtype, e.dtype, g.shape, e.shape)
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, e, equal_nan=True, err_msg=what,
                                       **TOLERANCE[least_precise(g.dtype, precision).name])
        else:
            np.testing.assert_array_equal(g, e, err_msg=what)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), floatx=st.sampled_from(["float64", "float32"]))
def test_modules_of_random_graphs_round_trip(data, floatx):
    with config.change_flags(floatX=floatx):
        builder = GraphBuilder(data.draw, floatx)
        try:
            builder.grow(data.draw(st.integers(1, 5)))
        finally:
            note("floatX=" + floatx + "\n" + "\n".join(builder.recipe))
        outputs = [o.var for o in builder.outputs()] + extra_outputs(data.draw, builder)
        inputs = [var for var, _ in builder.inputs]
        arrays = [array for _, array in builder.inputs]
        f = theano.function(inputs, outputs, mode="INTERP", on_unused_input="ignore")
        results = [np.asarray(r) for r in f(*arrays)]

    tensor_module = f.ir_module("tensor")
    note(print_op(tensor_module))
    built = assert_round_trips(tensor_module, arrays, "tensor")
    for got, expected in zip(built, results):
        assert_same_result(got, expected, "tensor module")

    precisions = [lowest_float_precision(var) for var in outputs]
    optimized = f.ir_module("tensor")
    PassManager("canonicalize,cse").run(optimized)
    assert_close_results(assert_round_trips(optimized, arrays, "canonicalized"), results,
                         "canonicalize,cse", precisions)

    loops = f.ir_module("tensor")
    Bufferize().apply(loops)
    verify(loops)
    assert_close_results(assert_round_trips(loops, arrays, "loops"), results, "bufferize",
                         precisions)
