"""bufferize of shape ops: views without copies where the layout allows, NumPy's reshape,
arange and broadcasting rules, and their run-time checks."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lowering.dialects import loops
from lowering.dialects import tensor as T
from lowering.dialects.loops import RuntimeCheckError
from lowering.dialects.tensor.shape_ops import scalar_constant
from lowering.ir.types import F16, F32, F64, I8, I16, I64, UI8, TensorType

from .bufferize_graphs import bufferized, check_graph, function_module, run

MATRIX = TensorType((None, None), F32)
X = np.arange(12, dtype=np.float32).reshape(3, 4)


def count(module, cls) -> int:
    return sum(isinstance(op, cls) for op in module.walk())


def test_dimshuffle_is_a_view_and_a_returned_view_is_copied():
    module = check_graph([MATRIX], lambda a: [T.DimShuffleOp.build(a, [1, "x", 0]).result],
                         [X[:, ::-1]])
    assert count(module, loops.TransposeViewOp) == 1
    assert count(module, loops.CopyOp) == 1
    assert count(module, loops.ParallelOp) == 0


def test_dimshuffle_of_a_scalar_stays_a_scalar():
    def build(a):
        s = T.DimShuffleOp.build(scalar_constant(2.0, F32), ["x", "x"]).result
        return [T.AddOp.build(a, s).result]
    module = check_graph([MATRIX], build, [X])
    assert count(module, loops.TransposeViewOp) == 0


def test_reshape_of_a_fresh_result_is_a_view():
    def build(a):
        return [T.ReshapeOp.build(T.ExpOp.build(a).result, [2, -1, 3]).result]
    module = check_graph([MATRIX], build, [X])
    assert count(module, loops.ReshapeViewOp) == 1
    assert count(module, loops.CopyOp) == 1  # only to return the view


def test_reshape_of_a_strided_argument_copies_first():
    module = check_graph([MATRIX], lambda a: [T.ReshapeOp.build(a, [-1]).result], [X.T])
    assert count(module, loops.ReshapeViewOp) == 1
    assert count(module, loops.CopyOp) == 2  # to a contiguous buffer, and to return the view


def test_reshape_with_run_time_sizes():
    def build(a):
        n = T.ShapeIOp.build(a, 0).result
        shape = T.MakeVectorOp.build(T.ConstantOp.build(np.int64(-1)).result, n).result
        return [T.ReshapeOp.build(a, shape).result, T.ReshapeOp.build(a, [n, -1]).result]
    check_graph([MATRIX], build, [X])


@pytest.mark.parametrize("target, message", [
    ((5, -1), r"cannot reshape an array of shape \(\?, \?\) into \(\?, \?\)"),
    ((-1, -1), "has more than one -1"),
    ((-3, -4), "has a negative size"),
    ((13, 1), "cannot reshape"),
])
def test_bad_reshapes_raise(target, message):
    types = [MATRIX, TensorType((), I64), TensorType((), I64)]
    module = function_module(types, lambda a, p, q: [T.ReshapeOp.build(a, [p, q]).result])
    with pytest.raises(RuntimeCheckError, match=r"tensor\.reshape at .*: .*" + message):
        run(bufferized(module), [X, np.array(target[0]), np.array(target[1])])
    with pytest.raises(Exception):
        run(module, [X, np.array(target[0]), np.array(target[1])])


def test_shape_shape_i_and_make_vector():
    def build(a):
        n, m = T.ShapeIOp.build(a, 0).result, T.ShapeIOp.build(a, 1).result
        return [T.ShapeOp.build(a).result, n, T.MakeVectorOp.build(m, n, m).result]
    check_graph([MATRIX], build, [X])


def test_alloc_and_fill_broadcast_their_value():
    def build(a):
        row = T.SubtensorOp.build(a, 1).result
        n = T.ShapeIOp.build(a, 0).result
        return [T.AllocOp.build(row, 2, n, 4).result,
                T.AllocOp.build(scalar_constant(1.5, F32), n).result,
                T.FillOp.build(a, scalar_constant(7, I8)).result,
                T.FillOp.build(a, T.DimShuffleOp.build(row, ["x", 0]).result).result]
    check_graph([MATRIX], build, [X])


def test_alloc_of_a_scalar_used_by_an_elementwise_op_needs_no_buffer():
    def build(a):
        n, m = T.ShapeIOp.build(a, 0).result, T.ShapeIOp.build(a, 1).result
        ones = T.AllocOp.build(scalar_constant(1.0, F32), n, m).result
        return [T.AddOp.build(a, ones).result]
    module = check_graph([MATRIX], build, [X])
    assert count(module, loops.AllocOp) == 1


def test_alloc_checks_its_sizes():
    module = function_module([TensorType((), I64)], lambda n: [
        T.AllocOp.build(scalar_constant(0.0, F64), n).result])
    with pytest.raises(RuntimeCheckError, match=r"tensor\.alloc at .*: dimension 0 is negative"):
        run(bufferized(module), [np.array(-2)])
    module = function_module([TensorType((None,), F64), TensorType((), I64)], lambda v, n: [
        T.AllocOp.build(v, n, 3).result])
    with pytest.raises(RuntimeCheckError, match=r"cannot broadcast to the shape \(\?, 3\)"):
        run(bufferized(module), [np.zeros(2), np.array(4)])


@settings(max_examples=40, deadline=None)
@given(start=st.integers(-20, 20), stop=st.integers(-20, 20),
       step=st.sampled_from([1, 2, 3, 7, -1, -2, -5]),
       element=st.sampled_from([I8, I16, I64, UI8, F16, F32, F64]), fraction=st.booleans())
def test_arange_matches_numpy(start, stop, step, element, fraction):
    if element.is_float and fraction:
        start, stop, step = start / 3, stop / 7, step * 0.35
    if element == UI8:
        start, stop, step = abs(start), abs(stop), abs(step)
    types = [TensorType((), element)] * 3
    arrays = [np.array(v, dtype=element.dtype) for v in (start, stop, step)]
    check_graph(types, lambda a, b, c: [T.ArangeOp.build(a, b, c).result], arrays)


def test_arange_of_step_zero_raises():
    types = [TensorType((), I64)] * 3
    module = function_module(types, lambda a, b, c: [T.ArangeOp.build(a, b, c).result])
    with pytest.raises(RuntimeCheckError, match=r"tensor\.arange at .*: step must not be zero"):
        run(bufferized(module), [np.array(0), np.array(3), np.array(0)])


def test_concatenate_copies_into_windows_of_the_result():
    def build(a, b):
        return [T.ConcatenateOp.build(a, b, a, axis=1).result,
                T.ConcatenateOp.build(a, scalar_like(a), axis=0).result]

    def scalar_like(a):
        return T.FillOp.build(a, scalar_constant(-1.0, F32)).result
    module = check_graph([MATRIX, TensorType((3, None), F32)], build, [X, X[:, :2]])
    assert count(module, loops.SubviewOp) == 5


def test_concatenate_checks_the_other_dimensions():
    module = function_module([MATRIX, MATRIX],
                             lambda a, b: [T.ConcatenateOp.build(a, b, axis=0).result])
    with pytest.raises(RuntimeCheckError,
                       match=r"tensor\.concatenate at .*: input shapes \(\?, \?\), \(\?, \?\) "
                             r"differ in dimension 1"):
        run(bufferized(module), [X, X[:, :3]])
