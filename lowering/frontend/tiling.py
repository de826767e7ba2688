"""``T.tile``: NumPy's tile, as Theano builds it (one ``alloc`` of the repetitions in front of
the sizes, a dimshuffle interleaving them, one reshape).

>>> import lowering.tensor as T
>>> x = T.lvector("x")
>>> tile(x, (2, 2)).eval({x: [1, 2]})
array([[1, 2, 1, 2],
       [1, 2, 1, 2]])
"""
from __future__ import annotations

import numpy as np

from .constructors import as_tensor_variable
from .shapes import alloc, dimshuffle, reshape, shape_i
from .variable import TensorVariable


def _reps(reps, ndim: int | None) -> list:
    """The repetitions as a list of ints and integer scalars."""
    if isinstance(reps, (list, tuple)):
        for r in reps:
            ok = isinstance(r, (int, np.integer)) or (
                isinstance(r, TensorVariable) and r.ndim == 0 and r.dtype.startswith(("int", "uint")))
            if not ok:
                raise ValueError("tile: elements of reps must be scalars of integer dtype")
        if ndim is not None and len(reps) > ndim:
            raise ValueError("tile: len(reps) should be equal or less than ndim")
        return list(reps)
    reps = as_tensor_variable(reps)
    if not reps.dtype.startswith(("int", "uint")):
        raise ValueError("tile: elements of reps must be integer dtype")
    if reps.ndim == 0:
        return [reps]
    if reps.ndim > 1:
        raise ValueError("tile: the dimension of reps should not exceed 1")
    length = reps.value.type.shape[0]
    if length is None:
        if ndim is None:
            raise ValueError("tile: if reps is a vector of unknown length, you should specify "
                             "the ndim")
        length = ndim
    return [reps[i] for i in range(length)]


def tile(x, reps, ndim: int | None = None) -> TensorVariable:
    """``x`` repeated ``reps[k]`` times along dimension ``k`` (``reps`` is padded with 1s in
    front, and ``x`` with broadcast dimensions, to ``ndim`` dimensions)."""
    x = as_tensor_variable(x)
    if ndim is not None and ndim < x.ndim:
        raise ValueError("tile: ndim should be equal or larger than x.ndim")
    reps = _reps(reps, ndim)
    ndim = ndim if ndim is not None else max(len(reps), x.ndim)
    reps = [1] * (ndim - len(reps)) + reps
    sizes = [1] * (ndim - x.ndim) + [shape_i(x, d) for d in range(x.ndim)]
    spread = alloc(x, *(reps + sizes))
    interleaved = dimshuffle(spread, [k for d in range(ndim) for k in (d, ndim + d)])
    return reshape(interleaved, [s * r for s, r in zip(sizes, reps)])
