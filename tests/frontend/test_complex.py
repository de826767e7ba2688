"""Complex tensors through the public API: constructors, constants and inputs, elementwise
arithmetic and the complex functions against NumPy, compiled and interpreted, dot products
through BLAS, gradients against finite differences, and the errors of what complex numbers do
not support (comparisons, floor, ordering reductions, a GPU).
"""
import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering as theano
import lowering.tensor as T
from lowering.config import config
from lowering.frontend.errors import GraphBuildError, GraphTypeError

MODES = ["FAST_RUN", "INTERP"]
COMPLEX = ["complex64", "complex128"]
PART = {"complex64": "float32", "complex128": "float64"}
# Relative tolerance of results computed with different roundings (vector math, FMA in
# NumPy's loops): a few ulps of the parts' precision.
RTOL = {"complex64": 2e-6, "complex128": 1e-14}


def complex_array(dtype, shape, elements):
    return st.lists(elements, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
        lambda values: np.array(values, dtype=dtype).reshape(shape))


def complex_numbers(dtype, **kwargs):
    return st.complex_numbers(width=64 if dtype == "complex64" else 128, **kwargs)


def special_or_moderate(dtype):
    """Complex numbers whose parts are inf, NaN, signed zeros or moderate numbers (far from
    overflow, where NumPy's loops with and without fused multiply-adds differ)."""
    part = st.one_of(st.floats(-2.0 ** 50, 2.0 ** 50, width=32 if dtype == "complex64" else 64),
                     st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0]))
    return st.builds(complex, part, part)


def magnitude(values):
    """The larger of the parts' magnitudes, ignoring NaN parts (float64)."""
    values = np.asarray(values, dtype=np.complex128)
    return np.fmax(np.abs(values.real), np.abs(values.imag))


def assert_parts_close(got, want, dtype, rtol=None, scale=None):
    """Real and imaginary parts equal within ``rtol`` times ``scale`` (by default the result's
    magnitude; a product's rounding is relative to its factors'), with inf and NaN where NumPy
    has them."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = RTOL[dtype] if rtol is None else rtol
    scale = np.broadcast_to(magnitude(want) if scale is None else scale, want.shape)
    for g, w in ((got.real, want.real), (got.imag, want.imag)) if np.iscomplexobj(want) \
            else ((got, want),):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        infinite = np.isinf(w)
        np.testing.assert_array_equal(g[infinite], w[infinite])
        finite = np.isfinite(w)
        tolerance = rtol * scale[finite] + np.finfo(g.dtype).tiny
        assert (np.abs(g[finite].astype(np.float64) - w[finite]) <= tolerance).all(), (g, w)


# ---------------------------------------------------------------------------------------------
# Types, constants and inputs


def test_theano_constructors_make_complex64_and_complex128_variables():
    assert T.cmatrix("a").dtype == "complex64" and T.zvector().dtype == "complex128"
    assert T.cscalar().ndim == 0 and T.ztensor3().ndim == 3
    a, b = T.zmatrices("a", "b")
    assert (a.name, b.dtype) == ("a", "complex128")
    assert str(T.TensorType("complex64", (False, True))) == "TensorType(complex64, col)"
    assert str(T.cmatrix().type.ir_type) == "tensor<?x?xcomplex<f32>>"


def test_python_complex_constants_take_the_precision_of_the_tensors():
    assert (T.fvector() * 1j).dtype == "complex64"
    assert (T.dvector() + (1 + 2j)).dtype == "complex128"
    assert (T.ivector() * 2j).dtype == "complex128"
    assert (T.cvector() * 2.5).dtype == "complex64"
    assert (T.cvector() + T.dvector()).dtype == "complex128"  # NumPy's promotion
    assert T.constant(1 - 1j).dtype == "complex128"
    assert T.as_tensor_variable(np.array([1j], np.complex64)).dtype == "complex64"


@pytest.mark.parametrize("mode", MODES)
def test_numpy_complex_inputs_constants_and_shared_values(mode):
    z = T.cvector("z")
    w = theano.shared(np.array([1 + 1j, 2], np.complex64), name="w")
    f = theano.function([z], [z * 2j + w, (z * w).sum()], updates=[(w, w * 1j)], mode=mode)
    data = np.array([1 - 1j, 0.5j], np.complex64)
    total, product = f(data)
    np.testing.assert_array_equal(total, data * 2j + np.array([1 + 1j, 2], np.complex64))
    assert total.dtype == np.complex64 and product.dtype == np.complex64
    np.testing.assert_allclose(product, (data * [1 + 1j, 2]).sum(), rtol=1e-6)
    np.testing.assert_array_equal(w.get_value(), np.array([1 + 1j, 2], np.complex64) * 1j)
    with pytest.raises(TypeError, match="expects complex64 data .* got complex128"):
        f(data.astype(np.complex128))


def test_complex_ir_prints_and_parses_back():
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op
    z = T.cvector("z")
    f = theano.function([z], (T.exp(z * 2j) + 1).sum())
    for stage in ("tensor", "loops"):
        text = str(f.ir(stage))
        assert "complex<f32>" in text
        assert print_op(parse_module(text)) == text


# ---------------------------------------------------------------------------------------------
# Elementwise functions against NumPy


def _outputs(z, w):
    """Every complex function of two operands of one complex dtype (w broadcasts as a row)."""
    return {"add": z + w, "sub": z - w, "mul": z * w, "neg": -z, "conj": T.conj(z),
            "real": T.real(z), "imag": T.imag(z), "abs": abs(z), "angle": T.angle(z),
            "div": z / w, "exp": T.exp(z), "sqr": T.sqr(z)}


REFERENCE = {"add": lambda z, w: z + w, "sub": lambda z, w: z - w, "mul": lambda z, w: z * w,
             "neg": lambda z, w: -z, "conj": lambda z, w: np.conj(z),
             "real": lambda z, w: z.real, "imag": lambda z, w: z.imag,
             "abs": lambda z, w: np.abs(z), "angle": lambda z, w: np.angle(z),
             "div": lambda z, w: z / w, "exp": lambda z, w: np.exp(z),
             "sqr": lambda z, w: z * z}
# NumPy's semantics of inf and NaN are those of the formulas here; exp and div follow C99's
# special cases, which the compiled code does not (see lowering/llvm/cpu/complex_math.py).
WITH_SPECIAL_VALUES = ["add", "sub", "mul", "neg", "conj", "real", "imag", "abs", "angle", "sqr"]


@functools.cache
def _compiled(dtype, mode):
    z = T.matrix("z", dtype=dtype)
    w = T.TensorType(dtype, (True, False))("w")
    names, outs = zip(*_outputs(z, w).items())
    return names, theano.function([z, w], list(outs), mode=mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
@settings(max_examples=15)
@given(data=st.data())
def test_elementwise_functions_match_numpy_with_inf_and_nan(dtype, mode, data):
    rows, cols = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 4))
    anything = special_or_moderate(dtype)
    z = data.draw(complex_array(dtype, (rows, cols), anything))
    w = data.draw(complex_array(dtype, (1, cols), anything))
    names, f = _compiled(dtype, mode)
    with np.errstate(all="ignore"):
        for name, got in zip(names, f(z, w)):
            if name in WITH_SPECIAL_VALUES:
                # angle comes from the vector math library's arctan2: a few ulps
                scale = {"mul": magnitude(z) * magnitude(w), "sqr": magnitude(z) ** 2}.get(name)
                assert_parts_close(got, REFERENCE[name](z, w), dtype, scale=scale,
                                   rtol=4 * RTOL[dtype] if name == "angle" else None)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
@settings(max_examples=15)
@given(data=st.data())
def test_division_and_exp_match_numpy_on_finite_values(dtype, mode, data):
    cols = data.draw(st.integers(1, 5))
    finite = complex_numbers(dtype, max_magnitude=1e3, allow_nan=False, allow_infinity=False)
    divisor = finite.filter(lambda v: abs(v) > 1e-3)
    z = data.draw(complex_array(dtype, (2, cols), finite))
    w = data.draw(complex_array(dtype, (1, cols), divisor))
    names, f = _compiled(dtype, mode)
    got = dict(zip(names, f(z, w)))
    assert_parts_close(got["div"], z / w, dtype, rtol=4 * RTOL[dtype])
    small = (z.real.clip(-30, 30) + 1j * z.imag).astype(dtype)  # exp(1e3) overflows
    want = np.exp(small)  # cos and sin of a large imaginary part: ulps of that part
    assert_parts_close(f(small, w)[names.index("exp")], want, dtype, rtol=8 * RTOL[dtype],
                       scale=magnitude(want) * (1 + np.abs(small.imag)))


@pytest.mark.parametrize("mode", MODES)
def test_exp_of_a_real_complex_number_stays_real_where_it_overflows(mode):
    z = T.zvector("z")
    f = theano.function([z], T.exp(z), mode=mode)
    data = np.array([1000 + 0j, -1000 - 0j, 0j], np.complex128)
    got = f(data)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.exp(data))
    assert (np.signbit(got.imag) == np.signbit(data.imag)).all()


@pytest.mark.parametrize("mode", MODES)
def test_complex_from_parts_and_from_polar_coordinates(mode):
    x, y = T.fvector("x"), T.fvector("y")
    f = theano.function([x, y], [T.complex(x, y), T.complex_from_polar(x, y), T.complex(x, 2)],
                        mode=mode)
    a = np.array([1.0, -2.0, np.inf, 0.0], np.float32)
    b = np.array([0.5, np.nan, 1.0, -0.0], np.float32)
    parts, polar, constant = f(a, b)
    assert parts.dtype == polar.dtype == np.complex64
    np.testing.assert_array_equal(parts.real, a)
    np.testing.assert_array_equal(parts.imag, b)  # an infinite part stays as it is
    assert np.signbit(parts.imag[3])
    want = (a[:2] * np.cos(b[:2]) + 1j * a[:2] * np.sin(b[:2])).astype(np.complex64)
    assert_parts_close(polar[:2], want, "complex64", rtol=1e-6)
    np.testing.assert_array_equal(constant, (a + 2j).astype(np.complex64))


def test_real_tensors_are_complex_numbers_with_no_imaginary_part():
    x = T.dvector("x")
    assert T.real(x) is x and T.conj(x) is x and x.real is x
    f = theano.function([x], [T.imag(x), T.angle(x)])
    data = np.array([2.0, -3.0, 0.0, -0.0])
    imag, angle = f(data)
    np.testing.assert_array_equal(imag, np.zeros(4))
    np.testing.assert_array_equal(angle, np.angle(data))


def test_variables_have_theano_real_imag_and_conj():
    z = T.zvector("z")
    f = theano.function([z], [z.real, z.imag, z.conj(), z.conjugate()])
    data = np.array([1 + 2j, -3j])
    for got, want in zip(f(data), [data.real, data.imag, data.conj(), data.conj()]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_sums_and_means_of_complex_tensors(mode):
    z = T.zmatrix("z")
    f = theano.function([z], [z.sum(), z.sum(axis=0), z.mean(axis=1), T.prod(z, axis=1)],
                        mode=mode)
    data = np.arange(6).reshape(2, 3) * (1 - 0.5j) + 1j
    for got, want in zip(f(data), [data.sum(), data.sum(0), data.mean(1), data.prod(1)]):
        np.testing.assert_allclose(got, want, rtol=1e-14)
        assert got.dtype == np.complex128


# ---------------------------------------------------------------------------------------------
# Dot products through BLAS


@pytest.mark.parametrize("dtype", COMPLEX)
def test_dot_products_call_complex_blas_for_every_layout(dtype):
    prefix = {"complex64": "c", "complex128": "z"}[dtype]
    a, b = T.matrix("a", dtype=dtype), T.matrix("b", dtype=dtype)
    v = T.vector("v", dtype=dtype)
    f = theano.function([a, b, v], [
        T.dot(a, b), T.dot(a, v), T.dot(v, b), T.dot(v, v), T.dot(a.T, a), T.dot(b.T, v),
        T.dot(a[:, ::2], b[::2]), T.dot(v[::-1], v)])
    loops = str(f.ir("loops"))
    for routine in ("gemm", "gemv", "dotu_sub"):
        assert f"@cblas_{prefix}{routine}(" in loops
    rng = np.random.default_rng(7)

    def draw(*shape):
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)

    for n in (0, 1, 5, 33):
        x, y, u = draw(4, n), draw(n, 3), draw(n)
        want = [x @ y, x @ u, u @ y, u @ u, x.T @ x, y.T @ u, x[:, ::2] @ y[::2], u[::-1] @ u]
        for got, expected in zip(f(x, y, u), want):
            assert got.dtype == np.dtype(dtype)
            np.testing.assert_allclose(got, expected, atol=1e-5,
                                       rtol=1e-5 if dtype == "complex64" else 1e-12)


def test_small_static_products_use_loops_and_agree_with_blas():
    a = T.TensorType("complex128", shape=(2, 3))("a")
    b = T.TensorType("complex128", shape=(3, 2))("b")
    f = theano.function([a, b], T.dot(a, b))
    assert "cblas" not in str(f.ir("loops"))
    x = np.arange(6).reshape(2, 3) * (1 + 2j)
    y = np.arange(6).reshape(3, 2) * (2 - 1j)
    np.testing.assert_allclose(f(x, y), x @ y, rtol=1e-15)


# ---------------------------------------------------------------------------------------------
# Gradients: dC/d(real z) + i dC/d(imag z) for a real cost C, as Theano defines them


def _finite_differences(cost, args, which, eps=1e-6):
    value = args[which]
    grad = np.zeros_like(value)
    for pos in np.ndindex(*value.shape):
        for unit in ((1, 1j) if np.iscomplexobj(value) else (1,)):
            up = [a.copy() for a in args]
            down = [a.copy() for a in args]
            up[which][pos] += eps * unit
            down[which][pos] -= eps * unit
            grad[pos] += unit * (cost(*up) - cost(*down)) / (2 * eps)
    return grad


COSTS = {
    "abs": lambda z, w, x: abs(z * w + 1j).sum(),
    "real_imag": lambda z, w, x: (T.real(z * w) * T.imag(z / w)).sum(),
    "angle": lambda z, w, x: T.angle(z / w).sum(),
    "exp_conj": lambda z, w, x: T.real(T.exp(z) * T.conj(w)).sum(),
    "parts": lambda z, w, x: T.imag(T.complex(x, x * 2) * z).sum()
    + abs(T.complex_from_polar(x, x) - w).sum(),
    "dot": lambda z, w, x: abs(T.dot(z, w)) + T.real(T.dot(T.outer(z, w), w)).sum(),
    "mixed": lambda z, w, x: abs(T.sqr(z) + x - w * 2).sum(),
    "reductions": lambda z, w, x: abs(T.prod(z * w)) + abs(T.mean(z - x)) + T.real(z.sum()),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(COSTS))
def test_gradients_match_finite_differences(name, mode):
    z, w, x = T.zvector("z"), T.zvector("w"), T.dvector("x")
    cost = COSTS[name](z, w, x)
    grads = T.grad(cost, [z, w, x], disconnected_inputs="ignore")
    f = theano.function([z, w, x], grads, mode=mode, on_unused_input="ignore")
    c = theano.function([z, w, x], cost, mode=mode, on_unused_input="ignore")
    rng = np.random.default_rng(3)
    args = [rng.normal(size=3) + 1j * rng.normal(size=3),
            rng.normal(size=3) + 1j * rng.normal(size=3), rng.normal(size=3)]
    for which, got in enumerate(f(*args)):
        assert got.dtype == args[which].dtype
        np.testing.assert_allclose(got, _finite_differences(c, args, which), rtol=1e-6,
                                   atol=1e-7)


def test_theano_real_and_imag_gradients():
    z = T.zvector("z")
    g_real, g_imag = T.grad(T.real(z).sum(), z), T.grad(T.imag(z).sum(), z)
    f = theano.function([z], [g_real, g_imag])
    got_real, got_imag = f(np.array([1 + 1j, 2]))
    np.testing.assert_array_equal(got_real, [1, 1])      # complex(gz, 0)
    np.testing.assert_array_equal(got_imag, [1j, 1j])    # complex(0, gz)


def test_a_complex_cost_is_refused():
    z = T.zvector("z")
    with pytest.raises(GraphTypeError, match="the cost must be a float scalar"):
        T.grad(z.sum(), z)


# ---------------------------------------------------------------------------------------------
# What complex numbers do not support


@pytest.mark.parametrize("build, message", [
    (lambda z: z < z, "tensor.lt: operand type complex<f32> is not accepted"),
    (lambda z: T.floor(z), "tensor.floor: operand type complex<f32> is not accepted"),
    (lambda z: T.maximum(z, 1), "tensor.maximum: operand type complex<f32>"),
    (lambda z: z // z, "tensor.floordiv: operand type complex<f32>"),
    (lambda z: z ** 2, "tensor.pow: operand type complex<f32>"),
    (lambda z: T.log(z), "tensor.log: operand type complex<f32>"),
    (lambda z: T.eq(z, z), "tensor.eq: operand type complex<f32>"),
    (lambda z: T.max(z), "tensor.max: operand type complex<f32> is not accepted .complex "
                         "numbers are not ordered"),
    (lambda z: T.argmax(z), "tensor.argmax: operand type complex<f32>"),
    (lambda z: T.cast(z, "float32"), "casting from complex<f32> to f32 is ambiguous"),
])
def test_unsupported_functions_refuse_complex_at_build_time(build, message):
    z = T.cvector("z")
    with pytest.raises(GraphBuildError, match=message) as info:
        build(z)
    assert "test_complex.py" in str(info.value)  # the user's line


def test_complex_parts_must_be_real():
    with pytest.raises(GraphTypeError, match="complex: the parts of a complex number must be "
                                             "real, got complex64"):
        T.complex(T.cvector(), T.fvector())


def test_the_gpu_refuses_complex_numbers_naming_the_op_and_type():
    from lowering.compile.gpu.build import GpuCompileError
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX="float32"):
        x = T.fvector("x")
        with pytest.raises(GpuCompileError, match=r"bufferize on a GPU: tensor\.fused \(at "
                                                  r".*test_complex\.py.*is not supported: it "
                                                  r"computes on complex<f32>"):
            theano.function([x], abs(T.complex(x, x)))
