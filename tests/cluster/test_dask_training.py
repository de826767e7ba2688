"""``lowering.dask.DataParallel`` trains the seed's logistic regression on two worker
processes to the loss one process reaches.

Averaging the shards' gradients weighted by their sizes gives exactly the whole dataset's
gradient of this cost (a mean over samples plus a term of ``w`` alone), so both runs take the
same steps up to the order of floating-point sums: each gradient differs from one process's by a
few ulps, and 20 steps of size 0.01 on this smooth convex loss keep it there (measured:
4e-16 relative on the loss). The bound, 1e-9 relative on the loss and 1e-9 absolute on the
weights, leaves six orders of magnitude for other machines and BLAS orders, and is still far
below what one step more or less changes (1e-3 relative on the loss).
Local steps with periodic averaging take different steps; they are held to decreasing the
loss at least 80% as much as one process does in as many steps.
"""
import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import lowering as theano  # noqa: E402
import lowering.tensor as T  # noqa: E402
from lowering.dask import DataParallel  # noqa: E402

pytestmark = pytest.mark.distributed

STEPS = 20


def seed_data():
    """The seed's dataset: 400 samples of 784 features and their 0/1 labels."""
    rng = np.random.RandomState(1234)
    data = (rng.randn(400, 784), rng.randint(size=400, low=0, high=2).astype("float64"))
    return data, rng.randn(784)


def logistic_regression(w0):
    """The seed's model, with its own shared variables: (x, y, w, b, cost, gw, gb, updates)."""
    x, y = T.dmatrix("x"), T.dvector("y")
    w = theano.shared(w0.copy(), name="w")
    b = theano.shared(np.asarray(0.0), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    return x, y, w, b, cost, gw, gb, {w: w - 0.01 * gw, b: b - 0.01 * gb}


def loss(data, w, b) -> float:
    """The seed's cost, computed by NumPy in the stable form (``-log(p) = softplus(-z)``)."""
    x, y = data
    z = x @ w + b
    xent = y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)
    return float(xent.mean() + 0.01 * (w ** 2).sum())


@pytest.fixture(scope="module")
def one_process():
    """The costs before and after STEPS steps of the seed's training function, and the weights
    and bias it reaches."""
    data, w0 = seed_data()
    x, y, w, b, cost, gw, gb, updates = logistic_regression(w0)
    train = theano.function([x, y], cost, updates=updates)
    start = float(train(*data))
    for _ in range(STEPS - 1):
        train(*data)
    return start, loss(data, w.get_value(), b.get_value()), w.get_value(), float(b.get_value())


def test_two_workers_reach_the_loss_of_one_process(client, one_process):
    data, w0 = seed_data()
    x, y, w, b, cost, gw, gb, updates = logistic_regression(w0)
    client.wait_for_workers(2, timeout=120)  # one may still be restarting after a kill
    trainer = DataParallel([x, y], cost, [w, b], [gw, gb], updates, client)
    history = trainer.fit(data, steps=STEPS)
    assert trainer.sizes == [200, 200]
    holders = {w for ws in client.who_has(trainer.shards).values() for w in ws}
    assert len(holders) == 2  # one shard on each worker
    start, final, w_one, b_one = one_process
    assert history[0] == pytest.approx(start, rel=1e-12)
    assert loss(data, w.get_value(), b.get_value()) == pytest.approx(final, rel=1e-9)
    np.testing.assert_allclose(w.get_value(), w_one, rtol=0, atol=1e-9)
    assert float(b.get_value()) == pytest.approx(b_one, abs=1e-9)


def test_local_steps_with_parameter_averaging_decrease_the_loss(client, one_process):
    data, w0 = seed_data()
    x, y, w, b, cost, gw, gb, updates = logistic_regression(w0)
    trainer = DataParallel([x, y], cost, [w, b], [gw, gb], updates, client, local_steps=5)
    # Dask arrays are sharded by computing their slices on the workers
    trainer.fit([da.from_array(d, chunks=100) for d in data], steps=STEPS // 5)
    start, final, _, _ = one_process
    assert start - loss(data, w.get_value(), b.get_value()) >= 0.8 * (start - final)
