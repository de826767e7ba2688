#!/usr/bin/env python
"""Logistic regression trained by gradient descent: the exercise of seed 002.

``train(x, y)`` does one step: it returns the predictions and the cross-entropy per sample and
updates the shared weights ``w`` and bias ``b`` with ``T.grad``'s gradients.
Run: ``python examples/logreg.py [steps]`` (the seed uses 10000 steps); ``lowering-opt
examples/logreg.py:train`` shows the IR of the training step.
"""
import sys

import numpy

import lowering as theano
import lowering.tensor as T

rng = numpy.random.RandomState(1234)

N = 400      # training samples
feats = 784  # input features
D = (rng.randn(N, feats).astype(theano.config.floatX),
     rng.randint(size=N, low=0, high=2).astype(theano.config.floatX))
training_steps = 10000

# Declare the symbolic variables
x = T.matrix("x")
y = T.vector("y")
w = theano.shared(rng.randn(feats).astype(theano.config.floatX), name="w")
b = theano.shared(numpy.asarray(0., dtype=theano.config.floatX), name="b")
x.tag.test_value = D[0]
y.tag.test_value = D[1]

# Construct the expression graph
p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))               # probability of having a one
prediction = p_1 > 0.5                                 # the prediction: 0 or 1
xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)      # cross-entropy
cost = xent.mean() + 0.01 * (w ** 2).sum()             # the cost to optimize
gw, gb = T.grad(cost, [w, b])

# Compile expressions to functions
train = theano.function(
    inputs=[x, y],
    outputs=[prediction, xent],
    updates={w: w - 0.01 * gw, b: b - 0.01 * gb},
    name="train")
predict = theano.function(inputs=[x], outputs=prediction, name="predict")


def used_device(fn) -> str:
    """The seed's check: a matrix-vector product node tells where the function runs."""
    names = [node.op.__class__.__name__ for node in fn.maker.fgraph.toposort()]
    if any(n in ("Gemv", "CGemv", "Gemm", "CGemm") for n in names):
        return "Used the cpu"
    if any(n in ("GpuGemm", "GpuGemv") for n in names):
        return "Used the gpu"
    return "ERROR, not able to tell if the cpu or the gpu was used"


def main(steps=training_steps):
    """Train ``steps`` steps on ``D``; print the seed's report and return the final predictions."""
    print(used_device(train))
    for _ in range(steps):
        pred, err = train(D[0], D[1])
    print("target values for D")
    print(D[1])
    print("prediction on D")
    final = predict(D[0])
    print(final)
    return final


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else training_steps)
