"""Every scalar-dialect op of every element type, compiled by to-llvm, against the op's own
``evaluate`` (the interpreter's semantics, NumPy's results).

Correctly rounded operations (arithmetic, division, sqrt, rounding, comparisons, min/max,
floor division and modulo, casts) must agree bit for bit; transcendental functions within the
vector math library's documented error bound (plus the reference's own rounding).

Each op is compiled once as a function on rank-0 buffers (cheap to compile); the loops that LLVM
vectorizes are checked on arrays for the ops whose vector code differs most.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lowering.dialects.builtin.ops import ModuleOp
from lowering.dialects.scalar import KINDS, SCALAR_OPS, SelectOp, element_class
from lowering.ir.types import F16, F32, F64, I1, I8, I64, SCALAR_TYPES, UI32
from lowering.llvm.cpu.math_calls import uses_libm
from lowering.llvm.vecmath.library import MATH_FUNCTIONS

from to_llvm_testing import compile_loops, elementwise_function, same_bits, scalar_function

TYPES = ["f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"]
# Float functions of integer operands convert them first, the same way for every function: a
# few functions on a few integer types cover the conversions.
FLOAT_FUNCTIONS_ON_INTEGERS = ("div", "exp", "floor", "arctan2")
INTEGERS_FOR_FLOAT_FUNCTIONS = ("i1", "i8", "ui16", "i32", "ui64")
TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
                  "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
                  "arctanh", "sigmoid", "softplus", "erf", "arctan2"}
SETTINGS = settings(max_examples=8, deadline=None,  # values are filtered to each type's range
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def ops_for(t, float_functions: bool | None = None) -> list:
    """The scalar ops taking operands of type ``t`` (casts and select aside). Float functions
    are all included for float types, and only with ``float_functions`` for the others."""
    if float_functions is None:
        float_functions = t.is_float
    ops = []
    for short, cls in sorted(SCALAR_OPS.items()):
        if cls.kind in ("cast", "select") or element_class(t) not in KINDS[cls.kind].accepts:
            continue
        if cls.kind == "float" and not float_functions:
            continue
        ops.append(cls)
    return ops


def _build(cls):
    return lambda b, *xs: b.insert(cls.build(*xs)).result


@functools.cache
def compiled_scalars(type_name: str):
    t = SCALAR_TYPES[type_name]
    functions = [scalar_function(cls.short, _build(cls), [t] * cls.arity) for cls in ops_for(t)]
    functions.append(scalar_function("select", _build(SelectOp), [I1, t, t]))
    return compile_loops(ModuleOp.build(functions))


@functools.cache
def compiled_float_functions_of_integers():
    functions = []
    for type_name in INTEGERS_FOR_FLOAT_FUNCTIONS:
        t = SCALAR_TYPES[type_name]
        for short in FLOAT_FUNCTIONS_ON_INTEGERS:
            cls = SCALAR_OPS[short]
            functions.append(scalar_function(f"{short}_{type_name}", _build(cls), [t] * cls.arity))
    return compile_loops(ModuleOp.build(functions))


def _elementwise(compiled, name: str, args: list[np.ndarray]) -> np.ndarray:
    return np.array([compiled(name, *(a[i] for a in args))[0] for i in range(len(args[0]))])


def values(t, size: int = 6):
    """Arrays of ``t`` mixing random values with the ones every op must get right."""
    dtype = t.dtype
    if t.is_float:
        info = np.finfo(dtype)
        special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan,
                   float(info.max), -float(info.max), float(info.tiny),
                   float(info.smallest_subnormal),
                   7.0, -7.0, 1e-3]
        element = st.one_of(st.sampled_from(special),
                            st.floats(width=t.bits, allow_nan=True, allow_infinity=True),
                            st.floats(-20, 20, width=t.bits))
    elif t.is_bool:
        element = st.booleans()
    else:
        info = np.iinfo(dtype)
        special = [0, 1, -1, 2, -2, 3, 7, -7, int(info.min), int(info.max), int(info.min) + 1,
                   int(info.max) - 1]
        special = [v for v in special if info.min <= v <= info.max]
        element = st.one_of(st.sampled_from(special), st.integers(int(info.min), int(info.max)),
                            st.integers(-9, 9).filter(lambda v: info.min <= v <= info.max))
    return st.lists(element, min_size=size, max_size=size).map(lambda v: np.array(v, dtype))


def _ulps(got: np.ndarray, reference: np.ndarray, dtype) -> np.ndarray:
    """Distance from the float64 ``reference`` in units in the last place of ``dtype`` (0 where
    ``got`` is the reference rounded to ``dtype``, NaN and infinities included)."""
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = reference.astype(dtype)
    same = (got == rounded) | (np.isnan(got) & np.isnan(rounded))
    largest = np.finfo(dtype).max
    spacing = np.spacing(np.where(np.isinf(rounded), largest, np.abs(rounded))).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        distance = np.abs(got.astype(np.float64) - reference.astype(np.float64)) / spacing
    finite = np.isfinite(reference) & np.isfinite(got)
    return np.where(same, 0.0, np.where(finite, distance, np.inf))


def tolerance(short: str, result) -> float:
    """Allowed ulps for a transcendental function's result of type ``result``."""
    if result.bits == 16:
        return 1.0  # f32 result (a few f32 ulps) rounded to half
    if uses_libm(short):
        return 2.0
    bound = MATH_FUNCTIONS[short].max_ulp[result.name]
    return bound + (1.0 if result.bits == 64 else 0.5)


def check_op(cls, got: np.ndarray, args: list[np.ndarray]) -> None:
    want = cls.evaluate(*args)
    result = cls.result_element([SCALAR_TYPES_BY_DTYPE[a.dtype] for a in args])
    approximate = cls.short in TRANSCENDENTAL or (cls.short == "pow" and result.is_float)
    if not approximate:
        assert same_bits(got, np.asarray(want)), (cls.short, args, got, want)
        return
    # Reference: the function in float64 (numpy's libm), rounded to the result type.
    wide = [a.astype(np.float64) for a in args]
    reference = np.asarray(cls.evaluate(*wide))
    ulps = _ulps(np.asarray(got), reference, result.dtype)
    assert np.all(ulps <= tolerance(cls.short, result)), (cls.short, args, got, reference, ulps)


SCALAR_TYPES_BY_DTYPE = {t.dtype: t for name, t in SCALAR_TYPES.items() if name != "index"}


@pytest.mark.parametrize("type_name", TYPES)
@SETTINGS
@given(data=st.data())
def test_every_scalar_op_matches_numpy(type_name, data):
    t = SCALAR_TYPES[type_name]
    compiled = compiled_scalars(type_name)
    operands = [data.draw(values(t)) for _ in range(3)]
    for cls in ops_for(t):
        args = operands[:cls.arity]
        check_op(cls, _elementwise(compiled, cls.short, args), args)


@pytest.mark.parametrize("type_name", INTEGERS_FOR_FLOAT_FUNCTIONS)
@SETTINGS
@given(data=st.data())
def test_float_functions_of_integers(type_name, data):
    t = SCALAR_TYPES[type_name]
    compiled = compiled_float_functions_of_integers()
    operands = [data.draw(values(t)) for _ in range(2)]
    for short in FLOAT_FUNCTIONS_ON_INTEGERS:
        cls = SCALAR_OPS[short]
        args = operands[:cls.arity]
        check_op(cls, _elementwise(compiled, f"{short}_{type_name}", args), args)


@pytest.mark.parametrize("type_name", ["f16", "f64", "i8", "ui64", "i1"])
@SETTINGS
@given(data=st.data())
def test_select(type_name, data):
    t = SCALAR_TYPES[type_name]
    compiled = compiled_scalars(type_name)
    cond = data.draw(values(I1))
    a, b = data.draw(values(t)), data.draw(values(t))
    got = _elementwise(compiled, "select", [cond, a, b])
    assert same_bits(got, SelectOp.evaluate(cond, a, b))


# ---------------------------------------------------------------------------------------------
# Vectorized loops


VECTOR_CASES = {
    "f16": ["maximum", "floordiv", "exp"],
    "f32": ["maximum", "minimum", "floordiv", "mod", "sign", "exp", "ne", "round"],
    "f64": ["minimum", "mod", "log", "isnan"],
    "i8": ["floordiv", "mod", "sign"],
    "i64": ["floordiv", "maximum"],
    "ui32": ["mod", "div"],
}


@functools.cache
def compiled_vectors(type_name: str):
    t = SCALAR_TYPES[type_name]
    functions = []
    for short in VECTOR_CASES[type_name]:
        cls = SCALAR_OPS[short]
        functions.append(elementwise_function(short, _build(cls), [t] * cls.arity))
    return compile_loops(ModuleOp.build(functions))


@pytest.mark.parametrize("type_name", sorted(VECTOR_CASES))
@settings(max_examples=10, deadline=None,  # values are filtered to each type's range
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_vectorized_loops_match_numpy(type_name, data):
    t = SCALAR_TYPES[type_name]
    compiled = compiled_vectors(type_name)
    size = data.draw(st.integers(0, 40))
    step = data.draw(st.sampled_from([1, 1, 2, -1]))
    operands = [data.draw(values(t, size * abs(step)))[::step] for _ in range(3)]
    for short in VECTOR_CASES[type_name]:
        cls = SCALAR_OPS[short]
        args = operands[:cls.arity]
        (got,) = compiled(short, *args)
        check_op(cls, got, args)


def test_special_values_of_float_ops():
    """Spot checks of the NumPy conventions the emitter spells out."""
    compiled = compiled_scalars("f32")
    f32 = np.float32

    def run(short, *xs):
        return compiled(short, *(np.array(x, np.float32) for x in xs))[0][()]

    assert np.signbit(run("maximum", -0.0, 0.0)) == np.signbit(np.maximum(f32(-0.0), f32(0.0)))
    assert np.isnan(run("maximum", np.nan, 1.0)) and np.isnan(run("minimum", 1.0, np.nan))
    assert run("round", 2.5) == 2.0 and run("round", -0.5) == 0.0 and run("round", 3.5) == 4.0
    assert bool(run("ne", np.nan, np.nan)) and not bool(run("eq", np.nan, np.nan))
    assert run("floordiv", 7.0, -2.0) == -4.0 and run("mod", 7.0, -2.0) == -1.0
    assert np.isnan(run("mod", 1.0, 0.0)) and run("floordiv", 1.0, 0.0) == np.inf
    assert run("sign", -0.0) == 0.0 and not np.signbit(run("sign", -0.0))


def test_half_min_max_keep_the_first_of_equal_values():
    compiled = compiled_scalars("f16")
    got = compiled("maximum", np.float16(-0.0), np.float16(0.0))[0][()]
    assert np.signbit(got) == np.signbit(np.maximum(np.float16(-0.0), np.float16(0.0)))


@pytest.mark.parametrize("t", [F16, F32, F64, I8, I64, UI32])
def test_ops_cover_every_kind(t):
    kinds = {cls.kind for cls in ops_for(t, float_functions=True)}
    # (complex numbers made of real parts are tested with the complex functions, in
    # tests/frontend/test_complex.py)
    expected = {k for k, kind in KINDS.items()
                if element_class(t) in kind.accepts and kind.result != "complex"}
    assert kinds == expected - {"cast", "select"}
