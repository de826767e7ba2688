"""Indexing ``x[...]`` in every supported form, and set_subtensor / inc_subtensor, against NumPy."""
import numpy as np
import pytest

import lowering.tensor as T
from lowering.frontend.errors import GraphBuildError, GraphTypeError

from .helpers import evaluate

DATA = np.arange(24.0).reshape(4, 6)


@pytest.mark.parametrize("key", [
    1, -1, (1, 2), (slice(1, 3),), (slice(None), 2), (slice(None, None, 2), slice(1, None)),
    (Ellipsis, 0), (0, Ellipsis), (slice(-3, None), slice(None, -1)), (slice(None, None, -1),),
    (None,), (slice(None), None), (1, None, slice(2, 4)), (Ellipsis, None), (),
])
def test_static_keys_match_numpy(key):
    x = T.matrix("x")
    out = x[key]
    expected = DATA[key]
    assert out.ndim == expected.ndim
    assert np.array_equal(evaluate(out, {x: DATA}), expected)


def test_basic_keys_build_subtensor_ops():
    x = T.matrix("x")
    assert x[1:3].value.op.name == "tensor.subtensor"
    assert x[:] is x and x[...] is x
    assert x[:, None].value.op.name == "tensor.dimshuffle"


def test_symbolic_slice_bounds():
    x, i = T.vector("x"), T.iscalar("i")
    n = 3
    batch = x[i * n:(i + 1) * n]
    data = np.arange(12.0)
    assert batch.value.op.name == "tensor.subtensor" and batch.ndim == 1
    assert np.array_equal(evaluate(batch, {x: data, i: 2}), data[6:9])
    step = T.lscalar("step")
    assert np.array_equal(evaluate(x[::step], {x: data, step: 4}), data[::4])


def test_symbolic_integer_index():
    x, i = T.matrix("x"), T.lscalar("i")
    assert np.array_equal(evaluate(x[i], {x: DATA, i: 2}), DATA[2])
    assert np.array_equal(evaluate(x[:, i], {x: DATA, i: -1}), DATA[:, -1])


def test_integer_array_indexing():
    p, y = T.matrix("p"), T.ivector("y")
    picked = p[T.arange(y.shape[0]), y]
    assert picked.value.op.name == "tensor.advanced_subtensor"
    labels = np.array([5, 0, 3, 3], dtype="int32")
    assert np.array_equal(evaluate(picked, {p: DATA, y: labels}), DATA[np.arange(4), labels])
    rows = p[[3, 1]]
    assert np.array_equal(evaluate(rows, {p: DATA}), DATA[[3, 1]])
    assert np.array_equal(evaluate(p[:, y], {p: DATA, y: labels}), DATA[:, labels])


def test_shape_indexing_builds_shape_i():
    x = T.matrix("x")
    n = x.shape[0]
    assert n.value.op.name == "tensor.shape_i" and n.dtype == "int64" and n.ndim == 0
    assert x.shape[-1].value.op.get_attr("axis") == 1
    assert x.shape.dtype == "int64" and x.shape.value.type.shape == (2,)
    assert evaluate(x.shape[1], {x: DATA}) == 6
    assert np.array_equal(evaluate(x.shape[::-1], {x: DATA}), [6, 4])


@pytest.mark.parametrize("key, message", [
    ((0, 0, 0), "too many indices"),
    ((Ellipsis, Ellipsis), "single ellipsis"),
])
def test_bad_keys(key, message):
    with pytest.raises(IndexError, match=message):
        T.matrix("x")[key]


def test_bad_index_types():
    x = T.vector("x")
    with pytest.raises(GraphTypeError, match="integer dtype"):
        x[T.scalar("f")]
    with pytest.raises(GraphTypeError, match="boolean mask"):
        x[x > 0]
    with pytest.raises(GraphTypeError, match="slice bound"):
        x[0.5:]
    with pytest.raises(GraphTypeError, match="cannot index"):
        x["a"]


def test_static_out_of_range_index_names_the_line():
    c = T.constant(np.zeros(3))
    with pytest.raises(GraphBuildError, match=r"test_indexing.py:\d+: tensor.subtensor: index 5 is "
                                              r"out of range"):
        c[5]


def test_set_and_inc_subtensor():
    x, y = T.matrix("x"), T.vector("y")
    s = T.set_subtensor(x[1:3, 2:], 0.0)
    i = T.inc_subtensor(x[:, 0], y)
    assert (s.value.op.name, i.value.op.name) == ("tensor.set_subtensor", "tensor.inc_subtensor")
    assert s.type == x.type and i.type == x.type
    y_data = np.array([1.0, 2.0, 3.0, 4.0])
    got_s, got_i = evaluate([s, i], {x: DATA, y: y_data})
    want_s, want_i = DATA.copy(), DATA.copy()
    want_s[1:3, 2:] = 0.0
    want_i[:, 0] += y_data
    assert np.array_equal(got_s, want_s) and np.array_equal(got_i, want_i)


def test_advanced_inc_subtensor_accumulates_repeated_indices():
    x, idx = T.vector("x"), T.lvector("idx")
    out = T.inc_subtensor(x[idx], 1.0)
    assert out.value.op.name == "tensor.advanced_inc_subtensor"
    got = evaluate(out, {x: np.zeros(4), idx: np.array([1, 1, 3])})
    assert np.array_equal(got, [0.0, 2.0, 0.0, 1.0])
    s = T.set_subtensor(x[idx], 5.0)
    assert np.array_equal(evaluate(s, {x: np.zeros(4), idx: np.array([0, 2])}), [5, 0, 5, 0])


def test_symbolic_bounds_survive_set_subtensor():
    x, i = T.vector("x"), T.lscalar("i")
    out = T.set_subtensor(x[i:i + 2], T.constant([7.0, 8.0]))
    assert np.array_equal(evaluate(out, {x: np.zeros(5), i: 2}), [0, 0, 7, 8, 0])


def test_set_subtensor_casts_the_value_and_checks_its_argument():
    x = T.fvector("x")
    out = T.set_subtensor(x[0], T.dscalar("d"))
    assert out.dtype == "float32"
    with pytest.raises(GraphTypeError, match="indexed variable"):
        T.set_subtensor(x, 1.0)
