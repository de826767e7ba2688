"""T.Rop and T.Lop through every op with a gradient rule, against finite differences.

``OP_CASES`` builds, for each op class of the tensor dialect with a ``grad`` rule, a small
expression of a vector ``x`` and a matrix ``m`` that goes through it; a test checks that the
table covers every such class (and that each has an R-op rule), so a new op with a gradient must
come with its forward-mode rule and its row here. Values are interpreted (no compilation); a few
cases are also compiled.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.dialects.tensor import DIALECT, R_OP
from lowering.dialects.tensor.checks import CheckOp
from lowering.frontend.elemwise import elementwise
from lowering.frontend.errors import DisconnectedInputError, GraphBuildError, GraphTypeError
from lowering.frontend.graph import toposort
from lowering.frontend.random_streams import RandomStreams
from lowering.frontend.variable import wrap
from lowering.ifelse import ifelse

from .helpers import evaluate, float64_by_default, numeric_jacobian  # noqa: F401 (autouse)
from .python_ops import TwiceOp


UNARY = ["neg", "abs", "sign", "sqr", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
         "sqrt", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
         "tanh", "arcsinh", "arctanh", "sigmoid", "softplus", "erf", "floor", "ceil", "round",
         "round_half_away_from_zero", "trunc"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "arctan2", "mod", "floordiv"]
# Ops whose results are integers or booleans: no tangent, no cotangent.
NOT_DIFFERENTIABLE = {
    "eq": lambda x, m: T.eq(m, x), "ne": lambda x, m: T.neq(m, x),
    "lt": lambda x, m: T.lt(m, x), "le": lambda x, m: T.le(m, x),
    "gt": lambda x, m: T.gt(m, x), "ge": lambda x, m: T.ge(m, x),
    "and": lambda x, m: T.and_(x > 0.5, m > 0.5), "or": lambda x, m: T.or_(x > 0.5, m > 0.5),
    "xor": lambda x, m: T.xor(x > 0.5, m > 0.5), "not": lambda x, m: T.invert(m > 0.5),
    "isnan": lambda x, m: T.isnan(m * x), "isinf": lambda x, m: T.isinf(m * x),
    "argmax": lambda x, m: T.argmax(m * x, axis=1), "argmin": lambda x, m: T.argmin(m + x),
    "shape": lambda x, m: (m * x).shape, "shape_i": lambda x, m: (m + x).shape[1],
    "arange": lambda x, m: T.arange(T.cast(x.sum() * 4, "int64")),
    "random": lambda x, m: RandomStreams(seed=3).uniform(size=(m * x).shape),
    "argsort": lambda x, m: T.argsort(m * x, axis=0),
}


def _unary(name):
    if name == "arccosh":
        return lambda x, m: elementwise("arccosh", m + 1.5) * x
    return lambda x, m: elementwise(name, m) * x


def _binary(name):
    return lambda x, m: elementwise(name, m + 0.1, x + 0.5)


OP_CASES = {
    **{f"tensor.{n}": _unary(n) for n in UNARY + ["arccosh"]},
    **{f"tensor.{n}": _binary(n) for n in BINARY},
    "tensor.select": lambda x, m: T.switch(m > 0.5, m * 2, x),
    "tensor.clip": lambda x, m: T.clip(m, 0.3, x + 0.2),
    "tensor.cast": lambda x, m: T.cast(m * x, "float32"),
    "tensor.dimshuffle": lambda x, m: m.dimshuffle(1, "x", 0) * x.dimshuffle(0, "x", "x"),
    "tensor.reshape": lambda x, m: (m * x).reshape((2, 6)),
    "tensor.make_vector": lambda x, m: T.stack([x[0] * m[1, 2], x[3]]),
    "tensor.alloc": lambda x, m: T.alloc(x[1] * m[0, 0], 2, 3),
    "tensor.fill": lambda x, m: T.fill(m, x[2] * x[0]),
    "tensor.concatenate": lambda x, m: T.concatenate([m, x.dimshuffle("x", 0) ** 2], axis=0),
    "tensor.subtensor": lambda x, m: m[1:, ::2] * x[1:3],
    "tensor.set_subtensor": lambda x, m: T.set_subtensor(m[1:, 1], x[:2] ** 2),
    "tensor.inc_subtensor": lambda x, m: T.inc_subtensor(m[:, 1:3], x[:2] ** 2),
    "tensor.advanced_subtensor": lambda x, m: m[[0, 2, 2]] * x,
    "tensor.advanced_set_subtensor": lambda x, m: T.set_subtensor(m[[2, 0]], m[:2] * x),
    "tensor.advanced_inc_subtensor": lambda x, m: T.inc_subtensor(x[[0, 1, 0]], m[0, :3]),
    "tensor.dot": lambda x, m: T.dot(m, x) * T.dot(x, m.T).sum(),
    "tensor.softmax": lambda x, m: T.nnet.softmax(m * x),
    "tensor.log_softmax": lambda x, m: T.nnet.logsoftmax(m * x),
    "tensor.sum": lambda x, m: (m * x).sum(axis=0),
    "tensor.mean": lambda x, m: (m * x).mean(axis=1, keepdims=True),
    "tensor.prod": lambda x, m: (m * x).prod(axis=1),
    "tensor.max": lambda x, m: (m * x).max(axis=0),
    "tensor.min": lambda x, m: (m + x).min(),
    # grad_clip bounds the gradient, not the value: the finite differences agree only while
    # the gradient reaching it, u * (m x) with |u| <= 1 and m x < 0.64, stays inside [-1, 1].
    "tensor.grad_filter": lambda x, m: theano.gradient.grad_clip(m * x, -1, 1) ** 2 * 0.5,
    "tensor.custom": lambda x, m: TwiceOp()(m * x),
    "tensor.if": lambda x, m: ifelse(T.gt(x.sum(), 2.0), T.exp(m * x), m + x) * x,
    "tensor.check": lambda x, m: _checked(m * x, T.gt(x.sum(), 0.0)) ** 2,
    "tensor.conv2d": lambda x, m: T.nnet.conv2d(m.reshape((1, 1, 3, 4)),
                                                (x ** 2).reshape((1, 1, 2, 2))),
    "tensor.specify_shape": lambda x, m: T.specify_shape(m * x, (3, 4)) ** 2,
    "tensor.pool2d": lambda x, m: T.signal.pool.pool_2d((m * x).reshape((1, 3, 4)), ws=(2, 2),
                                                        ignore_border=False) ** 2,
    "tensor.cumsum": lambda x, m: T.cumsum(m * x, axis=1),
    "tensor.cumprod": lambda x, m: T.cumprod(m * x, axis=0),
    # Complex numbers on the way from real inputs to a real result.
    "tensor.complex": lambda x, m: abs(T.complex(m, x)),
    "tensor.real": lambda x, m: T.real(T.sqr(T.complex(m, x))),
    "tensor.imag": lambda x, m: T.imag(T.exp(T.complex(m, x))),
    "tensor.angle": lambda x, m: T.angle(T.complex(m, x) * T.complex(x, m)),
    "tensor.conj": lambda x, m: T.real(T.conj(T.complex(m, x)) * T.complex(x, m * m)),
    "tensor.complex_from_polar": lambda x, m: T.imag(T.complex_from_polar(m, x) / (x + 1j)),
    "tensor.scan": lambda x, m: theano.scan(lambda row, h, x: T.tanh(row * h + x), sequences=m,
                                            outputs_info=x, non_sequences=x)[0],
}

# The special functions (their own elementwise ops), away from the gamma functions' poles.
OP_CASES.update({
    f"tensor.{n}": (lambda fn: lambda x, m: fn(m + 0.5) * x)(getattr(T, n))
    for n in ("erfc", "gammaln", "gamma", "j0", "j1")})


def _checked(value, condition):
    """``value`` behind a run-time check (as random draws with symbolic parameters get)."""
    return wrap(CheckOp.build(value.value, condition.value, "a check that holds").result)

rng = np.random.default_rng(7)


def _point(seed: int):
    r = np.random.default_rng(seed)
    return (r.uniform(0.2, 0.8, 4), r.uniform(0.2, 0.8, (3, 4)),
            r.uniform(-1, 1, 4), r.uniform(-1, 1, (3, 4)))


def _symbols():
    return T.vector("x"), T.matrix("m")


def _with_grad():
    return {cls for cls in DIALECT.ops if getattr(cls, "grad", None) is not None}


def test_every_op_with_a_grad_rule_has_an_r_op_rule():
    """A rule, or a reason declared in the table (which ``Rop`` then gives)."""
    missing = sorted(cls.name for cls in _with_grad() if R_OP.find(cls) is None
                     and R_OP.unsupported_reason(cls) is None)
    assert not missing, f"ops with a grad rule but no R-op rule: {missing}"
    declared = sorted(cls.name for cls in _with_grad() if R_OP.unsupported_reason(cls))
    assert declared == []


def test_the_table_reaches_every_op_with_an_r_op_rule():
    x, m = _symbols()
    reached = set()
    for make in [*OP_CASES.values(), *NOT_DIFFERENTIABLE.values()]:
        reached |= {op.name for op in toposort([make(x, m).value])}
    with_rule = {cls.name for cls in _with_grad() if R_OP.find(cls) is not None}
    assert with_rule <= reached, f"no case goes through {sorted(with_rule - reached)}"


def _case(name: str):
    """The inputs, their eval points and the expression of ``OP_CASES[name]``."""
    x, m = _symbols()
    return x, m, T.vector("vx"), T.matrix("vm"), OP_CASES[name](x, m)


def _directional(f, x, m, values):
    xv, mv, vx, vm = values
    eps = 1e-3 if f.dtype == "float32" else 1e-6
    up = evaluate(f, {x: xv + eps * vx, m: mv + eps * vm})
    down = evaluate(f, {x: xv - eps * vx, m: mv - eps * vm})
    return (np.asarray(up, dtype=np.float64) - np.asarray(down, dtype=np.float64)) / (2 * eps)


@pytest.mark.parametrize("name", sorted(OP_CASES))
@settings(max_examples=4)
@given(seed=st.integers(0, 2 ** 16))
def test_rop_matches_finite_differences(name, seed):
    x, m, vx, vm, f = _case(name)
    r = T.Rop(f, [x, m], [vx, vm])
    assert r.value.type == f.value.type
    values = _point(seed)
    xv, mv, vxv, vmv = values
    got = evaluate(r, {x: xv, m: mv, vx: vxv, vm: vmv})
    tol = 1e-3 if f.dtype == "float32" else 1e-5
    np.testing.assert_allclose(got, _directional(f, x, m, values), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(OP_CASES))
@settings(max_examples=2)
@given(seed=st.integers(0, 2 ** 16))
def test_lop_is_the_transposed_product(name, seed):
    """<u, J v> from Rop equals <J^T u, v> from Lop, and J^T u matches finite differences."""
    x, m, vx, vm, f = _case(name)
    u = T.TensorType(f.dtype, f.broadcastable)("u")
    lx, lm = T.Lop(f, [x, m], u, disconnected_inputs="ignore")
    xv, mv, vxv, vmv = _point(seed)
    uv = np.random.default_rng(seed + 1).uniform(-1, 1, evaluate(f, {x: xv, m: mv}).shape)
    feeds = {x: xv, m: mv, u: uv}
    gx, gm = evaluate([lx, lm], feeds)
    jv = evaluate(T.Rop(f, [x, m], [vx, vm]), {**feeds, vx: vxv, vm: vmv})
    tol = 1e-3 if f.dtype == "float32" else 1e-6
    np.testing.assert_allclose(np.sum(uv * jv), np.sum(gx * vxv) + np.sum(gm * vmv),
                               rtol=tol, atol=tol)
    eps = 1e-3 if f.dtype == "float32" else 1e-6
    numeric = np.zeros_like(xv)
    for i in range(xv.size):
        step = np.zeros_like(xv)
        step[i] = eps
        up = evaluate((u * f).sum(), {x: xv + step, m: mv, u: uv})
        down = evaluate((u * f).sum(), {x: xv - step, m: mv, u: uv})
        numeric[i] = (up - down) / (2 * eps)
    np.testing.assert_allclose(gx, numeric, rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_integer_results_are_disconnected(name):
    x, m = _symbols()
    f = NOT_DIFFERENTIABLE[name](x, m)
    with pytest.raises(DisconnectedInputError, match="does not depend"):
        T.Rop(f, [x, m], [x, m])
    zero = T.Rop(f, [x, m], [x, m], disconnected_outputs="ignore")
    assert zero.value.type == f.value.type
    assert T.Rop(f, x, x, disconnected_outputs="ignore", return_disconnected="None") is None


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_compiled_rop_and_lop(mode):
    W, V = T.matrices("W", "V")
    x, u = T.vectors("x", "u")
    y = T.tanh(T.dot(W, x))
    f = theano.function([W, V, x, u], [T.Rop(y, W, V), T.Lop(y, W, u)], mode=mode)
    Wv, Vv, xv, uv = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=4), \
        rng.normal(size=3)
    rop, lop = f(Wv, Vv, xv, uv)
    slope = 1 - np.tanh(Wv @ xv) ** 2
    np.testing.assert_allclose(rop, slope * (Vv @ xv))
    np.testing.assert_allclose(lop, np.outer(uv * slope, xv))


def test_the_tutorials_rop_takes_w_though_the_tangent_does_not_read_it():
    # Theano's tutorial: y is linear in W, so its tangent along W does not read W; Theano's
    # unused-input check (on the graph before optimization) lets W be given all the same.
    W, V = T.dmatrices("W", "V")
    x = T.dvector("x")
    JV = T.Rop(T.dot(x, W), W, V)
    f = theano.function([W, V, x], JV)
    np.testing.assert_array_equal(f([[1, 1], [1, 1]], [[2, 2], [2, 2]], [0, 1]), [2.0, 2.0])
    np.testing.assert_array_equal(theano.function([V, x], JV)([[2, 2], [2, 2]], [0, 1]),
                                  [2.0, 2.0])
    # What the expression does not read stays unused: a stray input still raises, and a
    # tangent changed afterwards is an expression of its own.
    z = T.dvector("z")
    with pytest.raises(theano.compile.UnusedInputError, match="input #3 'z'"):
        theano.function([W, V, x, z], JV)
    with pytest.raises(theano.compile.UnusedInputError, match="input #0 'W'"):
        theano.function([W, V, x], JV * 2)


def test_list_and_tuple_structure_is_kept():
    x, v = T.vectors("x", "v")
    a, b = T.exp(x), T.sin(x)
    assert isinstance(T.Rop([a, b], x, v), list)
    assert isinstance(T.Rop((a, b), [x], [v]), tuple)
    assert isinstance(T.Lop(a, [x], v), list) and not isinstance(T.Lop(a, x, v), list)
    assert T.Rop(x, x, v) is not None  # f itself in wrt: the eval point


def test_rop_wrt_an_intermediate_variable():
    x, v = T.vectors("x", "v")
    h = T.exp(x)
    r = T.Rop(T.sin(h), h, v)
    xv, vv = np.array([0.1, 0.4]), np.array([1.0, -2.0])
    np.testing.assert_allclose(evaluate(r, {x: xv, v: vv}), np.cos(np.exp(xv)) * vv)


def test_eval_point_of_the_wrong_dimensionality_names_it_and_the_line():
    x, m = T.vector("x"), T.matrix("m")
    with pytest.raises(GraphBuildError, match=r"test_rop_lop.py:\d+: Rop: eval_points\[0\].*"
                                              r"dimensionality 2.*has 1") as info:
        T.Rop(T.exp(x), x, m)
    assert "test_rop_lop.py" in str(info.value)
    with pytest.raises(GraphBuildError, match=r"Lop: eval_points\[0\]"):
        T.Lop(T.exp(x), x, m)


def test_eval_point_of_a_wrong_static_size():
    x = T.tensor("float64", shape=(3,), name="x")
    v = T.tensor("float64", shape=(4,), name="v")
    with pytest.raises(GraphBuildError, match=r"eval_points\[0\] has 4 elements along axis 0"):
        T.Rop(x * 2, x, v)


def test_bad_arguments():
    x = T.vector("x")
    with pytest.raises(GraphBuildError, match="eval_points has 1 element.*2 variable"):
        T.Rop(x * 2, [x, x], [x])
    with pytest.raises(GraphTypeError, match=r"wrt\[0\] must be a symbolic variable"):
        T.Rop(x * 2, np.ones(3), x)
    with pytest.raises(GraphTypeError, match=r"eval_points\[0\] must be a tensor"):
        T.Rop(x * 2, x, object())
    with pytest.raises(ValueError, match="disconnected_outputs"):
        T.Rop(x * 2, x, x, disconnected_outputs="loud")
    with pytest.raises(ValueError, match="return_disconnected"):
        T.Rop(x * 2, x, x, return_disconnected="nothing")


def test_eval_points_of_another_dtype_are_cast():
    x = T.vector("x")
    v = T.fvector("v")
    r = T.Rop(x ** 2, x, v)
    assert r.dtype == "float64"
    np.testing.assert_allclose(evaluate(r, {x: np.array([3.0]), v: np.array([2.0])}), [12.0])


def test_an_op_without_an_r_op_names_itself():
    class NoROp(TwiceOp):
        R_op = theano.Op.R_op

    x = T.vector("x")
    with pytest.raises(Exception, match="defines no R_op"):
        T.Rop(NoROp()(x), x, x)


# A scan's reverse sweep is a scan, which has no batching rule either (test_scan_grad.py).
@pytest.mark.parametrize("name", sorted(set(OP_CASES) - {"tensor.custom", "tensor.scan"}))
def test_jacobian_batches_the_reverse_sweep_of_every_op(name):
    """The rows of the jacobian come from one batched reverse sweep (run-time lengths), so the
    gradient of every op must batch; a Python op cannot, and says so."""
    x, m, _, _, f = _case(name)
    f = f.flatten()
    Jx, Jm = T.jacobian(f, [x, m], disconnected_inputs="ignore")
    xv, mv, _, _ = _point(3)
    got = evaluate([Jx, Jm], {x: xv, m: mv})

    def fn(a, b):
        return np.asarray(evaluate(f, {x: a, m: b}), dtype=np.float64)

    eps, tol = (1e-3, 1e-3) if f.dtype == "float32" else (1e-6, 1e-6)
    for k, value in enumerate(got):
        np.testing.assert_allclose(value, numeric_jacobian(fn, [xv, mv], k, eps),
                                   rtol=1e-4, atol=tol)


def test_jacobian_through_a_python_op_of_run_time_length_names_it():
    x, m, _, _, f = _case("tensor.custom")
    with pytest.raises(GraphBuildError, match="tensor.custom .*cannot yet be batched"):
        T.jacobian(f.flatten(), x)
