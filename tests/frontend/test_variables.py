"""Variables: constructors, types, printing, identity, Python protocol guards, tags, transfer."""
import numpy as np
import pytest

import lowering.tensor as T
from lowering.config import config
from lowering.frontend.constructors import PATTERNS, PREFIXES, constructor_names
from lowering.frontend.variable import wrap
from lowering.ir.core import BlockArgument

from .helpers import evaluate


@pytest.mark.parametrize("kind", list(PATTERNS))
@pytest.mark.parametrize("prefix", ["", *PREFIXES])
def test_every_constructor_makes_an_input_of_its_type(kind, prefix):
    make = getattr(T, prefix + kind)
    x = make("v")
    assert isinstance(x.value, BlockArgument) and x.owner is None
    assert x.name == "v" and x.value.name_hint == "v"
    assert x.broadcastable == PATTERNS[kind]
    assert x.dtype == (PREFIXES[prefix] if prefix else config.floatX)


def test_unprefixed_constructors_follow_floatx_and_take_a_dtype():
    with config.change_flags(floatX="float32"):
        assert T.matrix().dtype == "float32"
        assert T.scalar("inc", dtype="float64").dtype == "float64"
    assert T.vector(dtype="int8").dtype == "int8"
    with pytest.raises(TypeError, match="fmatrices makes float32 variables"):
        T.fmatrices("a", "b", dtype="float64")
    with pytest.raises(TypeError, match="dtype"):
        T.fmatrix(dtype="float64")  # a TensorType, as in Theano: called with a name only
    with pytest.raises(TypeError, match="unsupported dtype 'float128'"):
        T.matrix(dtype="float128")


def test_plural_constructors():
    a, b = T.fscalars("a", "b")
    assert (a.name, b.name, a.dtype) == ("a", "b", "float32")
    assert [v.name for v in T.dmatrices(3)] == [None, None, None]
    assert {"scalars", "matrices", "ivectors", "ltensor3s"} <= set(constructor_names())


def test_tensor_with_a_pattern_or_static_shape():
    x = T.tensor("float32", (False, True, False), name="x")
    assert str(x.type) == "TensorType(float32, (False, True, False))"
    assert str(T.tensor("int64", shape=(3, None)).value.type) == "tensor<3x?xi64>"
    assert str(T.tensor3().type) == "TensorType(float64, 3D)"


def test_types_print_and_compare_as_theano():
    assert str(T.matrix(dtype="float32").type) == "TensorType(float32, matrix)"
    assert str(T.row().type) == "TensorType(float64, row)"
    assert str(T.col().type) == "TensorType(float64, col)"
    assert str(T.dscalar().type) == "TensorType(float64, scalar)"
    assert T.matrix().type == T.TensorType("float64", (False, False))
    assert T.matrix().type != T.fmatrix().type
    t = T.TensorType("int32", (False,))
    v = t("v")
    assert v.type == t and v.name == "v"


def test_variables_print_as_theano():
    x = T.fmatrix()
    assert repr(x) == str(x) == "<TensorType(float32, matrix)>"
    assert str(T.fmatrix("x")) == "x"
    assert str(T.exp(x)) == "Elemwise{exp,no_inplace}.0"
    assert str(T.constant(0.5)) == "TensorConstant{0.5}"
    assert str(T.constant(np.ones(3))) == "TensorConstant{(3,) of 1.0}"


def test_names_can_be_set_and_read():
    y = T.vector() * 2
    assert y.name is None
    y.name = "y"
    assert str(y) == "y" and y.value.name_hint == "y"
    with pytest.raises(TypeError):
        y.name = 3


def test_equality_is_identity_and_variables_are_dict_keys():
    x, y = T.vector("x"), T.vector("y")
    assert (x == x) is True and (x == y) is False and (x != y) is True
    d = {x: 1, y: 2}
    assert d[x] == 1 and d[y] == 2
    assert T.eq(x, y).dtype == "bool"


def test_one_variable_per_value():
    x = T.vector("x")
    y = T.exp(x)
    assert wrap(y.value) is y
    assert wrap(x.value) is x
    assert y.owner.inputs[0] is x and y.owner.outputs[0] is y


def test_owner_is_a_theano_apply():
    x = T.matrix("x")
    y = x.T
    assert isinstance(y.owner.op, T.DimShuffle) and str(y.owner.op) == "InplaceDimShuffle{1,0}"
    assert str(y.owner) == "InplaceDimShuffle{1,0}(x)"
    assert y.owner.operation is y.value.op
    assert T.constant(1.0).owner is None and x.owner is None


@pytest.mark.parametrize("action, message", [
    (lambda x: bool(x < 1), "Variables do not support boolean operations."),
    (lambda x: 0 < x < 1, "Variables do not support boolean operations."),
    (lambda x: list(x), "cannot be iterated"),
    (lambda x: [v for v in x], "cannot be iterated"),
    (lambda x: len(x), "len"),
])
def test_python_protocols_that_need_values_raise(action, message):
    with pytest.raises(TypeError, match=message):
        action(T.vector("x"))


def test_item_assignment_points_to_set_subtensor():
    x = T.vector("x")
    with pytest.raises(TypeError, match="set_subtensor"):
        x[0] = 1.0


def test_test_values_are_checked_and_shared_by_the_value():
    x = T.fmatrix("x")
    x.tag.test_value = np.ones((2, 3), dtype="float32")
    assert x.tag.test_value.shape == (2, 3)
    assert wrap(x.value).tag.test_value is x.tag.test_value
    with pytest.raises(TypeError, match="bad test value for x"):
        x.tag.test_value = np.ones(3, dtype="float32")
    with pytest.raises(AttributeError, match="no test value"):
        T.vector("v").tag.test_value
    x.tag.note = "free-form"
    assert x.tag.note == "free-form"


def test_transfer_records_the_target_on_a_variable_of_the_same_value():
    a = T.fmatrix("a")
    assert a.target == "cpu" and a.transfer("cpu") is a
    b = a.transfer(None)
    assert b.value is a.value and b.target is None and b is a.transfer(None)
    assert b.transfer("cpu") is a
    assert str(b) == "GpuFromHost<None>.0"
    with config.change_flags(contexts="dev0->cuda0"):
        assert a.transfer("dev0").target == "dev0"
    with pytest.raises(ValueError, match="unknown transfer target 'dev7'.*contexts"):
        a.transfer("dev7")
    # Operations on a transferred variable compute with its value.
    assert np.allclose(evaluate((b * 2), {a: np.ones((2, 2), "float32")}), 2)


def test_eval_compiles_and_runs():
    x, y = T.vector("x"), T.vector("y")
    z = x * 2 + y
    assert np.allclose(z.eval({x: [1.0, 2.0], y: [0.5, 0.5]}), [2.5, 4.5])
    assert np.allclose(z.eval({y: [1.0, 1.0], x: [0.0, 1.0]}), [1.0, 3.0])
    assert len(z._eval_functions) == 1  # one compiled function per set of inputs
    assert T.constant(3.0).eval() == 3.0


def test_numpy_arrays_on_the_left_use_the_reflected_operators():
    x = T.vector("x")
    for expr in (np.ones(2) + x, np.ones(2) * x, np.ones(2) < x, np.ones(2) - x):
        assert hasattr(expr, "value") and expr.ndim == 1
    assert np.allclose(evaluate(np.array([3.0, 4.0]) - x, {x: [1.0, 1.0]}), [2.0, 3.0])
