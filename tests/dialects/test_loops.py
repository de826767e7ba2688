"""The loops dialect: buffer type, op builders and verifiers, interpreter runs vs NumPy, and
print/parse round trips."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lowering.dialects  # noqa: F401  (registers every dialect)
from lowering.dialects import scalar
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.loops import (DYNAMIC, EXTERNAL_FUNCTIONS, AllocOp, BroadcastViewOp,
                                     BufferIndexError, BufferType, CallOp, CopyOp, DeallocOp,
                                     DimOp, FillOp, ForOp, LoadOp, ParallelOp, ReshapeViewOp,
                                     StoreOp, SubviewOp, TransposeViewOp, YieldOp,
                                     parse_buffer_type, subview_type)
from lowering.ir.attributes import ArrayAttr, IntAttr, SymbolRefAttr
from lowering.ir.builder import Builder
from lowering.ir.core import Block, Region, VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.location import Location
from lowering.ir.parser import ParseError, parse_module
from lowering.ir.printer import print_op
from lowering.ir.types import F32, F64, I1, I32, I64, INDEX, SCALAR_TYPES, TensorType
from lowering.ir.verifier import verify

DYN = None  # a run-time size in a shape


def buf(shape, element=F32, **layout) -> BufferType:
    return BufferType(tuple(shape), element, **layout)


# ---------------------------------------------------------------------------------------------
# Building functions


def make_function(arg_types, body, result_types=(), name="f"):
    """A verified module with one function whose body ``body(b, *args)`` builds; a list it
    returns holds the values for ``func.return`` (anything else: nothing is returned)."""
    f = FuncOp.build(name, list(arg_types), list(result_types))
    b = Builder.at_end(f.body.block)
    results = body(b, *f.args)
    b.insert(ReturnOp.create(list(results) if isinstance(results, (list, tuple)) else []))
    module = ModuleOp.build([f])
    verify(module)
    return module, f


def c(b, value, t=INDEX):
    """A scalar constant."""
    return b.insert(scalar.ConstantOp.build(value, t)).result


def dim(b, buffer, axis):
    return b.insert(DimOp.build(buffer, axis)).result


def ins(b, op):
    """Insert ``op`` and give its only result (or the op when it has none)."""
    b.insert(op)
    return op.results[0] if len(op.results) == 1 else op


def parallel_over(b, buffer, body):
    """A parallel loop over every index of ``buffer``: ``body(builder, *ivs)``."""
    rank = buffer.type.rank
    zero, one = c(b, 0), c(b, 1)
    uppers = [dim(b, buffer, a) for a in range(rank)]
    return ins(b, ParallelOp.build([zero] * rank, uppers, [one] * rank, body=body))


def add_into(b, x, y, out):
    """out[i, j] = x[i, j] + y[i, j] as a parallel loop nest."""
    def body(bb, *ivs):
        xv = ins(bb, LoadOp.build(x, ivs))
        yv = ins(bb, LoadOp.build(y, ivs))
        s = ins(bb, scalar.AddOp.build(xv, yv))
        ins(bb, StoreOp.build(s, out, ivs))
    parallel_over(b, out, body)


def strided(array, step=(2, 3), start=(1, 0)):
    """A non-contiguous view of ``array`` (embedded in a bigger buffer)."""
    big = np.full([n * s + o + 1 for n, s, o in zip(array.shape, step, start)], -7, array.dtype)
    index = tuple(slice(o, o + n * s, s) for n, s, o in zip(array.shape, step, start))
    big[index] = array
    return big[index]


# ---------------------------------------------------------------------------------------------
# The buffer type


@pytest.mark.parametrize("t, text", [
    (buf((DYN, 784)), "!loops.buffer<?x784xf32>"),
    (buf(()), "!loops.buffer<f32>"),
    (buf((3, DYN), INDEX), "!loops.buffer<3x?xindex>"),
    (buf((DYN, DYN), strides=(DYN, 1), offset=DYN, memory_space="device"),
     '!loops.buffer<?x?xf32, strides=[?, 1], offset=?, space="device">'),
    (buf((4, 5), I64, strides=(-5, 1), offset=15),
     "!loops.buffer<4x5xi64, strides=[-5, 1], offset=15>"),
    (buf((0, 2), F64, memory_space="shared"), '!loops.buffer<0x2xf64, space="shared">'),
])
def test_buffer_type_text(t, text):
    assert str(t) == text
    assert parse_buffer_type(text) == t


def test_contiguous_strides_normalize_to_none():
    assert buf((3, 4), strides=(4, 1)) == buf((3, 4))
    assert buf((DYN, 4), strides=(4, 1)).strides is None
    # the stride of a size-1 dimension is never used
    assert buf((3, 1, 4), strides=(4, 0, 1)).strides is None
    # a run-time stride is not known to be contiguous
    assert buf((DYN, DYN), strides=(DYN, 1)).strides == (None, 1)
    assert buf((3, 4), strides=(1, 3)).layout_strides == (1, 3)
    assert buf((DYN, 3, 4)).layout_strides == (12, 4, 1)
    assert buf((3, DYN, 4)).layout_strides == (None, 4, 1)


@pytest.mark.parametrize("make, message", [
    (lambda: buf((-1,)), "bad buffer dimension"),
    (lambda: buf((2.5,)), "bad buffer dimension"),
    (lambda: BufferType((2,), "f32"), "element type must be a scalar type"),
    (lambda: buf((2, 3), strides=(1,)), "2 dimensions but 1 strides"),
    (lambda: buf((2,), strides=(1.5,)), "bad buffer stride"),
    (lambda: buf((2,), offset=-1), "offset must be a non-negative integer"),
    (lambda: buf((2,), memory_space="disk"), "unknown memory space 'disk'"),
])
def test_buffer_type_rejects(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("text, message, column", [
    ("!loops.buffer<4xfoo>", "unknown type 'foo'", 17),
    ("!loops.buffer<4x?>", "expected a type, found '?'", 17),
    ("!loops.buffer<4xtensor<2xf32>>", "element type must be a scalar type", 17),
    ("!loops.buffer<4xf32, size=3>", "expected 'strides', 'offset' or 'space'", 22),
    ("!loops.buffer<4xf32, offset=1, offset=2>", "'offset' given twice", 32),
    ("!loops.buffer<4xf32, strides=[1, x]>", "expected an integer", 34),
    ("!loops.buffer<4xf32, strides=[1, 1]>", "expected 1 strides, one per dimension", 30),
    ("!loops.buffer<4xf32, space=device>", "expected a string", 28),
    ("!loops.buffer<4xf32", "expected '>' to end the buffer type", 20),
    ("!loops.buffer<4xf32> x", "unexpected 'x' after the end", 22),
    ('!loops.buffer<4xf32, space="disk">', "unknown memory space 'disk'", 28),
    ("!loops.buffer<4xf32, offset=-1>", "offset must be a non-negative integer", 1),
])
def test_buffer_type_parse_errors(text, message, column):
    with pytest.raises(ParseError, match=message) as info:
        parse_buffer_type(text)
    assert info.value.col == column


dims = st.one_of(st.none(), st.integers(0, 9))


@st.composite
def buffer_types(draw):
    shape = draw(st.lists(dims, max_size=4))
    strides = draw(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-20, 20)),
                                                 min_size=len(shape), max_size=len(shape))))
    return BufferType(tuple(shape), draw(st.sampled_from(sorted(SCALAR_TYPES.values(), key=str))),
                      strides=None if strides is None else tuple(strides),
                      offset=draw(st.one_of(st.none(), st.integers(0, 100))),
                      memory_space=draw(st.sampled_from(["host", "device", "shared"])))


@settings(max_examples=100, deadline=None)
@given(buffer_types())
def test_buffer_type_round_trip_property(t):
    assert parse_buffer_type(str(t)) == t
    assert hash(parse_buffer_type(str(t))) == hash(t)


# ---------------------------------------------------------------------------------------------
# Programs run in the interpreter vs NumPy


def test_elementwise_add_of_strided_buffers():
    t_in = buf((DYN, DYN), strides=(DYN, DYN), offset=DYN)
    module, f = make_function([t_in, t_in, buf((DYN, DYN))],
                              lambda b, x, y, out: add_into(b, x, y, out))
    rng = np.random.default_rng(0)
    x = strided(rng.standard_normal((4, 5)).astype(np.float32))
    y = strided(rng.standard_normal((4, 5)).astype(np.float32), step=(1, 2), start=(2, 1))
    assert not x.flags.c_contiguous and not y.flags.c_contiguous
    out = np.zeros((4, 5), np.float32)
    assert run_function(f, [x, y, out]) == []
    np.testing.assert_array_equal(out, x + y)


def sum_body(b, x, out):
    """out[] = sum(x) with a loop-carried accumulator."""
    zero, one = c(b, 0), c(b, 1)

    def step(bb, i, acc):
        return [ins(bb, scalar.AddOp.build(acc, ins(bb, LoadOp.build(x, [i]))))]
    loop = ins(b, ForOp.build(zero, dim(b, x, 0), one, [c(b, 0.0, F64)], body=step))
    ins(b, StoreOp.build(loop, out, []))
    return [loop]


def test_sum_reduction_with_carried_value():
    module, f = make_function([buf((DYN,), F64), buf((), F64)], sum_body, result_types=[F64])
    x = np.random.default_rng(1).standard_normal(37)
    out = np.zeros((), np.float64)
    (total,) = run_function(f, [x, out])
    assert total == pytest.approx(x.sum())
    assert out[()] == total


def test_zero_trip_loop_gives_initial_values():
    module, f = make_function([buf((DYN,), F64), buf((), F64)], sum_body, result_types=[F64])
    (total,) = run_function(f, [np.zeros(0), np.zeros(())])
    assert total == 0.0


def test_for_with_step_and_several_carried_values():
    # counts iterations and sums the induction variable of range(3, 20, 4)
    def body(b, out):
        lo, hi, st_ = c(b, 3), c(b, 20), c(b, 4)

        def step(bb, i, n, s):
            return [ins(bb, scalar.AddOp.build(n, c(bb, 1))), ins(bb, scalar.AddOp.build(s, i))]
        loop = ins(b, ForOp.build(lo, hi, st_, [c(b, 0), c(b, 0)], body=step))
        return loop.results
    module, f = make_function([buf((1,))], body, result_types=[INDEX, INDEX])
    n, s = run_function(f, [np.zeros(1, np.float32)])
    assert (n, s) == (len(range(3, 20, 4)), sum(range(3, 20, 4)))


def test_transposed_view():
    def body(b, x, out):
        xt = ins(b, TransposeViewOp.build(x, [1, 0]))
        ins(b, CopyOp.build(xt, out))
        # also read one element through the view: xt[2, 1] == x[1, 2]
        return [ins(b, LoadOp.build(xt, [c(b, 2), c(b, 1)]))]
    module, f = make_function([buf((DYN, DYN)), buf((DYN, DYN))], body, result_types=[F32])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((4, 3), np.float32)
    (element,) = run_function(f, [x, out])
    np.testing.assert_array_equal(out, x.T)
    assert element == x[1, 2]
    assert f.body.block.first_op.result.type == buf((DYN, DYN), strides=(1, DYN))


def test_broadcast_view_adds_a_row_to_every_row():
    # out = m + v[None, :], the row made by transpose_view (new dim) and broadcast_view (stride 0)
    def body(b, m, v, out):
        row = ins(b, TransposeViewOp.build(v, ["x", 0]))
        wide = ins(b, BroadcastViewOp.build(row, [dim(b, m, 0), None]))
        assert wide.type == buf((DYN, DYN), strides=(0, 1))
        add_into(b, m, wide, out)
    module, f = make_function([buf((DYN, DYN)), buf((DYN,)), buf((DYN, DYN))], body)
    m = np.arange(15, dtype=np.float32).reshape(5, 3)
    v = np.array([10, 20, 30], np.float32)
    out = np.zeros_like(m)
    run_function(f, [m, v, out])
    np.testing.assert_array_equal(out, m + v)


def test_broadcast_view_is_a_stride_zero_numpy_view():
    def body(b, v):
        wide = ins(b, BroadcastViewOp.build(v, [4, None]))
        return [wide]
    module, f = make_function([buf((1, 3))], body, result_types=[buf((4, 3), strides=(0, 1))])
    v = np.array([[1, 2, 3]], np.float32)
    (wide,) = run_function(f, [v])
    assert wide.strides == (0, 4) and np.shares_memory(wide, v)
    np.testing.assert_array_equal(wide, np.broadcast_to(v, (4, 3)))


def matmul_body(b, x, y, out):
    """out[i, j] = sum_k x[i, k] * y[k, j]: a parallel (i, j) nest around a k reduction."""
    zero, one = c(b, 0), c(b, 1)
    n_k = dim(b, x, 1)

    def ij(bb, i, j):
        def k_step(kb, k, acc):
            a = ins(kb, LoadOp.build(x, [i, k]))
            bv = ins(kb, LoadOp.build(y, [k, j]))
            return [ins(kb, scalar.AddOp.build(acc, ins(kb, scalar.MulOp.build(a, bv))))]
        total = ins(bb, ForOp.build(zero, n_k, one, [c(bb, 0.0, F64)], body=k_step))
        ins(bb, StoreOp.build(total, out, [i, j]))
    parallel_over(b, out, ij)


def test_matmul_loop_nest():
    t = buf((DYN, DYN), F64)
    module, f = make_function([t, t, t], matmul_body)
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((4, 6)), rng.standard_normal((6, 3))
    out = np.zeros((4, 3))
    run_function(f, [x, y, out])
    np.testing.assert_allclose(out, x @ y, rtol=1e-12)


def test_matmul_through_cblas_sgemm_on_transposed_views():
    # out = x @ y^T, with y passed as the view y^T and a C buffer with a padded leading dimension
    def body(b, x, y, out):
        yt = ins(b, TransposeViewOp.build(y, [1, 0]))
        m, k, n = dim(b, x, 0), dim(b, x, 1), dim(b, out, 1)
        ldc = ins(b, DimOp.build(out, 1))
        args = [c(b, 101), c(b, 111), c(b, 112), m, n, k, c(b, 1.0, F32), x, k, yt, k,
                c(b, 0.0, F32), out, ldc]
        ins(b, CallOp.build("cblas_sgemm", args))
    module, f = make_function([buf((DYN, DYN)), buf((DYN, DYN)), buf((DYN, DYN))], body)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    y = rng.standard_normal((4, 5)).astype(np.float32)
    out = np.full((3, 4), np.nan, np.float32)  # beta = 0: whatever C held is ignored
    run_function(f, [x, y, out])
    np.testing.assert_allclose(out, x @ y.T, rtol=1e-5)


def test_cblas_gemv_and_dot():
    def body(b, a, x, y):
        m, n, one = dim(b, a, 0), dim(b, a, 1), c(b, 1)
        ins(b, CallOp.build("cblas_dgemv", [c(b, 101), c(b, 111), m, n, c(b, 2.0, F64), a, n, x,
                                            one, c(b, 1.0, F64), y, one]))
        return [ins(b, CallOp.build("cblas_ddot", [m, y, one, y, one], [F64]))]
    module, f = make_function([buf((DYN, DYN), F64), buf((DYN,), F64), buf((DYN,), F64)], body,
                              result_types=[F64])
    rng = np.random.default_rng(4)
    a, x, y = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    expected_y = 2.0 * a @ x + y
    (dot,) = run_function(f, [a, x, y])
    np.testing.assert_allclose(y, expected_y)
    assert dot == pytest.approx(expected_y @ expected_y)


def test_external_call_may_not_reach_outside_its_buffer():
    def body(b, x, out):
        n = c(b, 10)  # more elements than x holds
        return [ins(b, CallOp.build("cblas_sdot", [n, x, c(b, 1), x, c(b, 1)], [F32]))]
    module, f = make_function([buf((DYN,)), buf(())], body, result_types=[F32])
    with pytest.raises(InterpreterError, match="outside the buffer"):
        run_function(f, [np.ones(4, np.float32), np.zeros((), np.float32)])


def test_unknown_external_symbol_verifies_but_cannot_be_interpreted():
    module, f = make_function([buf((DYN,))], lambda b, x: ins(b, CallOp.build("my_kernel", [x])))
    with pytest.raises(InterpreterError, match="'my_kernel' has no reference implementation"):
        run_function(f, [np.ones(2, np.float32)])


def test_alloc_fill_copy_dealloc():
    def body(b, x, out):
        tmp = ins(b, AllocOp.build([dim(b, x, 0), 3], F32))
        assert tmp.type == buf((DYN, 3))
        ins(b, FillOp.build(c(b, 2.5, F32), tmp))
        add_into(b, x, tmp, out)
        ins(b, DeallocOp.build(tmp))
    module, f = make_function([buf((DYN, 3)), buf((DYN, 3))], body)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros_like(x)
    run_function(f, [x, out])
    np.testing.assert_array_equal(out, x + 2.5)


def test_fresh_buffers_hold_poison():
    module, f = make_function([], lambda b: [ins(b, AllocOp.build([2], F32)),
                                             ins(b, AllocOp.build([2], I32))],
                              result_types=[buf((2,)), buf((2,), I32)])
    floats, ints = run_function(f, [])
    assert np.isnan(floats).all() and (ints == np.iinfo(np.int32).max).all()


def test_double_dealloc_and_dealloc_of_a_view_are_errors():
    def twice(b):
        tmp = ins(b, AllocOp.build([2], F32))
        ins(b, DeallocOp.build(tmp))
        ins(b, DeallocOp.build(tmp))
    module, f = make_function([], twice)
    with pytest.raises(InterpreterError, match="not a live allocation"):
        run_function(f, [])

    def view(b):
        tmp = ins(b, AllocOp.build([4], F32))
        ins(b, DeallocOp.build(ins(b, SubviewOp.build(tmp, [0], [2], [1]))))
    module, f = make_function([], view)
    with pytest.raises(InterpreterError, match="not a live allocation"):
        run_function(f, [])


def test_reading_after_dealloc_shows_poison():
    def body(b):
        tmp = ins(b, AllocOp.build([3], F64))
        ins(b, FillOp.build(c(b, 1.0, F64), tmp))
        view = ins(b, SubviewOp.build(tmp, [1], [2], [1]))
        ins(b, DeallocOp.build(tmp))
        return [ins(b, LoadOp.build(view, [c(b, 0)]))]
    module, f = make_function([], body, result_types=[F64])
    (value,) = run_function(f, [])
    assert np.isnan(value)


def test_reshape_view():
    def body(b, x, out):
        n = dim(b, x, 0)
        flat_size = ins(b, scalar.MulOp.build(n, c(b, 6)))
        flat = ins(b, ReshapeViewOp.build(x, [flat_size]))
        cube = ins(b, ReshapeViewOp.build(flat, [n, 3, 2]))
        assert cube.type == buf((DYN, 3, 2))
        ins(b, CopyOp.build(cube, out))
    module, f = make_function([buf((DYN, 6)), buf((DYN, 3, 2))], body)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.zeros((4, 3, 2), np.float32)
    run_function(f, [x, out])
    np.testing.assert_array_equal(out, x.reshape(4, 3, 2))


def test_reshape_view_with_wrong_run_time_size():
    def body(b, x):
        return [ins(b, ReshapeViewOp.build(x, [c(b, 5)]))]
    module, f = make_function([buf((DYN,))], body, result_types=[buf((DYN,))])
    with pytest.raises(InterpreterError, match=r"cannot view 4 elements .* as \(5,\)"):
        run_function(f, [np.zeros(4, np.float32)])


def test_dimshuffle_drops_size_one_dims_and_inserts_new_ones():
    def body(b, x):
        return [ins(b, TransposeViewOp.build(x, [2, "x", 0]))]
    t_out = buf((4, 1, DYN), strides=(1, 0, 4))
    module, f = make_function([buf((DYN, 1, 4))], body, result_types=[t_out])
    x = np.arange(12, dtype=np.float32).reshape(3, 1, 4)
    (view,) = run_function(f, [x])
    np.testing.assert_array_equal(view, x[:, 0, :].T[:, None, :])
    assert np.shares_memory(view, x)


# subviews against NumPy's basic slicing


@st.composite
def slices(draw):
    n = draw(st.integers(0, 8))
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    size = draw(st.integers(0, n))
    if size == 0:
        offset = draw(st.integers(0, n))
    else:
        span = (size - 1) * abs(step)
        if span >= n:
            size, span = 1, 0
        offset = draw(st.integers(0, n - 1 - span)) + (span if step < 0 else 0)
    return n, offset, size, step


@settings(max_examples=80, deadline=None)
@given(st.lists(slices(), min_size=1, max_size=3), st.data())
def test_subview_matches_numpy_slicing(parts, data):
    shape = tuple(p[0] for p in parts)
    rank = len(shape)
    dynamic = data.draw(st.lists(st.booleans(), min_size=3 * rank, max_size=3 * rank))
    # only a size known to be 1 at compile time may be dropped
    droppable = [a for a, p in enumerate(parts) if p[2] == 1 and not dynamic[rank + a]]
    drop = sorted(data.draw(st.lists(st.sampled_from(droppable), unique=True)) if droppable else [])
    x_type = buf([DYN] * rank)
    flags = iter(dynamic)
    # (offsets, sizes, steps), each entry static or, where the flag says so, a run-time constant
    entries = [[(p[k], next(flags)) for p in parts] for k in (1, 2, 3)]
    out_type = subview_type(x_type, *[[DYNAMIC if d else v for v, d in e] for e in entries], drop)

    def body(b, x):
        mixed = [[c(b, v) if d else v for v, d in e] for e in entries]
        return [ins(b, SubviewOp.build(x, *mixed, drop_dims=drop))]
    module, f = make_function([x_type], body, result_types=[out_type])
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    (view,) = run_function(f, [x])
    index = []
    for a, (n, o, s, k) in enumerate(parts):
        if a in drop:
            index.append(o)
        elif s == 0:
            index.append(slice(0, 0))
        else:
            stop = o + (s - 1) * k + (1 if k > 0 else -1)
            index.append(slice(o, stop if stop >= 0 else None, k))
    np.testing.assert_array_equal(view, x[tuple(index)])
    assert view.ndim == rank - len(drop) and (view.size == 0 or np.shares_memory(view, x))


def test_subview_type_inference():
    x = Block([buf((DYN, 8))]).args[0]
    row = SubviewOp.build(x, [Block([INDEX]).args[0], 0], [1, 8], [1, 1], drop_dims=[0])
    assert row.result.type == buf((8,), offset=DYN)
    rev = SubviewOp.build(x, [0, 7], [2, 4], [1, -2])
    assert rev.result.type == buf((2, 4), strides=(8, -2), offset=7)
    assert rev.attributes["static_strides"] == ArrayAttr((IntAttr(1), IntAttr(-2)))
    inner = SubviewOp.build(rev.result, [1, 1], [1, 2], [1, 1])
    assert inner.result.type == buf((1, 2), strides=(8, -2), offset=13)


# run-time errors


def test_out_of_bounds_load_names_the_op_and_location():
    def body(b, x):
        load = LoadOp.build(x, [c(b, 0), c(b, 3)], location=Location("model.py", 12, 5))
        return [ins(b, load)]
    module, f = make_function([buf((DYN, DYN))], body, result_types=[F32])
    with pytest.raises(IndexError, match=r"loops.load at model.py:12:5: index \(0, 3\) is out of "
                                         r"bounds for a buffer of shape \(2, 3\)") as info:
        run_function(f, [np.zeros((2, 3), np.float32)])
    assert isinstance(info.value, BufferIndexError) and info.value.op.name == "loops.load"


def test_negative_index_store_is_out_of_bounds():
    def body(b, x):
        minus_one = ins(b, scalar.SubOp.build(c(b, 0), c(b, 1)))
        ins(b, StoreOp.build(c(b, 1.0, F32), x, [minus_one], location=Location("m.py", 3, 1)))
    module, f = make_function([buf((DYN,))], body)
    x = np.zeros(4, np.float32)
    with pytest.raises(IndexError,
                       match=r"loops.store at m.py:3:1: index \(-1,\) is out of bounds"):
        run_function(f, [x])
    assert (x == 0).all()


def test_out_of_bounds_subview_at_run_time():
    def body(b, x):
        return [ins(b, SubviewOp.build(x, [c(b, 3)], [2], [1], location=Location("m.py", 4, 2)))]
    module, f = make_function([buf((DYN,))], body, result_types=[buf((2,), offset=DYN)])
    with pytest.raises(BufferIndexError, match="loops.subview at m.py:4:2: offset 3, size 2"):
        run_function(f, [np.zeros(4, np.float32)])


def test_run_time_layout_must_match_the_type():
    module, f = make_function([buf((DYN, DYN))], lambda b, x: [dim(b, x, 0)], result_types=[INDEX])
    with pytest.raises(InterpreterError, match=r"strides \(1, 2\) do not match the type \(3, 1\)"):
        run_function(f, [np.zeros((3, 2), np.float32).T])
    with pytest.raises(InterpreterError, match="dtype float64 does not match the element type f32"):
        run_function(f, [np.zeros((3, 2))])
    assert run_function(f, [np.zeros((3, 2), np.float32)]) == [3]


def test_copy_shape_mismatch_at_run_time():
    module, f = make_function([buf((DYN,)), buf((DYN,))],
                              lambda b, x, y: ins(b, CopyOp.build(x, y)))
    with pytest.raises(InterpreterError,
                       match=r"source shape \(3,\) differs from target shape \(2,\)"):
        run_function(f, [np.zeros(3, np.float32), np.zeros(2, np.float32)])


def test_non_positive_step_is_a_run_time_error():
    def body(b, x):
        zero = c(b, 0)
        ins(b, ForOp.build(zero, c(b, 4), zero, body=lambda bb, i: []))
    module, f = make_function([buf((1,))], body)
    with pytest.raises(InterpreterError, match="step must be positive, got 0"):
        run_function(f, [np.zeros(1, np.float32)])


# ---------------------------------------------------------------------------------------------
# Verifiers: one negative test per rule


def _verify_fails(arg_types, make_op, message, raw=False):
    """``make_op(b, *args)`` builds (and inserts) the bad op inside a function; verifying the
    module must fail at that op with ``message``."""
    f = FuncOp.build("f", list(arg_types), [])
    b = Builder.at_end(f.body.block)
    bad = make_op(b, *f.args)
    b.insert(ReturnOp.create([]))
    with pytest.raises(VerifyError, match=message) as info:
        verify(ModuleOp.build([f]))
    assert info.value.op is bad


def raw(b, cls, operands=(), result_types=(), attributes=None, regions=()):
    return b.insert(cls.create(operands=list(operands), result_types=list(result_types),
                               attributes=attributes, regions=list(regions)))


B2 = buf((DYN, 4))
B1 = buf((DYN,))


def loop_block(arg_types, yield_values=None):
    """A loop body yielding ``yield_values(block)`` (default: the carried arguments)."""
    block = Block(arg_types)
    values = block.args[1:] if yield_values is None else yield_values(block)
    block.append(YieldOp.build(list(values)))
    return block


def no_values(block):
    return []


def loop_region(arg_types, yield_values=None):
    return Region([loop_block(arg_types, yield_values)])


VERIFIER_CASES = {
    # alloc
    "alloc result not a buffer": ([], lambda b: raw(b, AllocOp, [], [F32]),
                                  "the result must be a contiguous buffer with offset 0, got f32"),
    "alloc not contiguous": ([], lambda b: raw(b, AllocOp, [], [buf((2, 3), strides=(1, 2))]),
                             "the result must be a contiguous buffer with offset 0"),
    "alloc with offset": ([], lambda b: raw(b, AllocOp, [], [buf((2,), offset=1)]),
                          "the result must be a contiguous buffer with offset 0"),
    "alloc size count": ([INDEX], lambda b, n: raw(b, AllocOp, [n, n], [B1]),
                         r"expected 1 size operand\(s\), one per '\?', got 2"),
    "alloc size type": ([I64], lambda b, n: raw(b, AllocOp, [n], [B1]),
                        "sizes #0 must be index, got i64"),
    # dealloc
    "dealloc of a scalar": ([F32], lambda b, x: raw(b, DeallocOp, [x]),
                            "the buffer must be a buffer"),
    # dim
    "dim of a scalar": ([F32], lambda b, x: raw(b, DimOp, [x], [INDEX], {"axis": 0}),
                        "the buffer must be a buffer, got f32"),
    "dim axis out of range": ([B2], lambda b, x: raw(b, DimOp, [x], [INDEX], {"axis": 2}),
                              "axis 2 is out of range for rank 2"),
    "dim result type": ([B2], lambda b, x: raw(b, DimOp, [x], [I64], {"axis": 0}),
                        "loops.dim: the result must be index, got i64"),
    "dim axis attribute kind": ([B2], lambda b, x: raw(b, DimOp, [x], [INDEX], {"axis": "0"}),
                                "attribute 'axis' must be IntAttr"),
    # load
    "load from a scalar": ([F32, INDEX], lambda b, x, i: raw(b, LoadOp, [x, i], [F32]),
                           "loops.load: the buffer must be a buffer"),
    "load index count": ([B2, INDEX], lambda b, x, i: raw(b, LoadOp, [x, i], [F32]),
                         r"expected 2 index operand\(s\) for a rank-2 buffer, got 1"),
    "load index type": ([B1, I32], lambda b, x, i: raw(b, LoadOp, [x, i], [F32]),
                        "indices #0 must be index, got i32"),
    "load result type": ([B1, INDEX], lambda b, x, i: raw(b, LoadOp, [x, i], [F64]),
                         "the result must be f32, got f64"),
    # store
    "store value type": ([B1, F64, INDEX], lambda b, x, v, i: raw(b, StoreOp, [v, x, i]),
                         r"the buffer must be a buffer of f64, got !loops.buffer<\?xf32>"),
    "store index count": ([B1, F32], lambda b, x, v: raw(b, StoreOp, [v, x]),
                          r"expected 1 index operand\(s\)"),
    "store index type": ([B1, F32, F32], lambda b, x, v, i: raw(b, StoreOp, [v, x, i]),
                         "indices #0 must be index, got f32"),
    "store into a scalar": ([F32, F32], lambda b, x, v: raw(b, StoreOp, [v, x]),
                            "loops.store: the buffer must be a buffer"),
    # copy
    "copy element types": ([B1, buf((DYN,), F64)], lambda b, x, y: raw(b, CopyOp, [x, y]),
                           r'the target must be a rank-1 buffer of f32 in space "host", '
                           r'got !loops.buffer<\?xf64>'),
    "copy memory spaces": ([B1, buf((DYN,), memory_space="device")],
                           lambda b, x, y: raw(b, CopyOp, [x, y]),
                           r'the target must be .* in space "host", got .*space="device"'),
    "copy ranks": ([B1, B2], lambda b, x, y: raw(b, CopyOp, [x, y]),
                   r"the target must be a rank-1 buffer .*, got !loops.buffer<\?x4xf32>"),
    "copy static sizes": ([buf((DYN, 3)), B2], lambda b, x, y: raw(b, CopyOp, [x, y]),
                          "sizes differ in dimension 1: 3 and 4"),
    "copy from a scalar": ([F32, B1], lambda b, x, y: raw(b, CopyOp, [x, y]),
                           "source must be a buffer"),
    "copy into a scalar": ([B1, F32], lambda b, x, y: raw(b, CopyOp, [x, y]),
                           "the target must be a rank-1 buffer of f32 in space \"host\", got f32"),
    # fill
    "fill value type": ([B1, I32], lambda b, x, v: raw(b, FillOp, [v, x]),
                        r"the buffer must be a buffer of i32, got !loops.buffer<\?xf32>"),
    "fill a scalar": ([F32, F32], lambda b, x, v: raw(b, FillOp, [v, x]),
                      "loops.fill: the buffer must be a buffer"),
    # subview
    "subview of a scalar": ([F32], lambda b, x: raw(b, SubviewOp, [x], [B1], _sv([0], [1], [1])),
                            "source must be a buffer"),
    "subview entry count": ([B2], lambda b, x: raw(b, SubviewOp, [x], [B1], _sv([0], [1], [1])),
                            "1 offsets for a rank-2 buffer"),
    "subview dynamic count": ([B1, INDEX], lambda b, x, i: raw(b, SubviewOp, [x, i], [B1],
                                                                _sv([0], [DYNAMIC], [DYNAMIC])),
                              r"expected 2 dynamic operand\(s\), one per DYNAMIC entry, got 1"),
    "subview dynamic type": ([B1, I64], lambda b, x, i: raw(b, SubviewOp, [x, i], [B1],
                                                             _sv([0], [DYNAMIC], [1])),
                             "dynamic #0 must be index, got i64"),
    "subview negative offset": ([B1], lambda b, x: raw(b, SubviewOp, [x], [buf((1,))],
                                                       _sv([-1], [1], [1])),
                                "negative offset -1 in dimension 0"),
    "subview negative size": ([B1], lambda b, x: raw(b, SubviewOp, [x], [B1], _sv([0], [-2], [1])),
                              "negative size -2 in dimension 0"),
    "subview zero step": ([B1], lambda b, x: raw(b, SubviewOp, [x], [buf((2,))],
                                                 _sv([0], [2], [0])),
                          "step 0 in dimension 0"),
    "subview out of bounds": ([buf((4,))], lambda b, x: raw(
        b, SubviewOp, [x], [buf((3,), offset=2)], _sv([2], [3], [1])),
        "offset 2, size 3, step 1 is out of bounds for dimension 0 of size 4"),
    "subview starts before its buffer": ([buf((DYN,), strides=(-1,))], lambda b, x: raw(
        b, SubviewOp, [x], [buf((1,), strides=(-1,), offset=DYN)], _sv([2], [1], [1])),
        "the view starts before its buffer"),
    "subview drop a non-unit dim": ([B2], lambda b, x: raw(b, SubviewOp, [x], [buf((2,))],
                                                           _sv([0, 0], [2, 1], [1, 1], drop=[0])),
                                    "dropped dimension 0 must have size 1"),
    "subview drop out of range": ([B1], lambda b, x: raw(b, SubviewOp, [x], [buf(())],
                                                         _sv([0], [1], [1], drop=[3])),
                                  "cannot drop dimension 3 of a rank-1 buffer"),
    "subview drop twice": ([B1], lambda b, x: raw(b, SubviewOp, [x], [buf(())],
                                                  _sv([0], [1], [1], drop=[0, 0])),
                           "repeats a dimension"),
    "subview result type": ([B2], lambda b, x: raw(b, SubviewOp, [x], [buf((2, 2))],
                                                   _sv([0, 0], [2, 2], [1, 1])),
                            r"result type !loops.buffer<2x2xf32> should be "
                            r"!loops.buffer<2x2xf32, strides=\[4, 1\]>"),
    "subview int arrays": ([B1], lambda b, x: raw(b, SubviewOp, [x], [B1], {
        "static_offsets": ArrayAttr((IntAttr(0),)),
        "static_sizes": ArrayAttr((SymbolRefAttr("a"),)),
        "static_strides": ArrayAttr((IntAttr(1),))}),
        "'static_sizes' must be an array of integers"),
    # reshape_view
    "reshape_view strided source": ([buf((DYN, 4), strides=(8, 1))],
                                    lambda b, x: raw(b, ReshapeViewOp, [x], [buf((8,))]),
                                    "the source must be a contiguous buffer"),
    "reshape_view result not a buffer": ([B2], lambda b, x: raw(b, ReshapeViewOp, [x], [F32]),
                                         "result must be a buffer"),
    "reshape_view element type": ([buf((2, 4))],
                                  lambda b, x: raw(b, ReshapeViewOp, [x], [buf((8,), F64)]),
                                  "should be !loops.buffer<8xf32>"),
    "reshape_view strided result": ([buf((2, 4))],
                                    lambda b, x: raw(b, ReshapeViewOp, [x],
                                                     [buf((4, 2), strides=(1, 4))]),
                                    "should be !loops.buffer<4x2xf32>"),
    "reshape_view size count": ([B2], lambda b, x: raw(b, ReshapeViewOp, [x], [B1]),
                                r"expected 1 size operand\(s\), one per '\?', got 0"),
    "reshape_view size type": ([B2, I64], lambda b, x, n: raw(b, ReshapeViewOp, [x, n], [B1]),
                               "sizes #0 must be index, got i64"),
    "reshape_view element count": ([buf((2, 4))],
                                   lambda b, x: raw(b, ReshapeViewOp, [x], [buf((3, 3))]),
                                   r"cannot view \(2, 4\) as \(3, 3\)"),
    # transpose_view
    "transpose_view of a scalar": ([F32],
                                   lambda b, x: raw(b, TransposeViewOp, [x], [B1], _pat([0])),
                                   "source must be a buffer"),
    "transpose_view dim out of range": ([B2], lambda b, x: raw(b, TransposeViewOp, [x], [B2],
                                                               _pat([0, 2])),
                                        "names dimension 2 of a rank-2 buffer"),
    "transpose_view repeats": ([B2], lambda b, x: raw(b, TransposeViewOp, [x], [B2], _pat([0, 0])),
                               "repeats a dimension"),
    "transpose_view drops a non-unit dim": ([B2], lambda b, x: raw(b, TransposeViewOp, [x], [B1],
                                                                   _pat([0])),
                                            "drops dimension 1, which does not have size 1"),
    "transpose_view result type": ([B2], lambda b, x: raw(b, TransposeViewOp, [x], [buf((4, DYN))],
                                                          _pat([1, 0])),
                                   r"should be !loops.buffer<4x\?xf32, strides=\[1, 4\]>"),
    # broadcast_view
    "broadcast_view rank": ([buf((1,))], lambda b, x: raw(b, BroadcastViewOp, [x], [buf((3, 3))]),
                            "cannot broadcast rank 1 to rank 2"),
    "broadcast_view non-unit dim": ([B1], lambda b, x: raw(b, BroadcastViewOp, [x], [buf((5,))]),
                                    "dimension 0 of size \\? cannot broadcast to 5"),
    "broadcast_view result not a buffer": ([B1], lambda b, x: raw(b, BroadcastViewOp, [x], [F32]),
                                           "result must be a buffer"),
    "broadcast_view result strides": ([buf((1, 3))],
                                      lambda b, x: raw(b, BroadcastViewOp, [x], [buf((2, 3))]),
                                      r"should be !loops.buffer<2x3xf32, strides=\[0, 1\]>"),
    "broadcast_view size count": ([buf((1, 3))], lambda b, x: raw(
        b, BroadcastViewOp, [x], [buf((DYN, 3), strides=(0, 1))]),
        r"expected 1 size operand\(s\), one per dimension broadcast to '\?', got 0"),
    "broadcast_view size type": ([buf((1,)), I32], lambda b, x, n: raw(
        b, BroadcastViewOp, [x, n], [buf((DYN,), strides=(0,))]),
        "sizes #0 must be index, got i32"),
    # for
    "for bound type": ([I64, INDEX], lambda b, n, i: raw(b, ForOp, [n, i, i], [],
                                                         regions=[loop_region([INDEX])]),
                       "the lower must be index, got i64"),
    "for result types": ([INDEX, F32], lambda b, i, x: raw(b, ForOp, [i, i, i, x], [F64],
                                                           regions=[loop_region([INDEX, F32])]),
                         r"result types \(f64\) differ from the initial values' \(f32\)"),
    "for body arguments": ([INDEX, F32], lambda b, i, x: raw(b, ForOp, [i, i, i, x], [F32],
                                                             regions=[loop_region([INDEX, F64])]),
                           r"body arguments \(index, f64\) should be \(index, f32\)"),
    "for body without yield": ([INDEX], lambda b, i: raw(b, ForOp, [i, i, i],
                                                         regions=[Region([Block([INDEX])])]),
                               "the body must end with loops.yield"),
    "for two blocks": ([INDEX], lambda b, i: raw(b, ForOp, [i, i, i], regions=[Region(
        [loop_block([INDEX]), Block()])]), r"expected 1 block in the body, got 2"),
    # parallel
    "parallel operand count": ([INDEX], lambda b, i: raw(
        b, ParallelOp, [i, i], regions=[loop_region([INDEX], no_values)]),
        r"\(3n operands\), got 2"),
    "parallel without dims": ([], lambda b: raw(
        b, ParallelOp, [], regions=[loop_region([], no_values)]),
        r"\(3n operands\), got 0"),
    "parallel bound type": ([INDEX, I32], lambda b, i, j: raw(
        b, ParallelOp, [i, j, i], regions=[loop_region([INDEX], no_values)]),
        "bounds #1 must be index, got i32"),
    "parallel body arguments": ([INDEX], lambda b, i: raw(
        b, ParallelOp, [i, i, i], regions=[loop_region([INDEX, INDEX], no_values)]),
        r"body arguments \(index, index\) should be \(index\)"),
    # call
    "call argument kind": ([TensorType((2,), F32)], lambda b, t: raw(
        b, CallOp, [t], [], {"callee": SymbolRefAttr("g")}),
        "args #0 must be a buffer or a scalar"),
    "call result kind": ([], lambda b: raw(b, CallOp, [], [B1], {"callee": SymbolRefAttr("g")}),
                         "outs #0 must be a scalar"),
    "call two results": ([], lambda b: raw(b, CallOp, [], [F32, F32],
                                           {"callee": SymbolRefAttr("g")}),
                         "returns at most one value"),
    "call known signature count": ([B1], lambda b, x: raw(b, CallOp, [x], [F32],
                                                           {"callee": SymbolRefAttr("cblas_sdot")}),
                                   r"cblas_sdot takes 5 argument\(s\) and returns \(f32\)"),
    "call known signature types": ([INDEX, buf((DYN,), F64)], lambda b, n, x: raw(
        b, CallOp, [n, x, n, x, n], [F32], {"callee": SymbolRefAttr("cblas_sdot")}),
        r"argument #1 of cblas_sdot must be buffer<f32>, got !loops.buffer<\?xf64>"),
    "call callee missing": ([], lambda b: raw(b, CallOp, [], []), "missing attribute 'callee'"),
}


def _sv(offsets, sizes, strides, drop=None):
    attrs = {"static_offsets": ArrayAttr(tuple(map(IntAttr, offsets))),
             "static_sizes": ArrayAttr(tuple(map(IntAttr, sizes))),
             "static_strides": ArrayAttr(tuple(map(IntAttr, strides)))}
    if drop is not None:
        attrs["drop_dims"] = ArrayAttr(tuple(map(IntAttr, drop)))
    return attrs


def _pat(pattern):
    return {"pattern": ArrayAttr(tuple(map(IntAttr, pattern)))}


@pytest.mark.parametrize("case", sorted(VERIFIER_CASES))
def test_verifier_rejects(case):
    arg_types, make_op, message = VERIFIER_CASES[case]
    _verify_fails(arg_types, make_op, message)


def test_yield_type_mismatch_is_reported_at_the_yield():
    f = FuncOp.build("f", [INDEX, F32], [])
    i, x = f.args
    b = Builder.at_end(f.body.block)
    loop = b.insert(ForOp.build(i, i, i, [x]))
    bad = loop.body.block.append(YieldOp.build([loop.induction_var]))
    b.insert(ReturnOp.create([]))
    with pytest.raises(VerifyError, match=r"yields \(index\) but the loop carries \(f32\)") as info:
        verify(ModuleOp.build([f]))
    assert info.value.op is bad


def test_parallel_yield_carries_nothing():
    f = FuncOp.build("f", [INDEX, F32], [])
    i, x = f.args
    b = Builder.at_end(f.body.block)
    loop = b.insert(ParallelOp.build([i], [i], [i]))
    bad = loop.body.block.append(YieldOp.build([x]))
    b.insert(ReturnOp.create([]))
    with pytest.raises(VerifyError, match=r"yields \(f32\) but the loop carries \(\)") as info:
        verify(ModuleOp.build([f]))
    assert info.value.op is bad


def test_yield_outside_a_loop():
    f = FuncOp.build("f", [], [])
    bad = f.body.block.append(YieldOp.build([]))
    with pytest.raises(VerifyError, match="loops.yield must be directly inside loops.for or "
                                          "loops.parallel or loops.if, found in func.func") as info:
        verify(ModuleOp.build([f]))
    assert info.value.op is bad


def test_builders_reject_bad_views():
    x = Block([buf((DYN, 4))]).args[0]
    with pytest.raises(VerifyError, match="only size-1 dimensions broadcast"):
        BroadcastViewOp.build(x, [None, 8])
    with pytest.raises(VerifyError,
                       match="a run-time size is only allowed for a dimension of size 1"):
        BroadcastViewOp.build(x, [Block([INDEX]).args[0], None])
    with pytest.raises(VerifyError, match="drops dimension 0"):
        TransposeViewOp.build(x, [1])
    with pytest.raises(VerifyError, match="out of bounds"):
        SubviewOp.build(x, [0, 3], [1, 2], [1, 1])
    with pytest.raises(TypeError, match="expected an int or an index Value"):
        AllocOp.build([2.0], F32)
    with pytest.raises(VerifyError, match="1 lower bounds, 2 upper bounds"):
        ParallelOp.build([x], [x, x], [x])


def test_known_externals_have_consistent_signatures():
    for name, fn in EXTERNAL_FUNCTIONS.items():
        assert fn.name == name and len(fn.results) <= 1
    assert "cblas_sgemm" in EXTERNAL_FUNCTIONS and "cblas_dgemm" in EXTERNAL_FUNCTIONS


# ---------------------------------------------------------------------------------------------
# Print / parse round trips


def _round_trip(module):
    """Generic and pretty text both parse back to the same IR; gives the generic text."""
    text = print_op(module, generic=True)
    parsed = parse_module(text)
    verify(parsed)
    assert print_op(parsed, generic=True) == text
    pretty = print_op(module)
    from_pretty = parse_module(pretty)
    verify(from_pretty)
    assert print_op(from_pretty, generic=True) == text
    assert print_op(from_pretty) == pretty == print_op(parsed)
    return text


def _all_ops_module():
    """One function using every loops op and the buffer type's layouts and spaces."""
    def body(b, x, y, n, dev):
        t = ins(b, AllocOp.build([n, 4], F32))
        ins(b, FillOp.build(c(b, 0.0, F32), t))
        s = ins(b, SubviewOp.build(x, [c(b, 1), 3], [n, 2], [1, -1]))
        r = ins(b, SubviewOp.build(x, [0, 0], [1, 4], [1, 1], drop_dims=[0]))
        tv = ins(b, TransposeViewOp.build(r, ["x", 0]))
        bv = ins(b, BroadcastViewOp.build(tv, [n, None]))
        ins(b, CopyOp.build(bv, t))
        flat = ins(b, ReshapeViewOp.build(t, [ins(b, scalar.MulOp.build(n, c(b, 4)))]))
        ins(b, StoreOp.build(ins(b, LoadOp.build(flat, [c(b, 0)])), y, [c(b, 0), c(b, 0)]))
        def store_column(bb, i, j):
            ins(bb, StoreOp.build(ins(bb, LoadOp.build(s, [i, c(bb, 0)])), y, [i, j]))
        assert parallel_over(b, y, store_column).rank == 2
        total = ins(b, ForOp.build(c(b, 0), n, c(b, 1), [c(b, 0.0, F32)], body=lambda bb, i, acc: [
            ins(bb, scalar.AddOp.build(acc, ins(bb, LoadOp.build(flat, [i]))))]))
        ins(b, CallOp.build("cblas_sdot", [n, flat, c(b, 1), flat, c(b, 1)], [F32]))
        ins(b, CallOp.build("vendor.kernel", [dev, n]))
        ins(b, DeallocOp.build(t))
        return [total]
    dev_t = buf((DYN, DYN), I1, strides=(DYN, 2), offset=DYN, memory_space="device")
    module, f = make_function([buf((DYN, 4)), buf((DYN, DYN)), INDEX, dev_t], body, [F32])
    return module


def test_every_op_round_trips_in_the_generic_form():
    text = _round_trip(_all_ops_module())
    for name in ("alloc", "dealloc", "fill", "subview", "transpose_view", "broadcast_view",
                 "reshape_view", "copy", "load", "store", "parallel", "for", "yield", "call",
                 "dim"):
        assert f'"loops.{name}"' in text
    assert '!loops.buffer<?x?xi1, strides=[?, 2], offset=?, space="device">' in text


def test_round_trip_keeps_interpreter_results():
    t = buf((DYN, DYN), F64)
    module, f = make_function([t, t, t], matmul_body)
    parsed = parse_module(print_op(module, generic=True))
    g = parsed.functions[0]
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    out = np.zeros((2, 2))
    run_function(g, [x, y, out])
    np.testing.assert_allclose(out, x @ y)


@settings(max_examples=40, deadline=None)
@given(buffer_types())
def test_buffer_types_round_trip_through_the_ir_parser(t):
    module, f = make_function([t], lambda b, x: [], name="g")
    text = _round_trip(module)
    assert str(t) in text


def test_pretty_form_of_a_reduction():
    module, f = make_function([buf((DYN,), F64), buf((), F64)], sum_body, result_types=[F64])
    assert print_op(f) == """\
func.func @f(%arg0: !loops.buffer<?xf64>, %arg1: !loops.buffer<f64>) -> f64 {
  %0 = scalar.constant 0 : index
  %1 = scalar.constant 1 : index
  %2 = loops.dim %arg0, 0 : !loops.buffer<?xf64>
  %3 = scalar.constant 0.000000e+00 : f64
  %4 = loops.for %arg2 = %0 to %2 step %1 iter_args(%arg3 = %3) -> f64 {
    %5 = loops.load %arg0[%arg2] : !loops.buffer<?xf64>
    %6 = scalar.add %arg3, %5 : f64
    loops.yield %6 : f64
  }
  loops.store %4, %arg1[] : !loops.buffer<f64>
  func.return %4 : f64
}"""
    _round_trip(module)


def test_malformed_ops_print_in_the_generic_form():
    x, i = Block([buf((DYN,)), INDEX]).args
    bad_load = LoadOp.create(operands=[x, i], result_types=[F64])
    assert print_op(bad_load).startswith('%0 = "loops.load"(')
    bad_for = ForOp.create(operands=[i, i, i], result_types=[F32], regions=[loop_region([INDEX])])
    assert '"loops.for"(' in print_op(bad_for)
    missing = DimOp.create(operands=[], result_types=[INDEX], attributes={"axis": 0})
    assert '"loops.dim"()' in print_op(missing)
    not_a_buffer = LoadOp.create(operands=[i, i], result_types=[INDEX])
    assert print_op(not_a_buffer).startswith('%0 = "loops.load"(')


@pytest.mark.parametrize("body, message", [
    ("loops.parallel (%i, %j) = (%n) to (%n) step (%n) {\n loops.yield\n}",
     r"2 induction variable\(s\) need as many lower bounds, upper bounds and steps, got 1, 1, 1"),
    ("%r = loops.for %i = %n to %n step %n iter_args(%a = %n, %b = %n) -> index {\n"
     " loops.yield %a, %b : index, index\n}", r"2 carried value\(s\) but 1 type\(s\)"),
    ("%x = loops.load %n[%n] : index",
     "cannot infer the result types of 'loops.load': expected a buffer, got index"),
    ("loops.call @g(%n) : index", r"expected a function type \(inputs\) -> results, found index"),
    ("%v = loops.transpose_view %n [y] : index -> index", "expected an integer, found 'y'"),
    ("%v = loops.for %i = %n step %n {\n}", "expected 'to' in loops.for"),
])
def test_pretty_form_parse_errors(body, message):
    text = "func.func @f(%n: index) {\n" + body + "\nfunc.return\n}"
    with pytest.raises(ParseError, match=message):
        parse_module(text)
