"""``ifelse`` through the Theano API: values against NumPy in compiled and interpreted modes,
tuples, shared-variable updates, gradients against finite differences, the branch not taken
not running, and errors for bad input that name the argument and the user's line."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowering as theano
import lowering.tensor as T
from lowering.ifelse import ifelse

from .helpers import float64_by_default, numeric_grad  # noqa: F401  (fixture)

MODES = ["FAST_RUN", "FAST_COMPILE", "INTERP"]
THIS_FILE = "test_ifelse.py"


@pytest.mark.parametrize("mode", MODES)
def test_the_value_of_the_branch_taken_as_numpy_computes_it(mode):
    a, b = T.dscalars("a", "b")
    x, y = T.dmatrices("x", "y")
    f = theano.function([a, b, x, y], ifelse(T.lt(a, b), T.mean(x), T.exp(y).sum()),
                        mode=mode)
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal((4, 5)), rng.standard_normal((3, 2))
    assert np.allclose(f(1.0, 2.0, xv, yv), xv.mean())
    assert np.allclose(f(2.0, 1.0, xv, yv), np.exp(yv).sum())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "bool"])
def test_any_nonzero_condition_is_true(mode, dtype):
    c = T.scalar("c", dtype=dtype)
    x = T.dvector("x")
    f = theano.function([c, x], ifelse(c, x * 2, x - 1), mode=mode)
    data = np.array([1.0, 3.0])
    assert f(np.asarray(1).astype(dtype), data).tolist() == [2.0, 6.0]
    assert f(np.asarray(0).astype(dtype), data).tolist() == [0.0, 2.0]
    if dtype in ("int8", "int64"):
        assert f(np.asarray(-3).astype(dtype), data).tolist() == [2.0, 6.0]


@pytest.mark.parametrize("mode", MODES)
def test_tuples_and_lists_of_values_keep_their_kind(mode):
    c = T.iscalar("c")
    x = T.dvector("x")
    m = T.dmatrix("m")
    pair = ifelse(c, (x + 1, m.T), (x * x, m * 2))
    assert isinstance(pair, tuple) and len(pair) == 2
    as_list = ifelse(c, [x.sum()], [x.max()])
    assert isinstance(as_list, list) and len(as_list) == 1
    f = theano.function([c, x, m], [*pair, *as_list], mode=mode)
    xv, mv = np.array([1.0, -2.0, 3.0]), np.arange(6.0).reshape(2, 3)
    s, t, u = f(1, xv, mv)
    assert s.tolist() == (xv + 1).tolist() and t.tolist() == mv.T.tolist() and u == xv.sum()
    s, t, u = f(0, xv, mv)
    assert s.tolist() == (xv * xv).tolist() and t.tolist() == (mv * 2).tolist()
    assert u == xv.max()


@pytest.mark.parametrize("mode", MODES)
def test_branches_of_different_sizes(mode):
    c = T.iscalar("c")
    x = T.dvector("x")
    f = theano.function([c, x], ifelse(c, x[:2], T.concatenate([x, x])), mode=mode)
    data = np.arange(3.0)
    assert f(1, data).tolist() == [0.0, 1.0]
    assert f(0, data).tolist() == [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]


@pytest.mark.parametrize("mode", MODES)
def test_a_shared_variable_updated_through_ifelse(mode):
    w = theano.shared(np.zeros(3), name="w")
    step = T.dscalar("step")
    grow = T.iscalar("grow")
    f = theano.function([grow, step], w.sum(),
                        updates=[(w, ifelse(grow, w + step, w * 0.5))], mode=mode)
    f(1, 2.0)
    assert w.get_value().tolist() == [2.0, 2.0, 2.0]
    f(0, 2.0)
    assert w.get_value().tolist() == [1.0, 1.0, 1.0]
    assert f(1, 1.0) == 3.0 and w.get_value().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
def test_a_branch_reads_the_old_value_of_a_shared_variable_updated_in_the_same_call(mode):
    w = theano.shared(np.array([1.0, 2.0, 3.0]), name="w")
    c = T.iscalar("c")
    g = theano.function([c], ifelse(c, w.sum(), (w * 3).sum()), updates=[(w, w * 2)],
                        mode=mode)
    assert g(1) == 6.0 and w.get_value().tolist() == [2.0, 4.0, 6.0]
    assert g(0) == 36.0 and w.get_value().tolist() == [4.0, 8.0, 12.0]


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
def test_a_value_both_branches_and_the_outputs_read_is_computed_before(mode):
    c = T.iscalar("c")
    x = T.dvector("x")
    t = T.exp(x)
    f = theano.function([c, x], [ifelse(c, T.log(t) + 1, t * 2), t.sum(), t * 3], mode=mode)
    data = np.array([0.1, 0.2, 0.3])
    for taken in (1, 0):
        expected_t = np.exp(data)
        chosen = np.log(expected_t) + 1 if taken else expected_t * 2
        got = f(taken, data)
        assert all(np.allclose(a, b) for a, b in
                   zip(got, [chosen, expected_t.sum(), expected_t * 3]))


def test_an_ifelse_inside_a_branch_of_another():
    a = T.dscalar("a")
    x = T.dvector("x")
    inner = ifelse(T.gt(a, 0), T.exp(x), T.log(x))
    y = ifelse(T.gt(a, 10), x * 100, inner + 1)
    data = np.array([1.0, 2.0])
    for mode in ("FAST_RUN", "INTERP"):
        f = theano.function([a, x], y, mode=mode)
        assert np.allclose(f(20.0, data), data * 100)
        assert np.allclose(f(1.0, data), np.exp(data) + 1)
        assert np.allclose(f(-1.0, data), np.log(data) + 1)


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
def test_the_branch_not_taken_does_not_run(mode):
    # The then branch fails a run-time check for these shapes (a product of mismatched
    # matrices); the call succeeds as long as that branch is not taken.
    c = T.iscalar("c")
    x, y = T.dmatrices("x", "y")
    f = theano.function([c, x, y], ifelse(c, T.dot(x, y).sum(), x.sum()), mode=mode)
    xv, yv = np.ones((3, 4)), np.ones((5, 2))
    assert f(0, xv, yv) == 12.0
    with pytest.raises(ValueError):
        f(1, xv, yv)


@pytest.mark.parametrize("mode", ["FAST_RUN", "INTERP"])
def test_a_failing_branch_leaves_the_shared_variables_as_they_were(mode):
    w = theano.shared(np.ones(3), name="w")
    c = T.iscalar("c")
    m = T.dmatrix("m")
    f = theano.function([c, m], ifelse(c, T.dot(m, w).sum(), w.sum()),
                        updates=[(w, w + 1)], mode=mode)
    with pytest.raises(ValueError):
        f(1, np.ones((2, 4)))  # the product's sizes do not fit, in the branch taken
    assert w.get_value().tolist() == [1.0, 1.0, 1.0]
    assert f(0, np.ones((2, 4))) == 3.0 and w.get_value().tolist() == [2.0, 2.0, 2.0]


def test_only_the_taken_branch_is_in_the_compiled_branch():
    # What only one branch needs is inside that branch at every stage from the tensor one.
    a, b = T.dscalars("a", "b")
    x, y = T.dmatrices("x", "y")
    f = theano.function([a, b, x, y], ifelse(T.lt(a, b), T.mean(x), T.mean(y)))
    module = f.ir_module("optimized")
    top = [op.name for op in module.functions[0].body.block.ops]
    assert "tensor.mean" not in top and "tensor.if" in top
    branch_op = next(op for op in module.functions[0].body.block.ops if op.name == "tensor.if")
    assert [[op.name for op in r.block.ops] for r in branch_op.regions] == \
        [["tensor.mean", "tensor.yield"]] * 2
    loops_module = f.ir_module("loops")
    top = [op.name for op in loops_module.functions[0].body.block.ops]
    assert "loops.if" in top and "loops.parallel" not in top


def test_values_needed_outside_the_branch_are_computed_once_before_it():
    c = T.iscalar("c")
    x = T.dvector("x")
    e = T.exp(x)
    f = theano.function([c, x], [ifelse(c, e.sum(), x.sum()), e])
    module = f.ir_module("optimized")
    top = [op.name for op in module.functions[0].body.block.ops]
    assert top.index("tensor.exp") < top.index("tensor.if")
    total, again = f(1, np.zeros(2))
    assert total == 2.0 and again.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("taken", [1, 0])
def test_the_gradient_flows_into_the_branch_taken(taken):
    c = T.iscalar("c")
    x = T.dvector("x")
    cost = ifelse(c, (T.sin(x) * x).sum(), (x ** 3).sum())
    gx = T.grad(cost, x)
    data = np.array([0.3, -1.2, 2.0])
    for mode in ("FAST_RUN", "INTERP"):
        f = theano.function([c, x], gx, mode=mode)
        cost_f = theano.function([c, x], cost, mode=mode)
        expected = numeric_grad(lambda v: float(cost_f(taken, v)), data)
        assert np.allclose(f(taken, data), expected, atol=1e-6)


def test_each_branch_input_gets_zeros_when_its_branch_is_not_taken():
    c = T.iscalar("c")
    x, y = T.dvectors("x", "y")
    cost = ifelse(c, (x * 2).sum(), (y * 3).sum())
    gx, gy = T.grad(cost, [x, y])
    f = theano.function([c, x, y], [gx, gy])
    ones = np.ones(2)
    dx, dy = f(1, ones, ones)
    assert dx.tolist() == [2.0, 2.0] and dy.tolist() == [0.0, 0.0]
    dx, dy = f(0, ones, ones)
    assert dx.tolist() == [0.0, 0.0] and dy.tolist() == [3.0, 3.0]


def test_the_condition_gets_no_gradient():
    a = T.dscalar("a")
    x = T.dvector("x")
    cost = ifelse(T.gt(a, 0), (a * x).sum(), x.sum())
    ga = T.grad(cost, a)
    f = theano.function([a, x], ga)
    # Only the path through the branch: d/da of (a * x).sum() when a > 0.
    assert f(1.0, np.array([1.0, 2.0])) == 3.0
    assert f(-1.0, np.array([1.0, 2.0])) == 0.0


def test_switch_stays_elementwise():
    c = T.ivector("c")
    x, y = T.dvectors("x", "y")
    f = theano.function([c, x, y], T.switch(c, x, y))
    assert f(np.array([1, 0], dtype="int32"), np.array([1.0, 2.0]),
             np.array([3.0, 4.0])).tolist() == [1.0, 4.0]
    module = f.ir_module("optimized")
    assert all(op.name != "tensor.if" for op in module.walk())


def test_the_theano_import_path():
    import lowering.ifelse
    assert theano.ifelse.ifelse is lowering.ifelse.ifelse is ifelse


# -- bad input -------------------------------------------------------------------------------


def _vector(name="x"):
    return T.dvector(name)


# (then, else, condition, error, what the message says after "file:line: ifelse: ")
BAD_INPUT = [
    (_vector, _vector, lambda: T.ivector("c"), TypeError,
     r"condition must be a scalar .* got c of type TensorType\(int32, \(False,\)\)"),
    (lambda: (_vector(), _vector()), lambda: (_vector(),), lambda: T.iscalar("c"), ValueError,
     r"then_branch gives 2 value\(s\) but else_branch gives 1"),
    (_vector, lambda: T.fvector("f"), lambda: T.iscalar("c"), TypeError,
     r"the branches should have identical types, but then_branch gives x of type "
     r"TensorType\(float64, \(False,\)\) and else_branch gives f of type "
     r"TensorType\(float32, \(False,\)\)"),
    (_vector, lambda: T.dmatrix("m"), lambda: T.iscalar("c"), TypeError,
     r"the branches should have identical types, .* else_branch gives m of type "
     r"TensorType\(float64, \(False, False\)\)"),
    (_vector, lambda: T.drow("r"), lambda: T.iscalar("c"), TypeError,
     r"the branches should have identical types, .* else_branch gives r of type "
     r"TensorType\(float64, \(True, False\)\)"),
]


@pytest.mark.parametrize("then, other, condition, error, what", BAD_INPUT)
def test_bad_input_is_an_error_naming_the_argument_and_the_line(then, other, condition, error,
                                                                what):
    with pytest.raises(error, match=rf"{THIS_FILE}:\d+: ifelse: {what}"):
        ifelse(condition(), then(), other())


def test_a_mismatch_in_one_value_of_a_tuple_names_that_value():
    c = T.iscalar("c")
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"ifelse: value 1 of the branches should have identical"):
        ifelse(c, (x, x), (x, T.ivector("i")))


def test_a_branch_that_is_not_a_tensor_names_the_argument():
    c = T.iscalar("c")
    with pytest.raises(TypeError, match=rf"{THIS_FILE}:\d+: ifelse: else_branch is not a "
                                        rf"tensor"):
        ifelse(c, T.dvector("x"), object())


def test_on_the_simulated_gpu_the_host_picks_the_branch_and_its_kernels_run():
    from lowering.config import config
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        w = theano.shared(np.array([1.0, 2.0, 3.0, 4.0], dtype="float32"), name="w")
        c = T.iscalar("c")
        x = T.fvector("x")
        h = T.exp(x) * w  # computed on the device, read by both the branch and an output
        f = theano.function([c, x], [ifelse(c, h.sum(), (h * 2).sum()), h * 3],
                            updates=[(w, ifelse(c, w * 2, w))])
        data = np.array([0.1, -0.2, 0.3, 0.5], dtype="float32")
        expected_h = np.exp(data) * np.array([1.0, 2.0, 3.0, 4.0])
        total, tripled = f(1, data)
        assert np.allclose(total, expected_h.sum()) and np.allclose(tripled, 3 * expected_h)
        assert np.asarray(w.get_value()).tolist() == [2.0, 4.0, 6.0, 8.0]
        total, tripled = f(0, data)
        assert np.allclose(total, 2 * (2 * expected_h).sum())
        assert np.asarray(w.get_value()).tolist() == [2.0, 4.0, 6.0, 8.0]
        placed = f.ir_module("optimized")
        branch_ops = [op for op in placed.walk() if op.name == "tensor.if"]
        assert [op.get_attr("result_places") for op in branch_ops] == [("cuda",), ("cuda",)]
        assert "device" not in branch_ops[0].attributes  # the host decides
        inside = [op for r in branch_ops[0].regions for op in r.block.ops
                  if op.name != "tensor.yield"]
        assert inside and all(op.get_attr("device") == "cuda" for op in inside)
        stage = f.ir_module("gpu")
        loops_ifs = [op for op in stage.walk() if op.name == "loops.if"]
        assert loops_ifs and all(
            any(inner.name == "gpu.launch_func" for inner in r.block.ops)
            for r in loops_ifs[0].regions)


def test_the_profile_counts_the_runs_of_each_branch():
    from lowering.compile.profiling import ProfileStats
    c = T.iscalar("c")
    x = T.dvector("x")
    stats = ProfileStats(atexit_print=False)
    f = theano.function([c, x], ifelse(c, T.exp(x).sum(), T.log(x).max()), profile=stats)
    data = np.array([1.0, 2.0])
    results = [float(f(k, data)) for k in (1, 1, 0)]
    assert np.allclose(results, [np.exp(data).sum()] * 2 + [np.log(data).max()])
    calls = {node.op: node.calls for node in stats.nodes}
    then_ops = [op for op in calls if "exp" in op]
    else_ops = [op for op in calls if "log" in op]
    assert then_ops and else_ops
    assert {calls[op] for op in then_ops} == {2} and {calls[op] for op in else_ops} == {1}
    assert calls["if{}"] == 3


def test_on_the_simulated_gpu_the_profile_counts_the_kernels_of_each_branch():
    from lowering.compile.profiling import ProfileStats
    from lowering.config import config
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        c = T.iscalar("c")
        x = T.fvector("x")
        stats = ProfileStats(atexit_print=False)
        f = theano.function([c, x], ifelse(c, T.exp(x).sum(), T.log(x).max()), profile=stats)
        data = np.array([1.0, 2.0], dtype="float32")
        results = [float(f(k, data)) for k in (1, 1, 0)]
    assert np.allclose(results, [np.exp(data).sum()] * 2 + [np.log(data).max()])
    kernels = [node for node in stats.nodes if node.op.startswith("GpuKernel")]
    assert {node.calls for node in kernels} == {1, 2}  # the then branch twice, the else once
    assert [node.calls for node in stats.nodes if node.op == "HostOp{loops.if}"] == [3]


@functools.lru_cache(maxsize=None)
def _compiled_pair():
    """One function in FAST_RUN and INTERP (compiled once for every example)."""
    c = T.lscalar("c")
    x, y = T.dvectors("x", "y")
    then = (T.exp(x).sum() * y, x.max())
    other = (y[::-1] * 2 + x.sum(), T.constant(np.float64(-1.0)))
    outputs = list(ifelse(c, then, other))
    return [theano.function([c, x, y], outputs, mode=m) for m in ("FAST_RUN", "INTERP")]


@settings(max_examples=40, deadline=None)
@given(st.integers(-3, 3), hnp.arrays(np.float64, st.integers(1, 20),
                                        elements=st.floats(-5, 5)))
def test_compiled_and_interpreted_ifelse_agree_with_numpy(condition, data):
    other = data[::-1] * 0.5
    if condition:
        expected = [np.exp(data).sum() * other, data.max()]
    else:
        expected = [other[::-1] * 2 + data.sum(), -1.0]
    for f in _compiled_pair():
        got = f(condition, data, other)
        assert all(np.allclose(a, b) for a, b in zip(got, expected))
