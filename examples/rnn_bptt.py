#!/usr/bin/env python
"""An Elman recurrent network trained with backpropagation through time, written for Theano.

The network reads a noisy sine wave one value at a time and predicts the next value:
``h_t = tanh(W_in x_t + W h_{t-1} + b)``, ``y_t = W_out h_t + c``. ``theano.scan`` runs the
recurrence; ``T.grad`` of the squared error differentiates through the loop (BPTT), and one
``train`` call is one gradient step over the whole sequence.
Run: ``python examples/rnn_bptt.py [steps]``; it prints the training loss every 50 steps.
"""
import sys

import numpy

import lowering as theano
import lowering.tensor as T

theano.config.floatX = 'float32'
floatX = theano.config.floatX

rng = numpy.random.RandomState(42)
n_hidden, n_steps = 16, 60
t = numpy.arange(n_steps + 1)
wave = (numpy.sin(0.3 * t) + 0.05 * rng.randn(n_steps + 1)).astype(floatX)
inputs, targets = wave[:-1, None], wave[1:, None]


def weights(n_in, n_out, name):
    scale = numpy.sqrt(1.0 / n_in)
    return theano.shared(rng.uniform(-scale, scale, (n_out, n_in)).astype(floatX), name=name)


W_in = weights(1, n_hidden, "W_in")
W = weights(n_hidden, n_hidden, "W")
W_out = weights(n_hidden, 1, "W_out")
b = theano.shared(numpy.zeros(n_hidden, dtype=floatX), name="b")
c = theano.shared(numpy.zeros(1, dtype=floatX), name="c")
params = [W_in, W, W_out, b, c]

x = T.matrix("x")
y = T.matrix("y")
h0 = T.zeros((n_hidden,), dtype=floatX)
lr = T.scalar("lr")


def step(x_t, h_tm1):
    h_t = T.tanh(T.dot(W_in, x_t) + T.dot(W, h_tm1) + b)
    y_t = T.dot(W_out, h_t) + c
    return h_t, y_t


[h, y_pred], _ = theano.scan(step, sequences=x, outputs_info=[h0, None])
loss = ((y_pred - y) ** 2).mean()
grads = T.grad(loss, params)
train = theano.function([x, y, lr], loss, name="train",
                        updates=[(p, p - lr * g) for p, g in zip(params, grads)])
predict = theano.function([x], y_pred, name="predict")


def main(steps=300, report=50):
    """Train for ``steps`` gradient steps; return the loss before each one."""
    losses = []
    for i in range(steps):
        losses.append(float(train(inputs, targets, 0.1)))
        if report and i % report == 0:
            print(f"step {i}: loss {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
