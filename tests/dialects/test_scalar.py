"""The scalar dialect: declarations, typing, evaluation on scalars, verifier rules, folding and
interpretation."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lowering.dialects import scalar
from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from lowering.dialects.builtin.interpret import run_function
from lowering.ir.attributes import FloatAttr, IntAttr
from lowering.ir.core import Block, Region, TERMINATOR, VerifyError
from lowering.ir.interpreter import Interpreter
from lowering.ir.patterns import apply_patterns_greedily
from lowering.ir.types import (F16, F32, F64, I1, I8, I32, I64, INDEX, UI8, UI64, TensorType,
                               scalar_type_of)
from lowering.ir.verifier import verify

from .helpers import graph_inputs
from .reference import (ALL_DTYPES, ALL_FUNCTIONS, BINARY, NOT_DIFFERENTIABLE, UNARY,
                        accepted_dtypes, assert_matches, cast_reference, reference, result_dtype)
from .strategies import elements

SETTINGS = settings(max_examples=10, deadline=None)
FUNCTIONS = UNARY + BINARY + ["clip"]


def arity_of(short):
    return 1 if short in UNARY else 3 if short == "clip" else 2


# ---------------------------------------------------------------------------------------------
# Declarations


def test_every_function_of_the_contract_is_a_scalar_op():
    assert set(scalar.SCALAR_OPS) == set(ALL_FUNCTIONS)
    for short, cls in scalar.SCALAR_OPS.items():
        assert cls.name == f"scalar.{short}" and cls.short == short


@pytest.mark.parametrize("short", ALL_FUNCTIONS)
def test_ops_declare_their_semantics(short):
    cls = scalar.SCALAR_OPS[short]
    assert cls.arity == len(cls._operand_fields)
    assert cls.kind in scalar.KINDS or cls.kind in ("select", "cast")
    assert callable(cls.numpy_fn)
    assert cls.is_differentiable == (short not in NOT_DIFFERENTIABLE)
    assert cls.__doc__


def test_kinds_describe_their_typing():
    assert scalar.KINDS["logical"].accepts == {"int", "bool"}
    assert scalar.KINDS["arith"].result == "same"
    assert scalar.ExpOp.kind == "float" and scalar.AddOp.kind == "arith"
    assert scalar.EqOp.kind == "compare" and scalar.AndOp.kind == "logical"


# ---------------------------------------------------------------------------------------------
# Typing


@pytest.mark.parametrize("short", FUNCTIONS)
def test_result_element_for_every_dtype(short):
    cls = scalar.SCALAR_OPS[short]
    for dtype in ALL_DTYPES:
        element = scalar_type_of(dtype)
        if dtype in accepted_dtypes(short):
            out = cls.result_element([element] * arity_of(short))
            assert out == scalar_type_of(result_dtype(short, dtype))
            op = cls.build(*graph_inputs(*[element] * arity_of(short)))
            assert op.result.type == out
            verify(op)
        else:
            with pytest.raises(VerifyError, match=f"scalar.{short}: operand type {element}"):
                cls.result_element([element] * arity_of(short))


def test_index_is_an_integer_type():
    assert scalar.AddOp.result_element([INDEX, INDEX]) == INDEX
    assert scalar.LtOp.result_element([INDEX, INDEX]) == I1
    assert scalar.ExpOp.result_element([INDEX]) == F64


def test_operands_must_share_one_type():
    with pytest.raises(VerifyError,
                       match="scalar.add: operands must have one element type, got f32, f64"):
        scalar.AddOp.build(*graph_inputs(F32, F64))


def test_operand_count_is_checked():
    with pytest.raises(VerifyError, match="scalar.add: expected 2 operand"):
        scalar.AddOp.result_element([F32])
    op = scalar.AddOp.create(operands=graph_inputs(F32), result_types=[F32])
    with pytest.raises(VerifyError, match="expected 2 operand"):
        verify(op)


def test_operands_must_be_scalars():
    a, b = graph_inputs(TensorType((2,), F32), F32)
    op = scalar.AddOp.create(operands=[a, b], result_types=[F32])
    with pytest.raises(VerifyError,
                       match="scalar.add: the lhs must be a scalar, got tensor<2xf32>"):
        verify(op)
    with pytest.raises(VerifyError, match="expected a scalar element type"):
        scalar.AddOp.build(a, a)


def test_verify_rejects_a_wrong_result_type():
    a, b = graph_inputs(I32, I32)
    op = scalar.LtOp.create(operands=[a, b], result_types=[I32])
    with pytest.raises(VerifyError, match="scalar.lt: result type i32 should be i1") as info:
        verify(op)
    assert info.value.op is op


def test_select_rules():
    c, a, b, f = graph_inputs(I1, F32, F64, F32)
    assert scalar.SelectOp.build(c, a, f).result.type == F32
    with pytest.raises(VerifyError, match="the condition must be i1"):
        scalar.SelectOp.build(f, a, a)
    with pytest.raises(VerifyError, match="branches must have one element type"):
        scalar.SelectOp.build(c, a, b)
    with pytest.raises(VerifyError, match="expected 3 operands"):
        scalar.SelectOp.result_element([I1, F32])


def test_cast_rules():
    (x,) = graph_inputs(F32)
    assert scalar.CastOp.build(x, UI8).result.type == UI8
    with pytest.raises(VerifyError, match="the target must be a scalar type"):
        scalar.CastOp.build(x, TensorType((), F32))
    with pytest.raises(VerifyError, match="expected 1 operand"):
        scalar.CastOp.result_element([F32, F32], to=F64)


# ---------------------------------------------------------------------------------------------
# Evaluation on NumPy scalars


@pytest.mark.parametrize("short", FUNCTIONS)
@SETTINGS
@given(data=st.data())
def test_evaluate_on_scalars_matches_reference(short, data):
    cls = scalar.SCALAR_OPS[short]
    dtype = data.draw(st.sampled_from(accepted_dtypes(short)), label="dtype")
    values = []
    for position in range(arity_of(short)):
        strategy = elements(dtype)
        if short == "pow" and position == 1 and np.dtype(dtype).kind in "iu":
            strategy = st.integers(0 if np.dtype(dtype).kind == "u" else -4, 40)
        values.append(np.asarray(data.draw(strategy), dtype=dtype)[()])
    got = cls.evaluate(*values)
    assert isinstance(got, np.generic), "scalars evaluate to NumPy scalars"
    assert_matches(got, reference(short, *values))


@SETTINGS
@given(data=st.data())
def test_cast_evaluate_matches_reference(data):
    source = data.draw(st.sampled_from(ALL_DTYPES))
    target = data.draw(st.sampled_from(ALL_DTYPES))
    strategy = elements(source)
    if np.dtype(source).kind == "f" and np.dtype(target).kind in "iu":
        strategy = elements(source, 0.0 if np.dtype(target).kind == "u" else -100.0, 100.0,
                            specials=False)
    value = np.asarray(data.draw(strategy), dtype=source)[()]
    got = scalar.CastOp.evaluate(value, to=scalar_type_of(target))
    assert_matches(got, cast_reference(value, target))


def test_integer_corner_cases():
    i8 = np.int8
    assert scalar.FloorDivOp.evaluate(i8(-7), i8(2)) == -4
    assert scalar.FloorDivOp.evaluate(i8(-7), i8(0)) == 0
    assert scalar.ModOp.evaluate(i8(-7), i8(2)) == 1
    assert scalar.ModOp.evaluate(i8(7), i8(-2)) == -1
    assert scalar.ModOp.evaluate(i8(7), i8(0)) == 0
    assert scalar.PowOp.evaluate(i8(2), i8(-1)) == 0
    assert scalar.PowOp.evaluate(i8(-1), i8(-3)) == -1
    assert scalar.PowOp.evaluate(i8(2), i8(7)) == -128
    assert scalar.NegOp.evaluate(i8(-128)) == -128
    assert scalar.CastOp.evaluate(np.int32(300), to=UI8) == 44
    assert scalar.CastOp.evaluate(np.float64(-2.7), to=I8) == -2
    assert scalar.CastOp.evaluate(np.float32(np.nan), to=I1) == True  # noqa: E712
    assert scalar.DivOp.evaluate(np.int32(1), np.int32(4)) == 0.25


def test_float_functions_of_integers_compute_in_their_float_type():
    got = scalar.ExpOp.evaluate(np.int8(1))
    assert got.dtype == np.float32 and got == np.exp(np.float32(1))
    got = scalar.SqrtOp.evaluate(np.int64(2))
    assert got.dtype == np.float64 and got == np.sqrt(2.0)


def test_evaluate_works_on_arrays_too():
    got = scalar.AddOp.evaluate(np.array([[1], [2]], np.int16), np.array([10, 20], np.int16))
    assert got.dtype == np.int16 and got.tolist() == [[11, 21], [12, 22]]


def test_stable_special_functions():
    assert scalar.SigmoidOp.evaluate(np.float32(-100.0)) == np.float32(np.exp(-100.0))
    assert scalar.SigmoidOp.evaluate(np.float64(800.0)) == 1.0
    assert scalar.SoftplusOp.evaluate(np.float64(800.0)) == 800.0
    assert scalar.SoftplusOp.evaluate(np.float64(-800.0)) == 0.0
    assert scalar.ErfOp.evaluate(np.float16(0.0)) == 0.0


# ---------------------------------------------------------------------------------------------
# Constants, folding, interpretation


def test_constant_op():
    c = scalar.ConstantOp.build(1.5, F16)
    assert c.result.type == F16 and c.numpy_value == np.float16(1.5)
    assert c.attributes["value"] == FloatAttr(1.5, F16)
    verify(c)
    assert scalar.ConstantOp.build(True, I1).attributes["value"] == IntAttr(1, I1)
    assert scalar.ConstantOp.build(2**64 - 1, UI64).numpy_value == np.uint64(2**64 - 1)


def test_constant_verifier_rules():
    wrong_type = scalar.ConstantOp.create(result_types=[F32],
                                          attributes={"value": FloatAttr(1.0, F64)})
    with pytest.raises(VerifyError, match="value type f64 differs from result f32"):
        verify(wrong_type)
    too_big = scalar.ConstantOp.create(result_types=[I8], attributes={"value": IntAttr(300, I8)})
    with pytest.raises(VerifyError, match="300 does not fit in i8"):
        verify(too_big)
    negative = scalar.ConstantOp.create(result_types=[UI8], attributes={"value": IntAttr(-1, UI8)})
    with pytest.raises(VerifyError, match="-1 does not fit in ui8"):
        verify(negative)
    tensor = scalar.ConstantOp.create(result_types=[TensorType((), F32)],
                                      attributes={"value": FloatAttr(1.0, F32)})
    with pytest.raises(VerifyError,
                       match="scalar.constant: the result must be a scalar, got tensor<f32>"):
        verify(tensor)
    missing = scalar.ConstantOp.create(result_types=[F32])
    with pytest.raises(VerifyError, match="missing attribute 'value'"):
        verify(missing)


def test_fold():
    a = scalar.ConstantOp.build(3, I8).result
    b = scalar.ConstantOp.build(5, I8).result
    assert scalar.MulOp.build(a, b).fold() == [IntAttr(15, I8)]
    assert scalar.LtOp.build(a, b).fold() == [IntAttr(1, I1)]
    assert scalar.CastOp.build(a, F32).fold() == [FloatAttr(3.0, F32)]
    assert scalar.ExpOp.build(a).fold()[0].type == F32
    (x,) = graph_inputs(I8)
    assert scalar.AddOp.build(a, x).fold() is None


def test_materialize_constant():
    const = scalar.AddOp.materialize_constant(FloatAttr(2.0, F32), F32, None)
    assert isinstance(const, scalar.ConstantOp) and const.numpy_value == 2.0
    assert scalar.AddOp.materialize_constant(FloatAttr(2.0, F32), TensorType((), F32), None) is None


def scalar_function(arg_types, result_types, body):
    """A ``func.func`` whose body is built by ``body(block, *args)``, which returns the results."""
    func = FuncOp.build("f", arg_types, result_types)
    block = func.body.block
    block.append(ReturnOp.create(body(block, *block.args)))
    return func


def test_interpreter_runs_scalar_functions():
    def body(block, a, b):
        bigger = block.append(scalar.GtOp.build(a, b)).result
        e = block.append(scalar.ExpOp.build(a)).result
        chosen = block.append(scalar.SelectOp.build(bigger, e, b)).result
        as_int = block.append(scalar.CastOp.build(chosen, I32)).result
        return [chosen, as_int]

    func = scalar_function([F64, F64], [F64, I32], body)
    verify(ModuleOp.build([func]))
    assert run_function(func, [np.float64(2.0), np.float64(1.0)]) == [np.exp(2.0), 7]
    out = run_function(func, [np.float64(0.0), np.float64(1.5)])
    assert out == [1.5, 1] and out[1].dtype == np.int32


def test_folding_a_function_body():
    def body(block, x):
        two = block.append(scalar.ConstantOp.build(2.0, F32)).result
        three = block.append(scalar.ConstantOp.build(3.0, F32)).result
        six = block.append(scalar.MulOp.build(two, three)).result
        return [block.append(scalar.AddOp.build(x, six)).result]

    func = scalar_function([F32], [F32], body)
    module = ModuleOp.build([func])
    apply_patterns_greedily(module, [])
    verify(module)
    ops = list(func.body.block.ops)
    assert [op.name for op in ops] == ["scalar.constant", "scalar.add", "func.return"]
    assert ops[0].numpy_value == 6.0
    assert run_function(func, [np.float32(1.0)]) == [7.0]


def test_yield_ends_a_scalar_body():
    assert TERMINATOR in scalar.YieldOp.traits
    block = Block([F32])
    e = block.append(scalar.ExpOp.build(block.args[0])).result
    block.append(scalar.YieldOp.create([e]))
    assert Interpreter().run_region(Region([block]), [np.float32(0.0)]) == [1.0]
    misplaced = Block([F32])
    misplaced.append(scalar.YieldOp.create([misplaced.args[0]]))
    misplaced.append(scalar.ExpOp.build(misplaced.args[0]))
    with pytest.raises(VerifyError, match="terminator must be the last op"):
        verify(misplaced.first_op)


def test_scalar_ops_print_and_parse_back():
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op

    def body(block, a, b, c):
        values = [block.append(scalar.ConstantOp.build(v, t)).result
                  for v, t in ((0.1, F16), (-3, I8), (True, I1), (2**64 - 1, UI64), (np.nan, F64))]
        values.append(block.append(scalar.Log1pOp.build(a)).result)
        values.append(block.append(scalar.SelectOp.build(c, a, b)).result)
        values.append(block.append(scalar.CastOp.build(a, I64)).result)
        return values

    func = scalar_function([F32, F32, I1], [F16, I8, I1, UI64, F64, F32, F32, I64], body)
    text = print_op(ModuleOp.build([func]))
    parsed = parse_module(text)
    verify(parsed)
    assert print_op(parsed) == text
