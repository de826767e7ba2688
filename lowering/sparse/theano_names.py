"""The smaller names of Theano's ``theano.sparse``: its dtype sets and formats, the cast
shorthands (``fcast``, ``dcast``, ...), ``add_s_d``/``mul_s_d``, ``constant``,
``as_sparse_or_tensor_variable``, ``shared`` (the sparse constructor of shared variables),
``sampling_dot``, ``usmm`` and ``ensure_sorted_indices``.

>>> sorted(sparse_formats), "complex64" in all_dtypes, "float32" in float_dtypes
(['csc', 'csr'], True, True)
>>> import numpy as np, scipy.sparse as sp
>>> fcast(constant(sp.csr_matrix(np.eye(2)), name="eye")).dtype
'float32'
"""
from __future__ import annotations

from functools import partial

from lowering.frontend.constructors import as_tensor_variable

from lowering.frontend.linalg import dot as dense_dot
from lowering.frontend.shapes import dimshuffle

from .basic import (SparseVariable, _dense, _is_scipy_sparse, _sparse, add, as_sparse_variable,
                    dot, mul)
from .pairs import _in_format, cast
from .sharedvar import sparse_shared
from .type import FORMATS

sparse_formats = list(FORMATS)
int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
float_dtypes = ["float32", "float64"]
complex_dtypes = ["complex64", "complex128"]
integer_dtypes = int_dtypes + uint_dtypes
continuous_dtypes = complex_dtypes + float_dtypes
discrete_dtypes = int_dtypes + uint_dtypes
all_dtypes = set(integer_dtypes + float_dtypes + complex_dtypes)

bcast, wcast, icast, lcast = (partial(cast, dtype=d) for d in int_dtypes)
fcast, dcast = (partial(cast, dtype=d) for d in float_dtypes)
ccast, zcast = (partial(cast, dtype=d) for d in complex_dtypes)


def constant(x, name: str | None = None) -> SparseVariable:
    """The scipy.sparse matrix ``x`` as a constant (``as_sparse_variable``)."""
    if not _is_scipy_sparse(x):
        raise TypeError(f"sparse.constant: expected a scipy.sparse matrix, got "
                        f"{type(x).__name__}")
    return as_sparse_variable(x, name)


def as_sparse_or_tensor_variable(x, name: str | None = None):
    """``x`` as a sparse variable when it is sparse, else as a dense one."""
    if isinstance(x, SparseVariable) or _is_scipy_sparse(x):
        return as_sparse_variable(x, name)
    return as_tensor_variable(x, name=name)


def add_s_d(x, y):
    """The sparse ``x`` plus the dense matrix ``y``: dense."""
    s = _sparse(x, "add_s_d: the first operand")
    return add(s, _dense(y, s, "add_s_d"))


def mul_s_d(x, y) -> SparseVariable:
    """The sparse ``x`` times the dense matrix ``y``: sparse, ``x``'s structure."""
    s = _sparse(x, "mul_s_d: the first operand")
    return mul(s, _dense(y, s, "mul_s_d"))


def shared(value, name=None, strict=False, allow_downcast=None, borrow=False):
    """A sparse shared variable of the scipy.sparse CSR or CSC matrix ``value`` (Theano's
    ``theano.sparse.shared``)."""
    made = sparse_shared(value, name, strict, allow_downcast, borrow)
    if made is None:
        raise TypeError(f"sparse.shared: expected a scipy.sparse matrix, got "
                        f"{type(value).__name__}")
    return made


def sampling_dot(x, y, p) -> SparseVariable:
    """``p * (x . y^T)`` for dense ``x``, ``y`` and sparse ``p``: sparse, ``p``'s structure
    (the products Theano's ``SamplingDot`` computes)."""
    s = _sparse(p, "sampling_dot: p")
    return mul(s, dense_dot(as_tensor_variable(x), dimshuffle(as_tensor_variable(y), (1, 0))))


def usmm(alpha, x, y, z):
    """``alpha * dot(x, y) + z`` with ``x`` or ``y`` sparse and ``z`` dense: dense."""
    return as_tensor_variable(alpha) * dot(x, y) + as_tensor_variable(z)


def ensure_sorted_indices(x) -> SparseVariable:
    """``x`` with the coordinates of each outer slice in rising order (through the other
    format and back: each conversion is a counting sort)."""
    s = _sparse(x, "ensure_sorted_indices")
    other = "csc" if s.format == "csr" else "csr"
    return _in_format(_in_format(s, other), s.format)


__all__ = ["sparse_formats", "int_dtypes", "uint_dtypes", "float_dtypes", "complex_dtypes",
           "integer_dtypes", "continuous_dtypes", "discrete_dtypes", "all_dtypes", "bcast",
           "wcast", "icast", "lcast", "fcast", "dcast", "ccast", "zcast", "constant",
           "as_sparse_or_tensor_variable", "add_s_d", "mul_s_d", "shared", "sampling_dot", "usmm",
           "ensure_sorted_indices"]
