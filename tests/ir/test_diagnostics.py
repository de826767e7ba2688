"""Diagnostics: errors show the IR around the failing op with the message under it."""
from __future__ import annotations

import pytest

import lowering.dialects  # noqa: F401  (registers builtin.module, func.func, func.return)
from lowering.dialects.builtin.ops import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.test import CheckedOp
from lowering.ir.core import IRError, VerifyError
from lowering.ir.diagnostics import format_error, render_op_error
from lowering.ir.location import UNKNOWN, FusedLoc, Location
from lowering.ir.parser import ParseError, parse_module
from lowering.ir.types import F32, I64, TensorType
from lowering.ir.verifier import verify


T = TensorType((None,), F32)


def function_with_failing_op():
    func = FuncOp.build("f", [T], [T], location=Location("model.py", 1, 1))
    func.args[0].name_hint = "x"
    ok = func.body.block.append(CheckedOp.create([func.args[0]], [T],
                                                 location=Location("model.py", 2, 5)))
    bad = func.body.block.append(CheckedOp.create([ok.results[0]], [T],
                                                  {"error": "operand must be positive"},
                                                  location=Location("model.py", 3, 9)))
    func.body.block.append(ReturnOp.create([bad.results[0]], location=Location("model.py", 4, 1)))
    return ModuleOp.build([func], location=Location("model.py", 1, 1)), bad


def test_a_verifier_error_prints_the_function_with_the_message_under_the_op():
    module, bad = function_with_failing_op()
    with pytest.raises(VerifyError) as info:
        verify(module)
    assert info.value.op is bad
    assert format_error(info.value) == '''\
model.py:3:9: error: operand must be positive
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "test.checked"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = "test.checked"(%0) {error = "operand must be positive"} : (tensor<?xf32>) -> tensor<?xf32>
       ^ error: operand must be positive
  func.return %1 : tensor<?xf32>
}'''


def test_a_builtin_verifier_error_points_at_the_return():
    func = FuncOp.build("g", [T], [T], location=Location("m.py", 5, 1))
    value = func.body.block.append(CheckedOp.create([func.args[0]], [TensorType((2,), I64)],
                                                    location=Location("m.py", 6, 1)))
    func.body.block.append(ReturnOp.create([value.results[0]], location=Location("m.py", 7, 3)))
    with pytest.raises(VerifyError) as info:
        verify(ModuleOp.build([func]))
    assert format_error(info.value).splitlines() == [
        "m.py:7:3: error: func.return operand types differ from function_type results",
        "func.func @g(%arg0: tensor<?xf32>) -> tensor<?xf32> {",
        '  %0 = "test.checked"(%arg0) : (tensor<?xf32>) -> tensor<2xi64>',
        "  func.return %0 : tensor<2xi64>",
        "  ^ error: func.return operand types differ from function_type results",
        "}"]


def test_errors_in_parsed_text_point_at_the_line_of_the_text(test_context):
    text = ('module {\n'
            '  func.func @f(%x: f32) -> f32 {\n'
            '    %0 = "test.checked"(%x) {error = "operand must be positive"} : (f32) -> f32\n'
            '    func.return %0 : f32\n'
            '  }\n'
            '}\n')
    with pytest.raises(VerifyError) as info:
        verify(parse_module(text, "input.mlir", test_context))
    assert format_error(info.value).splitlines()[:5] == [
        "input.mlir:3:10: error: operand must be positive",
        "func.func @f(%x: f32) -> f32 {",
        '  %0 = "test.checked"(%x) {error = "operand must be positive"} : (f32) -> f32',
        "       ^ error: operand must be positive",
        "  func.return %0 : f32"]


def test_an_op_outside_any_function_prints_its_top_most_ancestor():
    op = CheckedOp.create([], [F32], location=Location("a.py", 9, 2))
    ModuleOp.build([op])
    assert render_op_error(op, "lonely") == '''\
a.py:9:2: error: lonely
module {
  %0 = "test.checked"() : () -> f32
       ^ error: lonely
}'''


def test_a_detached_op_prints_alone():
    source = CheckedOp.create([], [F32], location=Location("a.py", 1, 1))
    source.results[0].name_hint = "w"
    op = CheckedOp.create([source.results[0]], [F32], location=Location("a.py", 2, 7))
    assert render_op_error(op, "shapes differ") == '''\
a.py:2:7: error: shapes differ
%0 = "test.checked"(%w) : (f32) -> f32
     ^ error: shapes differ'''


def test_an_error_on_a_function_points_at_its_header():
    module, _ = function_with_failing_op()
    func = module.functions[0]
    lines = render_op_error(func, "unused function").splitlines()
    assert lines[:3] == ["model.py:1:1: error: unused function",
                         "func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {",
                         "^ error: unused function"]


def test_fused_and_unknown_locations_in_the_header():
    op = CheckedOp.create([], [], location=FusedLoc((Location("a.py", 3, 1),
                                                          Location("b.py", 4, 2))))
    assert render_op_error(op, "boom").splitlines()[:2] == [
        "a.py:3:1: error: boom", "b.py:4:2: note: also from here"]
    op.location = UNKNOWN
    assert render_op_error(op, "boom").splitlines()[0] == "error: boom"


def test_multi_line_messages_stay_aligned():
    op = CheckedOp.create([], [], location=Location("a.py", 1, 1))
    assert render_op_error(op, "first\nsecond").splitlines() == [
        "a.py:1:1: error: first", "second",
        '"test.checked"() : () -> ()', "^ error: first", "  second"]


def test_format_error_of_other_errors():
    with pytest.raises(ParseError) as info:
        parse_module("module {", "x.mlir")
    assert format_error(info.value) == str(info.value)
    assert format_error(info.value).startswith("x.mlir:1:8: error: unterminated region")
    assert format_error(IRError("no such pass 'fusee'")) == "error: no such pass 'fusee'"
    assert format_error(ValueError("bad flag")) == "error: bad flag"
