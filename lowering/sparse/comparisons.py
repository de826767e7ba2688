"""Comparisons with a sparse operand (Theano's ``eq``, ``neq``, ``lt``, ``gt``, ``le``,
``ge``): uint8 ones where the comparison holds, as Theano's.

Two sparse operands (one format) give a sparse matrix of their format; a sparse and a dense
operand (either order) a dense matrix. The comparison covers every entry, the places neither
operand stores included (``eq`` of two sparse matrices is 1 where both are empty), so it is
computed on the dense matrices: ``eq``, ``le`` and ``ge`` of sparse matrices are dense in
nature.

>>> import numpy as np, scipy.sparse as sp
>>> import lowering as theano
>>> x, y = theano.sparse.csr_matrix("x"), theano.sparse.csr_matrix("y")
>>> f = theano.function([x, y], lt(x, y))
>>> r = f(sp.csr_matrix(np.array([[1.0, 0.0]])), sp.csr_matrix(np.array([[2.0, -1.0]])))
>>> r.format, r.dtype.name, r.toarray().tolist()
('csr', 'uint8', [[1, 0]])
"""
from __future__ import annotations

from lowering.frontend import elemwise as E
from lowering.frontend.constructors import as_tensor_variable
from lowering.frontend.elemwise import cast

from .basic import SparseVariable, _from_dense, _is_scipy_sparse, _sparse, dense_from_sparse


def _comparison(tensor_op, name: str):
    def compare(x, y):
        x_sparse = isinstance(x, SparseVariable) or _is_scipy_sparse(x)
        y_sparse = isinstance(y, SparseVariable) or _is_scipy_sparse(y)
        if not (x_sparse or y_sparse):
            raise TypeError(f"{name}: one operand at least must be sparse; use "
                            f"theano.tensor.{name} for dense ones")
        a = dense_from_sparse(_sparse(x, name)) if x_sparse else as_tensor_variable(x)
        b = dense_from_sparse(_sparse(y, name)) if y_sparse else as_tensor_variable(y)
        for what, operand in (("first", a), ("second", b)):
            if operand.ndim != 2:
                raise TypeError(f"{name}: the {what} operand must be a matrix, got "
                                f"{operand.type}")
        if x_sparse and y_sparse and _sparse(x, name).format != _sparse(y, name).format:
            raise TypeError(f"{name}: the sparse operands must have one format, got "
                            f"{_sparse(x, name).format} and {_sparse(y, name).format}")
        result = cast(tensor_op(a, b), "uint8")
        return _from_dense(result, _sparse(x, name).format) if x_sparse and y_sparse \
            else result

    compare.__name__ = name
    compare.__doc__ = (f"``{name}(x, y)`` entry by entry, uint8: sparse for two sparse "
                       f"operands, else dense.")
    return compare


eq = _comparison(E.eq, "eq")
neq = _comparison(E.neq, "neq")
lt = _comparison(E.lt, "lt")
gt = _comparison(E.gt, "gt")
le = _comparison(E.le, "le")
ge = _comparison(E.ge, "ge")

__all__ = ["eq", "neq", "lt", "gt", "le", "ge"]
