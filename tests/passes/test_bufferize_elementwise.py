"""bufferize of elementwise ops and constants: results equal the tensor interpreter's on strided
inputs of every dtype, broadcasting, run-time size checks and the loop structure."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects import loops, scalar
from lowering.dialects import tensor as T
from lowering.dialects.loops import RuntimeCheckError
from lowering.ir.core import VerifyError
from lowering.ir.types import F16, F32, F64, I1, I8, I64, UI16, TensorType

from .bufferize_graphs import assert_same, bufferized, check_graph, function_module, run, run_both

DTYPES = [F16, F32, F64, I1, I8, UI16, I64]
VALUES = {"f": [-2.5, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 3.0, np.nan, np.inf, -np.inf, 7.0],
          "i": [-128, -7, -1, 0, 1, 2, 3, 5, 100, 127, -3, 9],
          "u": [0, 1, 2, 3, 5, 7, 100, 255, 1000, 65535, 9, 4],
          "b": [True, False, True, True, False, False, True, False, True, False, False, True]}


def sample(dtype, shape=(3, 4), offset=0):
    """A strided (transposed, every other column) array of ``shape`` with varied values."""
    values = VALUES[np.dtype(dtype).kind]
    flat = np.array([values[(i + offset) % len(values)] for i in range(int(np.prod(shape)) * 2)])
    base = flat.astype(dtype).reshape(shape[::-1] + (2,))[..., 0]
    return base.T


def accepts(cls, element, arity) -> bool:
    try:
        cls.scalar_op.result_element([element] * arity)
        return True
    except VerifyError:
        return False


@pytest.mark.parametrize("element", DTYPES, ids=str)
def test_every_unary_and_binary_op_matches_the_interpreter(element):
    ops = [cls for cls in T.ELEMENTWISE_OPS.values() if cls.scalar_op.arity in (1, 2)
           and cls is not T.CastOp and accepts(cls, element, cls.scalar_op.arity)]
    t = TensorType((None, 4), element)
    arrays = [sample(element.dtype), sample(element.dtype, offset=5)]

    def build(a, b):
        return [cls.build(*(a, b)[:cls.scalar_op.arity]).result for cls in ops]
    module = function_module([t, t], build)
    before, after = run_both(module, arrays)
    for cls, b, a in zip(ops, before, after):
        try:
            assert_same([b], [a])
        except AssertionError as exc:
            raise AssertionError(f"{cls.name} on {element}: {exc}") from None


@pytest.mark.parametrize("to", DTYPES)
def test_cast_with_a_relaxed_shape(to):
    x = sample(np.float64)
    x[0, 0], x[1, 1] = 1e6, -3e4

    def build(a):
        return [T.CastOp.build(a, to, shape=(None, None)).result]
    check_graph([TensorType((3, 4), F64)], build, [x])


def test_select_and_clip():
    types = [TensorType((None, 4), F32)] * 3
    arrays = [sample(np.float32, offset=i) for i in range(3)]

    def build(a, b, c):
        cond = T.LtOp.build(a, b).result
        return [T.SelectOp.build(cond, a, c).result, T.ClipOp.build(a, b, c).result]
    check_graph(types, build, arrays)


@pytest.mark.parametrize("shapes", [[(1, 4), (3, 1)], [(3, 1), (3, 4)], [(1, 1), (0, 4)],
                                    [(1,), (5,)], [(), ()]])
def test_broadcasting_of_dimensions_typed_1(shapes):
    types = [TensorType(tuple(1 if s == 1 else None for s in shape), F64) for shape in shapes]
    arrays = [np.asarray(np.arange(np.prod(s), dtype=np.float64).reshape(s) + i) for i, s in
              enumerate(shapes)]
    module = check_graph(types, lambda a, b: [T.SubOp.build(a, b).result], arrays)
    assert not any(isinstance(op, loops.BroadcastViewOp) for op in module.walk())


def test_mismatched_sizes_raise_the_assert_message():
    module = function_module([TensorType((None, 3), F32), TensorType((None, 3), F32)],
                             lambda a, b: [T.AddOp.build(a, b).result])
    with pytest.raises(RuntimeCheckError, match=r"tensor\.add at .*test_bufferize_elementwise"
                       r"\.py:\d+:\d+: operand shapes \(\?, 3\), \(\?, 3\) differ in dimension 0"):
        run(bufferized(module), [np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32)])


def test_a_static_size_is_checked_against_a_run_time_one():
    module = function_module([TensorType((4,), F64), TensorType((None,), F64)],
                             lambda a, b: [T.MulOp.build(a, b).result])
    with pytest.raises(RuntimeCheckError, match="differ in dimension 0"):
        run(bufferized(module), [np.zeros(4), np.zeros(5)])
    assert run(bufferized(module), [np.ones(4), np.full(4, 2.0)])[0].tolist() == [2.0] * 4


def test_loop_nest_is_parallel_outside_and_runs_the_last_dimension_inside():
    module = bufferized(function_module([TensorType((None, None, None), F32)],
                                        lambda a: [T.ExpOp.build(a).result]))
    (outer,) = [op for op in module.walk() if isinstance(op, loops.ParallelOp)]
    assert outer.rank == 1 and outer.parent_op.name == "func.func"
    fors = [op for op in outer.walk() if isinstance(op, loops.ForOp)]
    assert len(fors) == 2
    (load,) = [op for op in module.walk() if isinstance(op, loops.LoadOp)]
    assert load.indices[-1] is fors[-1].induction_var
    assert load.indices[0] is outer.induction_vars[0]


def test_rank_0_ops_are_scalars_without_loops():
    t = TensorType((), F32)
    module = check_graph([t, t], lambda a, b: [T.AddOp.build(T.ExpOp.build(a).result, b).result],
                         [np.array(1.5, np.float32), np.array(2, np.float32)])
    assert not any(isinstance(op, (loops.ParallelOp, loops.ForOp)) for op in module.walk())


def test_splat_constants_are_scalars_in_the_loop():
    def build(a):
        two = T.ConstantOp.build(np.full((1, 1), 2.0, np.float32)).result
        return [T.MulOp.build(a, two).result]
    module = check_graph([TensorType((None, None), F32)], build, [sample(np.float32)])
    assert not any(isinstance(op, (loops.ConstantOp, loops.FillOp)) for op in module.walk())
    consts = [op for op in module.walk() if isinstance(op, scalar.ConstantOp)
              and op.result.type == F32]
    assert [float(c.numpy_value) for c in consts] == [2.0]


def test_other_constants_are_read_only_global_buffers():
    values = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int8)

    def build(a):
        c = T.ConstantOp.build(values).result
        return [T.AddOp.build(a, c).result, c]
    module = check_graph([TensorType((2, 3), I8)], build, [np.ones((2, 3), np.int8)])
    (const,) = [op for op in module.walk() if isinstance(op, loops.ConstantOp)]
    assert str(const.result.type) == "!loops.buffer<2x3xi8>"
    # The constant is returned: as a copy the caller owns.
    returned = module.functions[0].body.block.last_op.operands
    assert returned[1] is not const.result


def test_zero_sized_and_negative_zero_constants():
    def build(a):
        empty = T.ConstantOp.build(np.zeros((0, 2), np.float64)).result
        zeros = T.ConstantOp.build(np.array([0.0, -0.0])).result
        return [T.AddOp.build(a, empty).result, zeros]
    check_graph([TensorType((0, 2), F64)], build, [np.zeros((0, 2))])


def test_bool_logic():
    t = TensorType((None,), I1)
    arrays = [np.array([True, False, True, False]), np.array([True, True, False, False])]

    def build(a, b):
        return [T.XorOp.build(T.NotOp.build(a).result, b).result, T.EqOp.build(a, b).result]
    check_graph([t, t], build, arrays)
