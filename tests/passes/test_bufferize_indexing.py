"""bufferize of indexing: basic indexing as views with NumPy's slice rules (also with run-time
bounds), set/inc_subtensor, gathers and scatters, and the index checks."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lowering.dialects import loops
from lowering.dialects import tensor as T
from lowering.dialects.loops import RuntimeCheckError, RuntimeIndexError
from lowering.dialects.tensor.shape_ops import scalar_constant
from lowering.ir.types import F64, I1, I8, I64, TensorType

from .bufferize_graphs import bufferized, check_graph, function_module, run

MATRIX = TensorType((None, None), F64)
X = np.arange(20, dtype=np.float64).reshape(4, 5)
SCALAR = TensorType((), I64)

bounds = st.one_of(st.none(), st.integers(-7, 7))


@settings(max_examples=40, deadline=None)
@given(start=bounds, stop=bounds, step=st.sampled_from([None, 1, 2, 3, -1, -2, -4]),
       index=st.integers(-5, 5), rows=st.integers(0, 4))
def test_run_time_slice_bounds_follow_numpy(start, stop, step, index, rows):
    """``x[start:stop:step, index]`` with every part a run-time value."""
    parts = [p for p in (start, stop, step) if p is not None]
    types = [MATRIX] + [SCALAR] * (len(parts) + 1)

    def build(x, *values):
        it = iter(values[:-1])
        key = (slice(*(next(it) if p is not None else None for p in (start, stop, step))),
               values[-1])
        return [T.SubtensorOp.build(x, key).result]
    arrays = [X[:rows]] + [np.array(p) for p in parts] + [np.array(index)]
    module = function_module(types, build)
    if -5 <= index < 5:
        expected = X[:rows][start:stop:step, index]
        result = run(bufferized(module), arrays)[0]
        np.testing.assert_array_equal(result, expected)
        np.testing.assert_array_equal(run(module, arrays)[0], expected)
    else:
        with pytest.raises(RuntimeIndexError, match=r"tensor\.subtensor at .*: index out of "
                                                    r"range for dimension 1"):
            run(bufferized(module), arrays)


@pytest.mark.parametrize("key", [(1,), (-1, 2), (slice(None, None, -1),),
                                 (slice(1, -1), slice(None, None, 2)), (slice(5, 1, -2), -3),
                                 (slice(9, 20),), (slice(-9, -7),)])
def test_static_keys_are_views(key):
    module = check_graph([MATRIX], lambda x: [T.SubtensorOp.build(x, key).result,
                                              T.ExpOp.build(T.SubtensorOp.build(x, key).result)
                                              .result], [X[:, ::-1]])
    assert sum(isinstance(op, loops.SubviewOp) for op in module.walk()) == 2


def test_integer_index_out_of_range_raises():
    module = function_module([MATRIX, SCALAR], lambda x, i: [T.SubtensorOp.build(x, i).result])
    with pytest.raises(RuntimeIndexError, match=r"index out of range for dimension 0 \(of shape "
                                                 r"\(\?, \?\)\)"):
        run(bufferized(module), [X, np.array(4)])
    with pytest.raises(IndexError):
        run(bufferized(module), [X, np.array(-5)])
    assert run(bufferized(module), [X, np.array(-4)])[0].tolist() == X[0].tolist()


@pytest.mark.parametrize("cls", [T.SetSubtensorOp, T.IncSubtensorOp])
def test_set_and_inc_subtensor_broadcast_the_value(cls):
    def build(x, i):
        row = T.SubtensorOp.build(x, 0).result  # (5,) broadcast to every selected row
        key = (slice(i, None), slice(None, None, -2))
        view = T.SubtensorOp.build(x, key).result
        return [cls.build(x, T.SubtensorOp.build(row, (slice(None, 3),)).result, key).result,
                cls.build(x, scalar_constant(0.5, F64), (i,)).result,
                cls.build(x, T.NegOp.build(view).result, key).result]
    check_graph([MATRIX, SCALAR], build, [X.T.copy().T, np.array(1)])


def test_set_subtensor_with_a_value_that_does_not_fit_raises():
    module = function_module([MATRIX, TensorType((None,), F64)],
                             lambda x, y: [T.SetSubtensorOp.build(x, y, (0,)).result])
    with pytest.raises(RuntimeCheckError, match="cannot broadcast to the shape"):
        run(bufferized(module), [X, np.zeros(3)])
    check_graph([MATRIX, TensorType((None,), F64)],
                lambda x, y: [T.SetSubtensorOp.build(x, y, (0,)).result], [X, np.ones(1)])


def test_inc_subtensor_of_booleans():
    t = TensorType((None,), I1)
    check_graph([t, t], lambda x, y: [T.IncSubtensorOp.build(x, y, (slice(1, 3),)).result],
                [np.array([True, False, False, True]), np.array([False, True])])


def test_gather_rows_of_a_picked_column():
    """``p[arange(n), y]``, the classic negative log-likelihood pattern."""
    def build(p, y):
        n = T.ShapeIOp.build(p, 0).result
        rows = T.ArangeOp.build(scalar_constant(0, I64), n, scalar_constant(1, I64)).result
        return [T.AdvancedSubtensorOp.build(p, (rows, y)).result]
    module = check_graph([MATRIX, TensorType((None,), I8)], build,
                         [X, np.array([4, -1, 0, 2], np.int8)])
    assert any(isinstance(op, loops.ParallelOp) for op in module.walk())


def test_gather_with_slices_around_and_broadcast_index_arrays():
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5)

    def build(v, i, j):
        return [T.AdvancedSubtensorOp.build(v, (slice(None, None, -1), i, j)).result,
                T.AdvancedSubtensorOp.build(v, (slice(1, None), i)).result]
    check_graph([TensorType((None, None, None), F64), TensorType((None, 1), I64),
                 TensorType((None,), I64)], build,
                [x, np.array([[0], [3], [-2]]), np.array([4, -5])])


def test_gather_index_out_of_range_raises_before_any_loop():
    module = function_module([MATRIX, TensorType((None,), I64)],
                             lambda x, i: [T.AdvancedSubtensorOp.build(x, (i,)).result])
    with pytest.raises(RuntimeIndexError, match=r"tensor\.advanced_subtensor at .*: an index is "
                                                 r"out of range"):
        run(bufferized(module), [X, np.array([0, 4])])
    asserts = [op for op in bufferized(module).walk() if isinstance(op, loops.AssertOp)]
    assert all(a.parent_op.name == "func.func" for a in asserts)


def test_index_arrays_that_do_not_broadcast_raise():
    module = function_module([MATRIX, TensorType((None,), I64), TensorType((None,), I64)],
                             lambda x, i, j: [T.AdvancedSubtensorOp.build(x, (i, j)).result])
    with pytest.raises(RuntimeCheckError, match="an index array of shape"):
        run(bufferized(module), [X, np.array([0, 1]), np.array([0, 1, 2])])


def test_advanced_inc_accumulates_repeated_indices_in_order():
    def build(x, i, y):
        return [T.AdvancedIncSubtensorOp.build(x, y, (i,)).result,
                T.AdvancedSetSubtensorOp.build(x, y, (i,)).result,
                T.AdvancedIncSubtensorOp.build(x, scalar_constant(0.1, F64),
                                               (slice(None), i)).result]
    y = np.array([[1e16, 1e16, 1e16, 1e16, 1e16], [1.0, 2, 3, 4, 5], [-1e16, 7, 8, 9, 10]])
    module = check_graph([MATRIX, TensorType((None,), I64), MATRIX], build,
                         [X, np.array([1, -3, 1]), y])
    # Repeated indices must be written in order: no scatter runs in a parallel loop.
    stores = [op for op in module.walk() if isinstance(op, loops.StoreOp)]
    assert len(stores) == 3
    assert not any(isinstance(a, loops.ParallelOp) for op in stores for a in op.ancestors())
