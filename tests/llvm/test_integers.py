"""Integer semantics of compiled code, bit for bit against NumPy: conversions between every pair
of types (floats to integers out of range included), floor division, modulo and powers with
their corner cases (division by zero, ``INT_MIN // -1``), and 64-bit index arithmetic."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lowering.dialects.builtin.ops import ModuleOp
from lowering.dialects.scalar import CastOp, FloorDivOp, ModOp, PowOp
from lowering.ir.types import SCALAR_TYPES

from to_llvm_testing import compile_loops, elementwise_function, same_bits, scalar_function

TYPES = ["f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64",
         "index"]
INTEGERS = ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "index"]
FLOATS = ["f16", "f32", "f64"]


def _cast_to(target):
    return lambda b, x: b.insert(CastOp.build(x, target)).result


def numpy_astype(values: np.ndarray, dtype) -> np.ndarray:
    """NumPy's ``astype`` as its vector loop computes it for large contiguous arrays (which is
    what compiled code matches; NumPy's scalar loop differs for out-of-range float to uint32)."""
    wide = np.repeat(values[:, None], 256, axis=1)
    with np.errstate(all="ignore"):
        return wide.astype(dtype)[:, 0].copy()


@functools.cache
def compiled_casts():
    functions = [scalar_function(f"{a}_to_{b}", _cast_to(SCALAR_TYPES[b]), [SCALAR_TYPES[a]])
                 for a in TYPES for b in TYPES]
    return compile_loops(ModuleOp.build(functions))


# Half goes through float, so a few targets cover what differs (ui32 is converted otherwise).
VECTOR_TARGETS = {"f16": ["i8", "ui32", "i64"], "f32": ["i1", *INTEGERS[:-1]],
                  "f64": ["i1", *INTEGERS[:-1]]}


@functools.cache
def compiled_vector_casts():
    functions = [elementwise_function(f"{a}_to_{b}", _cast_to(SCALAR_TYPES[b]), [SCALAR_TYPES[a]])
                 for a in FLOATS for b in VECTOR_TARGETS[a]]
    functions += [elementwise_function(f"{a}_to_{b}", _cast_to(SCALAR_TYPES[b]), [SCALAR_TYPES[a]])
                  for a, b in [("i64", "f16"), ("f64", "f16"), ("ui64", "f32"), ("i8", "ui64"),
                               ("ui32", "i16"), ("i1", "f32")]]
    return compile_loops(ModuleOp.build(functions))


def interesting(type_name: str):
    """Values of the type, with the boundaries conversions care about."""
    t = SCALAR_TYPES[type_name]
    if t.is_bool:
        return st.booleans()
    if t.is_float:
        bounds = [2.0 ** k for k in (7, 8, 15, 16, 31, 32, 63, 64)]
        special = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 255.5, -128.9, np.nan, np.inf, -np.inf,
                   *bounds, *(-b for b in bounds), *(b - 1 for b in bounds),
                   *(-b - 1 for b in bounds), 1e20, -1e20, 65504.0, 1 + 2 ** -11 + 2 ** -40]
        return st.one_of(st.sampled_from(special), st.floats(width=64),
                         st.floats(-1e10, 1e10))
    info = np.iinfo(t.dtype)
    return st.one_of(st.sampled_from([0, 1, -1, int(info.min), int(info.max), 255, 256, 65535,
                                      2 ** 24 + 1, 2 ** 53 + 1, -(2 ** 31)])
                     .filter(lambda v: info.min <= v <= info.max),
                     st.integers(int(info.min), int(info.max)))


def _as(values, type_name) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.array(values, dtype=np.float64 if SCALAR_TYPES[type_name].is_float else object) \
            .astype(SCALAR_TYPES[type_name].dtype)


@pytest.mark.parametrize("source", TYPES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_casts_between_every_pair_of_types(source, data):
    compiled = compiled_casts()
    x = _as(data.draw(st.lists(interesting(source), min_size=6, max_size=6)), source)
    for target in TYPES:
        want = numpy_astype(x, SCALAR_TYPES[target].dtype)
        got = np.array([compiled(f"{source}_to_{target}", v)[0] for v in x])
        assert same_bits(got, want), (source, target, x, got, want)


@pytest.mark.parametrize("source", FLOATS)
def test_vectorized_float_to_integer_casts_match_numpy(source):
    compiled = compiled_vector_casts()
    values = [0.0, -0.0, 0.5, -0.5, 1.5, 127.5, 128.0, -129.0, 255.9, 256.0, 300.5, -300.5,
              65504.0, 70000.5, 2.0 ** 31, -(2.0 ** 31), 2.0 ** 31 - 128, 3e9, -3e9,
              4294967295.0, 4294967296.0, 2.0 ** 63, -(2.0 ** 63), 1.8e19, 1e20, -1e20, np.nan,
              np.inf, -np.inf] * 3
    x = _as(values, source)
    for target in VECTOR_TARGETS[source]:
        (got,) = compiled(f"{source}_to_{target}", x[::-1])
        assert same_bits(got, numpy_astype(x[::-1], SCALAR_TYPES[target].dtype)), target


def test_other_vectorized_conversions_match_numpy():
    compiled = compiled_vector_casts()
    rng = np.random.default_rng(5)
    cases = {"i64": rng.integers(-2 ** 62, 2 ** 62, 200), "f64": rng.standard_normal(200) * 7e4,
             "ui64": rng.integers(0, 2 ** 64, 200, dtype=np.uint64),
             "i8": rng.integers(-128, 128, 200), "ui32": rng.integers(0, 2 ** 32, 200),
             "i1": rng.integers(0, 2, 200)}
    for name in ["i64_to_f16", "f64_to_f16", "ui64_to_f32", "i8_to_ui64", "ui32_to_i16",
                 "i1_to_f32"]:
        source, target = name.split("_to_")
        x = cases[source].astype(SCALAR_TYPES[source].dtype)
        (got,) = compiled(name, x)
        assert same_bits(got, numpy_astype(x, SCALAR_TYPES[target].dtype)), name


def test_double_to_half_rounds_once():
    compiled = compiled_casts()
    x = 1 + 2 ** -11 + 2 ** -40  # through float first it would round to 1.0
    got = compiled("f64_to_f16", np.float64(x))[0][()]
    assert got == np.float16(x) == np.float16(1.0009765625)


# ---------------------------------------------------------------------------------------------
# Floor division, modulo, powers

OPS = {"floordiv": FloorDivOp, "mod": ModOp, "pow": PowOp}


@functools.cache
def compiled_integer_ops():
    functions = []
    for type_name in INTEGERS:
        t = SCALAR_TYPES[type_name]
        for short, cls in OPS.items():
            functions.append(elementwise_function(
                f"{short}_{type_name}", lambda b, x, y, cls=cls: b.insert(cls.build(x, y)).result,
                [t, t]))
    return compile_loops(ModuleOp.build(functions))


@pytest.mark.parametrize("type_name", ["i8", "ui8"])
@pytest.mark.parametrize("short", sorted(OPS))
def test_every_pair_of_bytes(type_name, short):
    dtype = SCALAR_TYPES[type_name].dtype
    every = np.arange(256).astype(dtype)
    x, y = np.repeat(every, 256), np.tile(every, 256)
    (got,) = compiled_integer_ops()(f"{short}_{type_name}", x, y)
    assert same_bits(got, OPS[short].evaluate(x, y))


@pytest.mark.parametrize("type_name", INTEGERS)
def test_division_corner_cases(type_name):
    dtype = SCALAR_TYPES[type_name].dtype
    info = np.iinfo(dtype)
    specials = [v for v in (0, 1, -1, 2, -2, 7, -7, info.min, info.max, info.min + 1, info.max - 1)
                if info.min <= v <= info.max]
    x = np.array([a for a in specials for _ in specials], dtype)
    y = np.array([b for _ in specials for b in specials], dtype)
    compiled = compiled_integer_ops()
    for short, cls in OPS.items():
        (got,) = compiled(f"{short}_{type_name}", x, y)
        assert same_bits(got, cls.evaluate(x, y)), short
    if info.min < 0:
        (q,) = compiled(f"floordiv_{type_name}", np.array([info.min], dtype), np.array([-1], dtype))
        (r,) = compiled(f"mod_{type_name}", np.array([5, -5], dtype), np.array([0, 0], dtype))
        assert q[0] == info.min and r.tolist() == [0, 0]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), type_name=st.sampled_from(["i16", "i32", "i64", "ui32", "ui64"]))
def test_division_and_powers_of_random_integers(data, type_name):
    dtype = SCALAR_TYPES[type_name].dtype
    info = np.iinfo(dtype)
    pairs = data.draw(st.lists(st.tuples(st.integers(int(info.min), int(info.max)),
                                         st.one_of(st.integers(int(info.min), int(info.max)),
                                                   st.integers(-3, 70).filter(
                                                       lambda v: info.min <= v <= info.max))),
                               min_size=1, max_size=20))
    x = np.array([a for a, _ in pairs], dtype)
    y = np.array([b for _, b in pairs], dtype)
    for short, cls in OPS.items():
        (got,) = compiled_integer_ops()(f"{short}_{type_name}", x, y)
        assert same_bits(got, cls.evaluate(x, y)), short


# ---------------------------------------------------------------------------------------------
# 64-bit index arithmetic

INDEXING = '''
func.func @diagonal(%x: !loops.buffer<2x2xf64, strides=[?, ?], offset=?>) -> !loops.buffer<2xf64> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %c2 = "scalar.constant"() {value = 2 : index} : () -> index
  %out = loops.alloc() : !loops.buffer<2xf64>
  loops.for %i = %c0 to %c2 step %c1 {
    %v = loops.load %x[%i, %i] : !loops.buffer<2x2xf64, strides=[?, ?], offset=?>
    loops.store %v, %out[%i] : !loops.buffer<2xf64>
    loops.yield
  }
  func.return %out : !loops.buffer<2xf64>
}
func.func @arith(%a: index, %b: index) -> (index, index, !loops.buffer<?x0xi8>) {
  %p = "scalar.mul"(%a, %b) : (index, index) -> index
  %q = "scalar.floordiv"(%p, %b) : (index, index) -> index
  %big = "scalar.add"(%a, %a) : (index, index) -> index
  %empty = loops.alloc(%big) : !loops.buffer<?x0xi8>
  func.return %p, %q, %empty : index, index, !loops.buffer<?x0xi8>
}'''


def test_index_arithmetic_beyond_32_bits():
    compiled = compile_loops(INDEXING)
    base = np.array([1.5, 0.0, 0.0, 2.5])
    huge = 2 ** 33  # elements: the strides alone overflow 32 bits, the addresses are fine
    view = np.lib.stride_tricks.as_strided(base, shape=(2, 2), strides=(huge * 8, (3 - huge) * 8))
    (diagonal,) = compiled("diagonal", view)
    assert diagonal.tolist() == [1.5, 2.5]
    a, b = np.int64(3 * 2 ** 31 + 5), np.int64(6)
    p, q, empty = compiled("arith", a, b)
    assert int(p) == int(a) * 6 and int(q) == int(a)
    assert empty.shape == (2 * int(a), 0)
