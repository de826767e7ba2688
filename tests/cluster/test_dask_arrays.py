"""``lowering.dask.map_blocks`` and ``reduce`` on a two-process Dask cluster: chunk shapes and
dtypes from the function's types, broadcasting as Dask does, one build per worker, and
per-block partial reductions combined by Dask's tree reduction."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import lowering as theano  # noqa: E402
import lowering.dask as ldask  # noqa: E402
import lowering.tensor as T  # noqa: E402
from lowering.dask import shipping  # noqa: E402

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    return rng.rand(30, 20).astype("float32"), rng.rand(20).astype("float32")


@pytest.fixture(scope="module")
def expression():
    x, v = T.fmatrix("x"), T.fvector("v")
    return theano.function([x, v], T.exp(-x) * v + T.sqrt(x), name="expr")


def test_blocks_broadcast_and_take_chunks_and_dtype_from_the_types(client, data, expression):
    x, v = data
    out = ldask.map_blocks(expression, da.from_array(x, chunks=(7, 8)),
                           da.from_array(v, chunks=8))
    assert out.chunks == ((7, 7, 7, 7, 2), (8, 8, 4)) and out.dtype == np.float32
    np.testing.assert_allclose(out.compute(), np.exp(-x) * v + np.sqrt(x), rtol=1e-6)


def test_several_outputs_are_one_array_each(client, data):
    x = T.fmatrix("x")
    f = theano.function([x], [x * 2, x.sum(axis=1, keepdims=True), T.cast(x > 0.5, "int8")])
    a = da.from_array(data[0], chunks=(10, 5))
    doubled, sums, flags = ldask.map_blocks(f, a)
    assert sums.chunks == ((10, 10, 10), (1, 1, 1, 1)) and flags.dtype == np.int8
    got = da.compute(doubled, sums, flags)
    np.testing.assert_allclose(got[0], data[0] * 2)
    blocks = data[0].reshape(30, 4, 5).sum(axis=2)
    np.testing.assert_allclose(got[1], blocks, rtol=1e-6)
    np.testing.assert_array_equal(got[2], data[0] > 0.5)


def test_each_worker_builds_the_function_once(client, data, expression):
    x, v = data
    out = ldask.map_blocks(expression, da.from_array(x, chunks=(3, 20)), v)
    assert out.numblocks == (10, 1)
    out.compute()
    key = shipping.ShippedFunction(expression).key
    counts = client.run(shipping.builds, key)
    assert sorted(counts.values())[-1] == 1, counts  # ten blocks, at most one build each


@pytest.mark.parametrize("kind, axis", [("sum", None), ("mean", 0), ("max", (1,))])
def test_reductions_combine_partial_results_in_a_tree(client, data, expression, kind, axis):
    x, v = data
    a = da.from_array(x, chunks=(4, 5))
    result = ldask.reduce(expression, a, v, kind=kind, axis=axis, split_every=2)
    full = (np.exp(-x.astype("float64")) * v + np.sqrt(x))
    expected = getattr(full, kind)(axis=axis)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result.compute(), expected, rtol=2e-5)


def test_mean_of_integers_is_float64_as_in_numpy(client):
    x = T.lmatrix("x")
    f = theano.function([x], x * 3, mode="INTERP")  # the mode travels with the function
    a = da.arange(24, chunks=5).reshape(4, 6).rechunk(2)
    result = ldask.reduce(f, a, kind="mean", axis=1, keepdims=True)
    assert result.dtype == np.float64 and result.shape == (4, 1)
    np.testing.assert_allclose(result.compute(), (np.arange(24).reshape(4, 6) * 3).mean(
        axis=1, keepdims=True))


def test_functions_with_updates_and_rank_changes_are_refused(data):
    x, acc = T.fmatrix("x"), theano.shared(np.float32(0))
    updating = theano.function([x], x, updates={acc: acc + x.sum()}, mode="INTERP")
    with pytest.raises(ValueError, match="without updates"):
        ldask.map_blocks(updating, data[0])
    with pytest.raises(ValueError, match="rank 1, the blocks 2"):
        ldask.map_blocks(theano.function([x], x.sum(axis=0), mode="INTERP"), data[0])
