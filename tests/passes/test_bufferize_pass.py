"""The bufferize pass as a whole: signatures, ownership of returned buffers, run-time checks
(messages, codes, placement), pipelines, and what it refuses."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects import loops
from lowering.dialects import tensor as T
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.loops import BufferType, RuntimeCheckError
from lowering.dialects.test import GenericOp
from lowering.ir.location import Location
from lowering.ir.parser import parse_module
from lowering.ir.pass_manager import PassError, PassManager
from lowering.ir.passes import lookup_pass, parse_pipeline
from lowering.ir.printer import print_op
from lowering.ir.types import F32, F64, I64, TensorType
from lowering.passes.bufferize.bufferize import Bufferize

from .bufferize_graphs import bufferized, check_graph, function_module, run

MATRIX = TensorType((None, 3), F32)


def returned(module):
    return module.functions[0].body.block.last_op.operands


def test_signature_has_strided_inputs_and_contiguous_results():
    module = bufferized(function_module([MATRIX, TensorType((), F64)],
                                        lambda a, s: [T.ExpOp.build(a).result, s]))
    ftype = module.functions[0].function_type
    assert [str(t) for t in ftype.inputs] == [
        "!loops.buffer<?x3xf32, strides=[?, ?], offset=?>", "!loops.buffer<f64, offset=?>"]
    assert [str(t) for t in ftype.results] == ["!loops.buffer<?x3xf32>", "!loops.buffer<f64>"]


def test_returned_inputs_views_and_repeats_are_copied_into_fresh_buffers():
    def build(a):
        y = T.ExpOp.build(a).result
        return [a, y, y, T.DimShuffleOp.build(y, [1, 0]).result]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    module = check_graph([MATRIX], build, [x])
    values = returned(module)
    assert all(isinstance(v.owner, loops.AllocOp) for v in values)
    assert len({id(v) for v in values}) == 4
    outputs = run(module, [x])
    assert not np.shares_memory(outputs[0], x)
    assert not np.shares_memory(outputs[1], outputs[2])


def test_assert_codes_are_unique_in_the_module_and_at_top_level_only():
    f = function_module([MATRIX, MATRIX], lambda a, b: [T.AddOp.build(a, b).result]).functions[0]
    g = function_module([MATRIX, TensorType((None,), F32)],
                        lambda a, b: [T.DotOp.build(a, b).result], name="g").functions[0]
    module = ModuleOp.build([f.detach(), g.detach()])
    module = bufferized(module)
    asserts = [op for op in module.walk() if isinstance(op, loops.AssertOp)]
    assert [a.error_code for a in asserts] == [1, 2]
    assert all(isinstance(a.parent_op, FuncOp) for a in asserts)


def test_messages_name_the_users_line():
    func = FuncOp.build("f", [MATRIX, MATRIX], [MATRIX])
    add = T.AddOp.build(*func.args, location=Location("model.py", 12, 5))
    func.body.block.append(add)
    func.body.block.append(ReturnOp.create([add.result]))
    module = bufferized(ModuleOp.build([func]))
    (check,) = [op for op in module.walk() if isinstance(op, loops.AssertOp)]
    assert check.message == ("tensor.add at model.py:12:5: operand shapes (?, 3), (?, 3) differ "
                             "in dimension 0 (only dimensions typed 1 broadcast)")
    assert check.location == Location("model.py", 12, 5)


def test_every_new_op_keeps_the_location_of_the_op_it_lowers():
    text = """
    func.func @f(%x: tensor<?xf32>) -> tensor<f32> {
      %0 = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32> loc("m.py":3:1)
      %1 = "tensor.sum"(%0) {axes = [0 : i64], keepdims = false}
             : (tensor<?xf32>) -> tensor<f32> loc("m.py":4:1)
      func.return %1 : tensor<f32> loc("m.py":5:1)
    }"""
    module = parse_module(text)
    Bufferize().apply(module)
    lines = {op.location.line for op in module.functions[0].walk()
             if op is not module.functions[0] and not op.name == "scalar.constant"}
    assert lines <= {3, 4, 5}


def test_the_pass_is_registered_with_its_options():
    assert lookup_pass("bufferize") is Bufferize
    (p,) = parse_pipeline("bufferize{use-blas=true blas-min-work=10}")
    assert p == Bufferize(use_blas=True, blas_min_work=10)


def test_the_pass_manager_runs_it_and_verifies():
    module = function_module([MATRIX], lambda a: [T.SoftmaxOp.build(a).result])
    PassManager("canonicalize,bufferize,cse").run(module)
    assert isinstance(module.functions[0].function_type.inputs[0], BufferType)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(run(module, [x])[0], np.full((2, 3), 1 / 3), rtol=1e-6)


def test_functions_without_tensors_are_left_alone():
    module = parse_module("""
    func.func @g(%a: f32) -> f32 {
      %b = "scalar.exp"(%a) : (f32) -> f32
      func.return %b : f32
    }""")
    before = print_op(module)
    Bufferize().apply(module)
    assert print_op(module) == before


def test_scalar_arguments_and_ops_pass_through():
    module = parse_module("""
    func.func @f(%x: tensor<?xf64>, %s: f64) -> (tensor<?xf64>, f64) {
      %t = "scalar.exp"(%s) : (f64) -> f64
      %y = "tensor.neg"(%x) : (tensor<?xf64>) -> tensor<?xf64>
      func.return %y, %t : tensor<?xf64>, f64
    }""")
    lowered = bufferized(module)
    outputs = run(lowered, [np.array([1.0, -2.0]), np.float64(0.0)])
    assert outputs[0].tolist() == [-1.0, 2.0] and outputs[1] == 1.0


def test_an_op_without_lowering_fails_the_pass_naming_it():
    func = FuncOp.build("f", [], [TensorType((2,), I64)])
    op = GenericOp.create(result_types=[TensorType((2,), I64)], location=Location("m.py", 7, 1))
    func.body.block.append(op)
    func.body.block.append(ReturnOp.create([op.result]))
    with pytest.raises(PassError, match=r"bufferize: no rule for test.op "
                                        r"\(at m.py:7:1\)"):
        PassManager("bufferize").run(ModuleOp.build([func]))


def test_a_check_known_to_fail_still_fails_at_run_time():
    """The constant's sizes are known, its type does not say them: the check fails whenever
    the function runs, and what follows it is never reached."""
    def build(a):
        empty = T.ConstantOp.build(np.zeros((0, 0), np.float32),
                                   type=TensorType((None, None), F32)).result
        joined = T.ConcatenateOp.build(a, empty, axis=0).result
        return [T.ExpOp.build(joined).result]
    module = function_module([TensorType((None, 1), F32)], build)
    with pytest.raises(Exception, match="differ"):
        run(module, [np.zeros((0, 1), np.float32)])
    with pytest.raises(RuntimeCheckError, match=r"tensor\.concatenate at .*: input shapes "
                                                r"\(\?, 1\), \(\?, \?\) differ in dimension 1"):
        run(bufferized(module), [np.zeros((0, 1), np.float32)])
