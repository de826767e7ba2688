"""Stacked denoising autoencoders as the tutorial builds them: an MLP whose hidden layers share
their weights with one autoencoder each, layer-wise pretraining functions with ``theano.In``
defaults for the corruption level and the learning rate, then fine-tuning of the whole stack
with a softmax layer on top, minibatches through ``givens`` and L1/L2 penalties as the MLP
tutorial adds them."""
import numpy as np

import lowering as theano
import lowering.tensor as T
from lowering.sandbox.rng_mrg import MRG_RandomStreams

SIZES, CLASSES, BATCH = [10, 8, 6], 3, 10


def data(n=60, seed=0):
    r = np.random.default_rng(seed)
    y = r.integers(0, CLASSES, n)
    protos = np.random.default_rng(1).uniform(size=(CLASSES, SIZES[0])) > 0.5
    return np.clip(protos[y] + r.normal(0, 0.1, (n, SIZES[0])), 0, 1), y


class StackedDenoisingAutoencoder:
    def __init__(self, seed=2):
        r = np.random.default_rng(seed)
        self.x, self.y = T.matrix("x"), T.ivector("y")
        self.rng = MRG_RandomStreams(seed)
        self.layers, self.pretrain_costs = [], []
        below = self.x
        for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
            bound = np.sqrt(6.0 / (n_in + n_out))
            W = theano.shared(r.uniform(-bound, bound, (n_in, n_out)), name="W")
            b = theano.shared(np.zeros(n_out), name="b")
            b_prime = theano.shared(np.zeros(n_in), name="b_prime")
            self.layers.append((W, b, b_prime))
            self.pretrain_costs.append((below, W, b, b_prime))
            below = T.nnet.sigmoid(T.dot(below, W) + b)
        self.W_out = theano.shared(np.zeros((SIZES[-1], CLASSES)), name="W_out")
        self.b_out = theano.shared(np.zeros(CLASSES), name="b_out")
        self.p_y = T.nnet.softmax(T.dot(below, self.W_out) + self.b_out)
        self.params = [p for W, b, _ in self.layers for p in (W, b)] + [self.W_out, self.b_out]
        self.nll = -T.mean(T.log(self.p_y)[T.arange(self.y.shape[0]), self.y])
        self.errors = T.mean(T.neq(T.argmax(self.p_y, axis=1), self.y))

    def pretraining_functions(self, train_x):
        index = T.lscalar("index")
        corruption, lr = T.scalar("corruption"), T.scalar("lr")
        fns = []
        for below, W, b, b_prime in self.pretrain_costs:
            mask = self.rng.binomial(size=below.shape, n=1, p=1 - corruption,
                                     dtype=theano.config.floatX)
            h = T.nnet.sigmoid(T.dot(below * mask, W) + b)
            z = T.nnet.sigmoid(T.dot(h, W.T) + b_prime)
            cost = T.mean(-T.sum(below * T.log(z) + (1 - below) * T.log(1 - z), axis=1))
            params = [W, b, b_prime]
            updates = [(p, p - lr * g) for p, g in zip(params, T.grad(cost, params))]
            fns.append(theano.function(
                [index, theano.In(corruption, value=0.2), theano.In(lr, value=0.1)], cost,
                updates=updates, givens={self.x: train_x[index * BATCH:(index + 1) * BATCH]}))
        return fns


def test_pretraining_then_fine_tuning_with_shared_weights():
    xs, ys = data()
    train_x = theano.shared(xs)
    train_y = T.cast(theano.shared(ys.astype("float64")), "int32")
    sda = StackedDenoisingAutoencoder()
    index = T.lscalar("index")
    n_batches = len(xs) // BATCH

    pretrain = sda.pretraining_functions(train_x)
    for layer, fn in enumerate(pretrain):
        first = np.mean([fn(i, corruption=0.0) for i in range(n_batches)])
        W_before = sda.layers[layer][0].get_value()
        for epoch in range(15):
            costs = [fn(i) for i in range(n_batches)]             # the In defaults: 0.2, 0.1
        assert np.mean([fn(i, 0.0, 0.0) for i in range(n_batches)]) < first
        # The MLP's hidden layer reads the weights the autoencoder trained.
        assert not np.allclose(sda.layers[layer][0].get_value(), W_before)
        assert np.all(np.isfinite(costs))

    l1 = sum(abs(W).sum() for W, _, _ in sda.layers)
    l2 = sum((W ** 2).sum() for W, _, _ in sda.layers)
    cost = sda.nll + 1e-4 * l1 + 1e-4 * l2
    grads = T.grad(cost, sda.params)
    givens = {sda.x: train_x[index * BATCH:(index + 1) * BATCH],
              sda.y: train_y[index * BATCH:(index + 1) * BATCH]}
    finetune = theano.function([index], cost, givens=givens,
                               updates=[(p, p - 0.5 * g) for p, g in zip(sda.params, grads)])
    error = theano.function([], sda.errors, givens={sda.x: train_x, sda.y: train_y})
    probabilities = theano.function([], sda.p_y, givens={sda.x: train_x})

    start = error()
    for epoch in range(40):
        for i in range(n_batches):
            finetune(i)
    assert error() < min(0.2, start)

    # The whole stack against NumPy with the trained weights.
    h = xs
    for W, b, _ in sda.layers:
        h = 1 / (1 + np.exp(-(h @ W.get_value() + b.get_value())))
    logits = h @ sda.W_out.get_value() + sda.b_out.get_value()
    want = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probabilities(), want, rtol=1e-10)
