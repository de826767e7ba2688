"""``DataParallel``: gradient descent of a Theano-style training step, its dataset split
across Dask workers.

The user's program gives what ``theano.function(inputs, cost, updates=updates)`` would get, and
the gradient variables its updates use. Two functions are compiled from them:

- the shard step, run on the workers: ``(inputs..., params...) -> (cost, grads...)`` with the
  shared variables replaced by inputs (``givens``), so a worker keeps no state between calls;
- the update, run on the driver: ``(grads...) -> ()`` with the user's ``updates`` and the
  gradients replaced by inputs; it updates the driver's shared variables.

A step sends the parameters' values with each shard's task (the broadcast), each worker
computes its shard's cost and gradients, Dask sums them weighted by the shards' sizes (a tree of
tasks on the workers), and the driver applies the update to the mean. For a cost that is a mean
over samples (plus terms of the parameters alone) the mean of the shards' gradients weighted by
their sizes is the whole dataset's gradient: the steps are those of one process, up to the order
of floating-point sums.

With ``local_steps=k`` each worker instead runs ``k`` steps of the user's updates on its shard
from the driver's parameters (the step function ``(inputs..., params...) -> (new params...,
cost)``), and the driver sets each parameter to the shards' mean weighted by their sizes
(periodic parameter averaging: fewer round trips, not the same steps).

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> from distributed import Client
>>> x, y = T.matrix("x"), T.vector("y")
>>> w = theano.shared(np.zeros(2), name="w")
>>> cost = ((T.dot(x, w) - y) ** 2).mean()
>>> gw = T.grad(cost, w)
>>> with Client(processes=False, n_workers=1, threads_per_worker=2,
...             dashboard_address=":0") as client:
...     trainer = DataParallel([x, y], cost, [w], [gw], {w: w - 0.1 * gw}, client)
...     losses = trainer.fit((np.eye(2), np.array([1.0, 2.0])), steps=200, shards=2)
>>> losses[0], np.round(w.get_value(), 3).tolist()
(2.5, [1.0, 2.0])
"""
from __future__ import annotations

import numpy as np

from lowering.compile import function

from .shipping import ShippedFunction

__all__ = ["DataParallel"]


class DataParallel:
    """Data-parallel gradient descent on a Dask cluster (see the module's docstring).

    ``inputs``: the data variables (every one is split along its first axis); ``cost``: a scalar
    expression; ``params``: the shared variables trained; ``grads``: the gradient variables
    ``updates`` uses (``T.grad(cost, params)``); ``updates``: ``{param: new_value}`` as for
    ``function()``; ``client``: a ``distributed.Client``; ``local_steps``: None to average
    gradients every step, ``k`` to average parameters after ``k`` local steps.
    """

    def __init__(self, inputs, cost, params, grads, updates, client, local_steps=None,
                 name="train"):
        self.params = list(params)
        self.client = client
        self.local_steps = local_steps
        updates = dict(updates.items() if isinstance(updates, dict) else updates)
        if set(updates) != set(self.params):
            raise ValueError("updates must give a new value for each of params, and only them")
        if local_steps is not None and local_steps < 1:
            raise ValueError(f"local_steps must be None or at least 1, got {local_steps}")
        param_inputs = [p.type() for p in self.params]
        as_inputs = dict(zip(self.params, param_inputs))
        if local_steps is None:
            shard_outputs = [cost, *grads]
        else:
            shard_outputs = [updates[p] for p in self.params] + [cost]
        # Shared variables the step reads but does not train stay shared: they travel pickled.
        self._shard_step = ShippedFunction(function(
            list(inputs) + param_inputs, shard_outputs, givens=as_inputs,
            name=f"{name} shard", on_unused_input="ignore"))
        self._apply = None
        if local_steps is None:
            grad_inputs = [g.type() for g in grads]
            self._apply = function(grad_inputs, [], updates=updates,
                                   givens=dict(zip(grads, grad_inputs)), name=f"{name} update",
                                   on_unused_input="ignore")
        self.shards: list = []  # futures of the shards' data, on the workers
        self.sizes: list[int] = []  # samples per shard

    def scatter(self, data, shards: int | None = None) -> None:
        """Split ``data`` (one array per input: NumPy or Dask arrays) into ``shards`` parts
        along the first axis (default: one per worker) and place them on the workers."""
        import dask
        import dask.array as da
        shards = shards or len(self.client.scheduler_info()["workers"])
        n = len(data[0])
        if any(len(d) != n for d in data):
            raise ValueError("every input's data must have the same length along axis 0")
        bounds = np.linspace(0, n, shards + 1).astype(int)
        parts = [tuple(d[lo:hi] for d in data) for lo, hi in zip(bounds[:-1], bounds[1:])]
        if any(isinstance(d, da.Array) for d in data):
            self.shards = self.client.compute([dask.delayed(tuple)(list(p)) for p in parts])
        else:
            self.shards = self.client.scatter(parts)
        self.sizes = [int(hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])]

    def step(self) -> float:
        """One round: a gradient step (or ``local_steps`` steps on every shard and an
        average); the whole dataset's cost at the parameters the round started from."""
        if not self.shards:
            raise RuntimeError("no data on the workers: call scatter() or fit() first")
        values = [p.get_value(borrow=True) for p in self.params]
        submit = self.client.submit
        if self.local_steps is None:
            parts = [submit(_shard_gradient, self._shard_step, shard, size, values, pure=False)
                     for shard, size in zip(self.shards, self.sizes)]
        else:
            parts = [submit(_shard_local_steps, self._shard_step, shard, size, values,
                            self.local_steps, pure=False)
                     for shard, size in zip(self.shards, self.sizes)]
        total = _tree_sum(self.client, parts).result()
        count = sum(self.sizes)
        mean = [t / count for t in total[1:]]
        if self.local_steps is None:
            self._apply(*mean)
        else:
            for p, v in zip(self.params, mean):
                p.set_value(np.asarray(v, dtype=p.get_value(borrow=True).dtype))
        return float(total[0] / count)

    def fit(self, data, steps: int, shards: int | None = None) -> list[float]:
        """``scatter(data, shards)``, then ``steps`` rounds; the cost of each round."""
        self.scatter(data, shards)
        return [self.step() for _ in range(steps)]


def _shard_gradient(step, shard, size, params):
    """``[cost, grads...]`` of one shard, each times the shard's size (summed later)."""
    return [size * np.asarray(v) for v in step.function(*shard, *params)]


def _shard_local_steps(step, shard, size, params, k):
    """``[cost, params...]`` after ``k`` steps on one shard (the cost at the first step's
    parameters), each times the shard's size (summed later)."""
    cost = None
    for _ in range(k):
        *params, c = step.function(*shard, *params)
        cost = c if cost is None else cost
    return [size * np.asarray(cost), *(size * np.asarray(p) for p in params)]


def _sum_parts(*parts):
    return [sum(values) for values in zip(*parts)]


def _tree_sum(client, futures, fan_in: int = 4):
    """The element-wise sum of the lists ``futures`` hold, added in a tree of tasks."""
    while len(futures) > 1:
        futures = [client.submit(_sum_parts, *futures[i:i + fan_in], pure=False)
                   for i in range(0, len(futures), fan_in)]
    return futures[0]
