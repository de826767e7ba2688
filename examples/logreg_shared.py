#!/usr/bin/env python
"""Logistic regression with the data in shared variables: the solution of seed 002's exercise.

float32 throughout (``config.floatX = 'float32'``, the cost cast back to float32 after the mean),
and ``train()`` takes no inputs: the data, weights and bias are all shared variables.
Run: ``python examples/logreg_shared.py [steps]`` (the seed uses 10000 steps).
"""
import sys

import numpy

import lowering as theano
import lowering.tensor as tt
from lowering import sandbox, Out  # noqa: F401  (imported as the seed does)

theano.config.floatX = 'float32'

rng = numpy.random.RandomState(1234)

N = 400
feats = 784
D = (rng.randn(N, feats).astype(theano.config.floatX),
     rng.randint(size=N, low=0, high=2).astype(theano.config.floatX))
training_steps = 10000

# Declare the symbolic variables: everything lives in shared variables
x = theano.shared(D[0], name="x")
y = theano.shared(D[1], name="y")
w = theano.shared(rng.randn(feats).astype(theano.config.floatX), name="w")
b = theano.shared(numpy.asarray(0., dtype=theano.config.floatX), name="b")
x.tag.test_value = D[0]
y.tag.test_value = D[1]

# Construct the expression graph
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))  # probability of having a one
prediction = p_1 > 0.5  # the prediction: 0 or 1
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)  # cross-entropy
cost = tt.cast(xent.mean(), 'float32') + \
    0.01 * (w ** 2).sum()  # the cost to optimize
gw, gb = tt.grad(cost, [w, b])

# Compile expressions to functions
train = theano.function(
    inputs=[],
    outputs=[prediction, xent],
    updates={w: w - 0.01 * gw, b: b - 0.01 * gb},
    name="train")
predict = theano.function(inputs=[], outputs=prediction, name="predict")


def used_device(fn) -> str:
    """The seed's check: a matrix-vector product node tells where the function runs."""
    names = [node.op.__class__.__name__ for node in fn.maker.fgraph.toposort()]
    if any(n in ('Gemv', 'CGemv', 'Gemm', 'CGemm') for n in names):
        return 'Used the cpu'
    if any(n in ('GpuGemm', 'GpuGemv') for n in names):
        return 'Used the gpu'
    return 'ERROR, not able to tell if the cpu or the gpu was used'


def main(steps=training_steps):
    """Train ``steps`` steps; print the seed's report and return the final predictions."""
    print(used_device(train))
    for _ in range(steps):
        pred, err = train()
    print("target values for D")
    print(D[1])
    print("prediction on D")
    final = predict()
    print(final)
    return final


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else training_steps)
