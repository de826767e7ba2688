"""Shape ops: type inference, verifier rules, interpreter against NumPy, grads, folding."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.ir.attributes import ArrayAttr, IntAttr
from lowering.ir.core import VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.types import F32, F64, I1, I32, I64, UI8, TensorType, scalar_type_of
from lowering.dialects.tensor import (AllocOp, ArangeOp, ConcatenateOp, ConstantOp, DimShuffleOp,
                                      FillOp, MakeVectorOp, ReshapeOp, ShapeIOp, ShapeOp)
from lowering.dialects.tensor.typing import ShapeError

from .helpers import check_gradients, evaluate_graph, graph_inputs

DTYPES = ["float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64"]
SETTINGS = settings(max_examples=60, deadline=None)


def const(value, dtype="int64"):
    return ConstantOp.build(np.asarray(value, dtype=dtype)).result


def arrays_of(shape_strategy, dtypes=DTYPES):
    return st.sampled_from(dtypes).flatmap(
        lambda dt: shape_strategy.flatmap(lambda shape: hnp.arrays(dt, shape)))


@st.composite
def typed_array(draw, min_dims=0, max_dims=4, dtypes=DTYPES):
    """An array and a type for it where each dim is static or (unless size 1) ``?``."""
    array = draw(arrays_of(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0,
                                            max_side=4), dtypes))
    dynamic = draw(st.lists(st.booleans(), min_size=array.ndim, max_size=array.ndim))
    shape = tuple(None if dyn and s != 1 else s for s, dyn in zip(array.shape, dynamic))
    return array, TensorType(shape, scalar_type_of(array.dtype))


def run(out, feeds):
    (value,) = evaluate_graph([out], feeds)
    return value


def assert_same(got, expected, type_):
    assert isinstance(got, np.ndarray) and got.dtype == type_.dtype
    assert type_.accepts_shape(got.shape)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------------
# dimshuffle


@st.composite
def dimshuffle_case(draw):
    array, t = draw(typed_array())
    ones = [d for d in range(array.ndim) if t.shape[d] == 1]
    dropped = draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    kept = draw(st.permutations([d for d in range(array.ndim) if d not in dropped]))
    pattern = list(kept)
    for _ in range(draw(st.integers(0, 2))):
        pattern.insert(draw(st.integers(0, len(pattern))), "x")
    return array, t, pattern


@SETTINGS
@given(dimshuffle_case())
def test_dimshuffle_matches_numpy(case):
    array, t, pattern = case
    (x,) = graph_inputs(t)
    out = DimShuffleOp.build(x, pattern).result
    kept = [p for p in pattern if p != "x"]
    dropped = [d for d in range(array.ndim) if d not in kept]
    expected = np.squeeze(array, axis=tuple(dropped))
    remaining = sorted(kept)
    expected = np.transpose(expected, [remaining.index(p) for p in kept])
    for pos, p in enumerate(pattern):
        if p == "x":
            expected = np.expand_dims(expected, pos)
    assert out.type.shape == tuple(1 if p == "x" else t.shape[p] for p in pattern)
    assert_same(run(out, {x: array}), expected, out.type)


def test_dimshuffle_stores_x_as_minus_one_and_prints():
    (x,) = graph_inputs(TensorType((None, 1, 3), F32))
    op = DimShuffleOp.build(x, [2, "x", 0])
    assert op.pattern == (2, -1, 0)
    assert str(op.attributes["pattern"]) == "[2 : i64, -1 : i64, 0 : i64]"
    assert str(op.result.type) == "tensor<3x1x?xf32>"


@pytest.mark.parametrize("pattern, message", [
    ([0, 3], "out of range"),
    ([0, 0, 1], "repeats"),
    ([2, 1], "drops dim 0"),
    ([0, 1, 2, -2], "out of range"),
])
def test_dimshuffle_rejects(pattern, message):
    (x,) = graph_inputs(TensorType((None, 1, 3), F32))
    with pytest.raises(VerifyError, match=f"tensor.dimshuffle: .*{message}"):
        DimShuffleOp.build(x, pattern)


def test_dimshuffle_verifier_checks_result_type():
    (x,) = graph_inputs(TensorType((None, 3), F32))
    op = DimShuffleOp.create([x], [TensorType((3, None, 1), F64)],
                             {"pattern": ArrayAttr((IntAttr(1), IntAttr(0), IntAttr(-1)))})
    with pytest.raises(VerifyError, match="differs from the inferred tensor<3x\\?x1xf32>"):
        op.verify_()
    bad = DimShuffleOp.create([x], [TensorType((3,), F32)], {"pattern": ArrayAttr((IntAttr(1),))})
    with pytest.raises(VerifyError, match="drops dim 0") as info:
        bad.verify_()
    assert info.value.op is bad


@pytest.mark.parametrize("pattern", [[1, "x", 0], ["x", 0, 1, "x"], [0], [1, 0]])
def test_dimshuffle_grad(pattern):
    rng = np.random.default_rng(1)
    shape = (3, 1) if pattern == [0] else (3, 2)
    check_gradients(lambda x: DimShuffleOp.build(x, pattern).result, [rng.normal(size=shape)])


def test_dimshuffle_grad_of_integers_is_none():
    (x,) = graph_inputs(TensorType((2, 3), I32))
    op = DimShuffleOp.build(x, [1, 0])
    (g,) = graph_inputs(op.result.type.with_element(F64))
    assert op.grad([g]) == [None]


def test_dimshuffle_folds_constants():
    op = DimShuffleOp.build(const([[1, 2, 3]], "float32"), [1, 0])
    (folded,) = op.fold()
    np.testing.assert_array_equal(folded.array, [[1], [2], [3]])


# ---------------------------------------------------------------------------------------------
# reshape


@st.composite
def reshape_case(draw):
    array, t = draw(typed_array(max_dims=3))
    size = array.size
    dims, rest = [], size
    for _ in range(draw(st.integers(0, 2))):
        choices = [d for d in range(0, 5) if (d == 0 and rest == 0) or (d and rest % d == 0)]
        d = draw(st.sampled_from(choices))
        dims.append(d)
        rest = rest // d if d else 0
    if size == 0:
        dims.append(draw(st.integers(0, 3)))
        dims[draw(st.integers(0, len(dims) - 1))] = 0
    else:
        dims.append(rest)
    target = draw(st.permutations(dims))
    if draw(st.booleans()) and 0 not in target:
        target[draw(st.integers(0, len(target) - 1))] = -1
    return array, t, list(target)


@SETTINGS
@given(reshape_case(), st.booleans())
def test_reshape_matches_numpy(case, constant_shape):
    array, t, target = case
    x, dyn_shape = graph_inputs(t, TensorType((len(target),), I64))
    shape = const(target) if constant_shape else dyn_shape
    out = ReshapeOp.build(x, shape).result
    expected = array.reshape(target)
    if not constant_shape:
        assert out.type.shape == (None,) * len(target)
    elif None not in t.shape or -1 not in target:
        assert out.type.shape == expected.shape
    feeds = {x: array} if constant_shape else {x: array, dyn_shape: np.array(target, np.int64)}
    assert_same(run(out, feeds), expected, out.type)


def test_reshape_inference_from_make_vector_and_shape():
    x, n = graph_inputs(TensorType((None, 4), F32), TensorType((), I64))
    out = ReshapeOp.build(x, [n, ShapeIOp.build(x, 1).result, 1]).result
    assert str(out.type) == "tensor<?x4x1xf32>"
    back = ReshapeOp.build(out, ShapeOp.build(x).result).result
    assert back.type == x.type
    assert ReshapeOp.build(x, [-1], ndim=1).result.type.shape == (None,)
    with pytest.raises(VerifyError, match="ndim=2 differs"):
        ReshapeOp.build(x, [-1], ndim=2)


def test_reshape_casts_integer_shapes_to_i64():
    x, n = graph_inputs(TensorType((None,), F32), TensorType((), I32))
    op = ReshapeOp.build(x, [n, 2])
    assert op.shape.type == TensorType((2,), I64)
    got = run(op.result, {x: np.arange(6, dtype=np.float32), n: np.int32(3)})
    np.testing.assert_array_equal(got, np.arange(6).reshape(3, 2))


@pytest.mark.parametrize("target, message", [
    ([4, 4], "cannot reshape \\(2, 6\\) into \\(4, 4\\)"),
    ([5, -1], "cannot reshape"),
    ([-1, -1], "more than one -1"),
    ([-3, 2], "negative size"),
])
def test_reshape_static_errors(target, message):
    (x,) = graph_inputs(TensorType((2, 6), F32))
    with pytest.raises(ShapeError, match=f"tensor.reshape: .*{message}"):
        ReshapeOp.build(x, const(target))


def test_reshape_verifier_rules():
    x, s32, sdyn, s2 = graph_inputs(TensorType((2, 6), F32), TensorType((2,), I32),
                                    TensorType((None,), I64), TensorType((2, 1), I64))
    for shape, message in [(s32, "rank-1 i64"), (s2, "rank-1 i64"), (sdyn, "static length")]:
        op = ReshapeOp.create([x, shape], [TensorType((None, None), F32)])
        with pytest.raises(VerifyError, match=f"tensor.reshape: .*{message}"):
            op.verify_()
    wrong = ReshapeOp.create([x, const([3, 4])], [TensorType((4, 3), F32)])
    with pytest.raises(VerifyError, match="differs from the inferred tensor<3x4xf32>"):
        wrong.verify_()
    # A size that later becomes known may stay '?', and a static claim on a dynamic shape stands.
    ReshapeOp.create([x, const([3, 4])], [TensorType((None, 4), F32)]).verify_()
    (dyn,) = graph_inputs(TensorType((2,), I64))
    ReshapeOp.create([x, dyn], [TensorType((3, 4), F32)]).verify_()


def test_reshape_runtime_errors():
    x, shape = graph_inputs(TensorType((None,), F32), TensorType((2,), I64))
    out = ReshapeOp.build(x, shape).result
    with pytest.raises(InterpreterError, match="cannot reshape an array of shape \\(6,\\) into \\(4, -1\\)") as info:
        run(out, {x: np.zeros(6, np.float32), shape: np.array([4, -1])})
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(InterpreterError, match="bad target shape"):
        run(out, {x: np.zeros(6, np.float32), shape: np.array([-1, -1])})
    # The result must also fit a static result type.
    fixed = ReshapeOp.create([x, shape], [TensorType((3, 2), F32)]).result
    with pytest.raises(InterpreterError, match="does not fit the type tensor<3x2xf32>"):
        run(fixed, {x: np.zeros(6, np.float32), shape: np.array([2, 3])})


@pytest.mark.parametrize("static", [True, False])
def test_reshape_grad(static):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2, 3))
    xtype = TensorType((2, 3), F64) if static else TensorType((None, None), F64)
    check_gradients(lambda x, shape: ReshapeOp.build(x, shape).result,
                    [a, np.array([3, 1, -1])], [xtype, TensorType((3,), I64)])


def test_reshape_folds_constants():
    op = ReshapeOp.build(const(np.arange(6), "float64"), const([3, 2]))
    (folded,) = op.fold()
    np.testing.assert_array_equal(folded.array, np.arange(6.0).reshape(3, 2))


# ---------------------------------------------------------------------------------------------
# shape, shape_i, make_vector


@SETTINGS
@given(typed_array())
def test_shape_and_shape_i(case):
    array, t = case
    (x,) = graph_inputs(t)
    shape = ShapeOp.build(x)
    assert str(shape.result.type) == f"tensor<{array.ndim}xi64>"
    assert_same(run(shape.result, {x: array}), np.array(array.shape, np.int64), shape.result.type)
    folded = shape.fold()
    assert (folded is not None) == (None not in t.shape)
    if folded:
        np.testing.assert_array_equal(folded[0].array, array.shape)
    for axis in range(-array.ndim, array.ndim):
        op = ShapeIOp.build(x, axis)
        assert op.axis == axis % array.ndim
        assert_same(run(op.result, {x: array}), np.int64(array.shape[axis]), op.result.type)
        folded = op.fold()
        assert (folded is not None) == (t.shape[axis] is not None)


def test_shape_i_rejects_bad_axes():
    (x,) = graph_inputs(TensorType((None, 3), F32))
    with pytest.raises(VerifyError, match="tensor.shape_i: axis 2 is out of range"):
        ShapeIOp.build(x, 2)
    (s,) = graph_inputs(TensorType((), F32))
    with pytest.raises(VerifyError, match="rank 0 has no axis"):
        ShapeIOp.build(s, 0)
    op = ShapeIOp.create([x], [TensorType((), I64)], {"axis": IntAttr(-1)})
    with pytest.raises(VerifyError, match="axis -1 is out of range"):
        op.verify_()
    op = ShapeIOp.create([x], [TensorType((), I32)], {"axis": IntAttr(0)})
    with pytest.raises(VerifyError,
                       match="tensor.shape_i: the result must be tensor<i64>, got tensor<i32>"):
        op.verify_structure()


def test_shape_verifier_checks_result_type():
    (x,) = graph_inputs(TensorType((None, 3), F32))
    op = ShapeOp.create([x], [TensorType((3,), I64)])
    with pytest.raises(VerifyError, match="tensor.shape: result type tensor<3xi64> differs"):
        op.verify_()


@SETTINGS
@given(st.sampled_from(DTYPES), st.integers(0, 4), st.data())
def test_make_vector(dtype, n, data):
    values = [data.draw(hnp.arrays(dtype, ())) for _ in range(n)]
    inputs = graph_inputs(*[TensorType((), scalar_type_of(dtype))] * n)
    op = MakeVectorOp.build(*inputs, dtype=dtype)
    assert op.result.type == TensorType((n,), scalar_type_of(dtype))
    assert_same(run(op.result, dict(zip(inputs, values))), np.array(values, dtype=dtype).reshape(n),
                op.result.type)


def test_make_vector_rules():
    a, b, v = graph_inputs(TensorType((), F32), TensorType((), F64), TensorType((1,), F32))
    with pytest.raises(VerifyError, match="tensor.make_vector: element #1 must be a rank-0 tensor of f32"):
        MakeVectorOp.build(a, b)
    with pytest.raises(VerifyError, match="element #0 must be a rank-0"):
        MakeVectorOp.build(v)
    with pytest.raises(VerifyError, match="empty vector needs a dtype"):
        MakeVectorOp.build()
    op = MakeVectorOp.create([a, a], [TensorType((3,), F32)])
    with pytest.raises(VerifyError, match="differs from the inferred tensor<2xf32>"):
        op.verify_()
    op = MakeVectorOp.create([a], [TensorType((), F32)])
    with pytest.raises(VerifyError, match="the result must be a rank-1 tensor, got tensor<f32>"):
        op.verify_structure()


def test_make_vector_grad_and_fold():
    check_gradients(lambda a, b: MakeVectorOp.build(a, b).result, [np.array(1.5), np.array(-2.0)])
    (folded,) = MakeVectorOp.build(const(2), const(5)).fold()
    np.testing.assert_array_equal(folded.array, [2, 5])


# ---------------------------------------------------------------------------------------------
# alloc and fill


@st.composite
def alloc_case(draw):
    value, t = draw(typed_array(max_dims=3))
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    dims = lead + [draw(st.integers(0, 3)) if s == 1 else s for s in value.shape]
    constant = draw(st.lists(st.booleans(), min_size=len(dims), max_size=len(dims)))
    return value, t, dims, constant


@SETTINGS
@given(alloc_case())
def test_alloc_matches_numpy(case):
    value, t, dims, constant = case
    x, *dyn = graph_inputs(t, *[TensorType((), I64)] * len(dims))
    operands = [const(d) if c else v for d, c, v in zip(dims, constant, dyn)]
    out = AllocOp.build(x, *operands).result
    lead = len(dims) - value.ndim
    for i, d in enumerate(dims):
        vd = t.shape[i - lead] if i >= lead else 1
        known = constant[i] or (vd is not None and vd != 1)
        assert out.type.shape[i] == (d if known else None)
    feeds = {x: value, **{v: np.int64(d) for v, d in zip(dyn, dims)}}
    assert_same(run(out, feeds), np.broadcast_to(value, dims), out.type)


def test_alloc_accepts_ints_and_other_integer_types():
    v, n = graph_inputs(TensorType((), F32), TensorType((), UI8))
    op = AllocOp.build(v, n, 2)
    assert str(op.result.type) == "tensor<?x2xf32>"
    assert all(d.type == TensorType((), I64) for d in op.dims)
    got = run(op.result, {v: np.float32(7), n: np.uint8(3)})
    assert_same(got, np.full((3, 2), 7, np.float32), op.result.type)


def test_alloc_rules():
    v, m, d32 = graph_inputs(TensorType((3,), F32), TensorType((2, 3), F32), TensorType((), F32))
    with pytest.raises(ShapeError, match="tensor.alloc: value of shape \\(3,\\) cannot broadcast to size 4"):
        AllocOp.build(v, 4)
    with pytest.raises(ShapeError, match="value of rank 2 does not fit 1 dims"):
        AllocOp.build(m, 3)
    with pytest.raises(ShapeError, match="dim #0 is negative"):
        AllocOp.build(v, -1, 3)
    op = AllocOp.create([v, d32], [TensorType((3,), F32)])
    with pytest.raises(VerifyError, match="dim #0 must be a rank-0 i64 tensor"):
        op.verify_()
    op = AllocOp.create([v, const(2), const(3)], [TensorType((2, 3), F64)])
    with pytest.raises(VerifyError, match="differs from the inferred"):
        op.verify_()
    op = AllocOp.create([v, const(2), const(3)], [TensorType((4, 3), F32)])
    with pytest.raises(VerifyError, match="differs from the inferred"):
        op.verify_()


def test_alloc_runtime_errors():
    v, n = graph_inputs(TensorType((None,), F32), TensorType((), I64))
    out = AllocOp.build(v, n).result
    with pytest.raises(InterpreterError, match="shape \\(3,\\) cannot broadcast to \\(4,\\)"):
        run(out, {v: np.zeros(3, np.float32), n: np.int64(4)})
    with pytest.raises(InterpreterError, match="negative dimension"):
        run(out, {v: np.zeros(3, np.float32), n: np.int64(-4)})


def test_alloc_fill_arange_fold_only_small_results():
    (folded,) = AllocOp.build(const(1.5, "float32"), 2, 3).fold()
    np.testing.assert_array_equal(folded.array, np.full((2, 3), 1.5, np.float32))
    assert AllocOp.build(const(0.0, "float32"), 10**6, 10**6).fold() is None
    (folded,) = ArangeOp.build(const(1), const(7), const(2)).fold()
    np.testing.assert_array_equal(folded.array, [1, 3, 5])
    assert ArangeOp.build(const(0.0, "float64"), const(1e12, "float64"), const(1.0, "float64")).fold() is None
    (folded,) = FillOp.build(const([[1, 2]], "int8"), const(0.5, "float32")).fold()
    np.testing.assert_array_equal(folded.array, np.full((1, 2), 0.5, np.float32))


@pytest.mark.parametrize("value_shape, dims", [((), (2, 3)), ((1, 3), (4, 2, 3)), ((2,), (2,))])
def test_alloc_grad(value_shape, dims):
    rng = np.random.default_rng(3)
    value = rng.normal(size=value_shape)
    sizes = [np.int64(d) for d in dims]
    check_gradients(lambda v, *ds: AllocOp.build(v, *ds).result, [value, *sizes],
                    [TensorType(value_shape, F64)] + [TensorType((), I64)] * len(dims))


@SETTINGS
@given(typed_array(max_dims=3), st.sampled_from(DTYPES), st.data())
def test_fill_matches_numpy(case, dtype, data):
    model, t = case
    rank = data.draw(st.integers(0, model.ndim))
    vshape = tuple(data.draw(st.sampled_from([1, s])) for s in model.shape[model.ndim - rank:])
    value = data.draw(hnp.arrays(dtype, vshape))
    m, v = graph_inputs(t, TensorType(vshape, scalar_type_of(dtype)))
    out = FillOp.build(m, v).result
    assert out.type == TensorType(t.shape, scalar_type_of(dtype))
    assert_same(run(out, {m: model, v: value}), np.broadcast_to(value, model.shape), out.type)


def test_fill_rules():
    m, v, w = graph_inputs(TensorType((None, 3), F32), TensorType((2, 2, 3), F64),
                           TensorType((4,), F64))
    with pytest.raises(ShapeError, match="tensor.fill: value of rank 3 is higher"):
        FillOp.build(m, v)
    with pytest.raises(ShapeError, match="value of shape \\(4,\\) cannot broadcast to the model's shape \\(\\?, 3\\)"):
        FillOp.build(m, w)
    op = FillOp.create([m, const(1.0, "float64")], [TensorType((None, 3), F32)])
    with pytest.raises(VerifyError, match="differs from the inferred tensor<\\?x3xf64>"):
        op.verify_()
    (dyn,) = graph_inputs(TensorType((None,), F64))
    out = FillOp.build(m, dyn).result
    with pytest.raises(InterpreterError, match="cannot broadcast to the model's shape"):
        run(out, {m: np.zeros((2, 3), np.float32), dyn: np.zeros(2)})


def test_fill_grad():
    rng = np.random.default_rng(4)
    # The model only gives the shape: an integer model checks that it gets no gradient.
    check_gradients(lambda m, v: FillOp.build(m, v).result,
                    [np.zeros((3, 2), np.int8), rng.normal(size=(1, 2))])
    m, v, g = graph_inputs(TensorType((3, 2), F64), TensorType((), F64), TensorType((3, 2), F64))
    model_grad, value_grad = FillOp.build(m, v).grad([g])
    assert model_grad is None and value_grad.type == v.type


# ---------------------------------------------------------------------------------------------
# arange


@SETTINGS
@given(st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint32", "float32", "float64"]),
       st.integers(-6, 6), st.integers(-6, 6), st.integers(-3, 3).filter(bool), st.booleans())
def test_arange_matches_numpy(dtype, start, stop, step, constant):
    if dtype.startswith("u"):
        start, stop, step = abs(start), abs(stop), abs(step)
    element = scalar_type_of(dtype)
    values = [np.asarray(v, dtype=dtype) for v in (start, stop, step)]
    inputs = graph_inputs(*[TensorType((), element)] * 3)
    operands = [const(v, dtype) for v in values] if constant else inputs
    out = ArangeOp.build(*operands).result
    expected = np.arange(start, stop, step, dtype=dtype)
    assert out.type.shape == ((len(expected),) if constant else (None,))
    assert_same(run(out, dict(zip(inputs, values))), expected, out.type)


def test_arange_rules():
    a, b, f, t = graph_inputs(TensorType((), I64), TensorType((), I32), TensorType((), F32),
                              TensorType((), I1))
    with pytest.raises(VerifyError, match="tensor.arange: start, stop and step must have one element type"):
        ArangeOp.build(a, b, a)
    with pytest.raises(VerifyError, match="start must be an integer or float tensor"):
        ArangeOp.build(t, t, t)
    (v,) = graph_inputs(TensorType((1,), I64))
    with pytest.raises(VerifyError, match="stop must be a rank-0 tensor"):
        ArangeOp.build(a, v, a)
    with pytest.raises(VerifyError, match="step must not be zero"):
        ArangeOp.build(const(0), const(3), const(0))
    op = ArangeOp.create([a, a, a], [TensorType((None,), F32)])
    with pytest.raises(VerifyError, match="differs from the inferred tensor<\\?xi64>"):
        op.verify_()
    out = ArangeOp.build(a, a, a).result
    with pytest.raises(InterpreterError, match="step must not be zero"):
        run(out, {a: np.int64(0)})
    assert ArangeOp.build(a, a, a).grad([None]) == [None, None, None]


# ---------------------------------------------------------------------------------------------
# concatenate


@st.composite
def concatenate_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    base = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    axis = draw(st.integers(-rank, rank - 1))
    arrays, types = [], []
    for _ in range(draw(st.integers(1, 3))):
        shape = list(base)
        shape[axis] = draw(st.integers(0, 3))
        arrays.append(draw(hnp.arrays(dtype, tuple(shape))))
        dynamic = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        types.append(TensorType(tuple(None if dyn else s for s, dyn in zip(shape, dynamic)),
                                scalar_type_of(dtype)))
    return arrays, types, axis


@SETTINGS
@given(concatenate_case())
def test_concatenate_matches_numpy(case):
    arrays, types, axis = case
    inputs = graph_inputs(*types)
    out = ConcatenateOp.build(inputs, axis=axis).result
    expected = np.concatenate(arrays, axis=axis)
    for d, size in enumerate(out.type.shape):
        dims = [t.shape[d] for t in types]
        if d == axis % len(dims and types[0].shape):
            assert size == (None if None in dims else expected.shape[d])
        else:
            assert size == (None if all(s is None for s in dims) else expected.shape[d])
    assert_same(run(out, dict(zip(inputs, arrays))), expected, out.type)


def test_concatenate_rules():
    a, b, c, s = graph_inputs(TensorType((2, 3), F32), TensorType((2, 4), F32),
                              TensorType((2, 3), F64), TensorType((), F32))
    with pytest.raises(ShapeError, match="tensor.concatenate: shapes \\(2, 3\\), \\(2, 4\\) differ in dim 1"):
        ConcatenateOp.build(a, b, axis=0)
    with pytest.raises(VerifyError, match="operand #1 of type tensor<2x3xf64> differs"):
        ConcatenateOp.build(a, c)
    with pytest.raises(VerifyError, match="axis 2 is out of range"):
        ConcatenateOp.build(a, a, axis=2)
    with pytest.raises(VerifyError, match="rank-0"):
        ConcatenateOp.build(s, s)
    with pytest.raises(VerifyError, match="at least one operand"):
        ConcatenateOp.build()
    op = ConcatenateOp.create([a, b], [TensorType((2, 7), F32)], {"axis": IntAttr(-1)})
    with pytest.raises(VerifyError, match="axis -1 is out of range"):
        op.verify_()
    op = ConcatenateOp.create([a, b], [TensorType((2, None), F32)], {"axis": IntAttr(1)})
    with pytest.raises(VerifyError, match="differs from the inferred tensor<2x7xf32>"):
        op.verify_()


def test_concatenate_runtime_error():
    a, b = graph_inputs(TensorType((None, None), F32), TensorType((None, None), F32))
    out = ConcatenateOp.build(a, b, axis=1).result
    with pytest.raises(InterpreterError, match="differ outside axis 1"):
        run(out, {a: np.zeros((2, 3), np.float32), b: np.zeros((3, 3), np.float32)})


@pytest.mark.parametrize("dims", ["static", "dynamic", "mixed"])
def test_concatenate_grad(dims):
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=(2, 3)), rng.normal(size=(2, 1)), rng.normal(size=(2, 2))]
    types = {
        "static": [TensorType(a.shape, F64) for a in arrays],
        "dynamic": None,
        "mixed": [TensorType((2, None), F64), TensorType((2, 1), F64), TensorType((None, 2), F64)],
    }[dims]
    check_gradients(lambda *xs: ConcatenateOp.build(*xs, axis=1).result, arrays, types)


# ---------------------------------------------------------------------------------------------
# Text round trip of every structural op


def test_structural_ops_print_parse_and_verify():
    """Shape, indexing, dot and softmax ops print, parse back to the same text, and verify."""
    from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
    from lowering.dialects.tensor import (AdvancedIncSubtensorOp, AdvancedSubtensorOp, DotOp,
                                          IncSubtensorOp, LogSoftmaxOp, SetSubtensorOp, SoftmaxOp,
                                          SubtensorOp)
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op
    from lowering.ir.verifier import verify

    from .helpers import topological_ops

    types = [TensorType((None, 4), F32), TensorType((), I64), TensorType((None,), I64),
             TensorType((4,), F32)]
    inputs = graph_inputs(*types)
    x, i, idx, w = inputs
    d = DimShuffleOp.build(x, [1, "x", 0]).result
    r = ReshapeOp.build(x, [i, 2, -1]).result
    n = ShapeIOp.build(x, 0).result
    a = AllocOp.build(const(0.5, "float32"), n, 4).result
    f = FillOp.build(x, const(1, "int8")).result
    ar = ArangeOp.build(const(0), i, const(1)).result
    c = ConcatenateOp.build(x, a, axis=0).result
    sub = SubtensorOp.build(x, (slice(i, None, 2), -1)).result
    st_ = SetSubtensorOp.build(x, w, i).result
    inc = IncSubtensorOp.build(x, sub, (slice(i, None, 2), 3)).result
    adv = AdvancedSubtensorOp.build(x, (idx, slice(1, None))).result
    ainc = AdvancedIncSubtensorOp.build(x, adv, (idx, slice(1, None))).result
    dot = DotOp.build(x, w).result
    sm = SoftmaxOp.build(x).result
    lsm = LogSoftmaxOp.build(x, 0).result
    outs = [d, r, ShapeOp.build(x).result, f, ar, c, st_, inc, ainc, dot, sm, lsm,
            MakeVectorOp.build(n, i).result]
    func = FuncOp.build("f", types, [v.type for v in outs])
    for placeholder, arg in zip(inputs, func.args):
        placeholder.replace_all_uses_with(arg)
    block = func.body.block
    for op in topological_ops(outs, func.args):
        block.append(op)
    block.append(ReturnOp.create(outs))
    module = ModuleOp.build([func])
    verify(module)
    text = print_op(module)
    assert '["slice", "?", "none", 2], ["index", -1]' in text
    parsed = parse_module(text)
    verify(parsed)
    assert print_op(parsed) == text
