"""``reduce``: the sum, mean or maximum of a compiled expression over Dask arrays.

Each block's partial result is computed in compiled code: the function's module gets a
``tensor.sum`` (or ``tensor.max``) of its output over the reduced axes, keeping them as size 1,
so the expression and its reduction fuse into one loop and the block's values are never stored.
Dask's tree reduction (``dask.array.reduction``, ``split_every`` blocks at a time) combines the
partial results; a mean divides the total by the number of elements reduced.

>>> import numpy as np, dask.array as da
>>> import lowering as theano
>>> import lowering.tensor as T
>>> x = T.matrix("x")
>>> f = theano.function([x], T.exp(x) * 2)
>>> a = da.from_array(np.arange(12.0).reshape(3, 4) / 12, chunks=2)
>>> total = reduce(f, a, kind="sum", axis=1)
>>> np.allclose(total.compute(scheduler="sync"), (np.exp(a.compute()) * 2).sum(axis=1))
True
"""
from __future__ import annotations

import functools
import math

import numpy as np

from lowering.dialects.tensor import MaxOp, SumOp
from lowering.dialects.tensor.typing import normalize_axes
from lowering.ir.attributes import TypeAttr
from lowering.ir.core import VerifyError
from lowering.ir.types import FunctionType

from .blocks import map_blocks
from .shipping import check_pure

__all__ = ["reduce", "partial_function"]

# kind -> (the op reducing a block, the NumPy function combining partial results)
_KINDS = {"sum": (SumOp, np.sum), "mean": (SumOp, np.sum), "max": (MaxOp, np.max)}


def reduce(function, *arrays, kind: str = "sum", axis=None, keepdims: bool = False,
           split_every=None):
    """The ``kind`` (``"sum"``, ``"mean"`` or ``"max"``) of ``function``'s single output over
    ``axis`` (an int, a tuple, or None for all axes), the function applied blockwise to
    ``arrays`` as in ``map_blocks``; a lazy Dask array. ``split_every`` is Dask's fan-in of the
    tree reduction.
    """
    import dask.array as da
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}")
    check_pure(function, "reduce")
    mapped = map_blocks(function, *arrays)
    if isinstance(mapped, list):
        raise ValueError(f"reduce needs a function with one output; '{function.name}' has "
                         f"{len(mapped)}")
    try:
        axes = normalize_axes(axis, mapped.ndim)
    except VerifyError as exc:
        raise ValueError(exc.message) from None
    partials = map_blocks(partial_function(function, kind, axes), *arrays)
    combine = functools.partial(_combine, _KINDS[kind][1])
    dtype, aggregate = partials.dtype, combine
    if kind == "mean":
        if not np.issubdtype(dtype, np.inexact):
            dtype = np.dtype(np.float64)  # NumPy's mean of integers
        aggregate = functools.partial(_mean, math.prod(mapped.shape[a] for a in axes), dtype)
    rank = mapped.ndim if keepdims else mapped.ndim - len(axes)
    return da.reduction(partials, _already_reduced, aggregate, axis=axes, keepdims=keepdims,
                        dtype=dtype, combine=combine, split_every=split_every,
                        concatenate=True, name=f"lowering-{function.name}-{kind}",
                        meta=np.empty((0,) * rank, dtype))


def partial_function(function, kind: str, axes: tuple[int, ...]):
    """``function`` with its output reduced over ``axes`` (kept as size 1) inside its module:
    the compiled per-block step of ``reduce``.

    >>> import lowering as theano
    >>> import lowering.tensor as T
    >>> x = T.matrix("x")
    >>> g = partial_function(theano.function([x], x + 1, name="f"), "max", (0,))
    >>> g.name, g([[1.0, 5.0], [3.0, 2.0]]).tolist()
    ('f max', [[4.0, 6.0]])
    """
    from lowering.ir.parser import parse_module
    from lowering.ir.printer import print_op
    rebuild, (recipe,) = function.__reduce__()
    module = parse_module(recipe["module"])
    func = module.regions[0].block.first_op
    block = func.regions[0].block
    ret = block.last_op
    value = ret.operands[0]
    reduction = _KINDS[kind][0].build(value, axes=axes, keepdims=True,
                                      location=getattr(value.owner, "location", None))
    block.insert_before(reduction, ret)
    ret.set_operand(0, reduction.result)
    func.attributes["function_type"] = TypeAttr(FunctionType(
        tuple(a.type for a in block.args), tuple(v.type for v in ret.operands)))
    return rebuild(dict(recipe, name=f"{function.name} {kind}",
                        module=print_op(module, generic=True, print_locations=True)))


def _already_reduced(x, axis, keepdims):
    """The chunk step of the tree reduction: each block of partial results is already one
    value along the reduced axes."""
    return x


def _combine(numpy_reduction, x, axis, keepdims, **_):
    return numpy_reduction(x, axis=axis, keepdims=keepdims)


def _mean(count, result_dtype, x, axis, keepdims, **_):
    return np.true_divide(np.sum(x, axis=axis, keepdims=keepdims), count, dtype=result_dtype)
