"""Constraints on op fields: each kind on its own, variables shared between fields, and the
messages the structural verifier gives for an op class that declares them.

The op classes here are not registered: the verifier needs only the class, so the op registry
stays as it was."""
import pytest

from lowering.ir.attributes import ArrayAttr, FloatAttr, IntAttr, StringAttr, TypeAttr
from lowering.ir.constraints import (AnyFloat, AnyFunctionType, AnyInteger, AnyOf, AnyScalar,
                                     AnyTensor, AnyType, ArrayAttrOf, Bool, ConstraintVar,
                                     EnumAttr, Index, Is, TensorOf, TypeAttrOf, TypeClass, Where)
from lowering.ir.core import Block, Operation, VerifyError, attr, operand, result, var_operand
from lowering.ir.types import (F32, F64, I1, I32, I64, INDEX, UI8, FunctionType, ScalarType,
                               TensorType)
from lowering.ir.verifier import verify


def fits(constraint, x, env=None):
    return constraint.check(x, {} if env is None else env)


def test_scalar_kinds():
    assert [fits(AnyFloat, t) for t in (F32, F64, I32, I1, INDEX)] == [True, True, False, False,
                                                                      False]
    assert [fits(AnyInteger, t) for t in (I32, UI8, INDEX, I1, F32)] == [True, True, True, False,
                                                                        False]
    assert fits(Bool, I1) and not fits(Bool, I32)
    assert fits(Index, INDEX) and not fits(Index, I64)
    assert fits(AnyScalar, UI8) and not fits(AnyScalar, TensorType((), F32))
    assert not fits(AnyFloat, TensorType((2,), F32))  # a kind of scalar, not of tensor element
    assert (str(AnyFloat), str(AnyInteger), str(Bool), str(Index)) == ("float", "integer", "i1",
                                                                       "index")


def test_any_type_is_and_type_class():
    assert all(fits(AnyType, x) for x in (F32, TensorType((2,), F32), 3))
    assert fits(Is(F32), F32) and not fits(Is(F32), F64)
    assert fits(TypeClass(TensorType, "a tensor"), TensorType((), I1))
    assert not fits(TypeClass(TensorType, "a tensor"), F32)
    assert str(TypeClass((IntAttr, FloatAttr))) == "IntAttr or FloatAttr"


def test_tensor_of_element_rank_and_shape():
    matrix = TensorOf(AnyFloat, rank=2)
    assert fits(matrix, TensorType((None, 3), F32))
    assert not fits(matrix, TensorType((3,), F32))
    assert not fits(matrix, TensorType((2, 3), I32))
    assert not fits(matrix, F32)
    assert str(matrix) == "a rank-2 tensor of float"
    assert str(AnyTensor) == "a tensor"
    assert fits(TensorOf(I64, shape=(2, None)), TensorType((2, None), I64))
    assert not fits(TensorOf(I64, shape=(2, None)), TensorType((2, 3), I64))
    assert fits(TensorOf(rank=AnyOf(0, 1)), TensorType((4,), F32))
    assert not fits(TensorOf(rank=AnyOf(0, 1)), TensorType((4, 4), F32))


def test_any_of_describes_its_options_and_keeps_only_the_bindings_of_the_one_that_fits():
    T = ConstraintVar("T")
    either = AnyOf(TensorOf(element=T, rank=0), Index)
    assert str(either) == "a rank-0 tensor or index"
    env = {}
    assert fits(either, INDEX, env) and env == {}
    assert not fits(either, TensorType((2,), F32), env) and env == {}  # the rank failed
    assert fits(either, TensorType((), F32), env) and env == {T: F32}


def test_constraint_variable_binds_once_then_requires_the_same_value():
    T = ConstraintVar("T", AnyScalar)
    env = {}
    assert not fits(T, TensorType((), F32), env) and env == {}  # the base constraint failed
    assert fits(T, F32, env) and fits(T, F32, env)
    assert not fits(T, F64, env)
    assert T.describe(env) == "f32" and T.describe({}) == "a scalar"


def test_variables_inside_tensor_of_say_same_element_shape_and_rank():
    E, S, R = ConstraintVar("E"), ConstraintVar("S"), ConstraintVar("R")
    env = {}
    assert fits(TensorOf(E, shape=S), TensorType((2, None), F32), env)
    assert env[E] == F32 and env[S] == (2, None)
    assert not fits(TensorOf(E), TensorType((2, None), F64), env)
    assert not fits(TensorOf(shape=S), TensorType((2, 3), F32), env)
    assert TensorOf(E, shape=S).describe(env) == "a tensor of f32 of shape 2x?"
    env = {}
    assert fits(TensorOf(rank=R), TensorType((1, 2), I1), env)
    assert not fits(TensorOf(rank=R), TensorType((1,), I1), env)
    assert TensorOf(rank=R).describe(env) == "a rank-2 tensor"


def test_where_adds_a_predicate():
    static = Where(AnyTensor, lambda t: None not in t.shape, "a static tensor")
    assert fits(static, TensorType((2,), F32)) and not fits(static, TensorType((None,), F32))
    assert not fits(static, F32)


def test_attribute_constraints():
    dims = EnumAttr(("x", "y"))
    assert fits(dims, StringAttr("x")) and not fits(dims, StringAttr("z"))
    assert not fits(dims, IntAttr(1))
    assert (str(dims), dims.show(StringAttr("z"))) == ("one of x, y", "'z'")
    ints = ArrayAttrOf(IntAttr)
    assert fits(ints, ArrayAttr((IntAttr(0), IntAttr(2)))) and fits(ints, ArrayAttr(()))
    assert not fits(ints, ArrayAttr((IntAttr(0), FloatAttr(1.0))))
    assert str(ints) == "an array of IntAttr"
    ftype = TypeAttrOf(AnyFunctionType)
    assert fits(ftype, TypeAttr(FunctionType((F32,), ())))
    assert not fits(ftype, TypeAttr(F32)) and not fits(ftype, StringAttr("f"))
    assert ftype.show(TypeAttr(F32)) == "f32"


# ---------------------------------------------------------------------------------------------
# Op classes declaring constraints

E = ConstraintVar("E", AnyFloat)
S = ConstraintVar("S")


class Blend(Operation):
    """Two float tensors of one element type and shape, a weight of that element type."""

    name = "demo.blend"
    lhs = operand(TensorOf(E, shape=S))
    rhs = operand(TensorOf(E, shape=S))
    weight = operand(E)
    result = result(TensorOf(E, shape=S))
    mode = attr(EnumAttr(("linear", "cubic")), default="linear")

    def verify_(self):
        raise VerifyError("demo.blend: verify_ ran", self)


class Gather(Operation):
    name = "demo.gather"
    source = operand(AnyTensor)
    indices = var_operand(Index)
    result = result(TensorType((), F32))


def blend(*types, result_type=None, **attributes):
    values = Block(types).args
    return Blend.create(values, [result_type or types[0]], attributes)


def test_fitting_operands_reach_the_ops_own_verify():
    op = blend(TensorType((2,), F32), TensorType((2,), F32), F32)
    op.verify_structure()
    with pytest.raises(VerifyError, match="verify_ ran"):
        verify(op)


@pytest.mark.parametrize("types, result_type, message", [
    ((TensorType((2,), I32), TensorType((2,), I32), I32), None,
     "demo.blend: the lhs must be a tensor of float, got tensor<2xi32>"),
    ((TensorType((2,), F32), TensorType((2,), F64), F32), None,
     "demo.blend: the rhs must be a tensor of f32 of shape 2, got tensor<2xf64>"),
    ((TensorType((2,), F32), TensorType((3,), F32), F32), None,
     "demo.blend: the rhs must be a tensor of f32 of shape 2, got tensor<3xf32>"),
    ((TensorType((2,), F32), TensorType((2,), F32), F64), None,
     "demo.blend: the weight must be f32, got f64"),
    ((TensorType((2,), F32), TensorType((2,), F32), F32), TensorType((None,), F32),
     r"demo.blend: the result must be a tensor of f32 of shape 2, got tensor<\?xf32>"),
])
def test_a_constraint_failure_names_the_op_the_field_and_the_type(types, result_type, message):
    op = blend(*types, result_type=result_type)
    with pytest.raises(VerifyError, match=f"^{message}$") as info:
        verify(op)  # before verify_, which would raise something else
    assert info.value.op is op


def test_attribute_constraints_in_an_op():
    f32 = TensorType((2,), F32)
    op = blend(f32, f32, F32, mode=StringAttr("nearest"))
    with pytest.raises(VerifyError, match="^demo.blend: attribute 'mode' must be one of linear, "
                                          "cubic, got 'nearest'$"):
        op.verify_structure()
    blend(f32, f32, F32, mode=StringAttr("cubic")).verify_structure()


def test_variadic_fields_name_the_entry():
    x, i, j = Block([TensorType((2, 2), F32), INDEX, I64]).args
    Gather.create([x, i, i], [TensorType((), F32)]).verify_structure()
    with pytest.raises(VerifyError, match="^demo.gather: indices #1 must be index, got i64$"):
        Gather.create([x, i, j], [TensorType((), F32)]).verify_structure()
    with pytest.raises(VerifyError, match="^demo.gather: the result must be tensor<f32>, got f32$"):
        Gather.create([x], [F32]).verify_structure()


def test_a_plain_type_or_type_class_means_is_or_an_instance():
    class Take(Operation):
        name = "demo.take"
        flag = operand(I1)
        kind = operand(ScalarType)

    a, b, c = Block([I1, F32, TensorType((), F32)]).args
    Take.create([a, b]).verify_structure()
    with pytest.raises(VerifyError, match="the flag must be i1, got f32"):
        Take.create([b, b]).verify_structure()
    with pytest.raises(VerifyError, match="the kind must be ScalarType, got tensor<f32>"):
        Take.create([a, c]).verify_structure()


def test_bindings_do_not_leak_between_ops():
    f32, f64 = TensorType((2,), F32), TensorType((3,), F64)
    blend(f32, f32, F32).verify_structure()
    blend(f64, f64, F64).verify_structure()
