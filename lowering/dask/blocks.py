"""``map_blocks``: a compiled ``Function`` applied block by block to Dask arrays.

The arrays' chunks are aligned and broadcast as ``dask.array.map_blocks`` does (trailing axes
line up, an axis of one block broadcasts); each block of the result is the function of the
inputs' blocks. Output chunk shapes and dtypes come from the function's types for the blocks'
shapes (``lowering.dask.shapes``), so nothing runs before ``compute``; a size the types cannot
tell is NaN, Dask's unknown chunk size. The function travels to the workers as a
``ShippedFunction``: each worker process builds it once and reuses it for every block.

>>> import numpy as np, dask.array as da
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x, y = T.matrix("x"), T.vector("y")
>>> f = theano.function([x, y], T.exp(x) * y)
>>> a = da.ones((4, 6), chunks=(2, 3)); b = da.arange(6.0, chunks=3)
>>> out = map_blocks(f, a, b)
>>> out.chunks, out.dtype
(((2, 2), (3, 3)), dtype('float64'))
>>> np.allclose(out.compute(scheduler="sync"), np.exp(1) * np.arange(6.0))
True
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .shapes import argument_types, result_types
from .shipping import ShippedFunction, check_pure

__all__ = ["map_blocks", "BlockError"]


class BlockError(RuntimeError):
    """A compiled function failed on one block: ``block_id`` is the block's index in the
    result's grid, ``original`` (also the ``__cause__``) the function's own error. It pickles
    with both, so a Dask client gets them back from the worker."""

    def __init__(self, function_name: str, block_id, original: BaseException):
        super().__init__(f"function '{function_name}' failed on block {block_id}: "
                         f"{type(original).__name__}: {original}")
        self.function_name = function_name
        self.block_id = block_id
        self.original = original
        self.__cause__ = original

    def __reduce__(self):
        return type(self), (self.function_name, self.block_id, self.original)


class BlockCall:
    """The task body: the shipped function on one block of each input; several outputs come
    back as a tuple. Errors name the block."""

    def __init__(self, shipped: ShippedFunction, several: bool):
        self.shipped = shipped
        self.several = several

    def __call__(self, *blocks, block_id=None):
        try:
            result = self.shipped.function(*blocks)
        except Exception as exc:
            raise BlockError(self.shipped.function.name, block_id, exc) from exc
        return tuple(result) if self.several else result

    def __dask_tokenize__(self):
        return ("lowering.dask.BlockCall", self.shipped.key, self.several)


def map_blocks(function, *arrays):
    """``function`` (a compiled ``Function`` without updates) applied to every block of
    ``arrays`` (Dask arrays, or arrays and scalars, which become one block): one Dask array
    for a function with one output, a list for several. Every output must have the rank of
    the broadcast blocks (for reductions see ``lowering.dask.reduce``).
    """
    import dask.array as da
    from dask.array.core import unify_chunks
    check_pure(function, "map_blocks")
    arrays = _as_dask_arrays(function, arrays)
    rank = max((a.ndim for a in arrays), default=0)
    indices = [tuple(range(rank - a.ndim, rank)) for a in arrays]
    _, arrays = unify_chunks(*[x for pair in zip(arrays, indices) for x in pair])
    types = _chunk_types(function, arrays, rank)
    several = len(types) != 1
    shipped = ShippedFunction(function)
    call = BlockCall(shipped, several)
    token = f"lowering-{function.name}"
    if not several:
        (chunks, dtype), = types
        return da.map_blocks(call, *arrays, dtype=dtype, chunks=chunks, token=token,
                             meta=np.empty((0,) * rank, dtype))
    grid = tuple(tuple(1 for _ in c) for c in types[0][0])
    tuples = da.map_blocks(call, *arrays, dtype=object, chunks=grid, token=token,
                           meta=np.empty((0,) * rank, object))
    return [da.map_blocks(operator.getitem, tuples, i, dtype=dtype, chunks=chunks,
                          token=f"{token}-{i}", meta=np.empty((0,) * rank, dtype))
            for i, (chunks, dtype) in enumerate(types)]


def _as_dask_arrays(function, arrays) -> list:
    import dask.array as da
    expected = argument_types(function)
    if len(arrays) != len(expected):
        raise TypeError(f"function '{function.name}' takes {len(expected)} inputs, got "
                        f"{len(arrays)} arrays")
    converted = []
    for pos, (array, ttype) in enumerate(zip(arrays, expected)):
        array = array if isinstance(array, da.Array) else da.asarray(np.asarray(array))
        if array.ndim != ttype.rank:
            raise ValueError(f"input #{pos} of function '{function.name}' has type {ttype}; "
                             f"an array of {array.ndim} dimensions does not fit it")
        converted.append(array)
    return converted


def _chunk_types(function, arrays, rank: int) -> list[tuple[tuple, np.dtype]]:
    """``(chunks, dtype)`` of each output. An output's size along an axis is read from the
    blocks at each position along that axis (and the first block along the others)."""
    grid = [1] * rank
    for a in arrays:
        for axis, n in enumerate(a.numblocks):
            grid[rank - a.ndim + axis] = max(grid[rank - a.ndim + axis], n)
    found: dict[tuple, list] = {}

    def types_at(block_id):
        shapes = tuple(tuple(a.chunks[k][min(block_id[rank - a.ndim + k], a.numblocks[k] - 1)]
                             for k in range(a.ndim)) for a in arrays)
        if shapes not in found:
            try:
                found[shapes] = result_types(function, shapes)
            except ValueError as exc:
                raise ValueError(f"function '{function.name}' on block {block_id}: {exc}") \
                    from None
        return found[shapes]

    first = types_at((0,) * rank)
    for i, t in enumerate(first):
        if t.rank != rank:
            raise ValueError(f"output #{i} of function '{function.name}' has rank {t.rank}, "
                             f"the blocks {rank}: map_blocks keeps the blocks' rank (reductions: "
                             f"lowering.dask.reduce)")
    chunks = [[[] for _ in range(rank)] for _ in first]
    for axis in range(rank):
        for j in range(grid[axis]):
            block_id = tuple(j if k == axis else 0 for k in range(rank))
            for i, t in enumerate(types_at(block_id)):
                size = t.shape[axis]
                chunks[i][axis].append(math.nan if size is None else size)
    return [(tuple(map(tuple, c)), np.dtype(t.dtype)) for c, t in zip(chunks, first)]
