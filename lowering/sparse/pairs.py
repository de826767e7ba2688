"""Operations on two sparse matrices (Theano's ``add_s_s``, ``mul_s_s``, the sparse results of
``structured_dot`` and ``true_dot``), and ``cast`` of a sparse matrix.

The result has the first operand's format (the second is converted when the formats differ)
and the dtype both operands upcast to. ``add`` stores every place either operand stores,
``mul`` the places both store; ``structured_dot(a, b)`` of two sparse matrices is sparse, and
``dot`` of two sparse matrices dense, as Theano's.

>>> import numpy as np, scipy.sparse as sp
>>> import lowering as theano
>>> a, b = theano.sparse.csr_matrix("a"), theano.sparse.csc_matrix("b")
>>> f = theano.function([a, b], add_s_s(a, b))
>>> m = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
>>> r = f(m, sp.csc_matrix(np.array([[0.0, 3.0], [0.0, 4.0]])))
>>> r.format, r.toarray().tolist()
('csr', [[1.0, 3.0], [0.0, 6.0]])
"""
from __future__ import annotations

import numpy as np

from lowering.dialects import sparse as ops
from lowering.frontend.build import build_op
from lowering.frontend.elemwise import cast as dense_cast
from lowering.frontend.shapes import dimshuffle

from .basic import (TWO_SPARSE, SparseVariable, _from_dense, _is_scipy_sparse, _sparse,
                    dense_from_sparse, structured_dot, transpose, wrap_sparse)
from .structured import neg, stored_values, with_values


def cast(x, dtype) -> SparseVariable:
    """The sparse ``x`` with its values cast to ``dtype`` (same structure)."""
    s = _sparse(x, "cast")
    if np.dtype(dtype).name == s.dtype:
        return s
    return with_values(s, dense_cast(stored_values(s), np.dtype(dtype).name))


def _upcast(x, y, what: str) -> tuple[SparseVariable, SparseVariable]:
    a, b = _sparse(x, f"{what}: the first operand"), _sparse(y, f"{what}: the second operand")
    dtype = np.result_type(a.dtype, b.dtype).name
    return cast(a, dtype), cast(b, dtype)


def add_s_s(x, y) -> SparseVariable:
    """``x + y`` of two sparse matrices of one shape: sparse, ``x``'s format."""
    a, b = _upcast(x, y, "add")
    if ops.same_structure(a.value, b.value):  # values that line up: add them as they are
        return with_values(a, stored_values(a) + stored_values(b))
    return wrap_sparse(build_op(ops.AddSparseOp, a.value, _in_format(b, a.format).value).result)


def sub_s_s(x, y) -> SparseVariable:
    """``x - y`` of two sparse matrices of one shape: sparse, ``x``'s format."""
    return add_s_s(x, neg(_sparse(y, "sub: the second operand")))


def mul_s_s(x, y) -> SparseVariable:
    """``x * y`` entry by entry of two sparse matrices of one shape: sparse, ``x``'s format,
    storing the places both store."""
    a, b = _upcast(x, y, "mul")
    return wrap_sparse(build_op(ops.MulSparseOp, a.value, _in_format(b, a.format).value).result)


def _in_format(s: SparseVariable, format: str) -> SparseVariable:
    if s.format == format:
        return s
    return wrap_sparse(build_op(ops.ConvertOp, s.value, encoding=format).result)


def structured_dot_s_s(x, y) -> SparseVariable:
    """The product of two sparse matrices: sparse, ``x``'s format."""
    a, b = _upcast(x, y, "structured_dot")
    product = wrap_sparse(build_op(ops.SpmmOp, _in_format(a, "csr").value,
                                   _in_format(b, "csr").value).result)
    return _in_format(product, a.format)


def dot_s_s(x, y):
    """The product of two sparse matrices, dense (Theano's ``dot``)."""
    return dense_from_sparse(structured_dot_s_s(x, y))


def true_dot(x, y, grad_preserves_dense: bool = True) -> SparseVariable:
    """The product of ``x`` and ``y``, one of them sparse at least: sparse (CSC when the
    sparse left operand is CSC, else CSR; with a dense left operand, the transpose of
    ``true_dot(y.T, x.T)``). ``grad_preserves_dense`` is accepted for Theano's signature (it
    only chose how Theano computed the gradient)."""
    x_sparse = isinstance(x, SparseVariable) or _is_scipy_sparse(x)
    y_sparse = isinstance(y, SparseVariable) or _is_scipy_sparse(y)
    if not (x_sparse or y_sparse):
        raise TypeError("true_dot: one operand at least must be sparse")
    if not x_sparse:
        return transpose(true_dot(_sparse(y, "true_dot").T, dimshuffle(x, (1, 0))))
    a = _sparse(x, "true_dot: the first operand")
    if y_sparse:
        return structured_dot_s_s(a, y)
    return _from_dense(structured_dot(a, y), a.format)


def _stack(blocks, format, dtype, axis: int, name: str) -> SparseVariable:
    blocks = [_sparse(b, f"{name}: block #{i}") for i, b in enumerate(blocks)]
    if not blocks:
        raise ValueError(f"{name}: cannot join an empty list of sparse matrices")
    format = "csc" if format is None else format
    if format not in ("csr", "csc"):
        raise ValueError(f"{name}: format must be 'csr' or 'csc', got {format!r}")
    dtype = np.result_type(*(b.dtype for b in blocks)).name if dtype is None else \
        np.dtype(dtype).name
    storage_format = "csr" if axis == 0 else "csc"  # joined along the outer dimension
    joined = build_op(ops.ConcatOp, *(_in_format(cast(b, dtype), storage_format).value
                                     for b in blocks), axis=axis)
    return _in_format(wrap_sparse(joined.result), format)


def hstack(blocks, format=None, dtype=None) -> SparseVariable:
    """The sparse matrices ``blocks`` side by side (scipy.sparse's ``hstack``): sparse, of
    ``format`` (CSC by default, as Theano's) and ``dtype`` (the blocks' upcast by default)."""
    return _stack(blocks, format, dtype, 1, "hstack")


def vstack(blocks, format=None, dtype=None) -> SparseVariable:
    """The sparse matrices ``blocks`` one above the other (scipy.sparse's ``vstack``)."""
    return _stack(blocks, format, dtype, 0, "vstack")


TWO_SPARSE.update(add=add_s_s, sub=sub_s_s, mul=mul_s_s, dot=dot_s_s,
                  structured_dot=structured_dot_s_s)

__all__ = ["hstack", "vstack", "cast", "add_s_s", "sub_s_s", "mul_s_s", "structured_dot_s_s", "dot_s_s",
           "true_dot"]
