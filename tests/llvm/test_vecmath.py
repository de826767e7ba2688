"""The vector math library: accuracy in ulps against extended-precision references over the whole
range, NumPy's special values, the shape of the generated IR, and LLVM's loop vectorizer."""
from __future__ import annotations

import math
import re
import struct
from decimal import Decimal

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lowering.llvm.jit import optimized_ir
from lowering.llvm.vecmath.library import (MATH_FUNCTIONS, WITH_VECTOR_VERSIONS,
                                           define_math_function, function_name)
from lowering.llvm.vecmath.accuracy import EXTENDED, numpy_result, reference, ulp_error, ulp_of
from lowering.llvm.vecmath.coefficients import COEFFICIENTS
from lowering.llvm.vecmath.kernels import DTYPES, compile_kernels, kernel_module, kernel_name
from lowering.llvm.vecmath.remez import FitSpec, fit_rounded, library_specs, round_to_format

FORMATS = ("f32", "f64")
PAIRS = [(name, fmt) for name in MATH_FUNCTIONS for fmt in FORMATS]

pytestmark = pytest.mark.skipif(not EXTENDED, reason="references need an extended long double")


@pytest.fixture(scope="module")
def kernels():
    return compile_kernels(PAIRS)


def _from_bits(bits: int, fmt: str) -> float:
    if fmt == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def floats(fmt: str) -> st.SearchStrategy[float]:
    """Any value of the format: Hypothesis' floats (which favour edge cases) or uniformly random
    bit patterns (which spread over every exponent)."""
    width = 32 if fmt == "f32" else 64
    return st.one_of(
        st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True),
        st.integers(0, 2 ** width - 1).map(lambda bits: _from_bits(bits, fmt)))


def _columns(rows, fmt: str) -> list[np.ndarray]:
    return [np.array(column, dtype=DTYPES[fmt]) for column in zip(*rows)]


def _report(name, fmt, args, got, exact, err) -> str:
    i = int(np.argmax(err))
    inputs = ", ".join(repr(a[i].item()) for a in args)
    return (f"{name}.{fmt}({inputs}) = {got[i].item()!r}, exact {exact[i]!r}: "
            f"{err[i]:.3f} ulp > {MATH_FUNCTIONS[name].max_ulp[fmt]}")


def _check_accuracy(kernels, name: str, fmt: str, args: list[np.ndarray]) -> None:
    got = kernels[name, fmt](*args)
    exact = reference(name, *args)
    err = ulp_error(got, exact, fmt)
    assert err.max() <= MATH_FUNCTIONS[name].max_ulp[fmt], _report(name, fmt, args, got, exact, err)


def _sign_class(values: np.ndarray) -> list[str]:
    """NaN, or the sign and whether the value is infinite: what must agree with NumPy."""
    return ["nan" if math.isnan(v) else ("-" if math.copysign(1, v) < 0 else "+")
            + ("inf" if math.isinf(v) else "") for v in values.tolist()]


def _check_classes(kernels, name: str, fmt: str, args: list[np.ndarray]) -> None:
    got = kernels[name, fmt](*args)
    expected = numpy_result(name, *args)
    if expected is None:                  # sigmoid, softplus, erf: the rounded reference
        with np.errstate(all="ignore"):
            expected = reference(name, *args).astype(DTYPES[fmt])
    mismatches = [(tuple(a[i].item() for a in args), g, e) for i, (g, e) in
                  enumerate(zip(_sign_class(got), _sign_class(expected))) if g != e]
    assert not mismatches, f"{name}.{fmt}: (inputs, ours, NumPy's) {mismatches[:5]}"


# ------------------------------------------------------------------------------ accuracy

@pytest.mark.parametrize("name,fmt", PAIRS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_error_within_documented_bound_over_the_whole_range(kernels, name, fmt, data):
    arity = MATH_FUNCTIONS[name].arity
    rows = data.draw(st.lists(st.tuples(*[floats(fmt)] * arity), min_size=1, max_size=48))
    args = _columns(rows, fmt)
    _check_accuracy(kernels, name, fmt, args)
    _check_classes(kernels, name, fmt, args)


@pytest.mark.parametrize("fmt", ["f32", "f64"])
def test_arctan2_of_subnormal_pairs_within_documented_bound(kernels, fmt):
    """Both arguments subnormal or near it: the reduction's error terms must not underflow
    (arctan2.f64(1.55e-321, 1.235e-320) was 1.06 ulp off)."""
    dtype = DTYPES[fmt]
    unit = np.finfo(dtype).smallest_subnormal
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 2 ** 14, (2, 4000)) * rng.choice([-1, 1], (2, 4000))
    y, x = (c * unit for c in counts.astype(dtype))
    scales = np.repeat(np.array([1, 2 ** 20, 2 ** 40], dtype), len(y) // 3 + 1)[:len(y)]
    args = [np.append(y * scales, dtype(1.55e-321)), np.append(x * scales, dtype(1.235e-320))]
    _check_accuracy(kernels, "arctan2", fmt, args)


# Dense sweeps of the main domains (where arguments are neither huge nor trivial).
SWEEPS = {
    "exp": (-104, 89), "exp2": (-150, 128), "expm1": (-20, 89), "log": (0, 30), "log2": (0, 30),
    "log10": (0, 30), "log1p": (-1, 30), "sin": (-30, 30), "cos": (-30, 30), "tan": (-30, 30),
    "arcsin": (-1, 1), "arccos": (-1, 1), "arctan": (-20, 20), "arctan2": (-5, 5),
    "sinh": (-89, 89), "cosh": (-89, 89), "tanh": (-10, 10), "arcsinh": (-30, 30),
    "arccosh": (1, 30), "arctanh": (-1, 1), "sigmoid": (-104, 40),
    "softplus": (-104, 40), "pow": (0, 8), "sqrt": (0, 30), "erf": (-6, 6), "cbrt": (-30, 30),
}


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_error_within_documented_bound_on_a_dense_sweep(kernels, name, fmt):
    lo, hi = SWEEPS[name]
    if MATH_FUNCTIONS[name].arity == 1:
        args = [np.linspace(lo, hi, 40001).astype(DTYPES[fmt])]
    else:
        grid = np.meshgrid(np.linspace(lo, hi, 201), np.linspace(-9.5, 9.5, 201))
        args = [g.ravel().astype(DTYPES[fmt]) for g in grid]
    _check_accuracy(kernels, name, fmt, args)


# ------------------------------------------------------------------------------ special values

def special_values(fmt: str) -> list[float]:
    """Zeros, infinities, NaN, the edges of the subnormal and normal ranges, and small integers
    and halves (the exact cases of pow, the quadrant edges of the trigonometric functions)."""
    info = np.finfo(DTYPES[fmt])
    tiny, smallest, largest = float(info.smallest_subnormal), float(info.tiny), float(info.max)
    magnitudes = [0.0, tiny, 3 * tiny, smallest - tiny, smallest, 1e-30, 0.5, 1.0, 1.5, 2.0, 3.0,
                  0.75, math.pi / 4, math.pi / 2, math.pi, 10.0, 1e10, 2.0 ** 60, largest, math.inf]
    values = [float(np.array(m, DTYPES[fmt])) for m in magnitudes]
    return values + [-v for v in values] + [math.nan]


def edge_arguments(name: str, fmt: str) -> list[float]:
    """Arguments next to where results overflow, underflow or reach a domain edge."""
    dtype = DTYPES[fmt]
    info = np.finfo(dtype)
    edges = {
        "exp": [math.log(float(info.max)), math.log(float(info.smallest_subnormal))],
        "expm1": [math.log(float(info.max))],
        "exp2": [float(info.maxexp), float(info.minexp - info.nmant)],
        "sinh": [math.log(float(info.max)) + math.log(2)],
        "cosh": [math.log(float(info.max)) + math.log(2)],
        "log1p": [-1.0], "arcsin": [1.0], "arccos": [1.0], "arccosh": [1.0], "arctanh": [1.0],
        "arcsinh": [2.0 ** 27, 2.0 ** -27, 2.0 ** 13, 2.0 ** -13],
        "sigmoid": [math.log(float(info.smallest_subnormal))],
        "softplus": [math.log(float(info.smallest_subnormal))],
    }.get(name, [])
    out = []
    for edge in edges:
        v = np.array(edge, dtype)
        for _ in range(3):
            v = np.nextafter(v, dtype(-np.inf))
        for _ in range(7):
            out += [float(v), -float(v)]
            v = np.nextafter(v, dtype(np.inf))
    return out


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_special_values_match_numpy(kernels, name, fmt):
    values = special_values(fmt) + edge_arguments(name, fmt)
    if MATH_FUNCTIONS[name].arity == 1:
        args = [np.array(values, DTYPES[fmt])]
    else:
        grid = np.meshgrid(np.array(values, DTYPES[fmt]), np.array(values, DTYPES[fmt]))
        args = [g.ravel() for g in grid]
    _check_classes(kernels, name, fmt, args)
    _check_accuracy(kernels, name, fmt, args)


@pytest.mark.parametrize("fmt", FORMATS)
def test_pow_follows_c99_special_cases(kernels, fmt):
    dtype = DTYPES[fmt]
    cases = [  # (x, y, expected)
        (np.nan, 0.0, 1.0), (1.0, np.nan, 1.0), (-1.0, np.inf, 1.0), (-1.0, -np.inf, 1.0),
        (-0.0, -3.0, -np.inf), (0.0, -3.0, np.inf), (-0.0, -2.0, np.inf), (-0.0, 3.0, -0.0),
        (-0.0, 2.0, 0.0), (0.5, -np.inf, np.inf), (2.0, -np.inf, 0.0), (0.5, np.inf, 0.0),
        (2.0, np.inf, np.inf), (-np.inf, -3.0, -0.0), (-np.inf, -2.0, 0.0),
        (-np.inf, 3.0, -np.inf), (-np.inf, 2.0, np.inf), (np.inf, -1.0, 0.0),
        (np.inf, 0.5, np.inf), (-2.0, 0.5, np.nan), (-2.0, 3.0, -8.0), (-2.0, -1.0, -0.5),
        (2.0, 0.5, math.sqrt(2.0)),
    ]
    x, y, expected = (np.array(column, dtype) for column in zip(*cases))
    got = kernels["pow", fmt](x, y)
    assert _sign_class(got) == _sign_class(expected)
    np.testing.assert_allclose(got, expected, rtol=np.finfo(dtype).eps)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_arguments_next_to_multiples_of_half_pi_keep_their_accuracy(kernels, name):
    # The doubles nearest k·π/2 (reduced arguments down to 6e-17), the largest quadrant counts
    # of the Cody-Waite path and the first arguments of the Payne-Hanek one.
    near = [k * math.pi / 2 for k in range(1, 64)] + [103993.0 * 2, 2.0 ** 19 - 1, 2.0 ** 19,
                                                      2.0 ** 19 + 0.5, 1e22]
    args = [np.array(near + [-v for v in near])]
    _check_accuracy(kernels, name, "f64", args)
    _check_accuracy(kernels, name, "f32", [args[0].astype(np.float32)])


# ------------------------------------------------------------------------------ generated IR

@pytest.mark.parametrize("name", MATH_FUNCTIONS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_definition_is_straight_line_inlinable_code_without_libm(name, fmt):
    module = ir.Module()
    fn = define_math_function(module, name, ir.FloatType() if fmt == "f32" else ir.DoubleType())
    assert fn.name == f"lowering.{name}.{fmt}"
    if (name, fmt) in WITH_VECTOR_VERSIONS:
        _check_vector_versions(module, fn)
        return
    assert fn.linkage == "internal" and "alwaysinline" in fn.attributes
    assert len(fn.blocks) == 1
    body = str(fn)
    assert " br " not in body and "switch" not in body
    callees = set(re.findall(r'call \S+ @"?([\w.]+)', body))
    assert all(c.startswith("llvm.") for c in callees), callees


def _check_vector_versions(module, fn):
    """A function with vector versions: a branch to its exact path, not inlined, mapped to
    ``.v4/.v8/.v16`` by the vector function ABI; everything calls only LLVM intrinsics and the
    exact path (never libm, never the mapped function itself)."""
    assert fn.linkage == "internal" and "noinline" in fn.attributes
    text = str(module)
    widths = re.findall(rf"_ZGV_LLVM_N(\d+)v_{re.escape(fn.name)}\({re.escape(fn.name)}\.v(\d+)\)",
                        text)
    assert sorted(int(a) for a, b in widths if a == b) == [4, 8, 16]
    for f in module.functions:
        callees = set(re.findall(r'call \S+ @"?([\w.]+)', str(f)))
        assert all(c.startswith("llvm.") or c == f"{fn.name}.exact" for c in callees), callees
    llvm.parse_assembly(text).verify()


def test_definitions_are_added_once_per_name_and_type():
    module = ir.Module()
    first = define_math_function(module, "tanh", ir.FloatType())
    assert define_math_function(module, "tanh", ir.FloatType()) is first
    other = define_math_function(module, "tanh", ir.DoubleType())
    assert other is not first and other.name == function_name("tanh", ir.DoubleType())
    llvm.parse_assembly(str(module)).verify()


def test_unknown_functions_and_types_are_refused_by_name():
    with pytest.raises(ValueError, match="no vector math function 'gamma'"):
        define_math_function(ir.Module(), "gamma", ir.FloatType())
    with pytest.raises(TypeError, match="float and double"):
        define_math_function(ir.Module(), "exp", ir.IntType(32))


def test_every_function_has_a_bound_and_a_domain_note():
    for info in MATH_FUNCTIONS.values():
        assert set(info.max_ulp) == set(FORMATS) and info.domain
        assert all(0.5 <= b <= 4 for b in info.max_ulp.values()), info


@pytest.fixture(scope="module")
def optimized_kernels() -> str:
    """The IR of every array kernel after LLVM's O3 pipeline for the host."""
    return optimized_ir(str(kernel_module(PAIRS)))


def _vector_widths(optimized: str, name: str, fmt: str) -> set[int]:
    start = optimized.index(f"@{kernel_name(name, fmt)}(")
    end = optimized.find("\ndefine ", start)
    body = optimized[start:end if end >= 0 else len(optimized)]
    element = "float" if fmt == "f32" else "double"
    return {int(w) for w in re.findall(rf"<(\d+) x {element}>", body)}


def test_exp_f32_loop_vectorizes_to_the_host_vector_width(optimized_kernels):
    features = llvm.get_host_cpu_features()
    widest = 8 if features.get("avx") else 4       # LLVM prefers 256 bits even with AVX-512
    widths = _vector_widths(optimized_kernels, "exp", "f32")
    assert widths and max(widths) >= widest, widths


@pytest.mark.parametrize("name,fmt", PAIRS)
def test_every_function_vectorizes_in_a_loop(optimized_kernels, name, fmt):
    widths = _vector_widths(optimized_kernels, name, fmt)
    assert widths and max(widths) >= 2, f"the loop over {name}.{fmt} was not vectorized"


# ------------------------------------------------------------------------------ the measuring

@pytest.mark.parametrize("approximation,fmt", [("log", "f32")])
def test_coefficient_table_is_what_the_fitter_produces(approximation, fmt):
    spec = next(s for s in library_specs() if s.name == approximation)
    assert fit_rounded(spec, fmt).coefficients == COEFFICIENTS[approximation, fmt]


def test_minimax_equioscillates():
    # Degree-2 fit of exp on [0, 1]: the error takes its extreme value, alternating in sign, at
    # four points (Chebyshev's theorem), and beats the Taylor polynomial by far.
    spec = FitSpec("e", (Decimal(0), Decimal(1)), target=lambda x: x.exp(), scale=lambda x: 1,
                   weight=lambda x: 1, degree={"f64": 3})
    fit = fit_rounded(spec, "f64")
    xs = np.linspace(0, 1, 10001)
    err = np.exp(xs) - np.polyval(fit.coefficients[::-1], xs)
    assert abs(np.max(np.abs(err)) - fit.max_error) < 1e-6
    assert fit.max_error < 0.01 < np.max(np.abs(np.exp(xs) - (1 + xs + xs * xs / 2)))
    turns = np.nonzero(np.diff(np.sign(np.diff(err))))[0] + 1
    peaks = np.array([err[0], *err[turns], err[-1]])
    assert len(peaks) == 4 and np.allclose(np.abs(peaks), fit.max_error, rtol=1e-3)
    assert np.all(peaks[1:] * peaks[:-1] < 0)


def test_rounding_to_f32_is_to_nearest():
    assert round_to_format(Decimal(1) + Decimal(2) ** -24, "f32") == 1.0          # tie to even
    above_tie = Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -60
    assert round_to_format(above_tie, "f32") == 1 + 2 ** -23
    assert round_to_format(Decimal("1e-50"), "f32") == 0.0



def test_ulp_error_counts_spacings_of_the_exact_result():
    one = np.float64(1.0)
    above = np.nextafter(one, 2.0)
    assert ulp_error(np.array([above]), np.array([1.0]), "f64")[0] == 1.0
    half_way = np.longdouble(1) + np.longdouble(2.0) ** -53
    assert ulp_error(np.array([1.0]), np.array([half_way]), "f64")[0] == 0.5
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    assert ulp_error(np.array([2 * tiny]), np.array([0.0]), "f32")[0] == 2.0
    assert ulp_of(np.array([3e-45]), "f32")[0] == np.float64(tiny)


def test_ulp_error_is_infinite_across_classes():
    f32 = np.float32
    got = np.array([np.inf, np.nan, np.float32(3.4028235e38), np.nan, -np.inf], f32)
    exact = np.array([3.0e38, 1.0, np.inf, np.nan, -np.inf], np.longdouble)
    assert ulp_error(got, exact, "f32").tolist() == [np.inf, np.inf, np.inf, 0.0, 0.0]
    # A finite exact value beyond the format's range rounds to inf: inf is right there.
    assert ulp_error(np.array([np.inf], f32), np.array([1e39], np.longdouble), "f32")[0] == 0


def test_extended_references_agree_with_the_standard_library():
    x = np.array([-5.5, -2.0, -0.3, 1e-300, 0.7, 2.5, 3.5, 5.9])
    erf = reference("erf", x)
    assert all(abs(float(e) - math.erf(v)) <= 2 * math.ulp(math.erf(v)) for e, v in zip(erf, x))
    sig = reference("sigmoid", np.array([-800.0, 0.0, 800.0]))
    assert abs(sig[0] / np.exp(np.longdouble(-800)) - 1) < 1e-17    # no overflow of e**800
    assert sig[1:].tolist() == [0.5, 1.0]
