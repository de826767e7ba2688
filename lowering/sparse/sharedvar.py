"""Sparse shared variables: ``theano.shared(scipy.sparse.csr_matrix(...))`` (Theano's
``SparseTensorSharedVariable``).

The matrix lives in four dense shared variables, its positions (``indptr``), coordinates
(``indices``), values (``data``) and shape (``sparse_storage``); the variable is the
``sparse.assemble`` of them, so graphs read it as any sparse value, and ``function()`` turns an
update of it into updates of the four (a ``sparse.disassemble`` of the new value, which must
have the variable's format and dtype). ``get_value``/``set_value`` take and give scipy.sparse
matrices.

>>> import numpy as np, scipy.sparse as sp
>>> import lowering as theano
>>> w = theano.shared(sp.csr_matrix(np.array([[0.0, 2.0], [1.0, 0.0]])), name="w")
>>> w.type, w.get_value().toarray().tolist()
(Sparse[float64, csr], [[0.0, 2.0], [1.0, 0.0]])
>>> step = theano.function([], [], updates=[(w, w * 2.0)])
>>> _ = step(); w.get_value().toarray().tolist()
[[0.0, 4.0], [2.0, 0.0]]
"""
from __future__ import annotations

import numpy as np

from lowering.compile.sparse_function import sparse_matrix, storage_arrays
from lowering.dialects import sparse as ops
from lowering.dialects.sparse.interpret import scipy_sparse
from lowering.frontend.constructors import as_tensor_variable
from lowering.frontend.shared import SHARED_CONSTRUCTORS, shared

from .basic import SparseVariable
from .type import SparseType

_PARTS = ("indptr", "indices", "data", "shape")


class SparseSharedVariable(SparseVariable):
    """A sparse matrix kept between calls; ``sparse_storage`` are the dense shared variables
    holding its positions, coordinates, values and shape."""

    def __init__(self, matrix, name: str | None = None, strict: bool = False,
                 allow_downcast: bool | None = None, borrow: bool = False):
        format = matrix.format
        arrays = storage_arrays(matrix, SparseType(format, matrix.dtype).ir_type, "shared()")
        if not borrow:
            arrays = [a.copy() for a in arrays]
        label = name or "sparse"
        self.sparse_storage = tuple(
            shared(a, name=f"{label}.{part}", borrow=True, target="cpu",
                   strict=strict if part == "data" else False,
                   allow_downcast=allow_downcast if part == "data" else None)
            for a, part in zip(arrays, _PARTS))
        positions, coordinates, values, shape = self.sparse_storage
        # The shape's two entries, as a vector of static length (what assemble takes).
        sizes = as_tensor_variable([shape[0], shape[1]])
        super().__init__(ops.AssembleOp.build(positions.value, coordinates.value, values.value,
                                              sizes.value, format).result)
        self.name = name

    def get_value(self, borrow: bool = False, return_internal_type: bool = False):
        """The matrix (a copy unless ``borrow``), of the variable's format."""
        arrays = [v.get_value(borrow=borrow) for v in self.sparse_storage]
        return sparse_matrix(*arrays, self.value.type)

    def set_value(self, matrix, borrow: bool = False) -> None:
        """Store ``matrix`` (any scipy.sparse matrix: converted to the variable's format; its
        dtype must fit the variable's without losing precision)."""
        arrays = storage_arrays(matrix, self.value.type, "set_value")
        for variable, array in zip(self.sparse_storage, arrays):
            variable.set_value(array if borrow else np.array(array), borrow=True)


def sparse_shared(value, name=None, strict=False, allow_downcast=None, borrow=False):
    """A ``SparseSharedVariable`` for a scipy.sparse CSR or CSC matrix, else None (the
    constructor ``theano.shared`` tries)."""
    try:
        sp = scipy_sparse()
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    if not sp.issparse(value):
        return None
    if value.format not in ("csr", "csc"):
        raise TypeError(f"shared(): sparse shared variables are CSR or CSC matrices, got a "
                        f"{value.format} matrix; convert it with .tocsr() or .tocsc()")
    return SparseSharedVariable(value, name, strict, allow_downcast, borrow)


SHARED_CONSTRUCTORS.append(sparse_shared)

# Theano's names: the class, and the constructor registered with ``theano.shared``.
SparseTensorSharedVariable = SparseSharedVariable
sparse_constructor = sparse_shared

__all__ = ["SparseSharedVariable", "SparseTensorSharedVariable", "sparse_shared"]
