"""Indexing ops: the spec attribute, type inference, verifier rules, interpreter against NumPy,
grads and folding."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.ir.attributes import ArrayAttr, IntAttr, StringAttr
from lowering.ir.core import VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.parser import parse_attribute
from lowering.ir.types import F16, F32, F64, I8, I32, I64, UI8, TensorType, scalar_type_of
from lowering.dialects.tensor import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp,
                                      AdvancedSubtensorOp, ArangeOp, ConstantOp, IncSubtensorOp,
                                      SetSubtensorOp, ShapeIOp, SubtensorOp)
from lowering.dialects.tensor.indexing import (DYN, ArrayIndex, Index, Slice, decode_spec,
                                               encode_spec)
from lowering.dialects.tensor.typing import ShapeError

from .helpers import check_gradients, evaluate_graph, graph_inputs

DTYPES = ["float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64"]
INDEX_DTYPES = ["int8", "int16", "int32", "int64"]
SETTINGS = settings(max_examples=50, deadline=None)


def const(value, dtype="int64"):
    return ConstantOp.build(np.asarray(value, dtype=dtype)).result


def run(out, feeds):
    (value,) = evaluate_graph([out], feeds)
    return value


def assert_same(got, expected, type_):
    assert isinstance(got, np.ndarray) and got.dtype == type_.dtype
    assert type_.accepts_shape(got.shape)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------------
# The spec attribute


def test_spec_prints_parses_and_decodes():
    entries = (Index(DYN), Index(-1), Slice(1, None, None), Slice(DYN, DYN, -2), ArrayIndex())
    spec = encode_spec(entries)
    assert str(spec) == ('[["index", "?"], ["index", -1 : i64], ["slice", 1 : i64, "none", "none"], '
                         '["slice", "?", "?", -2 : i64], ["array"]]')
    assert parse_attribute(str(spec)) == spec
    assert decode_spec(parse_attribute(str(spec))) == entries


@pytest.mark.parametrize("text, message", [
    ('[["index"]]', "is not"),
    ('[["slice", 1 : i64]]', "is not"),
    ('[["range", 1 : i64]]', "is not"),
    ('[["index", "none"]]', "cannot be absent"),
    ('[["index", "x"]]', "is not an integer"),
    ('[["slice", 1.0 : f32, "none", "none"]]', "is not an integer"),
    ('[3 : i64]', "is not"),
])
def test_malformed_specs_are_rejected(text, message):
    (x,) = graph_inputs(TensorType((4,), F32))
    op = SubtensorOp.create([x], [TensorType((), F32)], {"spec": parse_attribute(text)})
    with pytest.raises(VerifyError, match=f"tensor.subtensor: .*{message}"):
        op.verify_()


def test_build_canonicalizes_the_spec():
    x, i = graph_inputs(TensorType((None, 4, 5), F32), TensorType((), I64))
    a = SubtensorOp.build(x, (1, slice(0, None, 1), slice(None)))
    b = SubtensorOp.build(x, 1)
    assert a.attributes["spec"] == b.attributes["spec"] == encode_spec([Index(1)])
    c = SubtensorOp.build(x, (Ellipsis, i))
    assert c.entries == (Slice(), Slice(), Index(DYN))
    assert list(c.indices) == [i]
    # start 0 matters for negative steps
    assert SubtensorOp.build(x, slice(0, None, -1)).entries == (Slice(0, None, -1),)


# ---------------------------------------------------------------------------------------------
# Basic indexing


@st.composite
def basic_case(draw, min_dims=1):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=0, max_side=5))
    array = draw(hnp.arrays(dtype, shape))
    dynamic_dims = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    xtype = TensorType(tuple(None if d and s != 1 else s for s, d in zip(shape, dynamic_dims)),
                       scalar_type_of(dtype))
    entries = []   # (kind, parts) with parts (value, dynamic)
    for size in shape[:draw(st.integers(0, len(shape)))]:
        if size and draw(st.booleans()):
            entries.append(("index", [(draw(st.integers(-size, size - 1)), draw(st.booleans()))]))
        else:
            parts = [draw(st.one_of(st.none(), st.integers(-7, 7))),
                     draw(st.one_of(st.none(), st.integers(-7, 7))),
                     draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))]
            entries.append(("slice", [(p, p is not None and draw(st.booleans())) for p in parts]))
    return array, xtype, entries


def build_key(entries, index_dtype="int64"):
    """The NumPy key, the IR key (with placeholder Values), the placeholders and their values,
    and the static result shape the entries imply."""
    np_key, ir_key, holders, feeds = [], [], [], {}

    def part(value, dynamic):
        if not dynamic:
            return value
        (v,) = graph_inputs(TensorType((), scalar_type_of(index_dtype)))
        feeds[v] = np.asarray(value, dtype=index_dtype)
        holders.append(v)
        return v

    for kind, parts in entries:
        if kind == "index":
            np_key.append(parts[0][0])
            ir_key.append(part(*parts[0]))
        else:
            np_key.append(slice(*(p for p, _ in parts)))
            ir_key.append(slice(*(part(*p) for p in parts)))
    return tuple(np_key), tuple(ir_key), holders, feeds


def expected_static_shape(xtype, entries, numpy_shape):
    shape, out = list(xtype.shape), []
    for dim, (kind, parts) in enumerate(entries):
        if kind == "slice":
            static = shape[dim] is not None and not any(d for _, d in parts)
            out.append(numpy_shape[len(out)] if static else None)
    return tuple(out) + tuple(shape[len(entries):])


@SETTINGS
@given(basic_case(), st.sampled_from(INDEX_DTYPES))
def test_subtensor_matches_numpy(case, index_dtype):
    array, xtype, entries = case
    np_key, ir_key, holders, feeds = build_key(entries, index_dtype)
    (x,) = graph_inputs(xtype)
    out = SubtensorOp.build(x, ir_key).result
    expected = array[np_key]
    assert out.type.shape == expected_static_shape(xtype, entries, np.shape(expected))
    assert_same(run(out, {x: array, **feeds}), expected, out.type)


@st.composite
def write_case(draw):
    array, xtype, entries = draw(basic_case())
    view_shape = array[build_key(entries)[0]].shape
    lead = draw(st.integers(0, len(view_shape)))
    yshape = tuple(draw(st.sampled_from([1, s])) for s in view_shape[lead:])
    y = draw(hnp.arrays(array.dtype, yshape))
    return array, xtype, entries, y


@SETTINGS
@given(write_case(), st.booleans())
def test_set_and_inc_subtensor_match_numpy(case, increment):
    array, xtype, entries, y = case
    np_key, ir_key, holders, feeds = build_key(entries)
    x, yv = graph_inputs(xtype, TensorType(y.shape, xtype.element))
    cls = IncSubtensorOp if increment else SetSubtensorOp
    out = cls.build(x, yv, ir_key).result
    expected = array.copy()
    if increment:
        expected[np_key] += y
    else:
        expected[np_key] = y
    assert out.type == xtype
    assert_same(run(out, {x: array, yv: y, **feeds}), expected, out.type)
    # the input is not modified (value semantics)
    assert run(x, {x: array}) is array


def test_subtensor_static_and_dynamic_inference():
    x, i, j = graph_inputs(TensorType((None, 6, 1), F32), TensorType((), I64), TensorType((), UI8))
    assert str(SubtensorOp.build(x, (slice(None), slice(1, -1, 2))).result.type) == "tensor<?x2x1xf32>"
    assert str(SubtensorOp.build(x, (i, slice(j, None))).result.type) == "tensor<?x1xf32>"
    assert str(SubtensorOp.build(x, (slice(None, 3), -6, 0)).result.type) == "tensor<?xf32>"
    assert str(SubtensorOp.build(x, (0, slice(10, 20))).result.type) == "tensor<0x1xf32>"


def test_basic_indexing_rules():
    x, i, f, v = graph_inputs(TensorType((None, 3), F32), TensorType((), I64), TensorType((), F32),
                              TensorType((2,), I64))
    rules = [
        (lambda: SubtensorOp.build(x, (0, 0, 0)), VerifyError, "3 indices for a tensor of rank 2"),
        (lambda: SubtensorOp.build(x, (0, 3)), ShapeError, "index 3 is out of range for dim 1 of size 3"),
        (lambda: SubtensorOp.build(x, (0, -4)), ShapeError, "index -4 is out of range"),
        (lambda: SubtensorOp.build(x, slice(None, None, 0)), VerifyError, "slice step cannot be zero"),
        (lambda: SubtensorOp.build(x, f), VerifyError, "must have an integer type"),
        (lambda: SubtensorOp.build(x, v), VerifyError, "must be rank 0"),
        (lambda: SubtensorOp.build(x, (slice(None), slice(v, None))), VerifyError, "must be rank 0"),
        (lambda: SubtensorOp.from_spec(x, [ArrayIndex()], [v]), VerifyError, "not index arrays"),
        (lambda: SubtensorOp.from_spec(x, [Index(DYN)], []), VerifyError, "reads 1 index operand"),
    ]
    for make, error, message in rules:
        with pytest.raises(error, match=f"tensor.subtensor: .*{message}"):
            make()
    with pytest.raises(IndexError, match="single ellipsis"):
        SubtensorOp.build(x, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="dimshuffle"):
        SubtensorOp.build(x, (None, 0))
    with pytest.raises(IndexError, match="boolean masks"):
        SubtensorOp.build(x, True)
    with pytest.raises(IndexError, match="boolean masks"):
        AdvancedSubtensorOp.build(x, [True, False])
    op = SubtensorOp.create([x, i], [TensorType((3,), F64)], {"spec": encode_spec([Index(DYN)])})
    with pytest.raises(VerifyError, match="differs from the inferred tensor<3xf32>") as info:
        op.verify_()
    assert info.value.op is op


def test_set_subtensor_rules():
    x, y64, y3, y4, yhigh = graph_inputs(TensorType((None, 3), F32), TensorType((3,), F64),
                                         TensorType((3,), F32), TensorType((4,), F32),
                                         TensorType((2, 2, 3), F32))
    with pytest.raises(VerifyError, match="tensor.set_subtensor: value of type tensor<3xf64> must have the element type"):
        SetSubtensorOp.build(x, y64, 0)
    with pytest.raises(ShapeError, match="tensor.inc_subtensor: value of shape \\(4,\\) cannot broadcast to the indexed view \\(3,\\)"):
        IncSubtensorOp.build(x, y4, 0)
    with pytest.raises(ShapeError, match="higher rank than the indexed view"):
        SetSubtensorOp.build(x, yhigh, slice(1, None))
    op = SetSubtensorOp.create([x, y3], [TensorType((None, 3), F64)], {"spec": encode_spec([Index(0)])})
    with pytest.raises(VerifyError, match="differs from the inferred tensor<\\?x3xf32>"):
        op.verify_()


def test_basic_indexing_runtime_errors():
    x, i, s, y = graph_inputs(TensorType((None,), F32), TensorType((), I64), TensorType((), I64),
                              TensorType((None,), F32))
    data = np.arange(3, dtype=np.float32)
    with pytest.raises(InterpreterError, match="index 3 is out of range for dim 0 of size 3") as info:
        run(SubtensorOp.build(x, i).result, {x: data, i: np.int64(3)})
    assert isinstance(info.value.__cause__, IndexError)
    with pytest.raises(InterpreterError, match="slice step cannot be zero"):
        run(SubtensorOp.build(x, slice(None, None, s)).result, {x: data, s: np.int64(0)})
    with pytest.raises(InterpreterError, match="shape \\(2,\\) cannot broadcast to the indexed view of shape \\(3,\\)"):
        run(SetSubtensorOp.build(x, y, slice(None)).result, {x: data, y: np.zeros(2, np.float32)})


@pytest.mark.parametrize("key", [
    lambda i, j: (i, slice(None, j, -1)),
    lambda i, j: (slice(j, None), i),
    lambda i, j: (slice(None, i), slice(j, None, 2)),
])
def test_subtensor_grad(key):
    rng = np.random.default_rng(7)
    check_gradients(lambda x, i, j: SubtensorOp.build(x, key(i, j)).result,
                    [rng.normal(size=(3, 4)), np.int64(-1), np.int64(1)],
                    [TensorType((None, 4), F64), TensorType((), I64), TensorType((), I32)])


@pytest.mark.parametrize("cls", [SetSubtensorOp, IncSubtensorOp])
@pytest.mark.parametrize("yshape", [(2, 4), (4,), (1, 1), ()])
def test_set_inc_subtensor_grad(cls, yshape):
    rng = np.random.default_rng(8)
    check_gradients(lambda x, y, i: cls.build(x, y, slice(i, None)).result,
                    [rng.normal(size=(3, 4)), rng.normal(size=yshape), np.int64(1)],
                    [TensorType((3, 4), F64), TensorType(yshape, F64), TensorType((), I64)])


def test_subtensor_folds_constants():
    (folded,) = SubtensorOp.build(const([[1.0, 2.0], [3.0, 4.0]], "float32"), (1, slice(None, None, -1))).fold()
    np.testing.assert_array_equal(folded.array, [4.0, 3.0])
    # an out-of-range index is left to run time rather than folded
    assert SubtensorOp.build(const([1, 2, 3]), const(5)).fold() is None


# ---------------------------------------------------------------------------------------------
# Advanced indexing


@st.composite
def advanced_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    first = draw(st.integers(0, rank - 1))
    count = draw(st.integers(1, rank - first))
    shape = [draw(st.integers(1 if first <= d < first + count else 0, 4)) for d in range(rank)]
    array = draw(hnp.arrays(dtype, tuple(shape)))
    index_shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    arrays = []
    for d in range(first, first + count):
        ishape = index_shape[draw(st.integers(0, len(index_shape))):]
        ishape = tuple(draw(st.sampled_from([1, s])) for s in ishape)
        idtype = draw(st.sampled_from(INDEX_DTYPES))
        arrays.append(draw(hnp.arrays(idtype, ishape, elements=st.integers(-shape[d], shape[d] - 1))))
    before = [slice(*draw(st.sampled_from([(None,), (1, None), (None, None, -1)]))) for _ in range(first)]
    after = [slice(*draw(st.sampled_from([(None,), (None, 2), (None, None, 2)])))
             for _ in range(draw(st.integers(0, rank - first - count)))]
    return array, before, arrays, after


def advanced_graph(array, before, arrays, after):
    xtype = TensorType(tuple(1 if s == 1 else None for s in array.shape), scalar_type_of(array.dtype))
    x, *idx = graph_inputs(xtype, *[TensorType(a.shape, scalar_type_of(a.dtype)) for a in arrays])
    ir_key = tuple(before) + tuple(idx) + tuple(after)
    np_key = tuple(before) + tuple(arrays) + tuple(after)
    return x, idx, ir_key, np_key


@SETTINGS
@given(advanced_case())
def test_advanced_subtensor_matches_numpy(case):
    array, before, arrays, after = case
    x, idx, ir_key, np_key = advanced_graph(*case)
    out = AdvancedSubtensorOp.build(x, ir_key).result
    expected = array[np_key]
    index_shape = np.broadcast_shapes(*[a.shape for a in arrays])
    start = len(before)
    assert out.type.shape[start:start + len(index_shape)] == index_shape
    assert_same(run(out, {x: array, **dict(zip(idx, arrays))}), expected, out.type)


@SETTINGS
@given(advanced_case(), st.booleans(), st.data())
def test_advanced_set_and_inc_match_numpy(case, increment, data):
    array, before, arrays, after = case
    x, idx, ir_key, np_key = advanced_graph(*case)
    view_shape = array[np_key].shape
    yshape = tuple(data.draw(st.sampled_from([1, s])) for s in view_shape[data.draw(st.integers(0, len(view_shape))):])
    y = data.draw(hnp.arrays(array.dtype, yshape))
    (yv,) = graph_inputs(TensorType(yshape, scalar_type_of(array.dtype)))
    cls = AdvancedIncSubtensorOp if increment else AdvancedSetSubtensorOp
    out = cls.build(x, yv, ir_key).result
    expected = array.copy()
    if increment:
        # NumPy's add.at broadcasts a float16 ``y`` wrongly (2.4: [0.] += four zeros gives 89.9
        # or NaN), so it gets ``y`` at the view's shape.
        np.add.at(expected, np_key, np.broadcast_to(y, view_shape).copy())
    else:
        expected[np_key] = y
    assert_same(run(out, {x: array, yv: y, **dict(zip(idx, arrays))}), expected, out.type)


def test_advanced_inc_of_float16_broadcasts_its_increment_over_repeated_indices():
    x, i, y = graph_inputs(TensorType((1,), F16), TensorType((2, 2), I8), TensorType((2,), F16))
    out = AdvancedIncSubtensorOp.build(x, y, (i,)).result
    got = run(out, {x: np.zeros(1, np.float16), i: np.zeros((2, 2), np.int8),
                    y: np.array([0.5, 0.25], np.float16)})
    assert_same(got, np.array([1.5], np.float16), out.type)


def test_advanced_inc_accumulates_repeated_indices():
    x, i, y = graph_inputs(TensorType((4,), F64), TensorType((None,), I64), TensorType((None,), F64))
    out = AdvancedIncSubtensorOp.build(x, y, i).result
    got = run(out, {x: np.zeros(4), i: np.array([0, 0, -1, 0]), y: np.array([1.0, 2.0, 3.0, 4.0])})
    np.testing.assert_array_equal(got, [7.0, 0.0, 0.0, 3.0])
    out = AdvancedSetSubtensorOp.build(x, y, i).result
    got = run(out, {x: np.zeros(4), i: np.array([1, 1]), y: np.array([1.0, 2.0])})
    np.testing.assert_array_equal(got, [0.0, 2.0, 0.0, 0.0])


def test_pick_one_column_per_row():
    """``p[arange(n), y]``, the negative log-likelihood idiom."""
    p, y = graph_inputs(TensorType((None, 5), F32), TensorType((None,), I32))
    n = ShapeIOp.build(y, 0).result
    rows = ArangeOp.build(const(0), n, const(1)).result
    out = AdvancedSubtensorOp.build(p, (rows, y)).result
    assert str(out.type) == "tensor<?xf32>"
    probs = np.arange(15, dtype=np.float32).reshape(3, 5)
    labels = np.array([4, 0, 2], dtype=np.int32)
    assert_same(run(out, {p: probs, y: labels}), probs[np.arange(3), labels], out.type)


def test_advanced_indexing_accepts_ints_and_lists():
    (x,) = graph_inputs(TensorType((3, 4), F32))
    op = AdvancedSubtensorOp.build(x, ([0, 2], 1))
    assert str(op.result.type) == "tensor<2xf32>"
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert_same(run(op.result, {x: data}), data[[0, 2], 1], op.result.type)


def test_advanced_indexing_rules():
    x, i, j, f, b = graph_inputs(TensorType((None, 3, 4), F32), TensorType((2,), I64),
                                 TensorType((3,), I8), TensorType((2,), F32),
                                 TensorType((2,), scalar_type_of("bool")))
    cls = AdvancedSubtensorOp
    rules = [
        (lambda: cls.build(x, slice(1, None)), VerifyError, "needs at least one index array"),
        (lambda: cls.build(x, (i, slice(None), i)), VerifyError, "must be next to each other"),
        (lambda: cls.build(x, (i, j)), ShapeError, "shapes \\(2,\\), \\(3,\\) do not broadcast"),
        (lambda: cls.build(x, f), VerifyError, "must have an integer type"),
        (lambda: cls.build(x, b), VerifyError, "must have an integer type"),
        (lambda: cls.from_spec(x, [Index(0), ArrayIndex()], [i]), VerifyError, "not integer indices"),
        (lambda: cls.build(x, (i, i, i, i)), VerifyError, "4 indices for a tensor of rank 3"),
    ]
    for make, error, message in rules:
        with pytest.raises(error, match=f"tensor.advanced_subtensor: .*{message}"):
            make()
    y = graph_inputs(TensorType((5,), F32))[0]
    with pytest.raises(ShapeError, match="tensor.advanced_inc_subtensor: value of shape \\(5,\\) cannot broadcast to the indexed view \\(2, 3, 4\\)"):
        AdvancedIncSubtensorOp.build(x, y, i)
    op = cls.create([x, i], [TensorType((None, 3, 4), F32)], {"spec": encode_spec([ArrayIndex()])})
    with pytest.raises(VerifyError, match="differs from the inferred tensor<2x3x4xf32>"):
        op.verify_()


def test_advanced_runtime_out_of_range():
    x, i = graph_inputs(TensorType((None,), F32), TensorType((None,), I64))
    with pytest.raises(InterpreterError, match="out of bounds") as info:
        run(AdvancedSubtensorOp.build(x, i).result, {x: np.zeros(3, np.float32), i: np.array([0, 3])})
    assert isinstance(info.value.__cause__, IndexError)


@pytest.mark.parametrize("key", [
    lambda i: i,
    lambda i: (slice(None), i),
    lambda i: (slice(None, None, -1), i, slice(1, None)),
])
def test_advanced_subtensor_grad_accumulates(key):
    rng = np.random.default_rng(9)
    idx = np.array([[0, 1], [1, 1]])
    check_gradients(lambda x, i: AdvancedSubtensorOp.build(x, key(i)).result,
                    [rng.normal(size=(2, 2, 3)), idx],
                    [TensorType((2, None, 3), F64), TensorType((2, 2), I64)])


@pytest.mark.parametrize("cls", [AdvancedSetSubtensorOp, AdvancedIncSubtensorOp])
@pytest.mark.parametrize("yshape", [(3, 4), (1, 4), ()])
def test_advanced_set_inc_grad(cls, yshape):
    rng = np.random.default_rng(10)
    # distinct indices: with repeats a set keeps only the last write
    check_gradients(lambda x, y, i: cls.build(x, y, i).result,
                    [rng.normal(size=(4, 4)), rng.normal(size=yshape), np.array([2, 0, -1])],
                    [TensorType((None, 4), F64), TensorType(yshape, F64), TensorType((3,), I64)])


def test_advanced_subtensor_folds_constants():
    op = AdvancedSubtensorOp.build(const([10.0, 20.0, 30.0], "float64"), const([2, 2, 0]))
    (folded,) = op.fold()
    np.testing.assert_array_equal(folded.array, [30.0, 30.0, 10.0])


def test_spec_attribute_kinds_are_checked_structurally():
    (x,) = graph_inputs(TensorType((4,), F32))
    op = SubtensorOp.create([x], [TensorType((4,), F32)], {"spec": StringAttr("[]")})
    with pytest.raises(VerifyError, match="spec must be an array"):
        op.verify_()
    op = SubtensorOp.create([x], [TensorType((4,), F32)], {"spec": ArrayAttr(())})
    op.verify_()
    assert op.entries == ()
    op = SubtensorOp.create([x], [TensorType((), F32)],
                            {"spec": ArrayAttr((ArrayAttr((StringAttr("index"), IntAttr(9))),))})
    with pytest.raises(ShapeError, match="index 9 is out of range for dim 0 of size 4"):
        op.verify_()
