"""Helpers for the bufferize tests: build a one-function module from a tensor graph, run it in
the interpreter before and after ``bufferize``, and compare the results.

>>> import numpy as np
>>> from lowering.ir.types import F64, TensorType
>>> from lowering.dialects.tensor import ExpOp
>>> module = function_module([TensorType((None,), F64)], lambda x: [ExpOp.build(x).result])
>>> before, after = run_both(module, [np.zeros(2)])
>>> after[0].tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lowering.dialects  # noqa: F401  (registers every op and interpreter rule)
import lowering.passes  # noqa: F401  (registers every pass)
from lowering.dialects import tensor as T
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.loops import AssertOp
from lowering.ir.attributes import TypeAttr
from lowering.ir.core import OpResult, VerifyError
from lowering.ir.parser import parse_module
from lowering.ir.printer import print_op
from lowering.ir.types import I32, I64, SCALAR_TYPES, FunctionType, TensorType
from lowering.ir.verifier import verify
from lowering.passes.bufferize.bufferize import Bufferize


def topological_ops(outputs) -> list:
    """The ops computing ``outputs`` (detached graph), each after the ops it reads."""
    order, seen = [], set()

    def visit(value):
        if not isinstance(value, OpResult) or id(value.op) in seen:
            return
        seen.add(id(value.op))
        for v in value.op.operands:
            visit(v)
        order.append(value.op)

    for out in outputs:
        visit(out)
    return order


def function_module(arg_types, build, name: str = "f") -> ModuleOp:
    """A verified module with one function: ``build(*args)`` makes the graph from the
    function's arguments (with the ops' ``build``) and returns the values to return."""
    func = FuncOp.build(name, list(arg_types), [])
    outputs = list(build(*func.args))
    block = func.body.block
    for op in topological_ops(outputs):
        block.append(op)
    block.append(ReturnOp.create(outputs))
    func.attributes["function_type"] = TypeAttr(FunctionType(tuple(arg_types),
                                                             tuple(v.type for v in outputs)))
    module = ModuleOp.build([func])
    verify(module)
    return module


def bufferized(module: ModuleOp, **options) -> ModuleOp:
    """A bufferized copy of ``module``: verified, without tensor ops, with checks only at the
    top level of the function, and checked to print and parse back in both forms."""
    copy = module.clone()
    Bufferize(**options).apply(copy)
    verify(copy)
    for op in copy.walk():
        assert not op.name.startswith("tensor."), f"{op.name} is left"
        if isinstance(op, AssertOp):  # checks run before any loop, never inside one
            assert isinstance(op.parent_op, FuncOp), op
    text = print_op(copy)
    again = parse_module(text)
    verify(again)
    assert print_op(again) == text
    generic = print_op(copy, generic=True)
    assert print_op(parse_module(generic), generic=True) == generic
    return copy


def run(module: ModuleOp, arrays) -> list:
    """Interpret the module's function on ``arrays``."""
    return run_function(module.functions[0], list(arrays))


def run_both(module: ModuleOp, arrays, **options) -> tuple[list, list]:
    """Results before and after ``bufferize`` (the inputs are not modified by either)."""
    saved = [np.array(a, copy=True) for a in arrays]
    before = [np.asarray(v) for v in run(module, arrays)]
    after = [np.asarray(v) for v in run(bufferized(module, **options), arrays)]
    for a, s in zip(arrays, saved):
        np.testing.assert_array_equal(np.asarray(a), s)
    return before, after


def check_graph(arg_types, build, arrays, tolerance: float | None = None, **options) -> ModuleOp:
    """Build the module, check that bufferize preserves its results on ``arrays`` (see
    ``assert_same``), and return the bufferized module for further checks."""
    module = function_module(arg_types, build)
    before, after = run_both(module, arrays, **options)
    assert_same(before, after, tolerance)
    return bufferized(module, **options)


def assert_same(before, after, tolerance: float | None = None) -> None:
    """Equal dtypes, shapes and values: integers and booleans bit for bit; floats equal (NaN
    equal to NaN) up to one unit in the last place, or within ``tolerance`` (relative and
    absolute) where loop order changes a sum."""
    assert len(before) == len(after)
    for b, a in zip(before, after):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        assert a.shape == b.shape, (a.shape, b.shape)
        if tolerance is not None and b.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True)
        elif b.dtype.kind == "f":
            # NumPy's math functions may differ by one unit in the last place between an array
            # argument (SIMD code) and a scalar one (f16 log10, f32 log2 do): the tensor
            # interpreter evaluates arrays, the loops interpreter elements.
            differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
            np.testing.assert_array_max_ulp(a[differ], b[differ], maxulp=1)
        else:
            np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# Random graphs (hypothesis strategies)

DTYPES = [t for name, t in SCALAR_TYPES.items() if name != "index"]
UNARY = [c for c in T.ELEMENTWISE_OPS.values() if c.scalar_op.arity == 1 and c is not T.CastOp]
BINARY = [c for c in T.ELEMENTWISE_OPS.values() if c.scalar_op.arity == 2]
SPECIAL_FLOATS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 2.5]


def elements(dtype):
    """Floats in [-8, 8] and special values, integers over their whole range, booleans."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return st.one_of(st.floats(-8, 8, width=dtype.itemsize * 8),
                         st.sampled_from(SPECIAL_FLOATS))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    return st.booleans()


@st.composite
def strided_arrays(draw, dtype, shape):
    """An array of ``shape`` laid out at random: a view, with gaps, reversed and permuted
    dimensions, into a bigger array whose other elements are garbage."""
    dtype = np.dtype(dtype)
    data = draw(hnp.arrays(dtype, shape, elements=elements(dtype), fill=st.nothing()))
    rank = len(shape)
    order = draw(st.permutations(range(rank)))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in range(rank)]
    padded = [shape[d] * abs(steps[d]) + 1 for d in order]
    big = np.full(padded, 1 if dtype.kind != "f" else np.nan, dtype=dtype)
    view = big.transpose(np.argsort(order))
    index = tuple(slice(0, 0) if n == 0 else slice(1, 1 + n * s, s) if s > 0
                  else slice(n * -s - 1, None, s) for n, s in zip(shape, steps))
    view = view[(*index, Ellipsis)]  # a view, also for rank 0
    view[...] = data
    return view


@st.composite
def input_types(draw, dtype, shape):
    """A tensor type for arrays of ``shape``: size-1 dims typed 1, others static or ``?``."""
    return TensorType(tuple(1 if s == 1 else (s if draw(st.booleans()) else None)
                            for s in shape), dtype)


@st.composite
def same_rank_shapes(draw, count: int, max_rank: int = 3, max_side: int = 3):
    """``count`` shapes of one rank that broadcast together (some dims 1; sizes may be 0)."""
    rank = draw(st.integers(0, max_rank))
    base = draw(st.lists(st.integers(0, max_side), min_size=rank, max_size=rank))
    return [tuple(1 if draw(st.booleans()) else n for n in base) for _ in range(count)]


@st.composite
def graph_cases(draw, exact: bool = True, max_ops: int = 4):
    """A one-function module of random tensor ops over random inputs, and the inputs.

    The function's arguments: 1-3 tensors of one dtype (broadcast against each other), a rank-0
    i64 ``k`` (a run-time index or slice bound) and a rank-1 i32 index array. With ``exact``,
    only ops whose results do not depend on the order of float summation are drawn; otherwise
    the graph ends with one op that sums floats (sum, mean, prod, dot, softmax, log_softmax) and
    returns its result alone.
    """
    dtype = draw(st.sampled_from(DTYPES))
    count = draw(st.integers(1, 3))
    shapes = draw(same_rank_shapes(count))
    types = [draw(input_types(dtype, s)) for s in shapes]
    arrays = [draw(strided_arrays(dtype.dtype, s)) for s in shapes]
    k = np.array(draw(st.integers(-4, 4)), dtype=np.int64)
    idx = draw(hnp.arrays(np.int32, st.integers(0, 4), elements=st.integers(-3, 3),
                          fill=st.nothing()))
    types += [TensorType((), I64), TensorType((None,), I32)]
    arrays += [k, idx]

    def build(*args):
        pool = list(args[:count])
        k_value, idx_value = args[count], args[count + 1]
        for _ in range(draw(st.integers(0 if not exact else 1, max_ops))):
            value = _apply_random_op(draw, pool, k_value, idx_value, exact=True)
            if value is not None:
                pool.append(value)
        if exact:
            outputs = [pool[-1]]
            if draw(st.booleans()):
                outputs.append(draw(st.sampled_from(pool)))
            return outputs
        for _ in range(20):
            value = _apply_random_op(draw, pool, k_value, idx_value, exact=False)
            if value is not None:
                return [value]
        return [pool[-1]]

    return function_module(types, build), arrays


BUILD_ERRORS = (VerifyError, TypeError, IndexError, ValueError)


def _apply_random_op(draw, pool, k, idx, exact: bool):
    """Build one random op on values of ``pool``; None when the drawn op does not type-check."""
    x = draw(st.sampled_from(pool))
    kinds = EXACT_KINDS if exact else SUMMING_KINDS
    kind = draw(st.sampled_from(sorted(kinds)))
    try:
        return kinds[kind](draw, x, pool, k, idx)
    except BUILD_ERRORS:
        return None


def _same_kind(draw, x, pool):
    """A value of ``pool`` with ``x``'s element type and rank (``x`` itself if no other)."""
    others = [v for v in pool if v.type.element == x.type.element and v.type.rank == x.type.rank]
    return draw(st.sampled_from(others))


def _axes(draw, rank, single: bool = False):
    if single:
        return draw(st.sampled_from([None, *range(rank)]))
    return draw(st.lists(st.integers(0, max(rank - 1, 0)), unique=True, max_size=rank)) \
        if rank and draw(st.booleans()) else None


def _key(draw, x, k):
    """A basic-indexing key for ``x``: ints, slices, and the run-time value ``k``."""
    def part(values):
        return draw(st.sampled_from(values + [k]))

    key = []
    for _ in range(draw(st.integers(0, x.type.rank))):
        if draw(st.booleans()):
            key.append(part([-2, -1, 0, 1, 2]))
        else:
            key.append(slice(part([None, -4, -1, 0, 1, 3]), part([None, -4, -1, 0, 2, 4]),
                             draw(st.sampled_from([None, 1, 2, -1, -2, 3]))))
    return tuple(key)


def _unary(draw, x, pool, k, idx):
    return draw(st.sampled_from(UNARY)).build(x).result


def _binary(draw, x, pool, k, idx):
    return draw(st.sampled_from(BINARY)).build(x, _same_kind(draw, x, pool)).result


def _cast(draw, x, pool, k, idx):
    return T.CastOp.build(x, draw(st.sampled_from(DTYPES))).result


def _select(draw, x, pool, k, idx):
    y = _same_kind(draw, x, pool)
    return T.SelectOp.build(T.GtOp.build(x, y).result, x, _same_kind(draw, x, pool)).result


def _clip(draw, x, pool, k, idx):
    return T.ClipOp.build(x, _same_kind(draw, x, pool), _same_kind(draw, x, pool)).result


def _reduce(draw, x, pool, k, idx):
    names = ["max", "min", "argmax", "argmin"]
    if not x.type.element.is_float:
        names += ["sum", "prod"]
    cls = T.REDUCTION_OPS[draw(st.sampled_from(names))]
    single = cls in (T.ArgMaxOp, T.ArgMinOp)
    return cls.build(x, axes=_axes(draw, x.type.rank, single), keepdims=draw(st.booleans())).result


def _dimshuffle(draw, x, pool, k, idx):
    kept = [d for d in range(x.type.rank) if x.type.shape[d] != 1 or draw(st.booleans())]
    pattern = list(draw(st.permutations(kept)))
    if len(pattern) < 3 and draw(st.booleans()):
        pattern.insert(draw(st.integers(0, len(pattern))), "x")
    return T.DimShuffleOp.build(x, pattern).result


def _subtensor(draw, x, pool, k, idx):
    return T.SubtensorOp.build(x, _key(draw, x, k)).result


def _write_subtensor(draw, x, pool, k, idx):
    key = _key(draw, x, k)
    view = T.SubtensorOp.build(x, key).result
    y = draw(st.sampled_from(UNARY)).build(view).result if draw(st.booleans()) else view
    if y.type.element != x.type.element:
        y = view
    cls = draw(st.sampled_from([T.SetSubtensorOp, T.IncSubtensorOp]))
    return cls.build(x, y, key).result


def _advanced(draw, x, pool, k, idx):
    if x.type.rank == 0:
        return None
    before = draw(st.integers(0, x.type.rank - 1))
    key = (slice(None),) * before + (idx,)
    kind = draw(st.sampled_from(["read", "set", "inc"]))
    gathered = T.AdvancedSubtensorOp.build(x, key).result
    if kind == "read":
        return gathered
    cls = T.AdvancedSetSubtensorOp if kind == "set" else T.AdvancedIncSubtensorOp
    return cls.build(x, gathered, key).result


def _concatenate(draw, x, pool, k, idx):
    axis = draw(st.integers(0, max(x.type.rank - 1, 0)))
    return T.ConcatenateOp.build(x, _same_kind(draw, x, pool), axis=axis).result


def _reshape(draw, x, pool, k, idx):
    if draw(st.booleans()) or x.type.rank == 0:
        return T.ReshapeOp.build(x, [-1]).result
    first = T.ShapeIOp.build(x, 0).result
    return T.ReshapeOp.build(x, [first, -1]).result


def _int_dot(draw, x, pool, k, idx):
    if x.type.element.is_float:
        return None
    return _dot(draw, x, pool, k, idx)


def _dot(draw, x, pool, k, idx):
    if x.type.rank == 1:
        return T.DotOp.build(x, x).result
    if x.type.rank != 2:
        return None
    other = T.DimShuffleOp.build(x, [1, 0]).result
    if draw(st.booleans()):
        other = T.SubtensorOp.build(other, (slice(None), 0)).result
    return T.DotOp.build(x, other).result


def _float_reduce(draw, x, pool, k, idx):
    if not x.type.element.is_float:
        return None
    cls = draw(st.sampled_from([T.SumOp, T.MeanOp, T.ProdOp]))
    return cls.build(x, axes=_axes(draw, x.type.rank), keepdims=draw(st.booleans())).result


def _int_mean(draw, x, pool, k, idx):
    return T.MeanOp.build(x, axes=_axes(draw, x.type.rank)).result


def _softmax(draw, x, pool, k, idx):
    cls = draw(st.sampled_from([T.SoftmaxOp, T.LogSoftmaxOp]))
    return cls.build(x, axis=draw(st.integers(0, max(x.type.rank - 1, 0)))).result


EXACT_KINDS = {"unary": _unary, "binary": _binary, "cast": _cast, "select": _select,
               "clip": _clip, "reduce": _reduce, "dimshuffle": _dimshuffle,
               "subtensor": _subtensor, "write_subtensor": _write_subtensor,
               "advanced": _advanced, "concatenate": _concatenate, "reshape": _reshape,
               "int_dot": _int_dot}
SUMMING_KINDS = {"float_reduce": _float_reduce, "mean": _int_mean, "dot": _dot,
                 "softmax": _softmax}
