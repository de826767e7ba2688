"""shared(): types from values, get_value/set_value with borrow and casting, printing."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering import shared
from lowering.compile import InputTypeError
from lowering.frontend.shared import SharedVariable


@pytest.mark.parametrize("value, text", [
    (0, "TensorType(int64, scalar)"),
    (1.5, "TensorType(float64, scalar)"),
    (True, "TensorType(bool, scalar)"),
    (np.float32(2), "TensorType(float32, scalar)"),
    (np.int8(3), "TensorType(int8, scalar)"),
    (np.zeros(3, dtype="float32"), "TensorType(float32, vector)"),
    (np.zeros((2, 2)), "TensorType(float64, matrix)"),
    (np.zeros((2, 3, 4), dtype="int16"), "TensorType(int16, 3D)"),
])
def test_the_type_follows_the_value(value, text):
    s = shared(value)
    assert isinstance(s, SharedVariable) and isinstance(s, T.TensorVariable)
    assert str(s.type) == text
    assert repr(s) == f"<{text}>"


def test_floatx_does_not_change_the_dtype_of_values():
    with theano.config.change_flags(floatX="float32"):
        assert shared(0.5).dtype == "float64"
        assert shared(np.ones(2)).dtype == "float64"


def test_shared_zero_is_an_int64_scalar_as_in_the_seed():
    state = shared(0)
    assert repr(state) == "<TensorType(int64, scalar)>"
    value = state.get_value()
    assert isinstance(value, np.ndarray) and value.shape == () and value.dtype == np.int64
    state.set_value(1)
    assert repr(state.get_value()) == "array(1)"


def test_names_print_as_the_name():
    w = shared(np.zeros(2), name="w")
    assert repr(w) == "w" and w.name == "w"


def test_dimensions_are_not_broadcastable_unless_asked():
    s = shared(np.zeros((1, 3)))
    assert s.broadcastable == (False, False)
    s.set_value(np.zeros((5, 3)))  # sizes may change later
    assert s.get_value().shape == (5, 3)
    r = shared(np.zeros((1, 3)), broadcastable=(True, False))
    assert r.broadcastable == (True, False)
    with pytest.raises(InputTypeError, match="size 1 on axis 0"):
        r.set_value(np.zeros((2, 3)))


def test_get_value_copies_unless_borrowed():
    data = np.arange(3.0)
    s = shared(data)
    data[0] = 100.0  # shared() copied the array
    assert s.get_value()[0] == 0.0
    copy = s.get_value()
    copy[1] = -1.0
    assert s.get_value()[1] == 1.0
    inner = s.get_value(borrow=True)
    inner[1] = -1.0
    assert s.get_value()[1] == -1.0


def test_borrow_at_creation_and_in_set_value_keeps_the_array():
    data = np.arange(3.0)
    s = shared(data, borrow=True)
    assert s.get_value(borrow=True) is data
    new = np.ones(3)
    s.set_value(new)
    new[0] = 5.0
    assert s.get_value()[0] == 1.0
    s.set_value(new, borrow=True)
    assert s.get_value(borrow=True) is new


def test_set_value_casts_as_theano():
    ints = shared(np.int64(0))
    ints.set_value(7)
    assert ints.get_value().dtype == np.int64 and ints.get_value() == 7
    floats = shared(np.zeros(2, dtype="float32"), name="w")
    floats.set_value(np.array([1, 2], dtype="int8"))  # a safe upcast
    assert floats.get_value().dtype == np.float32
    with pytest.raises(InputTypeError, match="shared variable 'w' expects float32 data.*float64"):
        floats.set_value(np.array([0.1, 0.2]))
    with pytest.raises(InputTypeError, match="rank-1"):
        floats.set_value(np.zeros((2, 2), dtype="float32"))
    with pytest.raises(InputTypeError, match="cannot store 0.5 exactly"):
        ints.set_value(0.5)


def test_allow_downcast_and_strict():
    loose = shared(np.zeros(2, dtype="float32"), allow_downcast=True)
    loose.set_value(np.array([0.1, 0.2]))
    assert loose.get_value().dtype == np.float32
    strict = shared(np.zeros(2, dtype="float64"), strict=True)
    with pytest.raises(InputTypeError, match="is strict"):
        strict.set_value([1.0, 2.0])


def test_bad_values_and_targets_are_errors():
    with pytest.raises(TypeError, match="needs a NumPy array or a number, got list"):
        shared([1, 2])
    with pytest.raises(TypeError, match="not the symbolic variable"):
        shared(T.dvector("x"))
    with pytest.raises(TypeError, match="unsupported dtype float128"):
        shared(np.zeros(2, dtype=np.longdouble))
    with pytest.raises(ValueError, match="target='dev1'.*GPU"):
        shared(np.zeros(2, dtype="float32"), target="dev1")
    assert shared(np.zeros(2), target="cpu").get_value().shape == (2,)


def test_shared_variables_work_in_expressions_and_eval():
    w = shared(np.array([1.0, 2.0]), name="w")
    x = T.dvector("x")
    np.testing.assert_array_equal((w * x).eval({x: np.array([3.0, 4.0])}), [3.0, 8.0])
    w.set_value(np.array([0.0, 1.0]))
    np.testing.assert_array_equal((w * x).eval({x: np.array([3.0, 4.0])}), [0.0, 4.0])
