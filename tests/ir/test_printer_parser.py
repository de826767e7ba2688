"""Printing and parsing IR: exact texts, round trips of every type and attribute, random modules."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lowering.dialects  # noqa: F401  (registers builtin.module, func.func, func.return)
from lowering.dialects.builtin.ops import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.test import AddOp, GenericOp, IsolatedOp, new_context
from lowering.ir.attributes import (ArrayAttr, BoolAttr, DenseAttr, DictAttr, FloatAttr, IntAttr,
                                    StringAttr, SymbolRefAttr, TypeAttr, UnitAttr)
from lowering.ir.core import Block, Operation, Region
from lowering.ir.location import UNKNOWN, FusedLoc, Location
from lowering.ir.parser import ParseError, parse_attribute, parse_module, parse_type
from lowering.ir.printer import Printer, print_op
from lowering.ir.types import (F16, F32, F64, I1, I8, I16, I32, I64, INDEX, UI8, UI16, UI32, UI64,
                               FunctionType, TensorType, Type, register_type_parser)


# ---------------------------------------------------------------------------------------------
# Ops of the test dialect, read through a context of this module's own; a type used only here

CONTEXT = new_context()


def parse(text: str, filename: str = "<input>") -> Operation:
    """The module ``text`` holds, read through ``CONTEXT``."""
    return parse_module(text, filename, CONTEXT)


@dataclass(frozen=True)
class BoxType(Type):
    """A dialect type: ``!test.box<2x?xf32>``."""
    shape: tuple
    element: Type

    def __str__(self):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"!test.box<{dims}{self.element}>"


def _parse_box(parser):
    parser.expect("<")
    dims = parser.parse_dims()
    element = parser.parse_type()
    parser.expect(">")
    return BoxType(tuple(dims), element)


register_type_parser("!test.box", _parse_box)

LOC = Location("t.py", 1, 1)


def generic_op(operands=(), result_types=(), attributes=None, regions=(), location=LOC):
    return GenericOp.create(list(operands), list(result_types), attributes, list(regions),
                            location)


def round_trip(text: str, **options) -> str:
    """Parse ``text`` and print it again with the same options."""
    return print_op(parse(text), **options)


# ---------------------------------------------------------------------------------------------
# Exact texts

GENERIC_EXAMPLE = '''\
"builtin.module"() ({
  "func.func"() ({
  ^bb0(%x: tensor<?x784xf32>, %w: tensor<784xf32>):
    %0 = "test.op"(%x, %w) : (tensor<?x784xf32>, tensor<784xf32>) -> tensor<?xf32>
    %1 = "test.op"(%0) : (tensor<?xf32>) -> tensor<?xf32>
    "func.return"(%1) : (tensor<?xf32>) -> ()
  }) {sym_name = "f", function_type = (tensor<?x784xf32>, tensor<784xf32>) -> tensor<?xf32>} : () -> ()
}) : () -> ()'''

PRETTY_EXAMPLE = '''\
module {
  func.func @f(%x: tensor<?x784xf32>, %w: tensor<784xf32>) -> tensor<?xf32> {
    %0 = "test.op"(%x, %w) : (tensor<?x784xf32>, tensor<784xf32>) -> tensor<?xf32>
    %1 = "test.op"(%0) : (tensor<?xf32>) -> tensor<?xf32>
    func.return %1 : tensor<?xf32>
  }
}'''


def build_example() -> ModuleOp:
    x_type, w_type, y_type = TensorType((None, 784), F32), TensorType((784,), F32), \
        TensorType((None,), F32)
    func = FuncOp.build("f", [x_type, w_type], [y_type], location=LOC)
    x, w = func.args
    x.name_hint, w.name_hint = "x", "w"
    dot = func.body.block.append(generic_op([x, w], [y_type]))
    exp = func.body.block.append(generic_op([dot.results[0]], [y_type]))
    func.body.block.append(ReturnOp.create([exp.results[0]], location=LOC))
    return ModuleOp.build([func], location=LOC)


def test_generic_form_is_mlir_generic_form():
    assert print_op(build_example(), generic=True) == GENERIC_EXAMPLE


def test_pretty_form_of_builtin_ops():
    assert print_op(build_example()) == PRETTY_EXAMPLE


@pytest.mark.parametrize("text", [GENERIC_EXAMPLE, PRETTY_EXAMPLE])
@pytest.mark.parametrize("generic", [True, False])
def test_either_form_reads_back_to_the_same_module(text, generic):
    module = parse(text)
    assert isinstance(module, ModuleOp) and isinstance(module.functions[0], FuncOp)
    expected = GENERIC_EXAMPLE if generic else PRETTY_EXAMPLE
    assert print_op(module, generic=generic) == expected


def test_parsed_ops_have_their_classes_and_typed_fields():
    module = parse(PRETTY_EXAMPLE)
    func = module.lookup("f")
    assert func.sym_name == "f"
    assert func.function_type == FunctionType(
        (TensorType((None, 784), F32), TensorType((784,), F32)), (TensorType((None,), F32),))
    ops = list(func.body.block.ops)
    assert isinstance(ops[-1], ReturnOp) and ops[-1].values == [ops[1].results[0]]
    assert ops[0].operands == list(func.args)
    assert [a.name_hint for a in func.args] == ["x", "w"]


def test_locations_print_and_parse():
    module = build_example()
    ops = list(module.walk())
    ops[1].location = FusedLoc((Location("a.py", 1, 2), Location('dir\\"q".py', 3, 4)))
    ops[2].location = UNKNOWN
    ops[3].location = Location('x":1:2', 5, 6)
    text = print_op(module, print_locations=True)
    assert 'loc(fused["a.py":1:2, "dir\\\\\\"q\\".py":3:4])' in text
    assert "loc(unknown)" in text
    again = parse(text)
    assert [op.location for op in again.walk()] == [op.location for op in ops]
    assert print_op(again, print_locations=True) == text


def test_location_spellings_beyond_the_printed_ones():
    text = ('"test.op"() : () -> () loc( "a.py" : 3 : 4 )\n'
            '"test.op"() : () -> () loc(fused[])\n'
            '"test.op"() : () -> () loc("<unknown>":0:0)')
    assert [op.location for op in parse(text).body.block.ops] == [
        Location("a.py", 3, 4), FusedLoc(()), UNKNOWN]


def test_an_op_without_loc_is_located_at_its_name_in_the_text():
    module = parse(PRETTY_EXAMPLE, "model.mlir")
    assert [op.location for op in module.walk()] == [
        Location("model.mlir", 1, 1), Location("model.mlir", 2, 3), Location("model.mlir", 3, 10),
        Location("model.mlir", 4, 10), Location("model.mlir", 5, 5)]


def test_several_top_level_ops_are_wrapped_in_a_module():
    text = '%0 = "test.op"() : () -> f32\n"test.op"(%0) : (f32) -> ()'
    module = parse(text, "two.mlir")
    assert isinstance(module, ModuleOp) and module.location == Location("two.mlir", 1, 1)
    assert print_op(module) == "module {\n  " + text.replace("\n", "\n  ") + "\n}"
    assert print_op(parse("")) == "module {\n}"


def test_comments_are_skipped():
    text = "// leading\nmodule { // after the brace\n  // a line\n} // trailing"
    assert round_trip(text) == "module {\n}"


def test_multiple_results_and_indexed_uses():
    pair = generic_op(result_types=[F32, I64])
    use = generic_op([pair.results[1], pair.results[0]])
    module = ModuleOp.build([pair, use], location=LOC)
    text = print_op(module)
    assert text == ('module {\n'
                    '  %0:2 = "test.op"() : () -> (f32, i64)\n'
                    '  "test.op"(%0#1, %0#0) : (i64, f32) -> ()\n'
                    '}')
    assert round_trip(text) == text
    pair.results[0].name_hint, pair.results[1].name_hint = "q", "r"
    named = print_op(module)
    assert '%q, %r = "test.op"()' in named and '"test.op"(%r, %q)' in named
    assert round_trip(named) == named


def test_result_groups_written_by_hand():
    text = ('%a, %b:2 = "test.op"() : () -> (f32, i1, i8)\n'
            '"test.op"(%a, %b#1, %b) : (f32, i8, i1) -> ()')
    module = parse(text)
    first, second = module.body.block.ops
    assert second.operands == [first.results[0], first.results[2], first.results[1]]


def test_value_names_come_from_hints_made_unique_and_valid():
    func = FuncOp.build("f", [F32, F32, F32], [], location=LOC)
    for arg, hint in zip(func.args, ["my var!", None, "12"]):
        arg.name_hint = hint
    block = func.body.block
    first = block.append(generic_op([func.args[0]], [F32]))
    first.results[0].name_hint = "x"
    second = block.append(generic_op([first.results[0]], [F32]))
    second.results[0].name_hint = "x"
    third = block.append(generic_op([], [F32]))
    third.results[0].name_hint = "x_1"
    block.append(ReturnOp.create([], location=LOC))
    text = print_op(func)
    assert text.splitlines()[0] == "func.func @f(%my_var_: f32, %arg0: f32, %v12: f32) {"
    assert '%x = "test.op"(%my_var_)' in text
    assert '%x_1 = "test.op"(%x)' in text
    assert '%x_1_1 = "test.op"()' in text
    assert round_trip(text) == "module {\n  " + text.replace("\n", "\n  ") + "\n}"


def test_isolated_ops_number_their_values_afresh():
    funcs = []
    for name in ("f", "g"):
        func = FuncOp.build(name, [], [F32], location=LOC)
        value = func.body.block.append(generic_op([], [F32])).results[0]
        func.body.block.append(ReturnOp.create([value], location=LOC))
        funcs.append(func)
    text = print_op(ModuleOp.build(funcs, location=LOC))
    assert text.count('%0 = "test.op"() : () -> f32') == 2
    assert round_trip(text) == text


def test_regions_blocks_and_labels():
    outer_value = generic_op([], [F32])
    empty_region = Region()
    empty_block = Region([Block()])
    two_blocks = Region([Block([F32]), Block([I64, I64])])
    two_blocks.blocks[0].append(generic_op([outer_value.results[0], two_blocks.blocks[0].args[0]]))
    two_blocks.blocks[1].append(generic_op([two_blocks.blocks[1].args[1]]))
    holder = generic_op([], [I1], regions=[empty_region, empty_block, two_blocks])
    module = ModuleOp.build([outer_value, holder], location=LOC)
    text = print_op(module, generic=True)
    assert text == '''\
"builtin.module"() ({
  %0 = "test.op"() : () -> f32
  %1 = "test.op"() ({
  }, {
  ^bb0:
  }, {
  ^bb0(%arg0: f32):
    "test.op"(%0, %arg0) : (f32, f32) -> ()
  ^bb1(%arg1: i64, %arg2: i64):
    "test.op"(%arg2) : (i64) -> ()
  }) : () -> i1
}) : () -> ()'''
    again = parse(text)
    regions = list(again.walk())[2].regions
    assert [len(r.blocks) for r in regions] == [0, 1, 2]
    assert print_op(again, generic=True) == text


def test_pretty_form_hooks_of_a_dialect_op():
    func = FuncOp.build("f", [F32, F32], [F32], location=LOC)
    add = func.body.block.append(AddOp.create(list(func.args), [F32], location=LOC))
    func.body.block.append(ReturnOp.create([add.results[0]], location=LOC))
    text = print_op(func)
    assert "  %0 = test.add %arg0, %arg1 : f32\n" in text
    assert '"test.add"(%arg0, %arg1) : (f32, f32) -> f32' in print_op(func, generic=True)
    module = parse(text)
    assert isinstance(list(module.walk())[2], AddOp)
    assert print_op(module.functions[0]) == text


def test_an_op_whose_pretty_form_does_not_apply_prints_generically():
    func = FuncOp.build("f", [F32], [], location=LOC)
    func.attributes["function_type"] = TypeAttr(FunctionType((I64,), ()))  # disagrees with ^bb0
    func.body.block.append(ReturnOp.create([], location=LOC))
    text = print_op(func)
    assert text.startswith('"func.func"() ({\n^bb0(%arg0: f32):\n  func.return\n})')
    assert print_op(parse(text).functions[0]) == text


def test_function_declarations_and_extra_attributes():
    decl = FuncOp.create(attributes={"sym_name": "ext", "function_type": TypeAttr(
        FunctionType((F32, I64), (F32, F32))), "linkage": "C"}, regions=[Region()], location=LOC)
    text = print_op(ModuleOp.build([decl], location=LOC))
    assert text == ('module {\n  func.func @ext(f32, i64) -> (f32, f32) attributes '
                    '{linkage = "C"}\n}')
    assert round_trip(text) == text
    assert round_trip(text, generic=True) == print_op(ModuleOp.build([decl.clone()]),
                                                      generic=True)


def test_named_module_with_attributes():
    text = 'module @m attributes {flag, n = 3 : i32} {\n}'
    module = parse(text)
    assert module.sym_name == "m" and module.attributes["flag"] == UnitAttr()
    assert print_op(module) == 'module @m attributes {flag = unit, n = 3 : i32} {\n}'


def test_forward_references_resolve_and_leave_dominance_to_the_verifier():
    text = ('%0 = "test.op"(%1) : (f32) -> i1\n'
            '%1 = "test.op"() : () -> f32')
    first, second = parse(text).body.block.ops
    assert first.operands[0] is second.results[0]
    assert second.results[0].uses[0].op is first


def test_annotations_go_under_the_op_name():
    module = build_example()
    exp = list(module.walk())[3]
    text = print_op(module, annotations={exp: "error: first line\nsecond line"})
    assert text.splitlines()[3:6] == [
        '    %1 = "test.op"(%0) : (tensor<?xf32>) -> tensor<?xf32>',
        "         ^ error: first line",
        "           second line"]
    func = module.functions[0]
    lines = print_op(module, annotations={func: "note: here"}).splitlines()
    assert lines[2] == "  ^ note: here"


def test_values_printed_without_their_definition_still_get_names():
    producer = generic_op([], [F32])
    producer.results[0].name_hint = "x"
    consumer = generic_op([producer.results[0], producer.results[0]], [F32])
    assert print_op(consumer) == '%0 = "test.op"(%x, %x) : (f32, f32) -> f32'


# ---------------------------------------------------------------------------------------------
# Types and attributes, one of each kind

TYPE_TEXTS = [
    "f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "index",
    "tensor<f32>", "tensor<?x1x3xi8>", "tensor<0xui64>", "tensor<4xindex>", "tensor<?x?xi1>",
    "() -> ()", "(f32) -> f32", "(f32, i64) -> (f32, f32)", "() -> ((f32) -> f32)",
    "((i1) -> i1) -> tensor<2xf16>", "!test.box<2x?xf32>", "!test.box<tensor<1xf64>>",
    "(!test.box<f32>) -> !test.box<3xi8>",
]


@pytest.mark.parametrize("text", TYPE_TEXTS)
def test_types_round_trip(text):
    parsed = parse_type(text)
    assert str(parsed) == text
    assert parse_type(str(parsed)) == parsed


def test_type_spellings_beyond_the_printed_one():
    assert parse_type("tensor<2x3xf32 >") == TensorType((2, 3), F32)
    assert parse_type("tensor< f32>") == TensorType((), F32)
    assert parse_type("(f32)->(f32)") == FunctionType((F32,), (F32,))


ATTRIBUTES = [
    IntAttr(3), IntAttr(-7, I8), IntAttr(2 ** 64 - 1, UI64), IntAttr(5, INDEX), IntAttr(0, UI8),
    BoolAttr(True), BoolAttr(False),
    FloatAttr(0.1), FloatAttr(1 / 3, F32), FloatAttr(65504.0, F16), FloatAttr(1e-300),
    FloatAttr(5e-324), FloatAttr(1e300, F64), FloatAttr(float("inf"), F32),
    FloatAttr(float("-inf")), FloatAttr(float("nan"), F16),
    StringAttr(""), StringAttr('quote " backslash \\ newline \n tab \t é 😀 \x00 \x7f'),
    UnitAttr(), TypeAttr(TensorType((None, 3), F32)), TypeAttr(FunctionType((F32,), ())),
    TypeAttr(BoxType((1,), I32)),
    ArrayAttr(()), ArrayAttr((IntAttr(1), ArrayAttr((StringAttr("x"), UnitAttr())))),
    DictAttr(()), DictAttr((("a", IntAttr(1)), ("b.c", DictAttr((("d", BoolAttr(True)),))))),
    DictAttr((("with space", IntAttr(1)), ("", StringAttr("empty key")), ("1x", UnitAttr()))),
    SymbolRefAttr("f"), SymbolRefAttr("a.b_c"), SymbolRefAttr("a-b c"), SymbolRefAttr(""),
    SymbolRefAttr("é"),
    DenseAttr.from_array(np.float32(2.5) * np.ones((2, 3), np.float32)),
    DenseAttr.from_array(np.arange(6, dtype=np.int64).reshape(2, 3)),
    DenseAttr.from_array(np.array([True, False])),
    DenseAttr.from_array(np.array(7, dtype=np.int32)),
    DenseAttr.from_array(np.zeros((0, 3), np.float64)),
    DenseAttr.from_array(np.zeros((2, 0), np.int8)),
    DenseAttr.from_array(np.array([0, 2 ** 64 - 1], dtype=np.uint64)),
    DenseAttr.from_array(np.array([np.inf, -np.inf, np.nan, -0.0, 1.5], dtype=np.float16)),
    DenseAttr.from_array(np.array([[1.0], [-2.0]]), shape=(2, 1)),
]


@pytest.mark.parametrize("attribute", ATTRIBUTES, ids=lambda a: type(a).__name__)
def test_attributes_round_trip(attribute):
    text = Printer().attribute_text(attribute)
    parsed = parse_attribute(text)
    assert parsed == attribute
    assert Printer().attribute_text(parsed) == text


def test_attributes_on_ops_round_trip():
    op = generic_op(attributes={a_name: a for a_name, a in zip(
        [f"a{i}" for i in range(len(ATTRIBUTES))], ATTRIBUTES)} | {"odd name": UnitAttr()})
    text = print_op(op, generic=True)
    again = parse(text).body.block.first_op
    assert again.attributes == op.attributes
    assert print_op(again, generic=True) == text


def test_negative_zero_keeps_its_sign():
    parsed = parse_attribute(str(FloatAttr(-0.0, F32)))
    assert math.copysign(1.0, parsed.value) == -1.0


def test_attribute_spellings_beyond_the_printed_ones():
    assert parse_attribute("7") == IntAttr(7, I64)
    assert parse_attribute("2.5") == FloatAttr(2.5, F64)
    assert parse_attribute("3 : f32") == FloatAttr(3.0, F32)
    assert parse_attribute("1 : i1") == BoolAttr(True)
    assert parse_attribute("nan : f64").value != parse_attribute("nan : f64").value
    assert parse_attribute(r'"\0A\41\n"') == StringAttr("\nA\n")
    assert parse_attribute(r'"caf\C3\A9"') == StringAttr("café")
    assert parse_attribute('{a, "b" = 1 : i16}') == DictAttr((("a", UnitAttr()),
                                                             ("b", IntAttr(1, I16))))
    assert parse_attribute("dense<[[1, 2]]> : tensor<?x2xi32>").value.tolist() == [[1, 2]]
    assert parse_attribute("dense<[true, 0]> : tensor<2xi1>").value.tolist() == [True, False]
    assert parse_attribute("@\"x\\\"y\"") == SymbolRefAttr('x"y')
    assert parse_attribute("f32") == TypeAttr(F32)
    assert parse_attribute("[-inf : f16, -nan]") == ArrayAttr(
        (FloatAttr(float("-inf"), F16), FloatAttr(float("nan"))))


# ---------------------------------------------------------------------------------------------
# Parse errors: position, message, source line and caret


def parse_error(text: str) -> str:
    with pytest.raises(ParseError) as info:
        parse(text, "in.mlir")
    return str(info.value)


def test_undefined_value():
    assert parse_error('"test.op"(%nope) : (f32) -> ()') == (
        "in.mlir:1:11: error: use of undefined value '%nope'\n"
        '"test.op"(%nope) : (f32) -> ()\n'
        "          ^")


def test_values_of_a_region_are_not_visible_after_it():
    text = ('"test.op"() ({\n'
            '  %inner = "test.op"() : () -> f32\n'
            '}) : () -> ()\n'
            '"test.op"(%inner) : (f32) -> ()')
    assert parse_error(text).splitlines()[0] == (
        "in.mlir:4:11: error: use of undefined value '%inner'")


def test_isolated_regions_do_not_see_outer_values():
    text = ('%outer = "test.op"() : () -> f32\n'
            '"test.isolated"() ({\n'
            '  "test.op"(%outer) : (f32) -> ()\n'
            '}) : () -> ()')
    assert parse_error(text) == (
        "in.mlir:3:13: error: use of undefined value '%outer'\n"
        '  "test.op"(%outer) : (f32) -> ()\n'
        "            ^")


def test_redefinition():
    text = '%a = "test.op"() : () -> f32\n%a = "test.op"() : () -> f32'
    assert parse_error(text) == (
        "in.mlir:2:1: error: redefinition of value '%a' (first defined at line 1, column 1)\n"
        '%a = "test.op"() : () -> f32\n'
        "^")


def test_redefining_a_block_argument_inside_a_nested_region():
    text = ('"test.op"() ({\n'
            '^bb0(%x: f32):\n'
            '  "test.op"() ({\n'
            '    %x = "test.op"() : () -> f32\n'
            '  }) : () -> ()\n'
            '}) : () -> ()')
    assert parse_error(text).splitlines()[0] == (
        "in.mlir:4:5: error: redefinition of value '%x' (first defined at line 2, column 6)")


def test_type_mismatch_at_a_use():
    text = '%a = "test.op"() : () -> f32\n"test.op"(%a) : (i32) -> ()'
    assert parse_error(text) == (
        "in.mlir:2:11: error: '%a' has type f32, but is used here as i32\n"
        '"test.op"(%a) : (i32) -> ()\n'
        "          ^")


def test_type_mismatch_in_a_pretty_form():
    text = ('func.func @f(%x: f32) -> f32 {\n'
            '  func.return %x : i64\n'
            '}')
    assert parse_error(text) == (
        "in.mlir:2:15: error: '%x' has type f32, but is used here as i64\n"
        "  func.return %x : i64\n"
        "              ^")


def test_type_mismatch_with_a_later_definition():
    text = '"test.op"(%later) : (f32) -> ()\n%later = "test.op"() : () -> i8'
    assert parse_error(text).splitlines()[0] == (
        "in.mlir:2:1: error: '%later' is defined with type i8, but its use at line 1, "
        "column 11 expects f32")


def test_wrong_number_of_operand_types():
    text = '%a = "test.op"() : () -> f32\n"test.op"(%a, %a) : (f32) -> ()'
    assert parse_error(text) == (
        "in.mlir:2:21: error: 'test.op' has 2 operand(s), but its type lists 1\n"
        '"test.op"(%a, %a) : (f32) -> ()\n'
        "                    ^")


def test_wrong_number_of_result_types():
    assert parse_error('%r:2 = "test.op"() : () -> f32') == (
        "in.mlir:1:22: error: 'test.op' has 2 result name(s), but its type lists 1 "
        "result(s)\n"
        '%r:2 = "test.op"() : () -> f32\n'
        "                     ^")


def test_wrong_number_of_types_in_a_pretty_form():
    text = 'func.func @f(%x: f32) {\n  func.return %x, %x : f32\n}'
    assert parse_error(text).splitlines()[0] == "in.mlir:2:24: error: 2 operand(s) but 1 type(s)"


def test_result_index_out_of_range():
    text = '%p:2 = "test.op"() : () -> (f32, f32)\n"test.op"(%p#2) : (f32) -> ()'
    assert parse_error(text).splitlines()[0] == (
        "in.mlir:2:11: error: '%p#2' does not exist: '%p' names 2 value(s)")


def test_unterminated_string():
    text = 'module {\n  "test.op"() {s = "abc} : () -> ()\n}'
    assert parse_error(text) == (
        "in.mlir:2:20: error: unterminated string (a string ends with '\"' on the same line)\n"
        '  "test.op"() {s = "abc} : () -> ()\n'
        "                   ^")


def test_unterminated_region():
    text = 'module {\n  "test.op"() ({\n    "test.op"() : () -> ()\n'
    assert parse_error(text) == (
        "in.mlir:2:16: error: unterminated region: this '{' is never closed\n"
        '  "test.op"() ({\n'
        "               ^")
    # The last '}' closes the inner region, so the module's is the one left open.
    assert parse_error(text + "}") == (
        "in.mlir:1:8: error: unterminated region: this '{' is never closed\n"
        "module {\n"
        "       ^")


def test_end_of_input_inside_an_op():
    assert parse_error('"test.op"(') == (
        "in.mlir:1:11: error: expected ')' to end the operands, found the end of the input\n"
        '"test.op"(\n'
        "          ^")


def test_unknown_op_names_the_nearest():
    # The nearest name comes first; others may follow, depending on the dialects loaded.
    assert parse_error('"test.ob"() : () -> ()').startswith(
        "in.mlir:1:1: error: unknown op 'test.ob'; did you mean 'test.op'")
    assert parse_error('"tset.op"() : () -> ()').startswith(
        "in.mlir:1:1: error: unknown dialect 'tset' in op 'tset.op'; did you mean 'test'")
    assert parse_error("modul {\n}").startswith(
        "in.mlir:1:1: error: unknown op 'modul'; did you mean 'module'")


def test_op_without_a_pretty_form():
    assert parse_error("test.op").splitlines()[0] == (
        "in.mlir:1:1: error: 'test.op' has no pretty form; write it in the generic form "
        '"test.op"(...) : (...) -> (...)')


def test_unknown_type_names_the_nearest():
    first, *rest = parse_error('"test.op"() : () -> tensor<4xf33>').splitlines()
    assert first.startswith("in.mlir:1:30: error: unknown type 'f33'; did you mean 'f32'")
    assert rest == ['"test.op"() : () -> tensor<4xf33>',
                    "                             ^"]


def test_errors_inside_a_dialect_type():
    assert parse_error('"test.op"() : () -> !test.box<2x?xf32') == (
        "in.mlir:1:38: error: expected '>', found the end of the input\n"
        '"test.op"() : () -> !test.box<2x?xf32\n'
        "                                     ^")


def test_unexpected_character():
    assert parse_error('module {\n\t$\n}') == (
        "in.mlir:2:2: error: unexpected character '$'\n"
        "\t$\n"
        "\t^")


def test_bad_attributes():
    assert parse_error('"test.op"() {a = 1.5 : i32} : () -> ()').splitlines()[0] == (
        "in.mlir:1:18: error: 1.5 is not an integer, but its type is i32")
    assert parse_error('"test.op"() {a = 1, a = 2} : () -> ()').splitlines()[0] == (
        "in.mlir:1:21: error: attribute 'a' is given twice")
    assert parse_error(
        '"test.op"() {d = dense<[1, 2]> : tensor<3xi8>} : () -> ()').splitlines()[0] == (
        "in.mlir:1:18: error: the dense literal has shape (2,), which does not fit tensor<3xi8>")
    assert parse_error(
        '"test.op"() {d = dense<300> : tensor<2xui8>} : () -> ()').splitlines()[0] == (
        "in.mlir:1:18: error: 300 is out of range for ui8 (0 to 255)")


def test_error_through_parse_type_and_parse_attribute():
    with pytest.raises(ParseError) as info:
        parse_type("f32 i32")
    assert str(info.value) == "<input>:1:5: error: unexpected 'i32' after the end\nf32 i32\n    ^"
    with pytest.raises(ParseError) as info:
        parse_attribute("[1, )", "attr.txt")
    assert str(info.value).splitlines()[0] == (
        "attr.txt:1:5: error: expected an attribute, found ')'")


# ---------------------------------------------------------------------------------------------
# Random modules: printing then parsing gives back the same text, in both forms

SCALARS = [F16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64, INDEX]
HINTS = [None, None, None, "x", "x", "x_1", "arg0", "0", "a b", "é", "_"]
FILES = ["model.py", 'dir/we"ird\\.py', "é.py"]

scalar_types = st.sampled_from(SCALARS)
tensor_types = st.builds(lambda dims, e: TensorType(tuple(dims), e),
                         st.lists(st.sampled_from([None, 0, 1, 2, 784]), max_size=3), scalar_types)
types = st.recursive(
    st.one_of(scalar_types, tensor_types),
    lambda inner: st.one_of(
        st.builds(lambda i, r: FunctionType(tuple(i), tuple(r)), st.lists(inner, max_size=2),
                  st.lists(inner, max_size=2)),
        st.builds(lambda dims, e: BoxType(tuple(dims), e),
                  st.lists(st.sampled_from([None, 3]), max_size=2), inner)),
    max_leaves=4)


@st.composite
def int_attrs(draw):
    kind = draw(scalar_types.filter(lambda t: not t.is_float))
    if kind == I1:
        return BoolAttr(draw(st.booleans()))
    bits = kind.bits
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind.is_signed else (0, 2 ** bits - 1)
    return IntAttr(draw(st.integers(low, high)), kind)


@st.composite
def dense_attrs(draw):
    dtype = draw(st.sampled_from(["float16", "float32", "float64", "int8", "int64", "uint64",
                                  "bool"]))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    size = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        values = st.floats(width=np.dtype(dtype).itemsize * 8)
    elif dtype == "bool":
        values = st.booleans()
    else:
        info = np.iinfo(dtype)
        values = st.integers(int(info.min), int(info.max))
    if draw(st.booleans()) and size:
        data = np.full(shape, draw(values), dtype=dtype)  # a splat
    else:
        data = np.array(draw(st.lists(values, min_size=size, max_size=size)),
                        dtype=dtype).reshape(shape)
    return DenseAttr.from_array(data)


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
leaf_attrs = st.one_of(
    int_attrs(), st.sampled_from([F16, F32, F64]).flatmap(  # values the type can hold
        lambda t: st.builds(FloatAttr, st.floats(width=t.bits), st.just(t))),
    st.builds(StringAttr, names), st.just(UnitAttr()), st.builds(TypeAttr, types),
    st.builds(SymbolRefAttr, names), dense_attrs())
attributes = st.recursive(
    leaf_attrs,
    lambda inner: st.one_of(
        st.builds(lambda items: ArrayAttr(tuple(items)), st.lists(inner, max_size=3)),
        st.builds(lambda items: DictAttr(tuple(items.items())),
                  st.dictionaries(names, inner, max_size=3))),
    max_leaves=4)
locations = st.one_of(
    st.just(UNKNOWN),
    st.builds(Location, st.sampled_from(FILES), st.integers(0, 10 ** 6), st.integers(0, 200)),
    st.builds(lambda parts: FusedLoc(tuple(parts)), st.lists(
        st.builds(Location, st.sampled_from(FILES), st.integers(0, 99), st.integers(0, 99)),
        min_size=1, max_size=3)))


class ModuleBuilder:
    """Draws a random module: functions whose bodies hold test ops with random everything."""

    def __init__(self, data):
        self.draw = data.draw

    def module(self) -> ModuleOp:
        funcs = [self.function(f"f{i}") for i in range(self.draw(st.integers(0, 3)))]
        module = ModuleOp.build(funcs, location=self.draw(locations))
        if self.draw(st.booleans()):
            module.attributes["sym_name"] = StringAttr(self.draw(names))
        return module

    def function(self, name: str) -> FuncOp:
        inputs = self.draw(st.lists(types, max_size=3))
        if self.draw(st.integers(0, 5)) == 0:  # a declaration
            return FuncOp.create(attributes={"sym_name": name, "function_type": TypeAttr(
                FunctionType(tuple(inputs), ()))}, regions=[Region()],
                location=self.draw(locations))
        func = FuncOp.build(name, inputs, [], location=self.draw(locations))
        for arg in func.args:
            arg.name_hint = self.draw(st.sampled_from(HINTS))
        visible = list(func.args)
        self.fill(func.body.block, visible, depth=0)
        returned = self.draw(st.lists(st.sampled_from(visible), max_size=2)) if visible else []
        func.body.block.append(ReturnOp.create(returned, location=self.draw(locations)))
        func.attributes["function_type"] = TypeAttr(
            FunctionType(tuple(inputs), tuple(v.type for v in returned)))
        if self.draw(st.booleans()):
            func.attributes["extra"] = self.draw(attributes)
        return func

    def fill(self, block: Block, visible: list, depth: int) -> None:
        for _ in range(self.draw(st.integers(0, 4 if depth == 0 else 2))):
            block.append(self.op(visible, depth))

    def op(self, visible: list, depth: int) -> Operation:
        same_typed = [(a, b) for a in visible for b in visible if a.type == b.type]
        if same_typed and self.draw(st.integers(0, 4)) == 0:
            lhs, rhs = self.draw(st.sampled_from(same_typed))
            op = AddOp.create([lhs, rhs], [lhs.type], location=self.draw(locations))
        else:
            isolated = self.draw(st.integers(0, 4)) == 0
            operands = self.draw(st.lists(st.sampled_from(visible), max_size=3)) if visible else []
            regions = [self.region([] if isolated else visible, depth + 1)
                       for _ in range(self.draw(st.integers(0, 2 if depth < 2 else 0)))]
            cls = IsolatedOp if isolated else GenericOp
            op = cls.create(operands, self.draw(st.lists(types, max_size=3)),
                            self.draw(st.dictionaries(names, attributes, max_size=2)), regions,
                            self.draw(locations))
        for value in op.results:
            value.name_hint = self.draw(st.sampled_from(HINTS))
        visible.extend(op.results)
        return op

    def region(self, outer: list, depth: int) -> Region:
        region = Region()
        for _ in range(self.draw(st.integers(0, 2))):
            block = region.add_block(Block(self.draw(st.lists(types, max_size=2))))
            for arg in block.args:
                arg.name_hint = self.draw(st.sampled_from(HINTS))
            self.fill(block, list(outer) + list(block.args), depth)
        return region


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), generic=st.booleans(), with_locations=st.booleans())
def test_random_modules_round_trip(data, generic, with_locations):
    module = ModuleBuilder(data).module()
    text = print_op(module, generic=generic, print_locations=with_locations)
    again = parse(text, "random.mlir")
    assert print_op(again, generic=generic, print_locations=with_locations) == text
    # Reading one form and printing the other gives what the other form prints directly.
    other = print_op(parse(print_op(module, generic=not generic, print_locations=True)),
                     generic=generic, print_locations=True)
    assert other == print_op(module, generic=generic, print_locations=True)
