"""A sparse matrix's storage as symbolic variables, and a sparse matrix built from it
(Theano's ``csm_properties``, ``CSR``, ``CSC`` and ``csm_data``/``indices``/``indptr``/``shape``).

``csm_properties(x)`` gives ``(data, indices, indptr, shape)``: the stored values, their inner
coordinates (columns of a CSR matrix, rows of a CSC one), the positions where each outer slice
starts, and ``(rows, columns)``; the integer ones are int64. ``CSR(data, indices, indptr,
shape)`` and ``CSC(...)`` read such arrays as a matrix of that format. The gradient flows to
``data`` both ways, as Theano's: the gradient of ``CSR(data, ...)`` with respect to ``data``
is the result's gradient at the stored places.

>>> import numpy as np, scipy.sparse as sp
>>> import lowering as theano
>>> x = theano.sparse.csc_matrix("x", dtype="int64")
>>> data, indices, indptr, shape = csm_properties(x)
>>> f = theano.function([x], CSR(data, indices, indptr, shape))
>>> f(sp.csc_matrix(np.array([[0, 1, 1], [0, 0, 0], [1, 0, 0]]))).toarray().tolist()
[[0, 0, 1], [1, 0, 0], [1, 0, 0]]
"""
from __future__ import annotations

import numpy as np

from lowering.dialects import sparse as ops
from lowering.frontend.build import build_op
from lowering.frontend.constructors import as_tensor_variable
from lowering.frontend.elemwise import cast
from lowering.frontend.variable import TensorVariable, wrap

from .basic import SparseVariable, _sparse, wrap_sparse


def csm_properties(x) -> tuple[TensorVariable, TensorVariable, TensorVariable, TensorVariable]:
    """``(data, indices, indptr, shape)`` of the sparse ``x`` (see the module docstring)."""
    parts = build_op(ops.DisassembleOp, _sparse(x, "csm_properties").value)
    positions, coordinates, values, shape = (wrap(r) for r in parts.results)
    return values, coordinates, positions, shape


def csm_data(x) -> TensorVariable:
    """The stored values of the sparse ``x``."""
    return csm_properties(x)[0]


def csm_indices(x) -> TensorVariable:
    """The inner coordinate of each stored value of ``x`` (its column in a CSR matrix)."""
    return csm_properties(x)[1]


def csm_indptr(x) -> TensorVariable:
    """Where each outer slice's entries start in ``csm_data(x)`` (one more than the slices)."""
    return csm_properties(x)[2]


def csm_shape(x) -> TensorVariable:
    """``(rows, columns)`` of ``x``, int64."""
    return csm_properties(x)[3]


def _index_vector(v, what: str, length: int | None = None) -> TensorVariable:
    t = as_tensor_variable(v if isinstance(v, TensorVariable) else np.asarray(v))
    if t.ndim != 1:
        raise TypeError(f"{what} must be a vector, got {t.type}")
    if not t.dtype.startswith(("int", "uint")):
        raise TypeError(f"{what} must hold integers, got {t.dtype}")
    if length is not None and t.type.shape[0] not in (None, length):
        raise ValueError(f"{what} must have {length} entries, got {t.type.shape[0]}")
    return cast(t, "int64") if t.dtype != "int64" else t


def _static_shape(shape) -> tuple:
    """The sizes known when building: those of a constant or literal ``shape``."""
    if isinstance(shape, TensorVariable):
        return (None, None)
    sizes = np.asarray(shape).reshape(-1)
    return tuple(int(n) for n in sizes) if sizes.shape == (2,) else (None, None)


def _assemble(format: str, data, indices, indptr, shape) -> SparseVariable:
    values = as_tensor_variable(data)
    if values.ndim != 1:
        raise TypeError(f"{format.upper()}: data must be a vector, got {values.type}")
    if values.dtype == "bool":
        raise TypeError(f"{format.upper()}: data must hold numbers, not booleans")
    return wrap_sparse(build_op(
        ops.AssembleOp, _index_vector(indptr, f"{format.upper()}: indptr"),
        _index_vector(indices, f"{format.upper()}: indices"), values,
        _index_vector(shape, f"{format.upper()}: shape", 2), encoding=format,
        static_shape=_static_shape(shape)).result)


def CSR(data, indices, indptr, shape) -> SparseVariable:
    """The CSR matrix of ``shape`` whose row ``i`` stores ``data[indptr[i]:indptr[i + 1]]`` at
    the columns ``indices[indptr[i]:indptr[i + 1]]`` (the arrays are checked when it runs)."""
    return _assemble("csr", data, indices, indptr, shape)


def CSC(data, indices, indptr, shape) -> SparseVariable:
    """The CSC matrix of ``shape`` whose column ``j`` stores ``data[indptr[j]:indptr[j + 1]]``
    at the rows ``indices[indptr[j]:indptr[j + 1]]``."""
    return _assemble("csc", data, indices, indptr, shape)


def CSM(format: str):
    """``CSR`` or ``CSC`` by name (Theano's ``CSM(format)`` op, called on the four parts)."""
    if format not in ("csr", "csc"):
        raise ValueError(f"CSM: format must be 'csr' or 'csc', got {format!r}")
    return CSR if format == "csr" else CSC


__all__ = ["csm_properties", "csm_data", "csm_indices", "csm_indptr", "csm_shape", "CSR", "CSC",
           "CSM"]
