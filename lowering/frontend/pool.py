"""``T.signal.pool.pool_2d``: Theano's pooling over the last two dimensions
(``theano.tensor.signal.pool.pool_2d``), on the tensor dialect's ``tensor.pool2d``.

>>> from lowering.frontend.constructors import tensor4
>>> pool_2d(tensor4("x"), ws=(2, 2), ignore_border=True).ndim
4
"""
from __future__ import annotations

import warnings

from lowering.dialects.tensor import Pool2dOp

from .build import apply
from .constructors import as_tensor_variable
from .conv import pair
from .errors import GraphBuildError
from .variable import TensorVariable


def _deprecated(new, old, new_name: str, old_name: str, default=None):
    """Theano's deprecated parameter ``old_name``: used (with a warning) when ``new_name`` is
    not given, an error when both are."""
    if old is None:
        return new
    if new is not None and new != default:
        raise GraphBuildError(f"pool_2d: give {new_name} or {old_name} (its deprecated name), "
                              f"not both")
    warnings.warn(f"DEPRECATION: the '{old_name}' parameter is replaced by '{new_name}'",
                  DeprecationWarning, stacklevel=3)
    return old


def pool_2d(input, ws=None, ignore_border=None, stride=None, pad=(0, 0), mode="max", ds=None,
            st=None, padding=None) -> TensorVariable:
    """Pool windows ``ws`` of the last two dimensions of ``input``, moving by ``stride``
    (default ``ws``) over it padded by ``pad``: ``mode`` ``'max'``, ``'sum'``,
    ``'average_inc_pad'`` (the padding counts in the average) or ``'average_exc_pad'``
    (``'average'`` is this one too). Without ``ignore_border`` the last partial windows count;
    left out, it is False with Theano's warning. ``ds``, ``st`` and ``padding`` are the old
    names of ``ws``, ``stride`` and ``pad``."""
    ws = _deprecated(ws, ds, "ws", "ds")
    stride = _deprecated(stride, st, "stride", "st")
    pad = _deprecated(None if pad is None else tuple(pad), padding, "pad", "padding", (0, 0))
    if ws is None:
        raise GraphBuildError("pool_2d: ws (the window's size) is required")
    if ignore_border is None:
        warnings.warn("pool_2d: ignore_border was not given; it is False, as in Theano (its "
                      "default will change to True)", stacklevel=2)
        ignore_border = False
    if mode == "average":
        mode = "average_exc_pad"
    if mode not in ("max", "sum", "average_inc_pad", "average_exc_pad"):
        raise GraphBuildError(f"pool_2d: mode must be 'max', 'sum', 'average_inc_pad' or "
                              f"'average_exc_pad', got {mode!r}")
    x = as_tensor_variable(input)
    if x.ndim < 2:
        raise GraphBuildError(f"pool_2d: input must have 2 or more dimensions, got {x} of rank "
                              f"{x.ndim}")
    ws = pair(ws, "pool_2d: ws")
    stride = ws if stride is None else pair(stride, "pool_2d: stride")
    pad = pair(pad, "pool_2d: pad")
    if any(pad) and not ignore_border:
        raise GraphBuildError(f"pool_2d: pad={pad} needs ignore_border=True")
    if any(p >= w for p, w in zip(pad, ws)):
        raise GraphBuildError(f"pool_2d: pad={pad} must be smaller than ws={ws}")
    return apply(Pool2dOp, x, ws=ws, stride=stride, pad=pad, ignore_border=bool(ignore_border),
                 mode=mode)
