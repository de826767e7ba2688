"""Restricted Boltzmann machines as the tutorials train them: Gibbs sampling in ``scan`` with
binomial draws from ``MRG_RandomStreams`` inside the step (the stream's updates come back from
scan), contrastive divergence (CD-k) and its persistent form (PCD) through ``consider_constant``,
and the RNN-RBM, a recurrence whose every step runs a Gibbs chain (a scan inside a scan), also
used to generate sequences."""
import numpy as np

import lowering as theano
import lowering.tensor as T
from lowering.sandbox.rng_mrg import MRG_RandomStreams


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


class RBM:
    def __init__(self, visible, hidden, W=None, seed=2):
        r = np.random.default_rng(seed)
        W = r.normal(0, 0.1, (visible, hidden)) if W is None else W
        self.W = theano.shared(W, name="W")
        self.hbias = theano.shared(np.zeros(hidden), name="hbias")
        self.vbias = theano.shared(np.zeros(visible), name="vbias")
        self.params = [self.W, self.hbias, self.vbias]
        self.rng = MRG_RandomStreams(seed)

    def free_energy(self, v):
        wx_b = T.dot(v, self.W) + self.hbias
        return -T.dot(v, self.vbias) - T.sum(T.log(1 + T.exp(wx_b)), axis=1)

    def sample_h_given_v(self, v):
        mean = T.nnet.sigmoid(T.dot(v, self.W) + self.hbias)
        return mean, self.rng.binomial(size=mean.shape, n=1, p=mean, dtype=theano.config.floatX)

    def sample_v_given_h(self, h):
        mean = T.nnet.sigmoid(T.dot(h, self.W.T) + self.vbias)
        return mean, self.rng.binomial(size=mean.shape, n=1, p=mean, dtype=theano.config.floatX)

    def gibbs_hvh(self, h):
        v_mean, v = self.sample_v_given_h(h)
        h_mean, h = self.sample_h_given_v(v)
        return [v_mean, v, h_mean, h]

    def cost_updates(self, x, lr, persistent=None, k=1):
        _, h0 = self.sample_h_given_v(x)
        start = h0 if persistent is None else persistent
        (v_means, vs, h_means, hs), updates = theano.scan(
            self.gibbs_hvh, outputs_info=[None, None, None, start], n_steps=k)
        chain_end = vs[-1]
        cost = T.mean(self.free_energy(x)) - T.mean(self.free_energy(chain_end))
        grads = T.grad(cost, self.params, consider_constant=[chain_end])
        for p, g in zip(self.params, grads):
            updates[p] = p - lr * g
        if persistent is not None:
            updates[persistent] = hs[-1]
        return cost, updates, chain_end, hs[-1]


def numpy_cd_step(x, chain_end, W, hbias, vbias, lr):
    p0, pk = sigmoid(x @ W + hbias), sigmoid(chain_end @ W + hbias)
    n = x.shape[0]
    dW = -(x.T @ p0 - chain_end.T @ pk) / n
    return [W - lr * dW, hbias + lr * (p0 - pk).sum(0) / n, vbias + lr * (x - chain_end).sum(0) / n]


def bars(n=40, size=4, seed=0):
    """Images of one horizontal or vertical bar: data an RBM learns in a few epochs."""
    r = np.random.default_rng(seed)
    out = np.zeros((n, size, size))
    for i in range(n):
        k = r.integers(size)
        if r.integers(2):
            out[i, k, :] = 1
        else:
            out[i, :, k] = 1
    return out.reshape(n, size * size)


def test_cd_k_update_matches_numpy_for_the_chain_it_sampled():
    x = T.matrix("x")
    rbm = RBM(visible=16, hidden=6)
    cost, updates, chain_end, _ = rbm.cost_updates(x, lr=0.1, k=3)
    train = theano.function([x], [cost, chain_end], updates=updates)
    images = bars()
    chains = []
    for _ in range(4):
        before = [p.get_value() for p in rbm.params]
        _, end = train(images)
        assert set(np.unique(end)) <= {0.0, 1.0}
        for p, want in zip(rbm.params, numpy_cd_step(images, end, *before, 0.1)):
            np.testing.assert_allclose(p.get_value(), want, rtol=1e-10, atol=1e-13)
        chains.append(end)
    assert not np.array_equal(chains[0], chains[1])  # scan's step drew new numbers each call


def test_gibbs_chain_in_scan_is_exact_when_the_units_are_certain():
    """With saturated units every draw is certain: the chain scan runs is NumPy's. Weights of
    distinct powers of two with random signs (and biases of 10) keep every unit's input at least
    10 away from 0."""
    signs = np.where(np.random.default_rng(4).uniform(size=(5, 3)) < 0.5, -1.0, 1.0)
    W = 20.0 * signs * 2.0 ** np.arange(15).reshape(5, 3)
    rbm = RBM(visible=5, hidden=3, W=W)
    rbm.hbias.set_value(np.full(3, 10.0))
    rbm.vbias.set_value(np.full(5, 10.0))
    h = T.matrix("h")
    (v_means, vs, h_means, hs), updates = theano.scan(
        rbm.gibbs_hvh, outputs_info=[None, None, None, h], n_steps=4)
    f = theano.function([h], [vs, hs], updates=updates)
    start = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    got_v, got_h = f(start)
    hv = start
    for t in range(4):
        v = (hv @ W.T + 10 > 0).astype(float)
        hv = (v @ W + 10 > 0).astype(float)
        np.testing.assert_array_equal(got_v[t], v)
        np.testing.assert_array_equal(got_h[t], hv)


def test_binomial_draws_in_scan_follow_their_probabilities():
    rbm = RBM(visible=3, hidden=2, W=np.array([[1.0, -2.0], [0.5, 0.0], [-1.0, 3.0]]))
    h = T.matrix("h")
    (v_means, vs, _, _), updates = theano.scan(
        rbm.gibbs_hvh, outputs_info=[None, None, None, h], n_steps=2)
    f = theano.function([h], [v_means[0], vs[0]], updates=updates)
    means, draws = f(np.tile([[1.0, 0.0]], (4000, 1)))
    np.testing.assert_allclose(means[0], sigmoid(np.array([1.0, 0.5, -1.0])))
    np.testing.assert_allclose(draws.mean(axis=0), means[0], atol=0.03)


def test_persistent_cd_trains_and_carries_its_chain():
    x = T.matrix("x")
    rbm = RBM(visible=16, hidden=8, seed=5)
    persistent = theano.shared(np.zeros((10, 8)), name="persistent")
    cost, updates, chain_end, last_h = rbm.cost_updates(x, lr=0.1, persistent=persistent, k=2)
    train = theano.function([x], last_h, updates=updates)
    v_mean = T.nnet.sigmoid(T.dot(rbm.sample_h_given_v(x)[0], rbm.W.T) + rbm.vbias)
    error = theano.function([x], T.mean(T.nnet.binary_crossentropy(v_mean, x)))
    images = bars()
    before = error(images)
    for epoch in range(30):
        for i in range(0, 40, 10):
            last = train(images[i:i + 10])
            np.testing.assert_array_equal(persistent.get_value(), last)
    assert error(images) < 0.8 * before


def build_rnnrbm(visible, hidden, recurrent, seed=3):
    """The RNN-RBM: per step, the RBM's biases come from the recurrent state u, training draws a
    Gibbs chain (scan) per step and generation samples v_t from it."""
    r = np.random.default_rng(seed)

    def shared(*shape, scale=0.01):
        return theano.shared(r.normal(0, scale, shape) if len(shape) > 1 else np.zeros(shape))

    W, bv, bh = shared(visible, hidden), shared(visible), shared(hidden)
    Wuh, Wuv = shared(recurrent, hidden), shared(recurrent, visible)
    Wvu = shared(visible, recurrent)
    Wuu, bu = shared(recurrent, recurrent), shared(recurrent)
    params = [W, bv, bh, Wuh, Wuv, Wvu, Wuu, bu]
    rng = MRG_RandomStreams(seed)
    v, n = T.matrix("v"), T.iscalar("n")
    u0 = T.zeros((recurrent,))

    def gibbs_chain(v0, bv_t, bh_t, k):
        def gibbs_step(v):
            mean_h = T.nnet.sigmoid(T.dot(v, W) + bh_t)
            h = rng.binomial(size=mean_h.shape, n=1, p=mean_h, dtype=theano.config.floatX)
            mean_v = T.nnet.sigmoid(T.dot(h, W.T) + bv_t)
            return mean_v, rng.binomial(size=mean_v.shape, n=1, p=mean_v,
                                        dtype=theano.config.floatX)
        (means, chain), updates = theano.scan(gibbs_step, outputs_info=[None, v0], n_steps=k)
        return means[-1], chain[-1], updates

    def recurrence(v_t, u_tm1):
        bv_t = bv + T.dot(u_tm1, Wuv)
        bh_t = bh + T.dot(u_tm1, Wuh)
        generate = v_t is None
        updates = None
        if generate:
            _, v_t, updates = gibbs_chain(T.zeros((visible,)), bv_t, bh_t, k=5)
        u_t = T.tanh(bu + T.dot(v_t, Wvu) + T.dot(u_tm1, Wuu))
        return ([v_t, u_t], updates) if generate else [u_t, bv_t, bh_t]

    (u_t, bv_t, bh_t), updates_train = theano.scan(
        lambda v_t, u_tm1, *_: recurrence(v_t, u_tm1), sequences=v, outputs_info=[u0, None, None],
        non_sequences=params)
    chain_means, chain_end, updates_chain = gibbs_chain(v, bv_t[:], bh_t[:], k=3)
    updates_train.update(updates_chain)

    def free_energy(x):
        return -(x * bv_t).sum() - T.log(1 + T.exp(T.dot(x, W) + bh_t)).sum()
    cost = (free_energy(v) - free_energy(chain_end)) / v.shape[0]
    monitor = T.mean(T.nnet.binary_crossentropy(chain_means, v))
    (generated, _), updates_generate = theano.scan(
        lambda u_tm1, *_: recurrence(None, u_tm1), outputs_info=[None, u0], non_sequences=params,
        n_steps=n)
    return dict(v=v, n=n, params=params, cost=cost, monitor=monitor, u=u_t, chain_end=chain_end,
                updates_train=updates_train, generated=generated,
                updates_generate=updates_generate)


def test_rnnrbm_recurrence_training_and_generation():
    m = build_rnnrbm(visible=6, hidden=5, recurrent=4)
    v = m["v"]
    W, bv, bh, Wuh, Wuv, Wvu, Wuu, bu = [p.get_value() for p in m["params"]]
    sequence = np.tile(np.eye(6)[[0, 2, 4, 1, 3, 5]], (3, 1))

    states = theano.function([v], m["u"])(sequence)
    u = np.zeros(4)
    for t, v_t in enumerate(sequence):
        u = np.tanh(bu + v_t @ Wvu + u @ Wuu)
        np.testing.assert_allclose(states[t], u, rtol=1e-12)

    grads = T.grad(m["cost"], m["params"], consider_constant=[m["chain_end"]])
    updates = m["updates_train"]
    updates.update((p, p - 0.1 * g) for p, g in zip(m["params"], grads))
    train = theano.function([v], m["monitor"], updates=updates)
    monitors = [train(sequence) for _ in range(60)]
    assert np.all(np.isfinite(monitors))
    assert np.mean(monitors[-10:]) < 0.85 * np.mean(monitors[:10])

    generate = theano.function([m["n"]], m["generated"], updates=m["updates_generate"])
    first, second = generate(7), generate(7)
    assert first.shape == (7, 6) and set(np.unique(first)) <= {0.0, 1.0}
    assert not np.array_equal(first, second)  # the inner chains' streams moved on
