"""Operators and math functions: the ops they build, dtype promotion, weak Python scalars,
broadcasting by dimshuffle, and values against NumPy."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering.tensor as T
from lowering.config import config
from lowering.frontend.errors import GraphTypeError

from .helpers import evaluate, float64_by_default  # noqa: F401 (autouse)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"]


def op_names(var):
    """The IR op names on the path from var to its inputs, outermost first."""
    names, op = [], var.value.op
    while op is not None:
        names.append(op.name)
        op = next((v.op for v in op.operands if hasattr(v, "op") and v.op.name != "tensor.constant"),
                  None)
    return names


@pytest.mark.parametrize("sym, short, reflected", [
    (operator.add, "add", "add"), (operator.sub, "sub", "sub"), (operator.mul, "mul", "mul"),
    (operator.truediv, "div", "div"), (operator.floordiv, "floordiv", "floordiv"),
    (operator.mod, "mod", "mod"), (operator.pow, "pow", "pow"),
    # 2.0 < x is x.__gt__(2.0): Python reflects comparisons to their mirror.
    (operator.lt, "lt", "gt"), (operator.le, "le", "ge"), (operator.gt, "gt", "lt"),
    (operator.ge, "ge", "le"),
])
def test_binary_operators_build_their_op(sym, short, reflected):
    x, y = T.matrix("x"), T.matrix("y")
    assert sym(x, y).value.op.name == f"tensor.{short}"
    assert sym(x, 2.0).value.op.name == f"tensor.{short}"
    out = sym(2.0, x)
    assert out.value.op.name == f"tensor.{reflected}"
    first = out.value.op.operands[0]
    assert (first is x.value) == (short != reflected)
    data = np.array([[1.0, 2.0], [3.0, 4.0]])
    with np.errstate(all="ignore"):
        assert np.allclose(evaluate(out, {x: data}), sym(2.0, data))


@pytest.mark.parametrize("sym, short", [
    (operator.and_, "and"), (operator.or_, "or"), (operator.xor, "xor")])
def test_logical_operators(sym, short):
    a, b = T.bvector("a"), T.ivector("b")
    out = sym(a, b)
    assert out.value.op.name == f"tensor.{short}" and out.dtype == "int32"
    assert sym(a > 0, b > 0).dtype == "bool"
    got = evaluate(sym(a, b), {a: np.array([1, 6], "int8"), b: np.array([3, 5], "int32")})
    assert np.array_equal(got, sym(np.array([1, 6], "int8"), np.array([3, 5], "int32")))


def test_unary_operators():
    x = T.vector("x")
    assert (-x).value.op.name == "tensor.neg"
    assert abs(x).value.op.name == "tensor.abs"
    assert (+x) is x
    assert (~T.ivector()).value.op.name == "tensor.not"
    assert (~(x > 0)).dtype == "bool"


def test_bitwise_ops_reject_floats_naming_the_op():
    x = T.vector("x")
    with pytest.raises(GraphTypeError, match="tensor.and: .*integer or boolean.*float64"):
        x & x
    with pytest.raises(TypeError, match="tensor.not"):
        ~x


def test_logistic_regression_stays_float32():
    x, w, b = T.fmatrix("x"), T.fvector("w"), T.fscalar("b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -T.fvector("y") * T.log(p_1) - (1 - T.fvector("y")) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    assert (p_1.dtype, xent.dtype, cost.dtype) == ("float32", "float32", "float32")
    # No op computes in float64 anywhere in the graph.
    from lowering.frontend.graph import toposort
    assert all(r.type.dtype.name in ("float32", "int64", "bool")
               for op in toposort([cost.value]) for r in op.results)


@pytest.mark.parametrize("tensor, scalar, dtype", [
    ("float32", 2, "float32"), ("float32", 2.5, "float32"), ("float64", 2.5, "float64"),
    ("int8", 1, "int8"), ("int8", 1000, "int16"), ("int32", 1, "int32"), ("uint8", -1, "int16"),
    ("int32", 0.5, "float64"), ("int8", 0.5, "float64"), ("bool", 1, "int64"), ("bool", True, "int8"),
    ("float16", 3.0, "float16"),
])
def test_python_scalars_are_weak(tensor, scalar, dtype):
    x = T.tensor(tensor, (False,))
    assert (x + scalar).dtype == dtype
    assert (scalar + x).dtype == dtype


def test_float_scalar_with_small_int_tensor_under_float32():
    with config.change_flags(floatX="float32"):
        assert (T.bvector() * 0.5).dtype == "float32"
        assert (T.ivector() * 0.5).dtype == "float64"  # int32 * float32 upcasts, as NumPy
        assert (T.constant(0.5)).dtype == "float32"


@pytest.mark.parametrize("a, b, dtype", [
    ("int32", "int32", "float64"), ("int8", "int16", "float64"), ("float32", "int8", "float32"),
    ("float32", "int32", "float64"), ("float32", "float32", "float32")])
def test_true_division(a, b, dtype):
    out = T.tensor(a, (False,)) / T.tensor(b, (False,))
    assert out.dtype == dtype and out.value.op.name == "tensor.div"


def test_true_division_of_small_ints_under_float32():
    with config.change_flags(floatX="float32"):
        assert (T.bvector() / T.wvector()).dtype == "float32"
        assert (T.ivector() / T.ivector()).dtype == "float64"
        assert T.exp(T.bvector()).dtype == "float32"


def test_real_functions_of_integers_cast_first():
    i = T.ivector("i")
    y = T.exp(i)
    assert y.dtype == "float64"
    assert op_names(y) == ["tensor.exp", "tensor.cast"]
    assert np.allclose(evaluate(y, {i: np.array([0, 1])}), [1.0, np.e])


def test_boolean_arithmetic_computes_in_int8():
    a = T.tensor("bool", (False,))
    assert (a + a).dtype == "int8"
    assert np.array_equal(evaluate(a + a, {a: np.array([True, False])}), [2, 0])


def test_upcasting_inserts_casts():
    x, y = T.bvector("x"), T.fvector("y")
    z = x + y
    assert z.dtype == "float32"
    lhs = z.value.op.operands[0]
    assert lhs.op.name == "tensor.cast" and str(lhs.type) == "tensor<?xf32>"


def test_lower_rank_operands_get_leading_broadcastable_dims():
    m, v = T.matrix("m"), T.vector("v")
    z = m + v
    rhs = z.value.op.operands[1]
    assert rhs.op.name == "tensor.dimshuffle" and rhs.op.pattern == (-1, 0)
    assert z.broadcastable == (False, False)
    c = (m * 2.0).value.op.operands[1]
    assert c.op.name == "tensor.constant" and str(c.type) == "tensor<1x1xf64>"
    data = {m: np.arange(6.0).reshape(2, 3), v: np.array([1.0, 2.0, 3.0])}
    assert np.allclose(evaluate(z, data), data[m] + data[v])


def test_numpy_data_keeps_its_dtype():
    x = T.fvector("x")
    assert (x + np.ones(3)).dtype == "float64"
    assert (x + np.float64(2)).dtype == "float64"
    assert (x + np.float32(2)).dtype == "float32"
    assert (x + [1, 2, 3]).dtype == "float64"  # a list is int64 data


def test_comparisons_give_booleans_and_compare_in_the_promoted_type():
    x = T.bvector("x")
    c = x > 1.5
    assert c.dtype == "bool" and c.value.op.operands[0].type.dtype.name == "float64"
    assert np.array_equal(evaluate(c, {x: np.array([1, 2], "int8")}), [False, True])


def test_switch_clip_cast():
    x = T.fvector("x")
    s = T.switch(x > 0, x, 0)
    assert s.dtype == "float32" and s.value.op.name == "tensor.select"
    s2 = T.switch(T.ivector("c"), 1.0, x)  # a non-boolean condition means != 0
    assert s2.value.op.operands[0].op.name == "tensor.ne"
    c = x.clip(-1, 1)
    assert c.dtype == "float32" and c.value.op.name == "tensor.clip"
    assert T.cast(x, "float32") is x and x.astype("float64").dtype == "float64"
    assert T.cast(x, "floatX").dtype == config.floatX
    data = np.array([-2.0, 0.5, 3.0], "float32")
    assert np.allclose(evaluate([s, c], {x: data})[0], [0, 0.5, 3])
    assert np.allclose(evaluate(c, {x: data}), [-1, 0.5, 1])


NUMPY_FUNCTIONS = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "sqr": np.square, "abs": np.abs, "neg": np.negative, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "arcsin": np.arcsin,
    "arctan": np.arctan, "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "sgn": np.sign, "inv": np.reciprocal, "log2": np.log2, "log10": np.log10,
    "exp2": np.exp2, "trunc": np.trunc, "isnan": np.isnan, "isinf": np.isinf,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "softplus": lambda v: np.log1p(np.exp(v)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_FUNCTIONS))
def test_math_functions_match_numpy(name):
    x = T.vector("x")
    data = np.array([0.1, 0.5, 0.9, 0.25])
    assert np.allclose(evaluate(getattr(T, name)(x), {x: data}), NUMPY_FUNCTIONS[name](data))


@pytest.mark.parametrize("name, reference", [
    ("maximum", np.maximum), ("minimum", np.minimum), ("pow", np.power), ("mod", np.mod),
    ("int_div", np.floor_divide), ("true_div", np.true_divide), ("arctan2", np.arctan2),
    ("eq", np.equal), ("neq", np.not_equal), ("lt", np.less), ("ge", np.greater_equal)])
def test_binary_functions_match_numpy(name, reference):
    x, y = T.vector("x"), T.vector("y")
    a, b = np.array([1.5, -2.0, 3.0]), np.array([2.0, 0.5, 3.0])
    if name == "pow":
        a = np.abs(a)
    assert np.allclose(evaluate(getattr(T, name)(x, y), {x: a, y: b}), reference(a, b))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       st.sampled_from(["add", "sub", "mul", "maximum", "lt"]))
def test_tensor_promotion_matches_numpy(a, b, name):
    x, y = T.tensor(a, (False,)), T.tensor(b, (False,))
    if name in ("add", "sub", "mul") and (a, b) == ("bool", "bool"):
        expected = "int8"
    else:
        expected = "bool" if name == "lt" else str(np.result_type(a, b))
    out = getattr(T, name)(x, y)
    assert out.dtype == expected
    xa, ya = np.array([1, 0, 1]).astype(a), np.array([1, 1, 0]).astype(b)
    ref = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply",
                       "maximum": "maximum", "lt": "less"}[name])
    with np.errstate(all="ignore"):
        want = ref(xa.astype(expected if expected != "bool" else np.result_type(a, b)),
                   ya.astype(expected if expected != "bool" else np.result_type(a, b)))
    assert np.array_equal(evaluate(out, {x: xa, y: ya}), want)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["int8", "int32", "float32", "float64"]),
       st.one_of(st.integers(-100, 100), st.floats(-10, 10, allow_nan=False)))
def test_weak_scalar_values_match_numpy(dtype, scalar):
    x = T.tensor(dtype, (False,))
    out = x * scalar
    data = np.array([1, 2, 3]).astype(dtype)
    np.testing.assert_allclose(evaluate(out, {x: data}),
                               data.astype(out.dtype) * np.asarray(scalar, out.dtype), rtol=1e-6)
