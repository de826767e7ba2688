"""The ``lowering`` dialect's function attributes: typed accessors, printing and parsing back,
and a verifier error naming the function, the attribute and the problem for each broken rule."""
from __future__ import annotations

import re

import pytest

from lowering.dialects.builtin import FuncOp, ReturnOp
from lowering.dialects.function_attrs import (ALLOW_INPLACE, ARG_DEVICES, LOWERING, MUTABLE_ARGS,
                                              RESULT_DEVICES, SHARED_UPDATES, UPDATED_IN_PLACE)
from lowering.ir.attributes import ArrayAttr, IntAttr, StringAttr, UnitAttr
from lowering.ir.core import Operation, VerifyError
from lowering.ir.parser import parse_module
from lowering.ir.printer import print_op
from lowering.ir.rewriter import RewriteListener, Rewriter
from lowering.ir.types import F32, TensorType
from lowering.ir.verifier import verify

VECTOR = TensorType((None,), F32)


def function(n_args: int = 2, n_results: int = 2) -> FuncOp:
    func = FuncOp.build("step", [VECTOR] * n_args, [VECTOR] * n_results)
    func.body.block.append(ReturnOp.create([func.args[0]] * n_results))
    return func


def test_every_compiler_attribute_is_declared_with_the_dialect_prefix():
    assert sorted(LOWERING.attributes) == [
        "lowering.allow_inplace", "lowering.arg_devices", "lowering.mutable_args",
        "lowering.result_devices", "lowering.shared_updates", "lowering.updated_in_place"]


def test_accessors_write_typed_attributes_and_read_python_values():
    func = function()
    SHARED_UPDATES.set(func, [(1, 1)])
    UPDATED_IN_PLACE.set(func, [(2, 0)])
    MUTABLE_ARGS.set(func, [0])
    ALLOW_INPLACE.set(func, True)
    ARG_DEVICES.set(func, ["cpu", "cuda"])
    RESULT_DEVICES.set(func, ["cuda", "cpu"])
    verify(func)
    attrs = func.attributes
    assert attrs["lowering.shared_updates"] == ArrayAttr((ArrayAttr((IntAttr(1), IntAttr(1))),))
    assert attrs["lowering.mutable_args"] == ArrayAttr((IntAttr(0),))
    assert attrs["lowering.allow_inplace"] == UnitAttr()
    assert attrs["lowering.arg_devices"] == ArrayAttr((StringAttr("cpu"), StringAttr("cuda")))
    assert (SHARED_UPDATES.get(func), UPDATED_IN_PLACE.get(func), MUTABLE_ARGS.get(func)) == \
        ([(1, 1)], [(2, 0)], [0])
    assert (ALLOW_INPLACE.get(func), ARG_DEVICES.get(func), RESULT_DEVICES.get(func)) == \
        (True, ["cpu", "cuda"], ["cuda", "cpu"])
    SHARED_UPDATES.set(func, None)
    assert not SHARED_UPDATES.present(func) and SHARED_UPDATES.get(func, []) == []


def test_setting_through_a_rewriter_tells_its_listener():
    seen = []

    class Listener(RewriteListener):
        def op_modified(self, op):
            seen.append(op)

    func = function()
    MUTABLE_ARGS.set(func, [1], rewriter=Rewriter(Listener()))
    assert seen == [func] and MUTABLE_ARGS.get(func) == [1]


def test_the_attributes_print_and_parse_back():
    func = function()
    SHARED_UPDATES.set(func, [(1, 0)])
    ALLOW_INPLACE.set(func, True)
    RESULT_DEVICES.set(func, ["cpu", "dev1"])
    text = print_op(func)
    assert "lowering.shared_updates = [[1 : i64, 0 : i64]]" in text
    again = parse_module(text).functions[0]
    verify(again)
    assert (SHARED_UPDATES.get(again), ALLOW_INPLACE.get(again), RESULT_DEVICES.get(again)) == \
        ([(1, 0)], True, ["cpu", "dev1"])
    assert print_op(again) == text


@pytest.mark.parametrize("definition, value, message", [
    (SHARED_UPDATES, [(0, 2)], "lowering.shared_updates: argument index 2 out of range "
                               "(the function has 2 arguments)"),
    (SHARED_UPDATES, [(-1, 0)], "lowering.shared_updates: result index -1 out of range"),
    (UPDATED_IN_PLACE, [(3, 0)], "lowering.updated_in_place: result index 3 out of range "
                                 "(the function has 3 results)"),
    (MUTABLE_ARGS, [5], "lowering.mutable_args: argument index 5 out of range"),
    (ARG_DEVICES, ["cpu"], "lowering.arg_devices: 1 entries for the function's 2 arguments"),
    (RESULT_DEVICES, ["cpu"] * 3, "lowering.result_devices: 3 entries for the function's 2 "
                                  "results"),
])
def test_out_of_range_indices_and_wrong_lengths_are_verify_errors(definition, value, message):
    func = function()
    definition.set(func, value)
    expected = re.escape(f"func.func @step: {message}")
    with pytest.raises(VerifyError, match="^" + expected) as caught:
        verify(func)
    assert caught.value.op is func


@pytest.mark.parametrize("name, attribute, kind", [
    ("lowering.shared_updates", ArrayAttr((IntAttr(0),)), "an array of [integer, integer] pairs"),
    ("lowering.mutable_args", IntAttr(0), "an array of integers"),
    ("lowering.allow_inplace", StringAttr("yes"), "unit"),
    ("lowering.arg_devices", ArrayAttr((IntAttr(0), IntAttr(1))), "an array of strings"),
])
def test_attributes_of_the_wrong_kind_are_verify_errors(name, attribute, kind):
    func = function()
    func.attributes[name] = attribute
    expected = re.escape(f"func.func @step: {name} must be {kind}, got ")
    with pytest.raises(VerifyError, match="^" + expected):
        verify(func)


def test_an_unknown_attribute_of_the_dialect_is_a_verify_error_and_others_are_not():
    func = function()
    func.attributes["other.shared_update"] = UnitAttr()  # no dialect owns it: left alone
    verify(func)
    func.attributes["lowering.shared_update"] = UnitAttr()
    with pytest.raises(VerifyError, match=r"lowering\.shared_update is not an attribute of the "
                                          r"lowering dialect \(it has lowering\.allow_inplace"):
        verify(func)


def test_function_attributes_belong_on_functions():
    op = Operation()
    ALLOW_INPLACE.set(op, True)
    with pytest.raises(VerifyError, match="lowering.allow_inplace: a function attribute, found on"):
        verify(op)
