"""Window functions: Theano's ``T.extra_ops.bartlett``.

>>> import lowering.tensor as T
>>> bartlett(5).eval()
array([0. , 0.5, 1. , 0.5, 0. ])
"""
from __future__ import annotations

from .constructors import as_tensor_variable
from .elemwise import abs as abs_, cast, eq, switch
from .errors import GraphTypeError
from .shapes import arange
from .variable import TensorVariable


def bartlett(M) -> TensorVariable:
    """The Bartlett (triangular) window of ``M`` points (an integer scalar, symbolic or not),
    as NumPy's ``bartlett``: a float64 vector, empty for ``M < 1``."""
    M = as_tensor_variable(M)
    if M.ndim != 0:
        raise GraphTypeError(f"bartlett only works on a scalar, got {M} of rank {M.ndim}")
    if not M.dtype.startswith(("int", "uint")):
        raise GraphTypeError(f"bartlett only works on an integer, got {M} of type {M.type}")
    M = cast(M, "int64")
    n = cast(arange(1 - M, M, 2), "float64")
    width = cast(M - 1, "float64")
    return switch(eq(M, 1), 1.0, 1.0 - abs_(n) / switch(eq(M, 1), 1.0, width))
