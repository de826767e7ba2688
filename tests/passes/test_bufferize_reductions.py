"""bufferize of reductions: every reduction over every set of axes, with and without keepdims,
NumPy's empty-axis rules, NaN, booleans, and the two loop structures."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from lowering.dialects import loops, scalar
from lowering.dialects import tensor as T
from lowering.dialects.loops import RuntimeCheckError
from lowering.ir.types import F16, F32, F64, I1, I8, I64, UI8, TensorType

from .bufferize_graphs import bufferized, check_graph, function_module, run

RANK3 = TensorType((None, None, None), F64)
ALL_AXES = [None, *[list(c) for r in (1, 2) for c in itertools.combinations(range(3), r)]]


def data(dtype=np.float64, shape=(2, 3, 4)):
    rng = np.random.default_rng(7)
    values = rng.integers(-9, 10, size=shape)
    return values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min"])
def test_every_axes_choice(name, keepdims):
    cls = T.REDUCTION_OPS[name]

    def build(x):
        return [cls.build(x, axes=axes, keepdims=keepdims).result for axes in ALL_AXES]
    x = data()[:, ::-1, :].transpose(0, 2, 1)  # strided input
    check_graph([RANK3], build, [x], tolerance=1e-12)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_over_one_axis_or_all(name, keepdims):
    cls = T.REDUCTION_OPS[name]
    x = np.array([[[1, 5, 5, 0], [3, 3, 9, 9], [2, 0, 0, 2]],
                  [[7, 7, 1, 1], [0, 0, 0, 0], [4, 8, 8, 4]]], dtype=np.float64)

    def build(v):
        return [cls.build(v, axes=axes, keepdims=keepdims).result
                for axes in (None, 0, 1, 2, -1)]
    check_graph([RANK3], build, [x])


@pytest.mark.parametrize("element", [I1, I8, UI8, F16, F32])
def test_dtypes_of_results(element):
    x = data(element.dtype, (3, 4))

    def build(v):
        return [T.REDUCTION_OPS[n].build(v, axes=[1]).result
                for n in ("sum", "prod", "mean", "max", "min", "argmax")]
    module = check_graph([TensorType((None, None), element)], build, [x], tolerance=1e-3)
    results = module.functions[0].function_type.results
    assert [str(t.element) for t in results][:3] == [
        str(T.SumOp.result_element(element)), str(T.ProdOp.result_element(element)),
        str(T.MeanOp.result_element(element))]


def test_nan_propagates_and_the_first_nan_is_the_argmax():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf],
                  [2.0, 9.0, 9.0, -1.0]])
    t = TensorType((None, None), F64)

    def build(v):
        return [op.build(v, axes=[1]).result for op in (T.MaxOp, T.MinOp, T.ArgMaxOp, T.ArgMinOp)]
    check_graph([t], build, [x])


def test_reductions_of_empty_axes():
    x = np.zeros((0, 3))
    t = TensorType((None, None), F64)

    def build(v):
        return [T.SumOp.build(v, axes=[0]).result, T.ProdOp.build(v).result,
                T.MeanOp.build(v, axes=[0]).result, T.MaxOp.build(v, axes=[1]).result]
    check_graph([t], build, [x])  # max over the non-empty axis 1 of no rows: an empty result


@pytest.mark.parametrize("cls, axes, message", [
    (T.MaxOp, [0], r"tensor\.max at .*: cannot reduce over an empty axis \(axes \[0\]\) of an "
                   r"array of shape \(\?, \?\)"),
    (T.MinOp, None, "cannot reduce over an empty axis"),
    (T.ArgMaxOp, 1, r"tensor\.argmax at .*: cannot take the argmax of an empty array"),
])
def test_max_of_nothing_raises_like_numpy(cls, axes, message):
    module = function_module([TensorType((None, None), F32)],
                             lambda v: [cls.build(v, axes=axes).result])
    with pytest.raises(RuntimeCheckError, match=message):
        run(bufferized(module), [np.zeros((0, 3), np.float32)])
    with pytest.raises(Exception):
        run(module, [np.zeros((0, 3), np.float32)])


def test_a_kept_dimension_inside_a_reduced_one_accumulates_in_memory():
    module = check_graph([RANK3], lambda v: [T.SumOp.build(v, axes=[1]).result], [data()])
    assert any(isinstance(op, loops.FillOp) for op in module.walk())
    assert not any(isinstance(op, loops.ForOp) and op.inits for op in module.walk())
    (outer,) = [op for op in module.walk() if isinstance(op, loops.ParallelOp)]
    assert outer.parent_op.name == "func.func"


def test_reducing_the_last_dimension_carries_the_accumulator():
    module = check_graph([RANK3], lambda v: [T.SumOp.build(v, axes=[2]).result], [data()])
    carried = [op for op in module.walk() if isinstance(op, loops.ForOp) and op.inits]
    assert len(carried) == 1
    assert not any(isinstance(op, loops.FillOp) for op in module.walk())


def test_a_small_static_full_reduction_is_one_sequential_loop_nest():
    module = check_graph([TensorType((2, 3, 4), F64)], lambda v: [T.MaxOp.build(v).result],
                         [data()])
    assert not any(isinstance(op, loops.ParallelOp) for op in module.walk())
    assert len([op for op in module.walk() if isinstance(op, loops.AllocOp)]) == 1  # the result


@pytest.mark.parametrize("rows", [0, 1, 2, 63, 64, 65, 130])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "prod"])
def test_a_full_reduction_combines_partial_results_of_parallel_chunks(name, rows):
    cls = T.REDUCTION_OPS[name]
    x = data(shape=(rows, 3)) / (8.0 if name == "prod" else 1.0)
    build = (lambda v: [cls.build(v).result]) if rows or name != "max" else None
    if build is None:  # max of nothing is an error (tested above)
        return
    module = check_graph([TensorType((None, None), F64)], build, [x], tolerance=1e-12)
    (parallel,) = [op for op in module.walk() if isinstance(op, loops.ParallelOp)]
    chunk_loops = [op for op in parallel.walk() if isinstance(op, loops.ForOp) and op.inits]
    assert len(chunk_loops) == 2  # rows of the chunk, then the columns
    combine = [op for op in module.walk() if isinstance(op, loops.ForOp) and op.inits
               and op.parent_op.name == "func.func"]
    assert len(combine) == 1


def test_the_combining_step_of_a_reduction_may_be_reassociated():
    module = check_graph([RANK3], lambda v: [T.SumOp.build(v, axes=[2]).result], [data()])
    (add,) = [op for op in module.walk() if op.name == "scalar.add" and op.result.type == F64]
    assert scalar.allows_reassociation(add)


@pytest.mark.parametrize("columns", [0, 1, 511, 1024, 1500])
def test_keeping_only_the_last_dimension_walks_it_innermost_in_parallel_tiles(columns):
    x = data(shape=(3, columns))
    module = check_graph([TensorType((None, None), F64)],
                         lambda v: [T.SumOp.build(v, axes=[0]).result,
                                    T.MaxOp.build(v, axes=[0], keepdims=True).result], [x])
    parallels = [op for op in module.walk() if isinstance(op, loops.ParallelOp)]
    assert len(parallels) == 2
    for p in parallels:
        innermost = [op for op in p.walk() if isinstance(op, loops.LoadOp)][0]
        assert innermost.indices[-1] is innermost.parent_op.induction_var


def test_integer_sums_wrap_exactly():
    x = np.array([[2 ** 62, 2 ** 62, 2 ** 62], [-1, -2, -3]], dtype=np.int64)
    check_graph([TensorType((None, None), I64)],
                lambda v: [T.SumOp.build(v, axes=[1]).result, T.ProdOp.build(v).result], [x])
