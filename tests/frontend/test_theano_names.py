"""Names Theano programs use, with Theano 1.0's behaviour: plural constructors, types as
constructors, the truth value of variables, softmax of a vector, config flags."""
import warnings

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.config import config


# -- plural constructors (Theano's _multi) ----------------------------------------------------

@pytest.mark.parametrize("plural, dtype, ndim", [
    ("scalars", config.floatX, 0), ("fscalars", "float32", 0), ("dvectors", "float64", 1),
    ("imatrices", "int32", 2), ("lrows", "int64", 2), ("fcols", "float32", 2),
    ("dtensor3s", "float64", 3), ("tensor4s", config.floatX, 4), ("ltensor5s", "int64", 5),
])
def test_a_lone_string_gives_one_variable_per_character(plural, dtype, ndim):
    made = getattr(T, plural)("abcd")
    assert [v.name for v in made] == ["a", "b", "c", "d"]
    assert all(v.dtype == dtype and v.ndim == ndim for v in made)


def test_a_lone_one_character_name_gives_a_single_variable():
    x = T.scalars("x")
    assert isinstance(x, T.TensorVariable) and x.name == "x"
    w = T.dmatrices(["w"])
    assert isinstance(w, T.TensorVariable) and w.name == "w" and w.dtype == "float64"


def test_plural_constructors_with_names_lists_and_counts():
    a, b = T.fvectors("a", "b")
    assert (a.name, b.name, a.type) == ("a", "b", T.fvector)
    assert [v.name for v in T.matrices(["weights", "bias"])] == ["weights", "bias"]
    # Theano splits characters, not words: commas and spaces become variables too.
    assert [v.name for v in T.scalars("a, b")] == ["a", ",", " ", "b"]
    assert [v.name for v in T.iscalars(2)] == [None, None]
    one = T.iscalars(1)
    assert isinstance(one, list) and len(one) == 1
    assert T.scalars() == []


# -- typed constructors are TensorType instances -----------------------------------------------

@pytest.mark.parametrize("name, dtype, pattern", [
    ("dmatrix", "float64", (False, False)), ("fvector", "float32", (False,)),
    ("dscalar", "float64", ()), ("irow", "int32", (True, False)), ("lcol", "int64", (False, True)),
    ("btensor3", "int8", (False,) * 3), ("wtensor4", "int16", (False,) * 4),
])
def test_typed_constructors_are_tensor_types(name, dtype, pattern):
    t = getattr(T, name)
    assert isinstance(t, T.TensorType)
    assert t == T.TensorType(dtype, pattern) and hash(t) == hash(T.TensorType(dtype, pattern))
    x = t("x")
    assert x.name == "x" and x.type == t and x.dtype == dtype and x.broadcastable == pattern
    assert t().name is None and t() is not t()


def test_types_compare_and_print_as_theano():
    assert T.TensorType("float64", (False, False)) == T.dmatrix
    assert T.dmatrix != T.fmatrix and T.dmatrix != T.drow
    assert T.dmatrix().type == T.dmatrix and T.matrix(dtype="float64").type == T.dmatrix
    assert str(T.dmatrix) == "TensorType(float64, matrix)"
    assert str(T.frow) == "TensorType(float32, row)"
    # Variables of a type without static sizes share its one instance, as Theano's do (the
    # tutorial's ``x.type is T.dscalar``), also when they come out of an op.
    x = T.dscalar("x")
    assert x.type is T.dscalar and (x * 2).type is T.dscalar
    assert T.dot(T.dmatrix(), T.dvector()).type is T.dvector
    assert T.TensorType("float64", (False, False))("m").type is T.dmatrix
    y = T.TensorType("int8", (False, True, False))("y")
    assert (y.name, y.broadcastable, y.dtype) == ("y", (False, True, False), "int8")


def test_a_type_made_variable_computes():
    x = T.dmatrix("x")
    f = theano.function([x], (x * 2).sum())
    assert f(np.arange(6.0).reshape(2, 3)) == 30.0


# -- bool(variable) --------------------------------------------------------------------------

def test_variables_are_true_as_in_theano():
    W = T.dmatrix("W")
    assert bool(W) and bool(W + 1) and bool(T.constant(0.0)) and bool(T.lt(W, 1))
    assert (not W) is False
    picked = None or W  # the idiom ``W = W or default`` keeps W
    assert picked is W


@pytest.mark.parametrize("compare", [
    lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b])
def test_the_result_of_a_comparison_operator_refuses_bool(compare):
    a, b = T.dscalars("ab")
    cond = compare(a, b)
    with pytest.raises(TypeError, match="^Variables do not support boolean operations.$"):
        bool(cond)
    with pytest.raises(TypeError, match="boolean operations"):
        a < b < 3  # noqa: B015  (Python's chained comparison asks bool(a < b))
    # the comparison is still a graph that computes
    f = theano.function([a, b], cond)
    assert f(1.0, 2.0) == compare(1.0, 2.0)


# -- softmax of a vector -----------------------------------------------------------------------

@pytest.mark.parametrize("make, name, reference", [
    (T.nnet.softmax, "Softmax", lambda v: np.exp(v) / np.exp(v).sum()),
    (T.nnet.log_softmax, "LogSoftmax", lambda v: v - np.log(np.exp(v).sum())),
])
def test_softmax_of_a_vector_is_a_row_with_theanos_warning(make, name, reference):
    v = T.dvector("v")
    with pytest.warns(UserWarning, match=f"^DEPRECATION: If x is a vector, {name} will not "
                                         f"automatically pad x anymore in next releases"):
        out = make(v)
    assert out.broadcastable == (True, False) and out.dtype == "float64"
    data = np.array([1.0, 2.0, 0.5])
    for mode in ("FAST_RUN", "INTERP"):
        got = theano.function([v], out, mode=mode)(data)
        assert got.shape == (1, 3)
        np.testing.assert_allclose(got[0], reference(data), rtol=1e-12)


def test_softmax_of_a_matrix_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert T.nnet.softmax(T.fmatrix()).broadcastable == (False, False)


# -- config flags ------------------------------------------------------------------------------

def test_theano_warn_flags_are_accepted_with_theano_defaults():
    assert config.warn.ignore_bug_before == "0.9"
    assert config.warn.sum_div_dimshuffle_bug is False  # fixed in 0.3, before 0.9
    assert config.warn.inc_subtensor1_opt is True  # fixed in 0.10
    assert config.warn.vm_gc_bug is False
    with config.change_flags({"warn.sum_div_dimshuffle_bug": True, "warn.round": "False"}):
        assert config.warn.sum_div_dimshuffle_bug is True and config.warn.round is False
    assert config.warn.sum_div_dimshuffle_bug is False
    config.warn.sum_sum_bug = False  # Theano programs set them as attributes
    assert config["warn.sum_sum_bug"] is False
    with pytest.raises(AttributeError, match="warn.no_such_bug"):
        config.warn.no_such_bug = False


def test_print_test_value_shows_the_test_value_in_repr():
    x = T.dvector("x")
    x.tag.test_value = np.array([1.0, 2.0])
    assert repr(x) == "x"
    with config.change_flags(print_test_value=True):
        assert repr(x) == "x\narray([1., 2.])"
        assert repr(T.dvector("y")) == "y"  # no test value: the text alone
        assert str(x) == "x"


def test_warn_flags_from_theano_flags():
    from lowering.config import Config
    c = Config(environ={"THEANO_FLAGS": "warn.sum_div_dimshuffle_bug=False,"
                                        "warn.ignore_bug_before=all,print_test_value=True"})
    assert c.warn.sum_div_dimshuffle_bug is False and c.warn.ignore_bug_before == "all"
    assert c.print_test_value is True
    with pytest.raises(ValueError, match="warn.ignore_bug_before"):
        Config(environ={"THEANO_FLAGS": "warn.ignore_bug_before=0.95"})
