"""Compiled functions on a Dask cluster (the ``distributed`` extra: ``dask[distributed]``).

- ``map_blocks(f, *arrays)``: a compiled ``Function`` applied block by block to Dask arrays,
  chunk shapes and dtypes from the function's types;
- ``reduce(f, *arrays, kind=..., axis=...)``: ``sum``, ``mean`` or ``max`` of a compiled
  expression, per-block partial results computed in compiled code and combined by Dask's tree
  reduction;
- ``DataParallel``: gradient descent of a Theano-style training step with the dataset split
  across workers (averaged gradients, or local steps with periodic parameter averaging).

Dask is imported when one of them is used, not by ``import lowering.dask``. How to run on a
cluster, what travels to the workers and how the caches behave there: docs/distributed.md.

>>> import lowering.dask
>>> sorted(lowering.dask.__all__)
['BlockError', 'DataParallel', 'map_blocks', 'reduce']
"""
from .blocks import BlockError, map_blocks
from .reductions import reduce
from .training import DataParallel

__all__ = ["map_blocks", "reduce", "DataParallel", "BlockError"]
