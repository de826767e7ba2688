"""Autoencoders as the tutorials write them: a denoising autoencoder (a binomial corruption mask
from ``MRG_RandomStreams``, tied weights, minibatches through ``givens``) and a contractive one
(the penalty on the encoder's Jacobian built from reshapes and broadcasting)."""
import numpy as np

import lowering as theano
import lowering.tensor as T
from lowering.sandbox.rng_mrg import MRG_RandomStreams


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def data(n=24, visible=12, seed=0):
    """Binary-ish images made of a few prototypes, as MNIST digits are of strokes."""
    r = np.random.default_rng(seed)
    protos = r.uniform(size=(3, visible)) > 0.5
    return np.clip(protos[r.integers(0, 3, n)] + r.normal(0, 0.05, (n, visible)), 0, 1)


class TiedAutoencoder:
    def __init__(self, visible, hidden, seed=1):
        r = np.random.default_rng(seed)
        bound = 4 * np.sqrt(6.0 / (visible + hidden))
        self.W = theano.shared(r.uniform(-bound, bound, (visible, hidden)), name="W")
        self.b = theano.shared(np.zeros(hidden), name="b")
        self.b_prime = theano.shared(np.zeros(visible), name="b_prime")
        self.params = [self.W, self.b, self.b_prime]

    def hidden(self, x):
        return T.nnet.sigmoid(T.dot(x, self.W) + self.b)

    def reconstruction(self, h):
        return T.nnet.sigmoid(T.dot(h, self.W.T) + self.b_prime)

    def values(self):
        return [p.get_value() for p in self.params]


def cross_entropy(x, z):
    return -T.sum(x * T.log(z) + (1 - x) * T.log(1 - z), axis=1)


def numpy_denoising_step(x, mask, W, b, b_prime, lr):
    """The cost of the corrupted minibatch and the parameters after one SGD step."""
    xt = x * mask
    h = sigmoid(xt @ W + b)
    z = sigmoid(h @ W.T + b_prime)
    n = x.shape[0]
    cost = np.mean(-np.sum(x * np.log(z) + (1 - x) * np.log(1 - z), axis=1))
    dz = (z - x) / n                       # through the sigmoid and the cross-entropy
    dh = (dz @ W) * h * (1 - h)
    dW = xt.T @ dh + dz.T @ h              # tied: the encoder's and the decoder's parts
    return cost, [W - lr * dW, b - lr * dh.sum(0), b_prime - lr * dz.sum(0)]


def test_denoising_autoencoder_matches_numpy_and_learns():
    images = data()
    dataset = theano.shared(images, name="dataset")
    index, x = T.lscalar("index"), T.matrix("x")
    ae = TiedAutoencoder(visible=12, hidden=5)
    rng = MRG_RandomStreams(1234)
    corruption, lr, batch = 0.3, 0.1, 8
    mask = rng.binomial(size=x.shape, n=1, p=1 - corruption, dtype=theano.config.floatX)
    z = ae.reconstruction(ae.hidden(mask * x))
    cost = T.mean(cross_entropy(x, z))
    grads = T.grad(cost, ae.params)
    train = theano.function(
        [index], [cost, mask], updates=[(p, p - lr * g) for p, g in zip(ae.params, grads)],
        givens={x: dataset[index * batch:(index + 1) * batch]})
    clean = theano.function([], T.mean(cross_entropy(x, ae.reconstruction(ae.hidden(x)))),
                            givens={x: dataset})

    before = clean()
    masks = []
    for epoch in range(3):
        for i in range(len(images) // batch):
            params = ae.values()
            got_cost, got_mask = train(i)
            minibatch = images[i * batch:(i + 1) * batch]
            want_cost, want = numpy_denoising_step(minibatch, got_mask, *params, lr)
            np.testing.assert_allclose(got_cost, want_cost, rtol=1e-10)
            for p, w in zip(ae.values(), want):
                np.testing.assert_allclose(p, w, rtol=1e-9, atol=1e-12)
            masks.append(got_mask)
    masks = np.array(masks)
    assert set(np.unique(masks)) <= {0.0, 1.0} and masks.dtype == np.float64
    assert abs(1 - masks.mean() - corruption) < 0.05          # 864 draws of p = 0.7
    assert not np.array_equal(masks[0], masks[1])             # the stream's state moved on
    assert clean() < 0.9 * before


def test_contractive_autoencoder_penalty_and_its_gradient():
    images = data(n=10, visible=6)
    x = T.matrix("x")
    ae = TiedAutoencoder(visible=6, hidden=4, seed=3)
    n, level = x.shape[0], 0.5
    h = ae.hidden(x)
    # The tutorial's Jacobian of the encoder: J[i] = diag(h_i (1 - h_i)) W^T, by broadcasting.
    jacobian = T.reshape(h * (1 - h), (n, 1, 4)) * T.reshape(ae.W, (1, 6, 4))
    penalty = T.sum(jacobian ** 2) / n
    cost = T.mean(cross_entropy(x, ae.reconstruction(h))) + level * penalty
    grads = T.grad(cost, ae.params)
    f = theano.function([x], [penalty, cost] + grads)
    step = theano.function([x], cost, updates=[(p, p - 0.2 * g) for p, g in zip(ae.params, grads)])

    W, b, b_prime = ae.values()
    hv = sigmoid(images @ W + b)
    want_penalty = np.mean([np.sum((W * (hi * (1 - hi))) ** 2) for hi in hv])
    got = f(images)
    np.testing.assert_allclose(got[0], want_penalty, rtol=1e-10)
    # The penalty equals the squared Frobenius norm of the Jacobian T.jacobian computes.
    J = theano.function([x], T.jacobian(h[0], x))(images)
    np.testing.assert_allclose(np.sum(J[:, 0, :] ** 2), np.sum((W * (hv[0] * (1 - hv[0]))) ** 2))

    def cost_at(k, value):
        saved = ae.params[k].get_value()
        ae.params[k].set_value(value)
        out = f(images)[1]
        ae.params[k].set_value(saved)
        return out

    eps = 1e-6
    for k, value in enumerate(ae.values()):
        numeric = np.zeros_like(value)
        for pos in np.ndindex(*value.shape):
            up, down = value.copy(), value.copy()
            up[pos] += eps
            down[pos] -= eps
            numeric[pos] = (cost_at(k, up) - cost_at(k, down)) / (2 * eps)
        np.testing.assert_allclose(got[2 + k], numeric, rtol=1e-5, atol=1e-8)

    costs = [step(images) for _ in range(30)]
    assert costs[-1] < 0.9 * costs[0]
