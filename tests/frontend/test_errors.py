"""Errors while building graphs name the op, the variables and the user's line."""
import os
import warnings

import numpy as np
import pytest

import lowering.tensor as T
from lowering.config import config
from lowering.dialects.tensor.typing import ShapeError
from lowering.frontend.errors import GraphBuildError, GraphTypeError
from lowering.ir.core import VerifyError

HERE = os.path.basename(__file__)


def raises_at(build, error=GraphBuildError):
    """Run ``build`` (a one-line function) and return its error, checking it names that line."""
    with pytest.raises(error) as info:
        build()
    line = build.__code__.co_firstlineno
    assert f"{HERE}:{line}: " in str(info.value), str(info.value)
    assert info.value.location.line == line
    return str(info.value)


def test_dot_shape_mismatch():
    x, w = T.tensor("float64", shape=(3, 4), name="x"), T.tensor("float64", shape=(5,), name="w")
    def build(): return T.dot(x, w)  # noqa: E704
    message = raises_at(build)
    assert "tensor.dot: incompatible shapes (3, 4) and (5,)" in message
    assert "x: tensor<3x4xf64>" in message and "w: tensor<5xf64>" in message


def test_elementwise_static_mismatch():
    a, b = T.tensor("float32", shape=(3,), name="a"), T.tensor("float32", shape=(4,))
    def build(): return a + b  # noqa: E704
    message = raises_at(build)
    assert "tensor.add" in message and "a: tensor<3xf32>" in message
    assert "<TensorType(float32, vector)>: tensor<4xf32>" in message


def test_errors_are_value_errors_and_verify_errors():
    a = T.tensor("float64", shape=(2,), name="a")
    with pytest.raises(ValueError):
        a + np.ones(3)
    with pytest.raises(VerifyError):
        a + np.ones(3)
    assert issubclass(GraphBuildError, VerifyError) and not issubclass(ShapeError, GraphBuildError)


def test_axis_out_of_range():
    x = T.matrix("x")
    def build(): return x.sum(axis=2)  # noqa: E704
    message = raises_at(build)
    assert "tensor.sum" in message and "axis 2" in message and "x: tensor<?x?xf64>" in message
    def build_softmax(): return T.nnet.softmax(x, axis=-3)  # noqa: E704
    assert "tensor.softmax" in raises_at(build_softmax)
    def build_concat(): return T.concatenate([x, x], axis=3)  # noqa: E704
    assert "tensor.concatenate" in raises_at(build_concat)


def test_bad_dtypes_are_type_errors():
    x, b = T.vector("x"), T.tensor("bool", (False,), name="b")
    def build_and(): return x | x  # noqa: E704
    assert "tensor.or" in raises_at(build_and, GraphTypeError)
    def build_dot(): return T.tensor("bool", (False, False)) @ b  # noqa: E704
    assert "tensor.dot: operands must be numbers" in raises_at(build_dot)
    with pytest.raises(TypeError):
        x | x


def test_rank_and_reshape_errors():
    x = T.matrix("x")
    def build_join(): return T.concatenate([x, T.vector("v")])  # noqa: E704
    message = raises_at(build_join)
    assert "tensor.concatenate" in message and "v: tensor<?xf64>" in message
    c = T.constant(np.ones((2, 3)), name="c")
    def build_reshape(): return c.reshape((4, 2))  # noqa: E704
    assert "cannot reshape (2, 3) into (4, 2)" in raises_at(build_reshape)


def test_test_values_find_shape_errors_at_the_line_that_builds_the_op():
    x, w = T.matrix("x"), T.vector("w")
    x.tag.test_value = np.ones((3, 4))
    w.tag.test_value = np.ones(5)
    with config.change_flags(compute_test_value="raise"):
        good = x.sum(axis=0)
        assert good.tag.test_value.shape == (4,)
        def build(): return T.dot(x, w)  # noqa: E704
        message = raises_at(build)
        assert "tensor.dot fails on the test values (shapes (3, 4), (5,))" in message
        with pytest.raises(GraphBuildError, match="has no test value"):
            x + T.matrix("untested")
    with config.change_flags(compute_test_value="warn"):
        with pytest.warns(UserWarning, match="no test value"):
            x + T.matrix("untested")
    with config.change_flags(compute_test_value="off"):
        T.dot(x, w)  # nothing is evaluated


def test_test_values_follow_through_a_graph():
    x = T.fvector("x")
    x.tag.test_value = np.array([1.0, 2.0], dtype="float32")
    with config.change_flags(compute_test_value="raise"):
        y = (T.exp(x) * 2).sum()
    assert np.isclose(y.tag.test_value, 2 * np.exp([1.0, 2.0]).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with config.change_flags(compute_test_value="ignore"):
            x + T.fvector("no_value")


def test_test_values_reach_gradient_graphs():
    x, w = T.matrix("x"), T.vector("w")
    x.tag.test_value = np.ones((3, 4))
    w.tag.test_value = np.arange(4.0)
    with config.change_flags(compute_test_value="raise"):
        cost = T.nnet.sigmoid(T.dot(x, w)).mean()
        g = T.grad(cost, w)
        update = w - 0.1 * g  # built from a gradient op: its test value is derived
    assert update.tag.test_value.shape == (4,)
    s = 1 / (1 + np.exp(-np.ones((3, 4)) @ np.arange(4.0)))
    assert np.allclose(update.tag.test_value, np.arange(4.0) - 0.1 * (s * (1 - s)) @ np.ones((3, 4)) / 3)


def test_missing_test_values_name_the_input():
    x, y = T.vector("x"), T.vector("needs_value")
    x.tag.test_value = np.ones(2)
    with config.change_flags(compute_test_value="off"):
        z = x + y
    with config.change_flags(compute_test_value="raise"):
        with pytest.raises(GraphBuildError, match="needs_value has no test value"):
            z * 2
