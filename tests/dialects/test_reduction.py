"""Reductions: interpreter against NumPy, type inference, verifier rules, folding, gradients."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lowering.dialects.tensor import (REDUCTION_OPS, ArgMaxOp, ArgMinOp, ConstantOp, MaxOp, MeanOp,
                                      MinOp, ProdOp, SumOp)
from lowering.ir.attributes import ArrayAttr, BoolAttr, FloatAttr, IntAttr
from lowering.ir.core import VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.types import F16, F32, F64, I1, I64, UI8, TensorType, scalar_type_of
from lowering.ir.verifier import verify

from .helpers import check_gradients, evaluate_graph, graph_inputs
from .reference import ALL_DTYPES, wrap
from .strategies import elements

SETTINGS = settings(max_examples=40, deadline=None)


def expected_dtype(short: str, dtype: str) -> str:
    """NumPy's result dtypes, restated."""
    kind = np.dtype(dtype).kind
    if short in ("argmax", "argmin"):
        return "int64"
    if short in ("sum", "prod"):
        return dtype if kind == "f" else "uint64" if kind == "u" else "int64"
    if short == "mean":
        return dtype if kind == "f" else "float64"
    return dtype


def _mean(x, axis, keepdims):
    return np.sum(x, axis=axis, keepdims=keepdims) / np.prod([x.shape[a] for a in axis])


def reference(short, x, axes, keepdims):
    out = expected_dtype(short, str(x.dtype))
    axis = tuple(axes)
    if short in ("argmax", "argmin"):
        find = np.argmax if short == "argmax" else np.argmin
        flat = len(axes) != 1
        return np.asarray(find(x, axis=None if flat else axis[0], keepdims=keepdims), dtype=out)
    if short in ("max", "min"):  # picking an element is exact in any dtype
        fn = np.max if short == "max" else np.min
        return np.asarray(fn(x, axis=axis, keepdims=keepdims)).astype(out)
    if x.dtype.kind == "f":
        fn = {"sum": np.sum, "prod": np.prod, "mean": _mean}[short]
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.astype(np.float64), axis=axis, keepdims=keepdims)).astype(out)
    fn = np.prod if short == "prod" else np.sum
    exact = np.asarray(fn(x.astype(object), axis=axis, keepdims=keepdims), dtype=object)
    if short == "mean":
        with np.errstate(all="ignore"):
            return (exact.astype(np.float64) / np.prod([x.shape[a] for a in axis])).astype(out)
    return np.vectorize(lambda v: wrap(int(v), out), otypes=[object])(exact).astype(out) \
        if exact.size else exact.astype(out)


def assert_close(got, expected, x, count):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
        return
    eps = np.finfo(got.dtype).eps
    finite = np.abs(x[np.isfinite(x)]).astype(np.float64)
    scale = float(finite.max()) if finite.size else 1.0
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), equal_nan=True,
                               rtol=4 * count * eps, atol=4 * count * eps * max(scale, 1.0))


@st.composite
def reduction_case(draw, short):
    dtype = draw(st.sampled_from(ALL_DTYPES), label="dtype")
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank)))
    values = elements(dtype)
    if short == "prod" and np.dtype(dtype).kind == "f":
        # Magnitudes near 1 keep float16 products clear of overflow and underflow.
        values = st.one_of(st.floats(0.75, 1.25, width=np.dtype(dtype).itemsize * 8).flatmap(
            lambda v: st.sampled_from([v, -v])), st.sampled_from([0.0, 1.0, np.nan, np.inf]))
    x = draw(hnp.arrays(np.dtype(dtype), shape, elements=values))
    if short in ("argmax", "argmin"):
        axes = draw(st.sampled_from([None] + list(range(rank))))
    else:
        some = st.lists(st.integers(-rank, rank - 1), unique_by=lambda a: a % rank,
                        max_size=rank) if rank else st.just([])
        axes = draw(st.one_of(st.none(), some))
    keepdims = draw(st.booleans())
    dims = tuple(1 if s == 1 else draw(st.sampled_from([None, s])) for s in shape)
    return x, TensorType(dims, scalar_type_of(dtype)), axes, keepdims


@pytest.mark.parametrize("short", sorted(REDUCTION_OPS))
@SETTINGS
@given(data=st.data())
def test_interpreter_matches_numpy(short, data):
    x, xtype, axes, keepdims = data.draw(reduction_case(short))
    cls = REDUCTION_OPS[short]
    (inp,) = graph_inputs(xtype)
    out = cls.build(inp, axes, keepdims).result
    normalized = out.owner.axes
    reduced = [x.shape[a] for a in normalized]
    empty = x.size == 0 if short in ("argmax", "argmin") else 0 in reduced
    if empty and short in ("max", "min", "argmax", "argmin"):
        with pytest.raises(InterpreterError, match=f"tensor.{short}:.*empty"):
            evaluate_graph([out], {inp: x})
        return
    (got,) = evaluate_graph([out], {inp: x})
    assert out.type.dtype == np.dtype(expected_dtype(short, str(x.dtype)))
    assert out.type.accepts_shape(got.shape)
    expected = reference(short, x, normalized, keepdims)
    assert_close(got, expected, x, max(int(np.prod(reduced)), 1))


def test_reductions_over_nothing():
    (x,) = graph_inputs(TensorType((0, 3), F32))
    empty = np.zeros((0, 3), np.float32)
    assert evaluate_graph([SumOp.build(x, 0).result], {x: empty})[0].tolist() == [0, 0, 0]
    assert evaluate_graph([ProdOp.build(x, 0).result], {x: empty})[0].tolist() == [1, 1, 1]
    assert np.isnan(evaluate_graph([MeanOp.build(x, 0).result], {x: empty})[0]).all()
    assert evaluate_graph([MaxOp.build(x, 1).result], {x: empty})[0].shape == (0,)
    with pytest.raises(InterpreterError, match="tensor.max: cannot reduce over the empty axis 0"):
        evaluate_graph([MaxOp.build(x, 0).result], {x: empty})
    with pytest.raises(InterpreterError, match="tensor.argmin: the input of shape"):
        evaluate_graph([ArgMinOp.build(x, 1).result], {x: empty})


def test_integer_sums_wrap_in_int64():
    (x,) = graph_inputs(TensorType((2,), I64))
    big = np.array([2**62, 2**62], np.int64)
    assert evaluate_graph([SumOp.build(x).result], {x: big})[0] == -(2**63)


def test_argmax_of_all_axes_is_the_flat_index():
    (x,) = graph_inputs(TensorType((2, 3), F64))
    values = np.array([[1.0, 5.0, 2.0], [5.0, 0.0, 9.0]])
    assert evaluate_graph([ArgMaxOp.build(x).result], {x: values})[0] == 5
    kept = ArgMaxOp.build(x, keepdims=True).result
    assert kept.type == TensorType((1, 1), I64)
    assert evaluate_graph([kept], {x: values})[0].tolist() == [[5]]
    assert evaluate_graph([ArgMinOp.build(x, 0).result], {x: values})[0].tolist() == [0, 1, 0]


# ---------------------------------------------------------------------------------------------
# Types and verifier rules


@pytest.mark.parametrize("short", sorted(REDUCTION_OPS))
def test_result_dtypes(short):
    for dtype in ALL_DTYPES:
        (x,) = graph_inputs(TensorType((None, 4), scalar_type_of(dtype)))
        out = REDUCTION_OPS[short].build(x, axes=1).result
        assert out.type == TensorType((None,), scalar_type_of(expected_dtype(short, dtype)))
        verify(out.owner)


def test_result_shapes():
    (x,) = graph_inputs(TensorType((None, 1, 5), F32))
    assert SumOp.build(x).result.type == TensorType((), F32)
    assert SumOp.build(x, axes=-1).result.type == TensorType((None, 1), F32)
    assert SumOp.build(x, axes=[2, 0], keepdims=True).result.type == TensorType((1, 1, 1), F32)
    assert MaxOp.build(x, axes=[]).result.type == x.type
    op = ProdOp.build(x, axes=(-1, 0))
    assert op.axes == (0, 2) and op.keepdims == 0
    assert ArgMaxOp.build(x, axes=[0, 1, 2]).result.type == TensorType((), I64)
    (s,) = graph_inputs(TensorType((), F64))
    assert MeanOp.build(s).result.type == TensorType((), F64)


def test_axes_must_be_valid():
    (x,) = graph_inputs(TensorType((None, 4), F32))
    with pytest.raises(VerifyError, match="tensor.sum: axis 2 is out of range"):
        SumOp.build(x, axes=2)
    with pytest.raises(VerifyError, match=r"tensor.max: repeated axis in \(1, -1\)"):
        MaxOp.build(x, axes=(1, -1))
    (x3,) = graph_inputs(TensorType((2, 3, 4), F32))
    with pytest.raises(VerifyError, match="tensor.argmax: takes one axis or all axes"):
        ArgMaxOp.build(x3, axes=(0, 1))


def test_input_must_be_a_tensor():
    (x,) = graph_inputs(F32)
    with pytest.raises(VerifyError, match="tensor.sum: the input must be a tensor"):
        SumOp.build(x)


def make(cls, x, axes, result_type, keepdims=False):
    return cls.create(operands=[x], result_types=[result_type],
                      attributes={"axes": ArrayAttr(tuple(axes)), "keepdims": BoolAttr(keepdims)})


def test_verify_rejects_unsorted_or_out_of_range_axes():
    (x,) = graph_inputs(TensorType((2, 3), F32))
    with pytest.raises(VerifyError, match=r"axes \[1, 0\] must be sorted, unique"):
        verify(make(SumOp, x, [IntAttr(1), IntAttr(0)], TensorType((), F32)))
    with pytest.raises(VerifyError,
                       match=r"axes \[2\] must be sorted, unique and in range\(0, 2\)"):
        verify(make(SumOp, x, [IntAttr(2)], TensorType((2, 3), F32)))
    with pytest.raises(VerifyError, match="attribute 'axes' must be an array of IntAttr"):
        verify(make(SumOp, x, [FloatAttr(1.0)], TensorType((2,), F32)))


def test_verify_rejects_a_wrong_result_type():
    (x,) = graph_inputs(TensorType((2, 3), I64))
    op = make(MeanOp, x, [IntAttr(1)], TensorType((2,), I64))
    with pytest.raises(VerifyError,
                       match=r"tensor.mean: result type tensor<2xi64> should be tensor<2xf64>"):
        verify(op)
    op = make(SumOp, x, [IntAttr(1)], TensorType((2,), I64), keepdims=True)
    with pytest.raises(VerifyError, match="should be tensor<2x1xi64>"):
        verify(op)


def test_verify_needs_axes_and_defaults_keepdims():
    (x,) = graph_inputs(TensorType((2, 3), F32))
    with pytest.raises(VerifyError, match="missing attribute 'axes'"):
        verify(SumOp.create(operands=[x], result_types=[TensorType((), F32)]))
    op = SumOp.create(operands=[x], result_types=[TensorType((3,), F32)],
                      attributes={"axes": ArrayAttr((IntAttr(0),))})
    verify(op)
    assert op.keepdims == 0


# ---------------------------------------------------------------------------------------------
# Folding


def test_fold_constant_input():
    c = ConstantOp.build(np.arange(6, dtype=np.uint8).reshape(2, 3)).result
    (folded,) = SumOp.build(c, 1).fold()
    assert folded.array.dtype == np.uint64 and folded.array.tolist() == [3, 12]
    assert ArgMaxOp.build(c).fold()[0].array == 5
    empty = ConstantOp.build(np.zeros((0,), np.float32)).result
    assert MaxOp.build(empty).fold() is None  # the error is left to run time
    (x,) = graph_inputs(TensorType((2,), UI8))
    assert SumOp.build(x).fold() is None


# ---------------------------------------------------------------------------------------------
# Gradients

TYPE_CASES = [
    ((2, 3), (None, 3)),
    ((2, 3), (2, 3)),
    ((1, 3), (1, None)),
    ((2, 1, 3), (None, 1, None)),
    ((), ()),
]


def axes_choices(rank):
    choices = [None]
    for count in range(rank + 1):
        choices.extend(itertools.combinations(range(rank), count))
    return choices


@pytest.mark.parametrize("cls", [SumOp, ProdOp, MaxOp, MinOp, MeanOp])
def test_gradients_match_finite_differences(cls):
    rng = np.random.default_rng(7)
    for shape, dims in TYPE_CASES:
        for axes in axes_choices(len(shape)):
            for keepdims in (False, True):
                x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)
                check_gradients(lambda v: cls.build(v, axes, keepdims).result, [x],
                                [TensorType(dims, F64)])


def test_prod_gradient_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.5, 2.0, -3.0]])
    check_gradients(lambda v: ProdOp.build(v, 1).result, [x])
    (v,) = graph_inputs(TensorType((3, 3), F64))
    out = ProdOp.build(v, 1).result
    (gz,) = graph_inputs(out.type)
    (gx,) = out.owner.grad([gz])
    (got,) = evaluate_graph([gx], {v: x, gz: np.ones(3)})
    assert got.tolist() == [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-6.0, -4.5, 3.0]]


def test_max_gradient_goes_to_every_maximum():
    (v,) = graph_inputs(TensorType((2, 3), F64))
    out = MaxOp.build(v, 1).result
    (gz,) = graph_inputs(out.type)
    (gx,) = out.owner.grad([gz])
    (got,) = evaluate_graph([gx], {v: np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]]),
                                   gz: np.array([10.0, 20.0])})
    assert got.tolist() == [[0.0, 10.0, 10.0], [20.0, 0.0, 0.0]]


def test_gradients_have_the_input_type():
    for element in (F16, F32):
        (x,) = graph_inputs(TensorType((None, 1, 4), element))
        for cls in (SumOp, ProdOp, MaxOp, MinOp, MeanOp):
            out = cls.build(x, axes=(0, 2)).result
            (gz,) = graph_inputs(out.type)
            assert cls.build(x, axes=(0, 2)).grad([gz])[0].type == x.type
            (g64,) = graph_inputs(out.type.with_element(F64))
            assert out.owner.grad([g64])[0].type == x.type
            assert out.owner.grad([None]) == [None]


def test_mean_gradient_divides_by_the_run_time_count():
    (x,) = graph_inputs(TensorType((None, 4), F32))
    out = MeanOp.build(x, axes=(0, 1)).result
    (gz,) = graph_inputs(out.type)
    (gx,) = out.owner.grad([gz])
    (got,) = evaluate_graph([gx], {x: np.zeros((5, 4), np.float32), gz: np.float32(2.0)})
    assert got.dtype == np.float32 and np.allclose(got, 2.0 / 20)


def test_integer_inputs_and_arg_reductions_have_no_gradient():
    (n,) = graph_inputs(TensorType((3,), I64))
    out = SumOp.build(n).result
    assert out.owner.grad([graph_inputs(out.type)[0]]) == [None]
    (x,) = graph_inputs(TensorType((3,), F64))
    for cls in (ArgMaxOp, ArgMinOp):
        out = cls.build(x).result
        assert out.owner.grad([graph_inputs(out.type)[0]]) == [None]
    (b,) = graph_inputs(TensorType((3,), I1))
    assert MaxOp.build(b).grad([graph_inputs(TensorType((), I1))[0]]) == [None]


def test_a_less_static_output_gradient_is_given_the_result_type():
    (x,) = graph_inputs(TensorType((2, 3), F64))
    out = SumOp.build(x, 0).result
    (gz,) = graph_inputs(TensorType((None,), F64))
    (gx,) = out.owner.grad([gz])
    assert gx.type == x.type
    (got,) = evaluate_graph([gx], {x: np.zeros((2, 3)), gz: np.arange(3.0)})
    assert got.tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]


def test_reductions_print_and_parse_back():
    from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op

    t = TensorType((None, 1, 3), F32)
    ops = [SumOp.build, ProdOp.build, MaxOp.build, MinOp.build, MeanOp.build]
    probe = graph_inputs(t)[0]
    results = [build(probe, axes=(0, 2), keepdims=k).result.type for build in ops for k in (0, 1)]
    results += [ArgMaxOp.build(probe, 2).result.type, ArgMinOp.build(probe).result.type]
    func = FuncOp.build("f", [t], results)
    block = func.body.block
    (x,) = block.args
    values = [block.append(build(x, axes=(0, 2), keepdims=k)).result
              for build in ops for k in (0, 1)]
    values += [block.append(ArgMaxOp.build(x, 2)).result, block.append(ArgMinOp.build(x)).result]
    block.append(ReturnOp.create(values))
    text = print_op(ModuleOp.build([func]))
    parsed = parse_module(text)
    verify(parsed)
    assert print_op(parsed) == text
