"""Complex element types in the IR: ``complex<f32>``/``complex<f64>`` as MLIR spells them, in
tensor and buffer types, complex scalar constants and dense literals, printed and parsed back,
and the errors of malformed ones.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lowering.dialects import scalar
from lowering.ir.attributes import ComplexAttr, DenseAttr
from lowering.ir.parser import ParseError, parse_attribute, parse_type
from lowering.ir.types import C64, C128, F32, F64, TensorType, complex_type_of, scalar_type_of


def test_complex_types_have_numpy_dtypes_and_float_parts():
    assert (C64.dtype, C128.dtype) == (np.complex64, np.complex128)
    assert scalar_type_of("complex128") is not None and scalar_type_of(np.complex64) == C64
    assert (C64.real_part, C128.real_part) == (F32, F64)
    assert C64.is_complex and not C64.is_float and not C64.is_int and C64.bits == 64
    assert complex_type_of(F64) == C128
    with pytest.raises(TypeError, match="f32 or f64 parts"):
        complex_type_of(scalar_type_of("float16"))


@pytest.mark.parametrize("text", ["complex<f32>", "tensor<?x3xcomplex<f64>>",
                                  "tensor<complex<f32>>", "(tensor<2xcomplex<f32>>) -> f32",
                                  "!loops.buffer<?xcomplex<f32>, strides=[?], offset=?>"])
def test_types_print_as_they_parse(text):
    import lowering.dialects  # noqa: F401  (the loops dialect's buffer type)
    assert str(parse_type(text)) == text


@pytest.mark.parametrize("text, message", [
    ("complex<i32>", "a complex type's parts must be f32 or f64, not i32"),
    ("complex<f16>", "must be f32 or f64, not f16"),
    ("complex<f32", "to end the complex type"),
])
def test_malformed_complex_types_are_errors(text, message):
    with pytest.raises(ParseError, match=message):
        parse_type(text)


# NaN prints as "nan": the quiet NaN NumPy makes (a payload or sign is not kept, as for floats).
finite_or_special = st.one_of(st.floats(allow_nan=False, allow_infinity=True, width=32),
                              st.just(np.nan))


@settings(max_examples=40)
@given(st.lists(st.builds(complex, finite_or_special, finite_or_special), min_size=1,
                max_size=6), st.sampled_from([np.complex64, np.complex128]))
def test_dense_complex_literals_round_trip(values, dtype):
    attr = DenseAttr.from_array(np.array(values, dtype=dtype))
    again = parse_attribute(str(attr))
    assert again == attr and again.type == attr.type


def test_complex_scalar_constants_print_parse_and_fold():
    attr = parse_attribute("(1.5, -inf) : complex<f64>")
    assert attr == ComplexAttr(complex(1.5, -np.inf), C128)
    assert str(attr) == "(1.500000e+00, -inf) : complex<f64>"
    assert str(parse_attribute("dense<(1.0, 2.0)> : tensor<2xcomplex<f32>>")) == \
        "dense<(1.000000e+00, 2.000000e+00)> : tensor<2xcomplex<f32>>"
    constant = scalar.ConstantOp.build(2 - 1j, C64)
    assert constant.numpy_value == np.complex64(2 - 1j)
    with pytest.raises(ParseError, match="out of range for f32"):
        parse_attribute("(1e39, 0.0) : complex<f32>")
    with pytest.raises(ParseError, match="cannot hold complex numbers"):
        parse_attribute("dense<[(1.0, 2.0)]> : tensor<1xf32>")


def test_scalar_functions_type_complex_operands_by_their_declared_rule():
    assert scalar.AbsOp.result_element([C64]) == F32
    assert scalar.ExpOp.result_element([C128]) == C128
    assert scalar.DivOp.result_element([C64, C64]) == C64
    assert scalar.ComplexOp.result_element([F64, F64]) == C128
    assert scalar.RealOp.result_element([C64]) == F32
    with pytest.raises(Exception, match="scalar.floor: operand type complex<f32> is not "
                                        "accepted .floor is not defined for complex numbers"):
        scalar.FloorOp.result_element([C64])
    with pytest.raises(Exception, match="scalar.real: operand type f32 is not accepted"):
        scalar.RealOp.result_element([F32])
    with pytest.raises(Exception, match="scalar.complex: operand type complex<f32>"):
        scalar.ComplexOp.result_element([C64, C64])


def test_a_tensor_of_complex_numbers():
    t = TensorType((None, 2), C64)
    assert str(t) == "tensor<?x2xcomplex<f32>>" and t.dtype == np.complex64
