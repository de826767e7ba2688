"""function(): updates of shared variables and givens."""
import inspect
from collections import OrderedDict

import numpy as np
import pytest

import lowering.tensor as T
from lowering import function, shared
from lowering.ir.interpreter import InterpreterError


def test_updates_as_pairs_or_dict_are_computed_from_the_old_values():
    a = shared(np.float64(1.0), name="a")
    b = shared(np.float64(10.0), name="b")
    swap = function([], [a, b], updates=[(a, b), (b, a)])
    assert [float(v) for v in swap()] == [1.0, 10.0]
    assert (a.get_value(), b.get_value()) == (10.0, 1.0)
    both = function([], None, updates=OrderedDict([(a, a + b), (b, a * b)]))
    both()
    assert (a.get_value(), b.get_value()) == (11.0, 10.0)
    function([], None, updates={a: a * 0})()
    assert a.get_value() == 0.0


def test_the_accumulator_of_the_shared_variable_tutorial():
    state = shared(np.array(0, dtype=np.float64), "state")
    inc = T.scalar("inc", dtype=state.dtype)
    accumulator = function([inc], state, updates=[(state, state + inc)])
    assert accumulator(1) == 0.0 and state.get_value() == 1.0
    assert accumulator(10) == 1.0 and state.get_value() == 11.0
    state.set_value(-1)
    accumulator(3)
    assert state.get_value() == 2.0


def test_givens_replace_a_shared_variable_without_touching_it():
    state = shared(np.array(2.0), "state")
    inc = T.dscalar("inc")
    a = T.scalar(dtype=state.dtype)
    skip_shared = function([inc, a], state * 2 + inc, givens=[(state, a)])
    assert skip_shared(2, 3) == 8.0
    assert state.get_value() == 2.0
    func = skip_shared.ir_module().regions[0].block.first_op
    assert len(func.args) == 2  # the shared variable is not read at all


def test_givens_may_replace_inputs_by_expressions_of_other_inputs():
    x = T.dvector("x")
    data = T.dmatrix("data")
    i = T.lscalar("i")
    f = function([data, i], (x * 2).sum(), givens={x: data[i]})
    rows = np.arange(6.0).reshape(2, 3)
    assert f(rows, 1) == 2 * (3 + 4 + 5)


def test_givens_with_a_number_makes_a_constant_of_the_replaced_type():
    x, y = T.dscalar("x"), T.dscalar("y")
    f = function([x], x + y, givens=[(y, 5)])
    assert f(1.0) == 6.0


def test_givens_type_mismatch_is_an_error_naming_both():
    x = T.dvector("x")
    m = T.dmatrix("m")
    with pytest.raises(TypeError, match=r"givens: 'x' \(tensor<\?xf64>\) cannot be replaced by a "
                                        r"value of type tensor<\?x\?xf64>"):
        function([m], x * 2, givens={x: m})
    f32 = T.fvector("f")
    with pytest.raises(TypeError, match="must have the type tensor<.xf64>"):
        function([f32], x * 2, givens={x: f32})


def test_givens_cycles_are_errors():
    x, y = T.dscalar("x"), T.dscalar("y")
    with pytest.raises(ValueError, match="depends on 'x'"):
        function([], x + 1, givens={x: y * 2, y: x + 1})


def test_update_of_a_non_shared_variable_is_an_error():
    x = T.dscalar("x")
    with pytest.raises(TypeError, match="'x'.*is not a shared variable"):
        function([x], x, updates=[(x, x + 1)])


def test_update_type_mismatch_names_the_variable_and_both_types():
    w = shared(np.zeros(3, dtype="float32"), name="w")
    with pytest.raises(TypeError, match=r"update of shared variable 'w' has type tensor<\?xf64>, "
                                        r"but the variable has type tensor<\?xf32>; cast"):
        function([], None, updates=[(w, w * np.float64(2) + T.dvector("g"))])
    with pytest.raises(TypeError, match="ranks differ"):
        function([], None, updates=[(w, T.outer(w, w))])


def test_update_broadcast_pattern_mismatch_is_an_error():
    r = shared(np.zeros((1, 3)), name="r", broadcastable=(True, False))
    m = T.dmatrix("m")
    with pytest.raises(TypeError, match="broadcastable"):
        function([m], None, updates=[(r, m)])


def test_a_variable_updated_twice_is_an_error():
    s = shared(np.float64(0), name="s")
    with pytest.raises(ValueError, match="'s' is updated twice"):
        function([], None, updates=[(s, s + 1), (s, s + 2)])


def test_a_numeric_update_is_a_constant_of_the_variable_type():
    counter = shared(np.int64(5), name="counter")
    reset = function([], None, updates=[(counter, 0)])
    reset()
    assert counter.get_value() == 0 and counter.get_value().dtype == np.int64


@pytest.mark.parametrize("mode", ["INTERP", "FAST_RUN"])
def test_a_failing_call_changes_no_shared_variable(mode):
    w = shared(np.array([1.0, 2.0]), name="w")
    calls = shared(np.int64(0), name="calls")
    x = T.dvector("x")
    total = (w + x).sum()
    line = inspect.currentframe().f_lineno - 1
    step = function([x], total, updates=[(calls, calls + 1), (w, w + x)], mode=mode)
    step(np.array([1.0, 1.0]))
    assert calls.get_value() == 1
    with pytest.raises(ValueError, match=rf"test_function_updates.py:{line}"):
        step(np.array([1.0, 1.0, 1.0]))  # shape mismatch inside the call
    assert calls.get_value() == 1
    np.testing.assert_array_equal(w.get_value(), [2.0, 3.0])


def test_updated_values_do_not_alias_returned_outputs_or_inputs():
    s = shared(np.zeros(2), name="s")
    x = T.dvector("x")
    f = function([x], s + x, updates=[(s, s + x)])
    out = f(np.ones(2))
    out[0] = 100.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 1.0])
    data = np.array([7.0, 8.0])
    function([x], None, updates=[(s, x)])(data)
    data[0] = -1.0
    np.testing.assert_array_equal(s.get_value(), [7.0, 8.0])


def test_an_input_overlapping_a_variable_updated_in_place_is_read_as_it_was():
    # A call remembers which arrays it found apart from the variables it updates in place, and
    # skips the check while they are the same objects; an input that overlaps one (the
    # variable's own array, or a view of it) must still be read before the update.
    w = shared(np.arange(4.0), name="w")
    x = T.dvector("x")
    step = function([x], (w * x).sum(), updates=[(w, w + x[::-1])], mode="FAST_RUN")
    apart = np.ones(4)
    for _ in range(3):  # the same input object: checked once
        step(apart)
    np.testing.assert_array_equal(w.get_value(), np.arange(4.0) + 3)
    own = w.get_value(borrow=True)
    expected_sum, expected_w = (own * own).sum(), own + own[::-1]
    for _ in range(2):
        assert step(own) == expected_sum  # the variable's own array as the input
        np.testing.assert_array_equal(w.get_value(), expected_w)
        expected_sum = (w.get_value() * own).sum()
        expected_w = w.get_value() + own[::-1]
    view = w.get_value(borrow=True)[:]
    before = w.get_value().copy()
    assert step(view) == (before * before).sum()
    np.testing.assert_array_equal(w.get_value(), before + before[::-1])


def test_default_updates_apply_unless_disabled():
    counter = shared(np.int64(0), name="counter")
    counter.default_update = counter + 1
    read = function([], counter)
    assert [int(read()) for _ in range(3)] == [0, 1, 2]
    frozen = function([], counter, no_default_updates=True)
    assert int(frozen()) == 3 and int(frozen()) == 3
    explicit = function([], counter, updates=[(counter, counter * 10)])
    explicit()
    assert counter.get_value() == 30


def test_default_update_must_keep_the_type():
    counter = shared(np.int64(0), name="counter")
    with pytest.raises(TypeError, match="update of shared variable 'counter'"):
        counter.default_update = counter + 0.5


def test_functions_share_the_variables_they_read():
    w = shared(np.array([1.0]), name="w")
    grow = function([], None, updates=[(w, w * 2)])
    read = function([], w)
    grow()
    grow()
    np.testing.assert_array_equal(read(), [4.0])
    w.set_value(np.array([0.5]))
    np.testing.assert_array_equal(read(), [0.5])
