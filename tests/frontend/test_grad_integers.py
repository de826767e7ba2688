"""``theano.grad`` with integers, as Theano 1.0 defines it: an integer-valued cost is
differentiable and its gradients are zero (one with respect to itself), and the gradient of an
integer variable is float zeros (floatX), never an integer."""
import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.frontend.errors import DisconnectedInputError

from .helpers import evaluate


def test_an_integer_cost_has_zero_gradients():
    p, t = T.fmatrix("p"), T.ivector("t")
    hits = T.eq(T.argmax(p, axis=1), t).sum()  # an accuracy: integer-valued
    g = theano.grad(hits, p)
    assert g.dtype == "float32"
    got = theano.function([p, t], g, on_unused_input="ignore")(np.ones((2, 3), "float32"), np.array([0, 1], "int32"))
    np.testing.assert_array_equal(got, np.zeros((2, 3)))


def test_the_gradient_of_an_integer_cost_with_respect_to_itself_is_one():
    x = T.dvector("x")
    count = T.argmax(x)
    g_count, g_x = theano.grad(count, [count, x])
    assert g_count.dtype == theano.config.floatX and g_x.dtype == "float64"
    one, zeros = evaluate([g_count, g_x], {x: [1.0, 3.0]})
    assert one == 1.0
    np.testing.assert_array_equal(zeros, [0.0, 0.0])


def test_integer_variables_get_float_zeros():
    i, x = T.ivector("i"), T.dvector("x")
    g_int = theano.grad(i.sum(), i)
    g_mixed = theano.grad((x * i).sum(), i)
    assert g_int.dtype == g_mixed.dtype == theano.config.floatX
    feeds = {i: np.array([2, 3], "int32"), x: [1.5, -1.0]}
    np.testing.assert_array_equal(evaluate([g_int, g_mixed], feeds), [[0.0, 0.0], [0.0, 0.0]])
    g_x = theano.grad((x * i).sum(), x)  # the float side is unchanged
    np.testing.assert_array_equal(evaluate(g_x, feeds), [2.0, 3.0])


def test_an_integer_cost_still_tells_disconnected_inputs():
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(DisconnectedInputError, match="does not depend on y"):
        theano.grad(T.argmax(x), y)
    g = theano.grad(T.argmax(x), y, disconnected_inputs="ignore")
    np.testing.assert_array_equal(evaluate(g, {y: [1.0, 2.0]}), [0.0, 0.0])
