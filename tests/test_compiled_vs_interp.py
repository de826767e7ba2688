"""Random expression graphs compiled to machine code, against the interpreter and NumPy.

The graphs come from ``properties.graphs`` (through the public front end: every dtype,
broadcastable patterns, sizes 0-3 and ranks 0-3, elementwise math, reductions, dot, shapes and
indexing; each node knows its NumPy value). Each example compiles the graph in the default mode
(machine code) and in mode ``INTERP``, calls the compiled function with its arguments laid out in
memory in a random way (strided views, offsets into bigger buffers, transposed copies, reversed,
Fortran order), and checks that

- integers and booleans are exactly the interpreter's and NumPy's;
- floats agree within a few ulps of the largest value involved (the vector math library's
  functions are within 1-2 ulps of the exact results, see ``lowering.llvm.vecmath.library``; reductions
  may add in another order), NaN and infinities where the interpreter has them;
- the arguments are unchanged.
"""
import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile.pipeline import Mode, get_mode
from lowering.config import config
from properties.graphs import DTYPES, GraphBuilder
from properties.results import least_precise, lowest_float_precision

# Relative tolerance, in units of the dtype's epsilon, on values scaled by the largest magnitude
# among the arguments and results: a few ulps for the math library, a few more for sums added
# in another order (4 suffices in long runs; 16 leaves room).
ULPS = 16


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    with config.change_flags(cache_dir=str(tmp_path_factory.mktemp("cpu-cache"))):
        yield


def relayout(draw, array: np.ndarray) -> np.ndarray:
    """The same values in other memory: a strided view, a view at an offset into a bigger
    buffer, a transposed copy, or the array itself."""
    if array.ndim == 0:
        return array
    how = draw(st.sampled_from(["same", "strided", "offset", "transposed"]))
    if how == "strided":
        step = draw(st.integers(2, 3))
        big = np.zeros(tuple(n * step for n in array.shape), array.dtype)
        view = big[tuple(slice(None, None, step) for _ in array.shape)]
    elif how == "offset":
        big = np.zeros(tuple(n + 1 for n in array.shape), array.dtype)
        view = big[tuple(slice(1, None) for _ in array.shape)]
    elif how == "transposed":
        view = np.empty(array.shape[::-1], array.dtype).T
    else:
        return array
    view[...] = array
    return view


def assert_close(got, want, scale: float, what: str, precision=None) -> None:
    """Integers exactly; floats within ``ULPS`` of their dtype's epsilon, or of ``precision``'s
    where a value on the way was a float of lower precision (``lowest_float_precision``)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    eps = float(np.finfo(least_precise(got.dtype, precision)).eps)
    np.testing.assert_allclose(got, want, rtol=ULPS * eps, atol=ULPS * eps * scale,
                               equal_nan=True, err_msg=what)


def magnitude(arrays) -> float:
    """The largest finite magnitude among ``arrays`` (at least 1)."""
    largest = 1.0
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind in "fiub" and a.size:
            finite = np.abs(a[np.isfinite(a)].astype(np.float64)) if a.dtype.kind == "f" \
                else np.abs(a.astype(np.float64))
            if finite.size:
                largest = max(largest, float(finite.max()))
    return largest


def test_a_float32_step_upcast_to_float64_is_compared_at_float32_precision():
    """``exp`` of a boolean runs in float32 (floatX) and ``switch`` upcasts it to float64: the
    compiled math library and NumPy may differ there by an ulp of float32, not of float64."""
    with config.change_flags(floatX="float32"):
        x = T.dvector("x0")
        y = T.switch(x, T.exp(T.cast(x, "bool")), x)
        compiled = theano.function([x], y)
    data = np.array([0.0, 1.0, 2.5])
    want = np.where(data != 0, np.float64(np.exp(np.float32(1))), data)
    precision = lowest_float_precision(y)
    assert precision == np.float32
    assert_close(compiled(data), want, magnitude([data, want]), "switch", precision)
    # The float32 tolerance still tells a wrong value.
    with pytest.raises(AssertionError):
        assert_close(want * (1 + 1e-5), want, magnitude([data, want]), "switch", precision)
    assert lowest_float_precision(x * 2.0) == np.float64


OPTIMIZED_INTERPRETED = Mode("FAST_RUN, interpreted", get_mode("FAST_RUN").optimizations,
                             ("interpreter",))

SETTINGS = dict(deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=80, **SETTINGS)
@given(data=st.data(), floatx=st.sampled_from(["float64", "float32"]))
def test_random_graphs_compiled_match_the_interpreter_and_numpy(data, floatx):
    check_random_graph(data, floatx, DTYPES)


@settings(max_examples=30, **SETTINGS)
@given(data=st.data())
def test_random_half_precision_graphs_compiled_match_the_interpreter(data):
    check_random_graph(data, "float32", ("float16", "float32", "uint8", "int16", "bool"))


def check_random_graph(data, floatx: str, dtypes) -> None:
    with config.change_flags(floatX=floatx):
        builder = GraphBuilder(data.draw, floatx, dtypes=dtypes)
        try:
            builder.grow(data.draw(st.integers(1, 6)))
        finally:
            note("floatX=" + floatx + "\n" + "\n".join(builder.recipe))
        outputs = builder.outputs()
        note("outputs: " + ", ".join(o.name for o in outputs))
        inputs = [var for var, _ in builder.inputs]
        arrays = [array for _, array in builder.inputs]
        laid_out = [relayout(data.draw, a) for a in arrays]
        note("layouts: " + ", ".join(str(a.strides) for a in laid_out))
        saved = [a.copy() for a in laid_out]
        variables = [o.var for o in outputs]
        compiled = theano.function(inputs, variables, on_unused_input="ignore")
        assert compiled.executor_name == "cpu"
        # The same optimized graph in the interpreter tells the backend's errors from the
        # optimizations' (which INTERP, running the graph as built, would show too).
        optimized = theano.function(inputs, variables, mode=OPTIMIZED_INTERPRETED,
                                    on_unused_input="ignore")
        interpreted = theano.function(inputs, variables, mode="INTERP", on_unused_input="ignore")
        got = compiled(*laid_out)
        same_graph = optimized(*arrays)
        want = interpreted(*arrays)
    scale = magnitude([*arrays, *want])
    precisions = [lowest_float_precision(node.var) for node in outputs]
    for node, g, o, precision in zip(outputs, got, same_graph, precisions):
        assert_close(g, o, scale, f"{node.name}: compiled code against the interpreter, on the "
                                  f"same optimized graph", precision)
    for node, g, w, precision in zip(outputs, got, want, precisions):
        assert_close(g, w, scale, f"{node.name}: compiled against INTERP (the graph as built); "
                                  f"the optimized graph interpreted agrees with the compiled code, "
                                  f"so an optimization changed the result", precision)
        assert_close(g, node.value, scale, f"{node.name} against NumPy", precision)
    for a, copy in zip(laid_out, saved):
        np.testing.assert_array_equal(a, copy, err_msg="an argument was modified")
