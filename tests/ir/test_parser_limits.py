"""IR text that would exhaust memory, overflow a type or the recursion limit gets a diagnostic at
its line and column: splat constants stay one value, numbers are checked against their type,
nesting is bounded."""
import re

import numpy as np
import pytest

import lowering.dialects  # noqa: F401  (registers every op)
from lowering.cli import main
from lowering.ir.attributes import MAX_DENSE_ELEMENTS, DenseAttr
from lowering.ir.core import IRError
from lowering.ir.interpreter import Interpreter
from lowering.ir.parser import MAX_NESTING_DEPTH, ParseError, parse_attribute, parse_module
from lowering.ir.types import F32, TensorType

HUGE_SPLAT = """func.func @f() -> tensor<4294967296xi64> {
  %0 = "tensor.constant"() {value = dense<1> : tensor<4294967296xi64>} : () -> tensor<4294967296xi64>
  func.return %0 : tensor<4294967296xi64>
}
"""


def run_cli(tmp_path, capsys, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    status = main([str(path), *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# -- splat constants ------------------------------------------------------------------------------


def test_a_huge_splat_is_one_value_and_prints_as_a_splat():
    attr = parse_attribute("dense<1> : tensor<4294967296xi64>")
    assert attr.array.shape == (1 << 32,) and attr.array.nbytes > 1 << 34  # as seen through it
    assert attr.array.base is not None and attr.array.base.size == 1  # ...but one value stored
    assert attr.is_splat and str(attr) == "dense<1> : tensor<4294967296xi64>"
    assert attr == parse_attribute(str(attr)) and hash(attr) == hash(parse_attribute(str(attr)))


def test_a_splat_equals_the_same_values_written_out():
    written = parse_attribute("dense<[2.5, 2.5, 2.5]> : tensor<3xf32>")
    splat = parse_attribute("dense<2.5> : tensor<3xf32>")
    assert written == splat and hash(written) == hash(splat)
    assert splat.array.tolist() == [2.5, 2.5, 2.5]
    assert splat != parse_attribute("dense<[2.5, 2.5, 0.0]> : tensor<3xf32>")
    # Bits decide: 0.0 and -0.0 are two values, not a splat.
    assert not parse_attribute("dense<[0.0, -0.0]> : tensor<2xf32>").is_splat


def test_the_cli_runs_passes_on_a_huge_splat_without_making_its_elements(tmp_path, capsys):
    status, out, err = run_cli(tmp_path, capsys, HUGE_SPLAT, "-p", "canonicalize,cse")
    assert status == 0, err
    assert "dense<1> : tensor<4294967296xi64>" in out


def test_the_interpreter_refuses_to_make_a_huge_constant_with_an_error_at_the_op():
    module = parse_module(HUGE_SPLAT, "in.mlir")
    (func,) = module.body.block.ops
    constant = next(iter(func.regions[0].block.ops))
    with pytest.raises(IRError, match=f"has 4294967296 elements, more than the "
                                      f"{MAX_DENSE_ELEMENTS}") as info:
        Interpreter().run_region(func.regions[0], [])
    assert info.value.op is constant


def test_elements_of_a_small_splat_are_contiguous_values():
    attr = DenseAttr.splat(1.5, TensorType((2, 3), F32))
    elements = attr.elements()
    assert elements.flags.c_contiguous and not elements.flags.writeable
    np.testing.assert_array_equal(elements, np.full((2, 3), 1.5, np.float32))
    scalar = parse_attribute("dense<7> : tensor<i64>").elements()
    assert scalar.shape == () and scalar == 7


# -- numbers against their types ------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("18446744073709551616 : i64", "18446744073709551616 is out of range for i64 "
                                   "(-9223372036854775808 to 9223372036854775807)"),
    ("18446744073709551616", "out of range for i64"),  # an integer without a type is an i64
    ("128 : i8", "128 is out of range for i8 (-128 to 127)"),
    ("-1 : ui32", "-1 is out of range for ui32 (0 to 4294967295)"),
    ("2 : i1", "2 is out of range for i1 (0 to 1)"),
    ("-9223372036854775809 : index", "out of range for index"),
    ("1e39 : f32", "1.000000e+39 is out of range for f32"),
    ("65520.0 : f16", "6.552000e+04 is out of range for f16"),
    ("1e400", "1e400 is out of range for a float"),
    ("dense<[1, 256]> : tensor<2xui8>", "256 is out of range for ui8 (0 to 255)"),
    ("dense<-129> : tensor<4xi8>", "-129 is out of range for i8"),
    ("dense<[0.5, 1e39]> : tensor<2xf32>", "1.000000e+39 is out of range for f32"),
    ("dense<[[1, 2], [3]]> : tensor<2x2xi64>", "bad dense literal for tensor<2x2xi64>"),
])
def test_numbers_out_of_their_types_range_are_parse_errors(text, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_attribute(text)


@pytest.mark.parametrize("text, value", [
    ("9223372036854775807 : i64", 2 ** 63 - 1), ("255 : ui8", 255), ("-128 : i8", -128),
    ("65504.0 : f16", 65504.0), ("-inf : f32", float("-inf")), ("1 : i1", 1)])
def test_numbers_at_the_ends_of_their_range_are_accepted(text, value):
    assert parse_attribute(text).value == value


def test_an_out_of_range_attribute_is_a_diagnostic_at_its_column(tmp_path, capsys):
    text = ('func.func @f() -> f32 {\n'
            '  %0 = "scalar.constant"() {value = 3e38 : f32} : () -> f32\n'
            '  %1 = "tensor.shape_i"() {axis = 18446744073709551616} : () -> index\n'
            '  func.return %0 : f32\n}\n')
    status, _, err = run_cli(tmp_path, capsys, text, "-p", "bufferize")
    assert status == 1
    assert err.splitlines()[0].endswith("in.mlir:3:35: error: 18446744073709551616 is out of "
                                        "range for i64 (-9223372036854775808 to "
                                        "9223372036854775807)")


# -- nesting --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, column", [
    ("[" * 50_000 + "]" * 50_000, MAX_NESTING_DEPTH + 1),
    ("dense<" + "[" * 50_000 + "1" + "]" * 50_000 + "> : tensor<1xi64>",
     len("dense<") + MAX_NESTING_DEPTH + 1),
    ("(" * 50_000 + "f32" + ") -> f32" * 50_000, MAX_NESTING_DEPTH + 1),
    ("{a = " * 50_000 + "1" + "}" * 50_000, len("{a = ") * MAX_NESTING_DEPTH + 1),
])
def test_deep_nesting_is_a_parse_error_not_a_recursion_error(text, column):
    with pytest.raises(ParseError, match=f"nesting too deep: attributes, types and regions nest "
                                         f"at most {MAX_NESTING_DEPTH} levels") as info:
        parse_attribute(text)
    assert (info.value.line, info.value.col) == (1, column)


def test_deeply_nested_regions_are_a_parse_error(tmp_path, capsys):
    depth = 5_000
    body = ('"builtin.module"() ({\n' * depth) + ("}) : () -> ()\n" * depth)
    status, _, err = run_cli(tmp_path, capsys, body)
    assert status == 1
    first = err.splitlines()[0]
    assert f"in.mlir:{MAX_NESTING_DEPTH + 1}:" in first and "nesting too deep" in first
    assert "Traceback" not in err


def test_nesting_within_the_limit_round_trips():
    text = "[" * (MAX_NESTING_DEPTH - 1) + "1 : i64" + "]" * (MAX_NESTING_DEPTH - 1)
    assert str(parse_attribute(text)) == text
