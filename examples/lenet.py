#!/usr/bin/env python
"""LeNet, as in the classic Theano tutorial, trained on synthetic digits.

Two convolution + max-pooling layers (``T.nnet.conv2d``, ``T.signal.pool.pool_2d``), a tanh
hidden layer and a logistic regression (softmax) on top, trained by minibatch gradient descent
with ``T.grad``'s gradients. The digits are drawn here: each class is a 28x28 pattern of strokes
(seven-segment style), shifted by a pixel or two and with noise added, so the program needs no
data set.

``train_model(epochs, ...)`` trains and returns the mean cost of each epoch.
Run: ``python examples/lenet.py [epochs] [samples]``; it prints the falling cost and the
accuracy on held-out digits.
"""
import sys

import numpy

import lowering as theano
import lowering.tensor as T
from lowering.tensor.signal import pool

floatX = "float32"

# The seven segments of a digit on a 28x28 canvas: (row slice, column slice).
SEGMENTS = {
    "top": (slice(5, 7), slice(9, 19)), "middle": (slice(13, 15), slice(9, 19)),
    "bottom": (slice(21, 23), slice(9, 19)), "upper_left": (slice(5, 15), slice(9, 11)),
    "upper_right": (slice(5, 15), slice(17, 19)), "lower_left": (slice(13, 23), slice(9, 11)),
    "lower_right": (slice(13, 23), slice(17, 19)),
}
DIGITS = [
    ("top", "bottom", "upper_left", "upper_right", "lower_left", "lower_right"),   # 0
    ("upper_right", "lower_right"),                                                # 1
    ("top", "upper_right", "middle", "lower_left", "bottom"),                      # 2
    ("top", "upper_right", "middle", "lower_right", "bottom"),                     # 3
    ("upper_left", "upper_right", "middle", "lower_right"),                        # 4
    ("top", "upper_left", "middle", "lower_right", "bottom"),                      # 5
    ("top", "upper_left", "middle", "lower_left", "lower_right", "bottom"),        # 6
    ("top", "upper_right", "lower_right"),                                         # 7
    tuple(SEGMENTS),                                                               # 8
    ("top", "upper_left", "upper_right", "middle", "lower_right", "bottom"),       # 9
]


def synthetic_digits(count, rng):
    """``count`` images (count, 1, 28, 28) of random digits, shifted and noisy, and labels."""
    labels = rng.randint(0, 10, size=count)
    images = numpy.zeros((count, 1, 28, 28), dtype=floatX)
    for k, label in enumerate(labels):
        canvas = numpy.zeros((28, 28), dtype=floatX)
        for name in DIGITS[label]:
            rows, cols = SEGMENTS[name]
            canvas[rows, cols] = 1.0
        shift = rng.randint(-2, 3, size=2)
        images[k, 0] = numpy.roll(canvas, tuple(shift), axis=(0, 1))
    images += rng.normal(0, 0.3, size=images.shape).astype(floatX)
    return images, labels.astype("int32")


def conv_pool_layer(rng, input, filter_shape, image_shape, poolsize=(2, 2)):
    """A convolution with ``filter_shape`` filters, max-pooling, a bias and tanh; returns the
    output and the layer's parameters."""
    fan_in = numpy.prod(filter_shape[1:])
    fan_out = filter_shape[0] * numpy.prod(filter_shape[2:]) // numpy.prod(poolsize)
    bound = numpy.sqrt(6.0 / (fan_in + fan_out))
    W = theano.shared(rng.uniform(-bound, bound, filter_shape).astype(floatX), name="W")
    b = theano.shared(numpy.zeros(filter_shape[0], dtype=floatX), name="b")
    conv_out = T.nnet.conv2d(input, W, input_shape=image_shape, filter_shape=filter_shape)
    pooled = pool.pool_2d(conv_out, ws=poolsize, ignore_border=True)
    return T.tanh(pooled + b.dimshuffle("x", 0, "x", "x")), [W, b]


def build(rng, batch_size, nkerns=(20, 50), hidden=500, learning_rate=0.1):
    """The training and the prediction functions of LeNet on (batch, 1, 28, 28) images."""
    x = T.tensor4("x", dtype=floatX)
    y = T.ivector("y")
    layer0, params0 = conv_pool_layer(rng, x, (nkerns[0], 1, 5, 5), (batch_size, 1, 28, 28))
    layer1, params1 = conv_pool_layer(rng, layer0, (nkerns[1], nkerns[0], 5, 5),
                                      (batch_size, nkerns[0], 12, 12))
    flat = layer1.flatten(2)                                   # (batch, nkerns[1] * 4 * 4)
    n_in = nkerns[1] * 4 * 4
    bound = numpy.sqrt(6.0 / (n_in + hidden))
    W2 = theano.shared(rng.uniform(-bound, bound, (n_in, hidden)).astype(floatX), name="W2")
    b2 = theano.shared(numpy.zeros(hidden, dtype=floatX), name="b2")
    layer2 = T.tanh(T.dot(flat, W2) + b2)
    W3 = theano.shared(numpy.zeros((hidden, 10), dtype=floatX), name="W3")
    b3 = theano.shared(numpy.zeros(10, dtype=floatX), name="b3")
    p_y = T.nnet.softmax(T.dot(layer2, W3) + b3)
    cost = -T.mean(T.log(p_y)[T.arange(y.shape[0]), y])
    params = params0 + params1 + [W2, b2, W3, b3]
    grads = T.grad(cost, params)
    updates = [(p, p - learning_rate * g) for p, g in zip(params, grads)]
    train = theano.function([x, y], cost, updates=updates)
    predict = theano.function([x], T.argmax(p_y, axis=1))
    return train, predict


def train_model(epochs=3, samples=1000, batch_size=50, nkerns=(20, 50), hidden=500,
                learning_rate=0.1, seed=23455, verbose=True):
    """Train LeNet on ``samples`` synthetic digits for ``epochs``; returns each epoch's mean
    cost and the accuracy on as many held-out digits."""
    rng = numpy.random.RandomState(seed)
    train_x, train_y = synthetic_digits(samples, rng)
    test_x, test_y = synthetic_digits(samples, rng)
    train, predict = build(rng, batch_size, nkerns, hidden, learning_rate)
    costs = []
    for epoch in range(epochs):
        batch_costs = [float(train(train_x[i:i + batch_size], train_y[i:i + batch_size]))
                       for i in range(0, samples - batch_size + 1, batch_size)]
        costs.append(float(numpy.mean(batch_costs)))
        if verbose:
            print(f"epoch {epoch + 1}: cost {costs[-1]:.4f}")
    predictions = numpy.concatenate([predict(test_x[i:i + batch_size])
                                     for i in range(0, samples - batch_size + 1, batch_size)])
    accuracy = float(numpy.mean(predictions == test_y[:len(predictions)]))
    if verbose:
        print(f"held-out accuracy: {accuracy:.3f}")
    return costs, accuracy


if __name__ == "__main__":
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    train_model(epochs, samples)
