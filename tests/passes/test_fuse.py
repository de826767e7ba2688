"""``fuse`` and the ``tensor.fused`` op: fused graphs compute what the unfused ones did (random
graphs), groups end where they must and ``explain`` says why."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.compile.pipeline import OPTIMIZATION_ORDER, Mode
from lowering.dialects import scalar, tensor
from lowering.dialects.tensor import FusedOp, Reduction
from lowering.dialects.tensor.fused import body_from
from lowering.frontend.theano_ops import CAReduce, theano_op
from lowering.ir.core import Block, VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.parser import parse_module
from lowering.ir.types import F32, F64, TensorType
from lowering.ir.verifier import verify
from lowering.passes.fuse import fuse_module

from .bufferize_graphs import function_module
from .opt_helpers import assert_same_results, module_from, op_names, optimized, ops_named, run

RNG = np.random.default_rng(2)
V = "tensor<?xf64>"
M = "tensor<?x?xf64>"


def test_sum_of_exp_is_one_fused_op():
    text = f"""func.func @f(%x: {M}) -> tensor<?xf64> {{
  %e = "tensor.exp"(%x) : ({M}) -> {M}
  %s = "tensor.sum"(%e) {{axes = [1], keepdims = false}} : ({M}) -> tensor<?xf64>
  func.return %s : tensor<?xf64>
}}"""
    module = module_from(text)
    after = optimized(module, "fuse")
    (fused,) = ops_named(after, "tensor.fused")
    assert op_names(after) == ["tensor.fused"]
    assert fused.reduction(0) == Reduction("sum", (1,))
    assert [op.name for op in fused.body.block.ops] == ["scalar.exp", "scalar.yield"]
    assert_same_results(module, after, RNG.normal(size=(3, 4)))
    assert str(theano_op(fused)) == "FusedReduce{Composite{[sum{1}(exp(i0))]}}"
    assert isinstance(theano_op(fused), CAReduce)


def test_values_used_outside_become_more_results():
    text = f"""func.func @f(%x: {M}, %y: {M}) -> ({M}, {M}) {{
  %e = "tensor.exp"(%x) : ({M}) -> {M}
  %a = "tensor.add"(%e, %y) : ({M}, {M}) -> {M}
  %m = "tensor.mul"(%a, %a) : ({M}, {M}) -> {M}
  %s = "tensor.softmax"(%e) {{axis = 1}} : ({M}) -> {M}
  func.return %m, %s : {M}, {M}
}}"""
    module = module_from(text)
    after = optimized(module, "fuse")
    (fused,) = ops_named(after, "tensor.fused")
    assert len(fused.results) == 2 and op_names(after) == ["tensor.fused", "tensor.softmax"]
    assert_same_results(module, after, RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3)))


def chain_of_adds(count: int) -> str:
    args = ", ".join(f"%a{i}: {V}" for i in range(count))
    lines = [f'  %s1 = "tensor.add"(%a0, %a1) : ({V}, {V}) -> {V}']
    lines += [f'  %s{i} = "tensor.add"(%s{i - 1}, %a{i}) : ({V}, {V}) -> {V}'
              for i in range(2, count)]
    return (f"func.func @f({args}) -> {V} {{\n" + "\n".join(lines)
            + f"\n  func.return %s{count - 1} : {V}\n}}")


def test_operand_cap_splits_groups_and_explain_says_so(capsys):
    module = module_from(chain_of_adds(6))
    arrays = [RNG.normal(size=4) for _ in range(6)]
    after = optimized(module, "fuse{max-inputs=3 explain=true}")
    fused = ops_named(after, "tensor.fused")
    assert len(fused) == 2 and all(len(op.operands) <= 3 for op in fused)
    assert_same_results(module, after, *arrays)
    err = capsys.readouterr().err
    assert "operand cap: the merged group would read 4 inputs, more than max-inputs=3" in err
    assert len(ops_named(optimized(module, "fuse"), "tensor.fused")) == 1


def test_different_shapes_end_a_group():
    text = f"""func.func @f(%c: tensor<?x1xf64>, %x: {M}) -> {M} {{
  %e = "tensor.exp"(%c) : (tensor<?x1xf64>) -> tensor<?x1xf64>
  %l = "tensor.log"(%e) : (tensor<?x1xf64>) -> tensor<?x1xf64>
  %a = "tensor.add"(%l, %x) : (tensor<?x1xf64>, {M}) -> {M}
  %r = "tensor.mul"(%a, %x) : ({M}, {M}) -> {M}
  func.return %r : {M}
}}"""
    module = module_from(text)
    report = fuse_module(after := module.clone())
    assert len(ops_named(after, "tensor.fused")) == 2
    assert any("tensor.log" in b and "different shapes" in b for b in report.boundaries)
    assert_same_results(module, after, RNG.normal(size=(3, 1)), RNG.normal(size=(3, 2)))


def test_no_group_depends_on_itself():
    # e feeds r directly and through a dot: fusing them would need the dot inside the group.
    text = f"""func.func @f(%v: {V}, %a: {M}) -> {V} {{
  %e = "tensor.exp"(%v) : ({V}) -> {V}
  %n = "tensor.neg"(%e) : ({V}) -> {V}
  %d = "tensor.dot"(%a, %n) : ({M}, {V}) -> {V}
  %r = "tensor.add"(%e, %d) : ({V}, {V}) -> {V}
  %s = "tensor.sqr"(%r) : ({V}) -> {V}
  func.return %s : {V}
}}"""
    module = module_from(text)
    report = fuse_module(after := module.clone())
    verify(after)
    assert any("cycle" in b and "tensor.dot" in b for b in report.boundaries)
    assert [len(op.operands) for op in ops_named(after, "tensor.fused")] == [1, 2]
    assert_same_results(module, after, RNG.normal(size=3), RNG.normal(size=(3, 3)))


def test_sibling_reductions_of_one_input_are_one_pass():
    text = f"""func.func @f(%x: {M}) -> (tensor<?xf64>, tensor<f64>) {{
  %s = "tensor.sum"(%x) {{axes = [1], keepdims = false}} : ({M}) -> tensor<?xf64>
  %m = "tensor.mean"(%x) {{axes = [0, 1], keepdims = false}} : ({M}) -> tensor<f64>
  func.return %s, %m : tensor<?xf64>, tensor<f64>
}}"""
    module = module_from(text)
    after = optimized(module, "fuse")
    (fused,) = ops_named(after, "tensor.fused")
    assert fused.reduction_list() == [Reduction("sum", (1,)), Reduction("mean", (0, 1))]
    assert_same_results(module, after, RNG.normal(size=(4, 5)))


def test_fused_location_is_every_member_location():
    text = f"""func.func @f(%x: {V}) -> {V} {{
  %e = "tensor.exp"(%x) : ({V}) -> {V} loc("model.py":3:5)
  %r = "tensor.neg"(%e) : ({V}) -> {V} loc("model.py":4:9)
  func.return %r : {V}
}}"""
    after = optimized(module_from(text), "fuse")
    (fused,) = ops_named(after, "tensor.fused")
    assert str(fused.location) == 'loc(fused["model.py":3:5, "model.py":4:9])'
    assert [str(op.location) for op in fused.body.block.ops][:2] == [
        'loc("model.py":3:5)', 'loc("model.py":4:9)']


def test_fusing_again_changes_nothing_and_one_op_groups_stay():
    text = f"""func.func @f(%x: {V}, %y: {V}) -> ({V}, {V}) {{
  %e = "tensor.exp"(%x) : ({V}) -> {V}
  %r = "tensor.neg"(%e) : ({V}) -> {V}
  %s = "tensor.softmax"(%y) {{axis = 0}} : ({V}) -> {V}
  %t = "tensor.sin"(%s) : ({V}) -> {V}
  func.return %r, %t : {V}, {V}
}}"""
    once = optimized(module_from(text), "fuse")
    twice = optimized(once, "fuse")
    assert op_names(once) == op_names(twice) == ["tensor.fused", "tensor.softmax", "tensor.sin"]


def test_explain_through_the_pass(capsys):
    text = f"""func.func @f(%a: {M}, %v: {V}) -> {V} {{
  %d = "tensor.dot"(%a, %v) : ({M}, {V}) -> {V}
  %e = "tensor.exp"(%d) : ({V}) -> {V}
  %r = "tensor.neg"(%e) : ({V}) -> {V}
  func.return %r : {V}
}}"""
    optimized(module_from(text), "fuse{explain=true}")
    err = capsys.readouterr().err
    assert "fuse: fused 2 ops (exp, neg)" in err and "1 inputs, 1 results" in err
    assert "boundary tensor.dot at <input>:2:8 -> tensor.exp at <input>:3:8: tensor.dot is " \
           "not elementwise" in err


# ---------------------------------------------------------------------------------------------
# The logistic regression of the seeds


def test_logistic_regression_fuses_into_three_ops_and_a_gemv():
    x, y = T.fmatrix("x"), T.fvector("y")
    rng = np.random.RandomState(0)
    w = theano.shared(rng.randn(7).astype("float32"), name="w")
    b = theano.shared(np.float32(0.0), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    mode = Mode("optimized in the interpreter", OPTIMIZATION_ORDER, ("interpreter",))
    train = theano.function([x, y], [p_1 > 0.5, xent],
                            updates={w: w - 0.01 * gw, b: b - 0.01 * gb}, mode=mode)
    module = train.ir_module("optimized")
    names = [op.name for op in module.functions[0].body.block.ops]
    assert names.count("tensor.fused") == 3 and names.count("tensor.gemv") == 1
    classes = [type(node.op).__name__ for node in train.maker.fgraph.toposort()]
    assert classes.count("Elemwise") == 2 and classes.count("FusedReduce") == 1
    assert "CGemv" in classes
    (main,) = [op for op in ops_named(module, "tensor.fused") if len(op.results) == 4]
    assert [r and r.kind for r in main.reduction_list()] == [None, None, None, "sum"]
    data_x = rng.randn(5, 7).astype("float32")
    data_y = rng.randint(0, 2, size=5).astype("float32")
    prediction, err = train(data_x, data_y)
    assert prediction.dtype == np.bool_ and np.isfinite(err).all()


# ---------------------------------------------------------------------------------------------
# The tensor.fused op


def fused_text(body: str, reductions: str = "", result: str = V) -> str:
    attrs = f" {{reductions = {reductions}}}" if reductions else ""
    return f"""func.func @f(%x: {V}) -> {result} {{
  %r = "tensor.fused"(%x) ({{
  ^bb0(%a: f64):
{body}
  }}){attrs} : ({V}) -> {result}
  func.return %r : {result}
}}"""


def test_fused_op_round_trips_and_runs():
    body = '    %e = "scalar.exp"(%a) : (f64) -> f64\n    "scalar.yield"(%e) : (f64) -> ()'
    module = module_from(fused_text(body, '[{kind = "max", axes = [0], keepdims = true}]',
                                    "tensor<1xf64>"))
    x = np.array([0.0, 1.0, -1.0])
    np.testing.assert_allclose(run(module, x)[0], [np.e])
    generic = module_from(fused_text(body))
    np.testing.assert_allclose(run(generic, x)[0], np.exp(x))


VERIFY_ERRORS = [
    ('    "scalar.yield"(%a, %a) : (f64, f64) -> ()', "", "yields 2 values for 1 results"),
    ('    %t = "tensor.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>\n'
     '    "scalar.yield"(%a) : (f64) -> ()', "", "only scalar ops"),
    ('    "scalar.yield"(%a) : (f64) -> ()', '[{kind = "median", axes = [0]}]',
     "unknown reduction kind"),
    ('    "scalar.yield"(%a) : (f64) -> ()', '[{kind = "sum", axes = [1]}]', "axes"),
    ('    %c = "scalar.cast"(%a) : (f64) -> f32\n    "scalar.yield"(%c) : (f32) -> ()', "",
     "does not fit"),
]


@pytest.mark.parametrize("body, reductions, message", VERIFY_ERRORS,
                         ids=[m for _, _, m in VERIFY_ERRORS])
def test_fused_op_verifier(body, reductions, message):
    result = "tensor<f64>" if reductions else V
    with pytest.raises(VerifyError, match=message):
        verify(parse_module(fused_text(body, reductions, result)))


def test_fused_op_body_reads_nothing_from_outside_and_takes_one_argument_per_input():
    x, y = Block([TensorType((None,), F32), TensorType((None,), F32)]).args
    outer = scalar.ConstantOp.build(1.0, F32)
    body = Block([F32])
    body.append(scalar.YieldOp.create([outer.result]))
    reads_outside = FusedOp.build([x], body)
    with pytest.raises(VerifyError, match="does not dominate"):
        verify(reads_outside)
    with pytest.raises(VerifyError, match="defined outside"):
        reads_outside.verify_()
    with pytest.raises(VerifyError, match="takes 1 arguments for 2 inputs"):
        verify(FusedOp.build([x, y], body_from([F32], lambda a: [a])))


def test_fused_op_checks_sizes_at_run_time():
    x, y = Block([TensorType((None,), F64), TensorType((None,), F64)]).args
    op = FusedOp.build([x, y], body_from([F64, F64], lambda a, b: [
        scalar.AddOp.build(a, b).result]))
    module = function_module([x.type, y.type], lambda a, b: [FusedOp.build(
        [a, b], body_from([F64, F64], lambda s, t: [scalar.AddOp.build(s, t).result])).result])
    assert str(op.result.type) == "tensor<?xf64>"
    with pytest.raises(InterpreterError, match="differ in dimension 0"):
        run(module, np.zeros(3), np.zeros(1))


# ---------------------------------------------------------------------------------------------
# Random graphs: fusing keeps every result


UNARY = [tensor.NegOp, tensor.ExpOp, tensor.TanhOp, tensor.SinOp, tensor.AbsOp, tensor.SqrOp,
         tensor.SigmoidOp, tensor.SoftplusOp]
BINARY = [tensor.AddOp, tensor.SubOp, tensor.MulOp, tensor.MaximumOp, tensor.DivOp]
REDUCTIONS = [tensor.SumOp, tensor.MaxOp, tensor.MeanOp, tensor.ProdOp, tensor.MinOp]
INPUT_TYPES = [TensorType(s, F64) for s in ((None, None), (1, None), (None, 1), (1, 1))]
CONSTANTS = [0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -0.5]


@st.composite
def random_graphs(draw):
    """A function of four inputs (a matrix, a row, a column, a 1x1) built from random
    elementwise ops, ops with constant operands, reductions (kept dims, so they feed elementwise
    ops again), selects, softmaxes (not fusible) and fills; some values are results."""
    steps = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 10 ** 6)),
                          min_size=1, max_size=14))
    result_picks = draw(st.lists(st.integers(0, 10 ** 6), max_size=3))

    def build(*inputs):
        pool = list(inputs)
        for kind, seed in steps:
            pick = np.random.default_rng(seed)
            a, b = (pool[int(i)] for i in pick.integers(0, len(pool), size=2))
            if kind == 0:
                value = UNARY[pick.integers(len(UNARY))].build(a).result
            elif kind == 1:
                value = BINARY[pick.integers(len(BINARY))].build(a, b).result
            elif kind == 2:
                axes = [d for d in range(2) if pick.integers(2)] or [0]
                value = REDUCTIONS[pick.integers(len(REDUCTIONS))].build(
                    a, axes, keepdims=True).result
            elif kind == 3:
                condition = tensor.GtOp.build(a, b).result
                value = tensor.SelectOp.build(condition, a, b).result
            elif kind == 4:
                value = tensor.SoftmaxOp.build(a, axis=1).result
            elif kind == 6:  # a constant operand: identities, powers, merged constants
                number = CONSTANTS[pick.integers(len(CONSTANTS))]
                constant = tensor.ConstantOp.build(np.full((1, 1), number)).result
                op_class = (BINARY + [tensor.PowOp])[pick.integers(len(BINARY) + 1)]
                value = op_class.build(*((a, constant) if pick.integers(2) else
                                         (constant, a))).result
            else:
                value = tensor.FillOp.build(a, b).result if all(
                    bd == 1 or bd == ad or ad is None for ad, bd in zip(a.type.shape,
                                                                        b.type.shape)) \
                    else tensor.CosOp.build(a).result
            pool.append(value)
        results = [pool[-1]] + [pool[len(inputs) + i % (len(pool) - len(inputs))]
                                for i in result_picks if len(pool) > len(inputs)]
        final = tensor.SumOp.build(pool[-1], axes=[1]).result  # a reduction result
        return results + [final]

    return function_module(INPUT_TYPES, build)


def random_inputs(seed: int):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in ((3, 4), (1, 4), (3, 1), (1, 1))]


@settings(max_examples=60, deadline=None)
@given(random_graphs(), st.integers(0, 1000), st.sampled_from([32, 2]))
def test_fused_random_graphs_compute_the_same(module, seed, cap):
    after = optimized(module, f"fuse{{max-inputs={cap}}}")
    arrays = random_inputs(seed)
    assert_same_results(module, after, *arrays)
    assert all(len(op.operands) <= cap for op in ops_named(after, "tensor.fused"))
    again = optimized(after, f"fuse{{max-inputs={cap}}}")
    assert_same_results(module, again, *arrays)


@settings(max_examples=30, deadline=None)
@given(random_graphs(), st.integers(0, 1000))
def test_whole_optimization_pipeline_keeps_random_graph_results(module, seed):
    after = optimized(module, "canonicalize,cse,stabilize,specialize,fuse")
    assert_same_results(module, after, *random_inputs(seed), rtol=1e-9)


def test_long_chains_optimize_in_linear_time_without_deep_recursion():
    # 1200 single-use adds, then 1200 single-use muls: every tree reader stops at a depth.
    lines = [f'  %t0 = "tensor.neg"(%x) : ({V}) -> {V}']
    for i in range(1, 2400):
        name = "add" if i < 1200 else "mul"
        lines.append(f'  %t{i} = "tensor.{name}"(%t{i - 1}, %y) : ({V}, {V}) -> {V}')
    text = (f"func.func @f(%x: {V}, %y: {V}) -> {V} {{\n" + "\n".join(lines)
            + f"\n  func.return %t2399 : {V}\n}}")
    module = module_from(text)
    after = optimized(module, "canonicalize,cse,stabilize,specialize,fuse")
    assert op_names(after) == ["tensor.fused"]
    assert_same_results(module, after, np.full(2, 0.25), np.full(2, 0.9995), rtol=1e-9)
