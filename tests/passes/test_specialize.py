"""``specialize``: small powers, reciprocals, and scaled products folded into gemv/gemm; the
``tensor.gemv``/``tensor.gemm`` ops themselves."""
import numpy as np
import pytest

from lowering.dialects.tensor import GemmOp, GemvOp
from lowering.dialects.tensor.canonical import splat
from lowering.frontend.theano_ops import theano_op
from lowering.ir.core import Block, VerifyError
from lowering.ir.parser import parse_module
from lowering.ir.types import F32, F64, I32, TensorType
from lowering.ir.verifier import verify

from .opt_helpers import check_pass, module_from, op_names, optimized, ops_named, run

V = "tensor<?xf64>"
RNG = np.random.default_rng(1)
X = np.array([0.5, 1.5, 2.0, 3.25, 7.0, 1e-3])

POWERS = [
    ("2.0", ["tensor.sqr"]),
    ("3.0", ["tensor.sqr", "tensor.mul"]),
    ("4.0", ["tensor.sqr", "tensor.sqr"]),
    ("0.5", ["tensor.sqrt"]),
    ("-0.5", ["tensor.sqrt", "tensor.reciprocal"]),
    ("-1.0", ["tensor.reciprocal"]),
    ("-2.0", ["tensor.sqr", "tensor.reciprocal"]),
    ("5.0", ["tensor.pow"]),
    ("2.5", ["tensor.pow"]),
]


def power_function(exponent: str, element: str = "f64") -> str:
    t, c = f"tensor<?x{element}>", f"tensor<1x{element}>"
    return f"""func.func @f(%x: {t}) -> {t} {{
  %c = "tensor.constant"() {{value = dense<{exponent}> : {c}}} : () -> {c}
  %r = "tensor.pow"(%x, %c) : ({t}, {c}) -> {t}
  func.return %r : {t}
}}"""


@pytest.mark.parametrize("exponent, ops", POWERS, ids=[p[0] for p in POWERS])
def test_small_float_powers(exponent, ops):
    after = check_pass(power_function(exponent), "specialize", X, rtol=1e-14)
    assert op_names(after) == ops


@pytest.mark.parametrize("exponent, ops", [("2", ["tensor.sqr"]), ("3", ["tensor.sqr", "tensor.mul"]),
                                           ("-1", ["tensor.pow"]), ("-2", ["tensor.pow"])])
def test_integer_powers_wrap_like_pow_and_negative_ones_stay(exponent, ops):
    x = np.array([3, -7, 1, 0, 40000, -1], dtype=np.int32)
    after = check_pass(power_function(exponent, "i32"), "specialize", x)
    assert op_names(after) == ops


def test_reciprocal_and_square():
    text = f"""func.func @f(%x: {V}) -> {V} {{
  %c = "tensor.constant"() {{value = dense<1.0> : tensor<1xf64>}} : () -> tensor<1xf64>
  %i = "tensor.div"(%c, %x) : (tensor<1xf64>, {V}) -> {V}
  %r = "tensor.mul"(%i, %i) : ({V}, {V}) -> {V}
  func.return %r : {V}
}}"""
    after = check_pass(text, "specialize", np.append(X, [0.0, -np.inf]))
    assert op_names(after) == ["tensor.reciprocal", "tensor.sqr"]


# ---------------------------------------------------------------------------------------------
# gemv and gemm

M = "tensor<?x?xf32>"
F = "tensor<?xf32>"


def test_logistic_regression_update_is_one_gemv():
    # w - 0.01 * (0.02 * w + dot(x.T, g)) is gemv(w, -0.01, x.T, g, 0.9998), as in Theano.
    text = f"""func.func @f(%x: {M}, %g: {F}, %w: {F}) -> {F} {{
  %lr = "tensor.constant"() {{value = dense<0.01> : tensor<1xf32>}} : () -> tensor<1xf32>
  %k = "tensor.constant"() {{value = dense<0.02> : tensor<1xf32>}} : () -> tensor<1xf32>
  %xt = "tensor.dimshuffle"(%x) {{pattern = [1, 0]}} : ({M}) -> {M}
  %d = "tensor.dot"(%xt, %g) : ({M}, {F}) -> {F}
  %kw = "tensor.mul"(%w, %k) : ({F}, tensor<1xf32>) -> {F}
  %s = "tensor.add"(%kw, %d) : ({F}, {F}) -> {F}
  %u = "tensor.mul"(%lr, %s) : (tensor<1xf32>, {F}) -> {F}
  %r = "tensor.sub"(%w, %u) : ({F}, {F}) -> {F}
  func.return %r : {F}
}}"""
    x = RNG.normal(size=(6, 4)).astype(np.float32)
    g, w = RNG.normal(size=6).astype(np.float32), RNG.normal(size=4).astype(np.float32)
    after = check_pass(text, "specialize", x, g, w, rtol=1e-6)
    assert op_names(after) == ["tensor.dimshuffle", "tensor.gemv"]
    (gemv,) = ops_named(after, "tensor.gemv")
    assert gemv.acc is after.functions[0].args[2]
    assert splat(gemv.alpha) == pytest.approx(-0.01) and splat(gemv.beta) == pytest.approx(0.9998)
    assert str(theano_op(gemv)) == "CGemv{no_inplace}"


def test_matrix_products_become_gemm_and_vector_matrix_a_transposed_gemv():
    text = f"""func.func @f(%a: {M}, %b: {M}, %c: {M}, %v: {F}, %y: {F}) -> ({M}, {F}) {{
  %two = "tensor.constant"() {{value = dense<2.0> : tensor<1x1xf32>}} : () -> tensor<1x1xf32>
  %p = "tensor.dot"(%a, %b) : ({M}, {M}) -> {M}
  %s = "tensor.mul"(%p, %two) : ({M}, tensor<1x1xf32>) -> {M}
  %r = "tensor.sub"(%s, %c) : ({M}, {M}) -> {M}
  %q = "tensor.dot"(%v, %a) : ({F}, {M}) -> {F}
  %t = "tensor.add"(%y, %q) : ({F}, {F}) -> {F}
  func.return %r, %t : {M}, {F}
}}"""
    a, b, c = (RNG.normal(size=(3, 3)).astype(np.float32) for _ in range(3))
    v, y = (RNG.normal(size=3).astype(np.float32) for _ in range(2))
    after = check_pass(text, "specialize", a, b, c, v, y, rtol=1e-5)
    (gemm,) = ops_named(after, "tensor.gemm")
    assert splat(gemm.alpha) == 2.0 and splat(gemm.beta) == -1.0
    assert str(theano_op(gemm)) == "Gemm{no_inplace}"
    (gemv,) = ops_named(after, "tensor.gemv")
    assert gemv.lhs.op.name == "tensor.dimshuffle" and gemv.lhs.op.pattern == (1, 0)


def test_a_product_used_twice_or_without_accumulator_stays_a_dot():
    text = f"""func.func @f(%a: {M}, %v: {F}, %y: {F}) -> ({F}, {F}) {{
  %half = "tensor.constant"() {{value = dense<0.5> : tensor<1xf32>}} : () -> tensor<1xf32>
  %d = "tensor.dot"(%a, %v) : ({M}, {F}) -> {F}
  %s = "tensor.add"(%y, %d) : ({F}, {F}) -> {F}
  %e = "tensor.dot"(%a, %y) : ({M}, {F}) -> {F}
  %h = "tensor.mul"(%e, %half) : ({F}, tensor<1xf32>) -> {F}
  %r = "tensor.add"(%s, %d) : ({F}, {F}) -> {F}
  func.return %r, %h : {F}, {F}
}}"""
    a = RNG.normal(size=(3, 3)).astype(np.float32)
    v, y = (RNG.normal(size=3).astype(np.float32) for _ in range(2))
    after = check_pass(text, "specialize", a, v, y, rtol=1e-6)
    assert not ops_named(after, "tensor.gemv")


def test_integer_products_are_not_blas():
    t, mt = "tensor<?xi32>", "tensor<?x?xi32>"
    text = f"""func.func @f(%a: {mt}, %v: {t}, %y: {t}) -> {t} {{
  %d = "tensor.dot"(%a, %v) : ({mt}, {t}) -> {t}
  %r = "tensor.add"(%y, %d) : ({t}, {t}) -> {t}
  func.return %r : {t}
}}"""
    a, v = np.arange(9, dtype=np.int32).reshape(3, 3), np.arange(3, dtype=np.int32)
    after = check_pass(text, "specialize", a, v, v)
    assert op_names(after) == ["tensor.dot", "tensor.add"]


def test_gemv_and_gemm_semantics():
    y, s, a, x = Block([TensorType((None,), F64), TensorType((), F64),
                        TensorType((None, 3), F64), TensorType((3,), F64)]).args
    op = GemvOp.build(y, s, a, x, s)
    assert str(op.result.type) == "tensor<?xf64>"
    module = parse_module(f"""func.func @f(%y: {V}, %s: tensor<f64>, %t: tensor<f64>,
                                  %a: tensor<?x?xf64>, %x: {V}) -> {V} {{
  %r = "tensor.gemv"(%y, %s, %a, %x, %t) : ({V}, tensor<f64>, tensor<?x?xf64>, {V},
                                            tensor<f64>) -> {V}
  func.return %r : {V}
}}""")
    verify(module)
    am, xv = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    yv = np.array([1.0, np.nan])
    (got,) = run(module, yv, np.float64(2.0), np.float64(0.0), am, xv)
    np.testing.assert_allclose(got, 2.0 * am @ xv)  # beta = 0: y is not read, its NaN neither
    (got,) = run(module, yv, np.float64(2.0), np.float64(3.0), am, xv)
    assert np.isnan(got[1]) and got[0] == pytest.approx(3.0 + 2.0 * (am @ xv)[0])
    c, b = Block([TensorType((None, 4), F32), TensorType((3, None), F32)]).args
    af, alpha = Block([TensorType((None, 3), F32), TensorType((), F32)]).args
    assert str(GemmOp.build(c, alpha, af, b, alpha).result.type) == "tensor<?x4xf32>"


def test_blas_verifier_errors():
    y, s, a, x, xi = Block([TensorType((None,), F64), TensorType((), F64),
                            TensorType((None, 3), F64), TensorType((4,), F64),
                            TensorType((3,), I32)]).args
    with pytest.raises(VerifyError, match="A of shape .* and x of shape .* do not agree"):
        GemvOp.build(y, s, a, x, s)
    with pytest.raises(VerifyError, match="one element type"):
        GemvOp.build(y, s, a, xi, s)
    with pytest.raises(VerifyError, match="alpha must have rank 0"):
        GemvOp.build(y, y, a, y, s)
    (one,) = Block([TensorType((1,), F64)]).args
    (x3,) = Block([TensorType((3,), F64)]).args
    with pytest.raises(VerifyError, match="would broadcast"):
        GemvOp.build(one, s, a, x3, s)
    text = f"""func.func @f(%y: {V}, %s: tensor<f64>, %a: tensor<?x?xf64>) -> tensor<3xf64> {{
  %r = "tensor.gemv"(%y, %s, %a, %y, %s) : ({V}, tensor<f64>, tensor<?x?xf64>, {V},
                                            tensor<f64>) -> tensor<3xf64>
  func.return %r : tensor<3xf64>
}}"""
    with pytest.raises(VerifyError, match="differs from the inferred"):
        verify(parse_module(text))


def test_specialize_keeps_the_interpreter_results_of_the_optimized_logistic_regression():
    module = module_from(f"""func.func @f(%x: {M}, %w: {F}) -> {F} {{
  %c = "tensor.constant"() {{value = dense<2.0> : tensor<1xf32>}} : () -> tensor<1xf32>
  %p = "tensor.pow"(%w, %c) : ({F}, tensor<1xf32>) -> {F}
  %d = "tensor.dot"(%x, %w) : ({M}, {F}) -> {F}
  %r = "tensor.sub"(%d, %p) : ({F}, {F}) -> {F}
  func.return %r : {F}
}}""")
    after = optimized(module, "specialize")
    assert op_names(after) == ["tensor.sqr", "tensor.gemv"]
    x = RNG.normal(size=(3, 3)).astype(np.float32)
    w = RNG.normal(size=3).astype(np.float32)
    np.testing.assert_allclose(run(after, x, w)[0], run(module, x, w)[0], rtol=1e-6)
