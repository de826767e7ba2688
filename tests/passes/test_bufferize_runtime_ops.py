"""The loops ops bufferize adds: ``loops.assert`` (run-time checks) and ``loops.constant``
(read-only global data): builders, verifiers, interpreter rules, text round trips."""
from __future__ import annotations

import numpy as np
import pytest

import lowering.dialects  # noqa: F401
from lowering.dialects import scalar
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.builtin.interpret import run_function
from lowering.dialects.loops import (AssertOp, ConstantOp, LoadOp, RuntimeCheckError,
                                     RuntimeIndexError, StoreOp)
from lowering.ir.attributes import DenseAttr, IntAttr, StringAttr
from lowering.ir.core import VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.parser import parse_module
from lowering.ir.printer import print_op
from lowering.ir.types import I1, I32, INDEX
from lowering.ir.verifier import verify


def function_with(ops_of, arg_types=()):
    func = FuncOp.build("f", list(arg_types), [])
    for op in ops_of(func.args):
        func.body.block.append(op)
    func.body.block.append(ReturnOp.create([]))
    return ModuleOp.build([func]), func


@pytest.mark.parametrize("kind, error", [("value", RuntimeCheckError),
                                         ("index", RuntimeIndexError)])
def test_a_failed_assert_raises_its_message(kind, error):
    module, func = function_with(lambda args: [AssertOp.build(args[0], "f.py:3: bad", 7, kind)],
                                 [I1])
    verify(module)
    run_function(func, [np.bool_(True)])
    with pytest.raises(error, match="^f.py:3: bad$") as info:
        run_function(func, [np.bool_(False)])
    assert info.value.error_code == 7
    assert isinstance(info.value, ValueError if kind == "value" else IndexError)


def test_assert_round_trips_in_both_forms():
    module, _ = function_with(lambda args: [AssertOp.build(args[0], 'say "why"', 3, "index"),
                                            AssertOp.build(args[0], "plain", 4)], [I1])
    for generic in (False, True):
        text = print_op(module, generic=generic)
        assert print_op(parse_module(text), generic=generic) == text
    assert 'loops.assert %arg0, "plain" {error_code = 4 : i64}' in print_op(module)


@pytest.mark.parametrize("change, message", [
    (lambda op: op.attributes.update(error_code=IntAttr(0)), "error_code must be a positive"),
    (lambda op: op.attributes.update(kind=StringAttr("fatal")),
     "attribute 'kind' must be one of value, index, got 'fatal'"),
])
def test_assert_verifier(change, message):
    module, func = function_with(lambda args: [AssertOp.build(args[0], "m", 1)], [I1])
    change(func.body.block.first_op)
    with pytest.raises(VerifyError, match=message):
        verify(module)


def test_assert_condition_must_be_i1():
    module, _ = function_with(lambda args: [AssertOp.build(args[0], "m", 1)], [I32])
    with pytest.raises(VerifyError, match="the condition must be i1, got i32"):
        verify(module)


def test_constant_is_read_only_data():
    def ops(args):
        c = ConstantOp.build(np.array([[1.5, 2.5]], dtype=np.float32))
        zero = scalar.ConstantOp.build(0, INDEX)
        one = scalar.ConstantOp.build(1, INDEX)
        load = LoadOp.build(c.result, [zero.result, one.result])
        store = StoreOp.build(load.result, c.result, [zero.result, zero.result])
        return [c, zero, one, load, store]
    module, func = function_with(ops)
    verify(module)
    text = print_op(module)
    assert print_op(parse_module(text)) == text
    with pytest.raises(InterpreterError, match="read-only"):
        run_function(func, [])


def test_constant_type_must_be_the_values():
    module, func = function_with(lambda args: [ConstantOp.build(np.arange(3, dtype=np.int64))])
    verify(module)
    func.body.block.first_op.attributes["value"] = DenseAttr.from_array(np.arange(4))
    with pytest.raises(VerifyError, match=r"result type !loops.buffer<3xi64> should be "
                                          r"!loops.buffer<4xi64>"):
        verify(module)
