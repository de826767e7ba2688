"""The tensor dialect's canonicalization patterns: each rewrite happens, keeps the interpreter's
results, and does not happen where it would change them."""
import numpy as np
import pytest

from lowering.dialects.tensor import MulOp, SumOp
from lowering.dialects.tensor.canonical import same_value, splat, strip_neg
from lowering.ir.core import Block
from lowering.ir.types import F64, TensorType

from .opt_helpers import check_pass, module_from, op_names, optimized, ops_named, run

V = "tensor<?xf64>"
RNG = np.random.default_rng(0)
X = RNG.normal(size=5)


def const(name: str, value, type_: str = "tensor<1xf64>") -> str:
    return f'  %{name} = "tensor.constant"() {{value = dense<{value}> : {type_}}} : () -> {type_}'


def op(result: str, name: str, operands: str, types: str, out: str = V) -> str:
    return f'  %{result} = "tensor.{name}"({operands}) : ({types}) -> {out}'


def function(lines, arg: str = V, out: str = V) -> str:
    body = "\n".join(lines)
    return f"func.func @f(%x: {arg}) -> {out} {{\n{body}\n  func.return %r : {out}\n}}"


BINARY = f"{V}, tensor<1xf64>"

# name, body lines, ops left after canonicalize
IDENTITIES = [
    ("x + 0", [const("c", "0.0"), op("r", "add", "%x, %c", BINARY)], []),
    ("0 + x", [const("c", "0.0"), op("r", "add", "%c, %x", f"tensor<1xf64>, {V}")], []),
    ("x - 0", [const("c", "0.0"), op("r", "sub", "%x, %c", BINARY)], []),
    ("0 - x", [const("c", "0.0"), op("r", "sub", "%c, %x", f"tensor<1xf64>, {V}")],
     ["tensor.neg"]),
    ("x * 1", [const("c", "1.0"), op("r", "mul", "%c, %x", f"tensor<1xf64>, {V}")], []),
    ("x * -1", [const("c", "-1.0"), op("r", "mul", "%x, %c", BINARY)], ["tensor.neg"]),
    ("x / 1", [const("c", "1.0"), op("r", "div", "%x, %c", BINARY)], []),
    ("pow(x, 1)", [const("c", "1.0"), op("r", "pow", "%x, %c", BINARY)], []),
    ("pow(x, 0)", [const("c", "0.0"), op("r", "pow", "%x, %c", BINARY)], ["tensor.fill"]),
    ("neg(neg(x))", [op("n", "neg", "%x", V), op("r", "neg", "%n", V)], []),
    ("x - neg(y)", [op("n", "neg", "%x", V), op("r", "sub", "%x, %n", f"{V}, {V}")],
     ["tensor.add"]),
    ("x + neg(y)", [op("e", "exp", "%x", V), op("n", "neg", "%x", V),
                    op("r", "add", "%n, %e", f"{V}, {V}")], ["tensor.exp", "tensor.sub"]),
    ("(x * 2) * 3", [const("a", "2.0"), const("b", "3.0"), op("m", "mul", "%x, %a", BINARY),
                     op("r", "mul", "%b, %m", f"tensor<1xf64>, {V}")], ["tensor.mul"]),
    ("(x + 2) + 3", [const("a", "2.0"), const("b", "3.0"), op("m", "add", "%a, %x",
                                                              f"tensor<1xf64>, {V}"),
                     op("r", "add", "%m, %b", BINARY)], ["tensor.add"]),
]


@pytest.mark.parametrize("name, lines, left", IDENTITIES, ids=[c[0] for c in IDENTITIES])
def test_algebraic_identities(name, lines, left):
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.0])
    after = check_pass(function(lines), "canonicalize", np.concatenate([X, special]))
    assert op_names(after) == left


def test_merged_constant_is_the_product():
    lines = [const("a", "2.0"), const("b", "3.0"), op("m", "mul", "%x, %a", BINARY),
             op("r", "mul", "%b, %m", f"tensor<1xf64>, {V}")]
    after = optimized(module_from(function(lines)), "canonicalize")
    (mul,) = ops_named(after, "tensor.mul")
    assert splat(mul.rhs) == 6.0 or splat(mul.lhs) == 6.0


I = "tensor<?xi32>"
INT_BINARY = f"{I}, tensor<1xi32>"


def test_integer_times_zero_and_self_difference_are_zeros():
    lines = [const("c", "0", "tensor<1xi32>"), op("m", "mul", "%x, %c", INT_BINARY, I),
             op("s", "sub", "%x, %x", f"{I}, {I}", I), op("r", "add", "%m, %s", f"{I}, {I}", I)]
    x = np.array([3, -7, 2**31 - 1], dtype=np.int32)
    after = check_pass(function(lines, I, I), "canonicalize", x)
    assert op_names(after) == ["tensor.fill"]
    assert run(after, x)[0].tolist() == [0, 0, 0]


def test_float_times_zero_and_self_difference_stay():
    lines = [const("c", "0.0"), op("m", "mul", "%x, %c", BINARY),
             op("s", "sub", "%x, %x", f"{V}, {V}"), op("r", "add", "%m, %s", f"{V}, {V}")]
    x = np.array([np.inf, np.nan, 1.0])
    after = check_pass(function(lines), "canonicalize", x)
    assert op_names(after) == ["tensor.mul", "tensor.sub", "tensor.add"]
    assert np.isnan(run(after, x)[0][:2]).all()


def test_identity_that_would_change_the_shape_stays():
    # x + zeros(3) broadcasts x of type 1 to 3: removing the add would change the type.
    lines = [const("c", "0.0", "tensor<3xf64>"),
             op("r", "add", "%x, %c", "tensor<1xf64>, tensor<3xf64>", "tensor<3xf64>")]
    after = check_pass(function(lines, "tensor<1xf64>", "tensor<3xf64>"), "canonicalize",
                       np.array([2.0]))
    assert op_names(after) == ["tensor.add"]


CASTS = [
    # exact inner cast: merged; identity cast: gone
    ("i8 -> i32 -> f64", "tensor<?xi8>", [
        '  %a = "tensor.cast"(%x) {to = i32} : (tensor<?xi8>) -> tensor<?xi32>',
        '  %r = "tensor.cast"(%a) {to = f64} : (tensor<?xi32>) -> tensor<?xf64>'], 1),
    ("i8 -> i16 -> i8", "tensor<?xi8>", [
        '  %a = "tensor.cast"(%x) {to = i16} : (tensor<?xi8>) -> tensor<?xi16>',
        '  %r = "tensor.cast"(%a) {to = i8} : (tensor<?xi16>) -> tensor<?xi8>'], 0),
    # f64 -> f32 rounds: the second cast cannot skip it
    ("f64 -> f32 -> f64", "tensor<?xf64>", [
        '  %a = "tensor.cast"(%x) {to = f32} : (tensor<?xf64>) -> tensor<?xf32>',
        '  %r = "tensor.cast"(%a) {to = f64} : (tensor<?xf32>) -> tensor<?xf64>'], 2),
    ("i32 -> i8 -> i32", "tensor<?xi32>", [
        '  %a = "tensor.cast"(%x) {to = i8} : (tensor<?xi32>) -> tensor<?xi8>',
        '  %r = "tensor.cast"(%a) {to = i32} : (tensor<?xi8>) -> tensor<?xi32>'], 2),
]


@pytest.mark.parametrize("name, arg, lines, casts", CASTS, ids=[c[0] for c in CASTS])
def test_casts(name, arg, lines, casts):
    out = lines[-1].rsplit("-> ", 1)[1]
    x = np.array([1, -100, 127, 300, 70000]).astype(arg.split("x")[-1].rstrip(">").replace(
        "i", "int").replace("f", "float"))
    after = check_pass(function(lines, arg, out), "canonicalize", x)
    assert len(ops_named(after, "tensor.cast")) == casts


M = "tensor<?x?xf64>"


def test_dimshuffles_merge_and_identities_go():
    first = ('  %a = "tensor.dimshuffle"(%x) {pattern = [1, -1, 0]} : '
             f'({M}) -> tensor<?x1x?xf64>')
    merged = [first, '  %r = "tensor.dimshuffle"(%a) {pattern = [2, 1, 0]} : '
                     '(tensor<?x1x?xf64>) -> tensor<?x1x?xf64>']
    x = RNG.normal(size=(2, 3))
    after = check_pass(function(merged, M, "tensor<?x1x?xf64>"), "canonicalize", x)
    (shuffle,) = ops_named(after, "tensor.dimshuffle")
    assert shuffle.pattern == (0, -1, 1)
    identity = [first, f'  %r = "tensor.dimshuffle"(%a) {{pattern = [2, 0]}} : '
                       f'(tensor<?x1x?xf64>) -> {M}']
    after = check_pass(function(identity, M, M), "canonicalize", x)
    assert op_names(after) == []  # the merged pattern [0, 1] keeps every dim in place


def test_reshape_identities():
    lines = ['  %s = "tensor.shape"(%x) : (tensor<?x?xf64>) -> tensor<2xi64>',
             '  %c = "tensor.constant"() {value = dense<-1> : tensor<1xi64>} : () -> '
             'tensor<1xi64>',
             f'  %a = "tensor.reshape"(%x, %c) : ({M}, tensor<1xi64>) -> tensor<?xf64>',
             f'  %r = "tensor.reshape"(%a, %s) : (tensor<?xf64>, tensor<2xi64>) -> {M}']
    after = check_pass(function(lines, M, M), "canonicalize", RNG.normal(size=(2, 3)))
    assert op_names(after) == []  # reshape(reshape(x, [-1]), shape(x)) is x


SHAPES = [
    ("elementwise", [op("e", "exp", "%x", M, M)], "%e", (0, 0)),
    ("dimshuffle", ['  %e = "tensor.dimshuffle"(%x) {pattern = [1, 0]} : '
                    f'({M}) -> {M}'], "%e", (1, 0)),
    ("sum", ['  %e = "tensor.sum"(%x) {axes = [0], keepdims = false} : '
             f'({M}) -> tensor<?xf64>'], "%e", (0, 1)),
    ("dot", [op("e", "dot", "%x, %x", f"{M}, {M}", M)], "%e", (0, 0)),
]


@pytest.mark.parametrize("name, lines, value, axes", SHAPES, ids=[c[0] for c in SHAPES])
def test_shape_i_reads_the_input(name, lines, value, axes):
    out_axis, in_axis = axes
    text = function(lines + [f'  %r = "tensor.shape_i"({value}) {{axis = {out_axis}}} : '
                             f'({lines[-1].rsplit("-> ", 1)[1]}) -> tensor<i64>'],
                    M, "tensor<i64>")
    after = check_pass(text, "canonicalize", RNG.normal(size=(3, 3)))
    (shape_i,) = ops_named(after, "tensor.shape_i")
    assert shape_i.input is after.functions[0].args[0] and shape_i.axis == in_axis
    assert op_names(after) == ["tensor.shape_i"]  # the op itself is dead now


def test_shape_of_alloc_is_its_dims():
    text = """func.func @f(%v: tensor<f64>, %n: tensor<i64>) -> (tensor<2xi64>, tensor<i64>) {
  %a = "tensor.alloc"(%v, %n, %n) : (tensor<f64>, tensor<i64>, tensor<i64>) -> tensor<?x?xf64>
  %r = "tensor.shape"(%a) : (tensor<?x?xf64>) -> tensor<2xi64>
  %i = "tensor.shape_i"(%a) {axis = 1} : (tensor<?x?xf64>) -> tensor<i64>
  func.return %r, %i : tensor<2xi64>, tensor<i64>
}"""
    after = check_pass(text, "canonicalize", np.float64(1.5), np.int64(4))
    assert op_names(after) == ["tensor.make_vector"]


def test_fill_sinks_and_goes_where_another_operand_gives_the_shape():
    # mul(neg(fill(m, c)), y): the fill moves out of the neg, then y gives the shape.
    text = f"""func.func @f(%m: {V}, %y: {V}) -> {V} {{
{const("c", "0.25")}
  %f = "tensor.fill"(%m, %c) : ({V}, tensor<1xf64>) -> {V}
  %n = "tensor.neg"(%f) : ({V}) -> {V}
  %r = "tensor.mul"(%n, %y) : ({V}, {V}) -> {V}
  func.return %r : {V}
}}"""
    after = check_pass(text, "canonicalize", X, X * 2)
    assert op_names(after) == ["tensor.mul"]


def test_fill_of_a_lone_operand_stays_outside():
    text = f"""func.func @f(%m: {V}) -> {V} {{
{const("c", "0.25")}
  %f = "tensor.fill"(%m, %c) : ({V}, tensor<1xf64>) -> {V}
  %r = "tensor.exp"(%f) : ({V}) -> {V}
  func.return %r : {V}
}}"""
    after = check_pass(text, "canonicalize", X)
    assert op_names(after) == ["tensor.fill"]  # exp of the constant folded; fill is last


def test_reduction_of_dimshuffle_and_dropped_kept_dims():
    text = f"""func.func @f(%x: {M}) -> (tensor<f64>, tensor<?xf64>) {{
  %t = "tensor.dimshuffle"(%x) {{pattern = [1, -1, 0]}} : ({M}) -> tensor<?x1x?xf64>
  %s = "tensor.sum"(%t) {{axes = [0, 1, 2], keepdims = false}} : (tensor<?x1x?xf64>) -> tensor<f64>
  %k = "tensor.max"(%x) {{axes = [1], keepdims = true}} : ({M}) -> tensor<?x1xf64>
  %d = "tensor.dimshuffle"(%k) {{pattern = [0]}} : (tensor<?x1xf64>) -> tensor<?xf64>
  func.return %s, %d : tensor<f64>, tensor<?xf64>
}}"""
    after = check_pass(text, "canonicalize", RNG.normal(size=(3, 4)))
    assert op_names(after) == ["tensor.sum", "tensor.max"]
    (total,) = ops_named(after, "tensor.sum")
    assert total.input is after.functions[0].args[0]
    assert not ops_named(after, "tensor.max")[0].keepdims


def test_argmax_of_a_transpose_keeps_the_transpose():
    text = f"""func.func @f(%x: {M}) -> tensor<i64> {{
  %t = "tensor.dimshuffle"(%x) {{pattern = [1, 0]}} : ({M}) -> {M}
  %r = "tensor.argmax"(%t) {{axes = [0, 1], keepdims = false}} : ({M}) -> tensor<i64>
  func.return %r : tensor<i64>
}}"""
    after = check_pass(text, "canonicalize", RNG.normal(size=(3, 4)))
    assert op_names(after) == ["tensor.dimshuffle", "tensor.argmax"]


def test_matching_helpers():
    x, y = Block([TensorType((None,), F64), TensorType((None,), F64)]).args
    a, b = MulOp.build(x, y).result, MulOp.build(y, x).result
    assert same_value(a, b) and not same_value(a, x)
    assert same_value(SumOp.build(a).result, SumOp.build(b).result)
    assert strip_neg(a) == (False, a)
