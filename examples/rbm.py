#!/usr/bin/env python
"""A restricted Boltzmann machine trained with contrastive divergence, written for Theano.

The classic deep-learning tutorial's RBM, on synthetic binary images (a few bar patterns with
noise) instead of MNIST: ``theano.scan`` runs k steps of Gibbs sampling, drawing the hidden and
visible units with ``RandomStreams.binomial``; the random states advance through the updates
``scan`` returns, which ``function`` applies with the parameters' own. One ``train`` call is one
CD-k step on a minibatch; the reconstruction cross-entropy falls as it learns.
Run: ``python examples/rbm.py [epochs]``; it prints the cost of each epoch.
"""
import sys

import numpy

import lowering as theano
import lowering.tensor as T
from lowering.tensor.shared_randomstreams import RandomStreams

theano.config.floatX = 'float32'
floatX = theano.config.floatX


def bar_images(n, side=6, seed=0):
    """``n`` binary ``side`` x ``side`` images, each one horizontal or vertical bar with 5% of
    its pixels flipped, flattened."""
    rng = numpy.random.RandomState(seed)
    images = numpy.zeros((n, side, side), dtype=floatX)
    for image, k, vertical in zip(images, rng.randint(0, side, n), rng.rand(n) < 0.5):
        if vertical:
            image[:, k] = 1
        else:
            image[k, :] = 1
    flips = rng.rand(n, side, side) < 0.05
    images[flips] = 1 - images[flips]
    return images.reshape(n, side * side)


class RBM(object):
    def __init__(self, n_visible, n_hidden, seed=1234):
        rng = numpy.random.RandomState(seed)
        bound = 4 * numpy.sqrt(6. / (n_hidden + n_visible))
        self.W = theano.shared(rng.uniform(-bound, bound, (n_visible, n_hidden)).astype(floatX),
                               name='W')
        self.hbias = theano.shared(numpy.zeros(n_hidden, dtype=floatX), name='hbias')
        self.vbias = theano.shared(numpy.zeros(n_visible, dtype=floatX), name='vbias')
        self.params = [self.W, self.hbias, self.vbias]
        self.theano_rng = RandomStreams(rng.randint(2 ** 30))

    def free_energy(self, v_sample):
        wx_b = T.dot(v_sample, self.W) + self.hbias
        vbias_term = T.dot(v_sample, self.vbias)
        hidden_term = T.sum(T.log(1 + T.exp(wx_b)), axis=1)
        return -hidden_term - vbias_term

    def sample_h_given_v(self, v0_sample):
        h1_mean = T.nnet.sigmoid(T.dot(v0_sample, self.W) + self.hbias)
        h1_sample = self.theano_rng.binomial(size=h1_mean.shape, n=1, p=h1_mean, dtype=floatX)
        return [h1_mean, h1_sample]

    def sample_v_given_h(self, h0_sample):
        v1_mean = T.nnet.sigmoid(T.dot(h0_sample, self.W.T) + self.vbias)
        v1_sample = self.theano_rng.binomial(size=v1_mean.shape, n=1, p=v1_mean, dtype=floatX)
        return [v1_mean, v1_sample]

    def gibbs_hvh(self, h0_sample):
        v1_mean, v1_sample = self.sample_v_given_h(h0_sample)
        h1_mean, h1_sample = self.sample_h_given_v(v1_sample)
        return [v1_mean, v1_sample, h1_mean, h1_sample]

    def get_cost_updates(self, x, lr=0.1, k=1):
        ph_mean, ph_sample = self.sample_h_given_v(x)
        ([nv_means, nv_samples, nh_means, nh_samples], updates) = theano.scan(
            self.gibbs_hvh, outputs_info=[None, None, None, ph_sample], n_steps=k)
        chain_end = nv_samples[-1]
        cost = T.mean(self.free_energy(x)) - T.mean(self.free_energy(chain_end))
        gparams = T.grad(cost, self.params, consider_constant=[chain_end])
        for gparam, param in zip(gparams, self.params):
            updates[param] = param - gparam * T.cast(lr, dtype=floatX)
        # The reconstruction cross-entropy of the first Gibbs step's visible means.
        v_mean = nv_means[0]
        monitoring_cost = T.mean(T.sum(x * T.log(v_mean) + (1 - x) * T.log(1 - v_mean), axis=1))
        return -monitoring_cost, updates


def main(epochs=15, batch_size=20, k=1, report=1):
    data = theano.shared(bar_images(400))
    index = T.lscalar('index')
    x = T.matrix('x')
    rbm = RBM(n_visible=36, n_hidden=12)
    cost, updates = rbm.get_cost_updates(x, lr=0.1, k=k)
    train = theano.function([index], cost, updates=updates,
                            givens={x: data[index * batch_size:(index + 1) * batch_size]})
    n_batches = data.get_value(borrow=True).shape[0] // batch_size
    costs = []
    for epoch in range(epochs):
        costs.append(float(numpy.mean([train(i) for i in range(n_batches)])))
        if report and epoch % report == 0:
            print('Training epoch %d, cost is %f' % (epoch, costs[-1]))
    return costs, rbm, train


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
