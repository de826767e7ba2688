"""The sparse variables and operations of Theano's ``theano.sparse`` on the sparse dialect's
ops.

A ``SparseVariable`` is the user's handle on a sparse value of a graph; its operators build
sparse ops: ``s + d`` (dense result), ``s * d`` (sparse, ``s``'s structure), ``s.T``,
``s.toarray()``, ``s.sum(axis)``.

Variables: ``csr_matrix(name, dtype)``, ``csc_matrix``, ``matrix(format, name, dtype)``,
``SparseType(format, dtype)(name)``; ``as_sparse_variable`` turns a scipy.sparse matrix into a
constant. Conversions: ``dense_from_sparse``, ``csr_from_dense``, ``csc_from_dense``,
``transpose``. Arithmetic: ``structured_dot`` and ``dot`` (a dense result), ``add`` (sparse +
dense: dense), ``mul`` (sparse * dense or scalar: sparse with the sparse operand's structure),
``sp_sum``; with two sparse operands they hand over to ``pairs`` (``TWO_SPARSE``).
``theano.function`` takes and returns scipy.sparse matrices for sparse inputs and outputs.

>>> import numpy as np, scipy.sparse as sp
>>> import lowering as theano
>>> x = csr_matrix("x")
>>> w = theano.tensor.dmatrix("w")
>>> f = theano.function([x, w], structured_dot(x, w))
>>> f(sp.csr_matrix(np.array([[0.0, 2.0], [1.0, 0.0]])), np.eye(2)).tolist()
[[0.0, 2.0], [1.0, 0.0]]
"""
from __future__ import annotations

import weakref

import numpy as np

from lowering.compile.sparse_function import takes_without_loss
from lowering.dialects import sparse as ops
from lowering.frontend.build import apply, build_op
from lowering.frontend.constructors import as_tensor_variable, constant
from lowering.frontend.elemwise import cast
from lowering.frontend.shapes import dimshuffle
from lowering.frontend.types import canonical_dtype
from lowering.frontend.variable import TensorVariable
from lowering.ir.core import Value

from .type import FORMATS, SparseType

# -- variables -----------------------------------------------------------------------------------

# The live variable of each sparse value (weak, as the front end's dense variables).
_VARIABLES: "weakref.WeakValueDictionary[Value, SparseVariable]" = weakref.WeakValueDictionary()


def wrap_sparse(value: Value) -> "SparseVariable":
    """The variable of the sparse ``value``: the live one if there is one, else a new one."""
    var = _VARIABLES.get(value)
    return var if var is not None else SparseVariable(value)


class SparseVariable:
    """A symbolic sparse matrix; ``value`` is its IR value (a ``tensor<?x?x..., #csr>``)."""

    __array_ufunc__ = None
    __array_priority__ = 1001

    def __init__(self, value: Value):
        if getattr(value.type, "encoding", None) is None:
            raise TypeError(f"a sparse variable wraps a sparse value, got {value.type}")
        self.value = value
        _VARIABLES[value] = self

    @property
    def type(self) -> SparseType:
        return SparseType.from_ir(self.value.type)

    @property
    def format(self) -> str:
        return self.value.type.encoding.name

    @property
    def dtype(self) -> str:
        return self.value.type.dtype.name

    ndim = 2
    broadcastable = (False, False)

    @property
    def name(self) -> str | None:
        return self.value.name_hint

    @name.setter
    def name(self, name: str | None):
        self.value.name_hint = name

    def __str__(self):
        return self.name or f"<{self.type}>"

    __repr__ = __str__

    def __bool__(self):
        return True

    # -- operators ---------------------------------------------------------------------------

    @property
    def T(self) -> "SparseVariable":
        return transpose(self)

    def toarray(self):
        return dense_from_sparse(self)

    def sum(self, axis=None, sparse_grad: bool = False):
        return sp_sum(self, axis, sparse_grad)

    def __add__(self, other):
        return add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return sub(self, other)

    def __rsub__(self, other):
        return sub(other, self)

    def __mul__(self, other):
        return mul(self, other)

    __rmul__ = __mul__

    def __neg__(self):
        return mul(self, -1)

    def __dot__(self, other):
        return dot(self, other)

    def __rdot__(self, other):
        return dot(other, self)


SparseType.Variable = SparseVariable

# -- constructors --------------------------------------------------------------------------------


def _default_dtype(dtype) -> str:
    from lowering.config import config
    return canonical_dtype(dtype if dtype is not None else config.floatX)


def matrix(format: str, name: str | None = None, dtype=None) -> SparseVariable:
    """A sparse matrix input variable of ``format`` (``'csr'`` or ``'csc'``); ``dtype``
    defaults to ``config.floatX``."""
    return SparseType(format, _default_dtype(dtype))(name)


def csr_matrix(name: str | None = None, dtype=None) -> SparseVariable:
    """A CSR matrix input variable (Theano's ``theano.sparse.csr_matrix``)."""
    return matrix("csr", name, dtype)


def csc_matrix(name: str | None = None, dtype=None) -> SparseVariable:
    """A CSC matrix input variable (Theano's ``theano.sparse.csc_matrix``)."""
    return matrix("csc", name, dtype)


csr_dmatrix, csc_dmatrix = SparseType("csr", "float64"), SparseType("csc", "float64")
csr_fmatrix, csc_fmatrix = SparseType("csr", "float32"), SparseType("csc", "float32")


def _is_sparse_variable(x) -> bool:
    return isinstance(x, SparseVariable)


def _is_scipy_sparse(x) -> bool:
    try:
        import scipy.sparse
    except ImportError:  # pragma: no cover - depends on the installation
        return False
    return scipy.sparse.issparse(x)


def as_sparse_variable(x, name: str | None = None) -> SparseVariable:
    """``x`` as a sparse variable: sparse variables pass through, and a scipy.sparse matrix
    becomes a constant (its storage arrays, assembled in its format: CSR unless it is CSC).

    >>> import numpy as np, scipy.sparse as sp
    >>> c = as_sparse_variable(sp.csc_matrix(np.eye(3)))
    >>> c.format, c.dtype
    ('csc', 'float64')
    """
    if isinstance(x, SparseVariable):
        return x
    if not _is_scipy_sparse(x):
        raise TypeError(f"as_sparse_variable: expected a sparse variable or a scipy.sparse "
                        f"matrix, got {type(x).__name__}")
    import scipy.sparse
    fmt = "csc" if x.format == "csc" else "csr"
    stored = scipy.sparse.csc_matrix(x) if fmt == "csc" else scipy.sparse.csr_matrix(x)
    parts = [constant(np.asarray(stored.indptr, dtype=np.int64)),
             constant(np.asarray(stored.indices, dtype=np.int64)),
             constant(np.asarray(stored.data)),
             constant(np.asarray(stored.shape, dtype=np.int64))]
    result = wrap_sparse(build_op(ops.AssembleOp, *parts, encoding=fmt,
                                  static_shape=stored.shape).result)
    if name is not None:
        result.name = name
    return result


as_sparse = as_sparse_variable


def _sparse(x, what: str) -> SparseVariable:
    if _is_scipy_sparse(x):
        return as_sparse_variable(x)
    if not isinstance(x, SparseVariable):
        raise TypeError(f"{what} must be a sparse variable, got {_describe(x)}")
    return x


def _describe(x) -> str:
    if isinstance(x, TensorVariable):
        return f"the dense {x.type} {x}"
    return type(x).__name__


def _dense(x, like: SparseVariable, what: str, ranks=(2,)) -> TensorVariable:
    """``x`` as a dense variable of ``like``'s dtype (Python numbers and integer tensors are
    cast), of one of ``ranks``."""
    if isinstance(x, SparseVariable) or _is_scipy_sparse(x):
        raise TypeError(f"{what}: expected a dense operand, got a sparse one (the operations "
                        f"of two sparse matrices are add, sub, mul and structured_dot)")
    d = as_tensor_variable(x) if isinstance(x, TensorVariable) else \
        constant(np.asarray(x, dtype=like.dtype))
    if d.ndim not in ranks:
        raise TypeError(f"{what}: the dense operand must have rank "
                        f"{' or '.join(map(str, ranks))}, got {d.type}")
    if d.dtype != like.dtype:
        if not takes_without_loss(like.dtype, d.dtype):
            raise TypeError(f"{what}: the dense operand's dtype {d.dtype} does not fit the "
                            f"sparse operand's {like.dtype}; cast one of them")
        d = cast(d, like.dtype)
    return d


# -- conversions ---------------------------------------------------------------------------------


def dense_from_sparse(x) -> TensorVariable:
    """The dense matrix of the sparse ``x``."""
    return apply(ops.ToDenseOp, _sparse(x, "dense_from_sparse").value)


def _from_dense(x, format: str) -> SparseVariable:
    d = as_tensor_variable(x)
    return wrap_sparse(build_op(ops.FromDenseOp, d, encoding=format).result)


def csr_from_dense(x) -> SparseVariable:
    """The nonzero entries of the dense matrix ``x`` as a CSR matrix."""
    return _from_dense(x, "csr")


def csc_from_dense(x) -> SparseVariable:
    """The nonzero entries of the dense matrix ``x`` as a CSC matrix."""
    return _from_dense(x, "csc")


def transpose(x) -> SparseVariable:
    """The transpose of the sparse ``x`` (a CSR matrix gives a CSC one, and back)."""
    return wrap_sparse(build_op(ops.TransposeOp, _sparse(x, "transpose").value).result)


# -- arithmetic ----------------------------------------------------------------------------------


# The operations of two sparse operands, by name: ``pairs`` (which builds on this module) fills
# it when ``theano.sparse`` loads.
TWO_SPARSE: dict = {}


def _both_sparse(x, y) -> bool:
    return all(isinstance(v, SparseVariable) or _is_scipy_sparse(v) for v in (x, y))


def structured_dot(x, y) -> TensorVariable:
    """The product of the sparse matrix ``x`` and the dense matrix or vector ``y``, dense (of
    two sparse matrices: sparse, ``x``'s format)."""
    if _both_sparse(x, y):
        return TWO_SPARSE["structured_dot"](x, y)
    s = _sparse(x, "structured_dot: the first operand")
    return apply(ops.MatmulOp, s.value, _dense(y, s, "structured_dot", ranks=(1, 2)))


def dot(x, y) -> TensorVariable:
    """The product of ``x`` and ``y``, one of them sparse at least, the other a dense matrix
    (or vector) or sparse; the result is dense."""
    x_sparse = isinstance(x, SparseVariable) or _is_scipy_sparse(x)
    y_sparse = isinstance(y, SparseVariable) or _is_scipy_sparse(y)
    if x_sparse and y_sparse:
        return TWO_SPARSE["dot"](x, y)
    if x_sparse:
        return structured_dot(x, y)
    if not y_sparse:
        raise TypeError(f"dot: one operand must be sparse (got {_describe(x)} and "
                        f"{_describe(y)}); use theano.tensor.dot for dense ones")
    s = _sparse(y, "dot")
    d = _dense(x, s, "dot", ranks=(1, 2))
    # x . s = (s.T . x.T).T
    if d.ndim == 1:
        return structured_dot(transpose(s), d)
    return dimshuffle(structured_dot(transpose(s), dimshuffle(d, (1, 0))), (1, 0))


def add(x, y) -> TensorVariable:
    """``x + y`` of a sparse and a dense matrix (either order): a dense matrix; of two sparse
    matrices: sparse, ``x``'s format."""
    if _both_sparse(x, y):
        return TWO_SPARSE["add"](x, y)
    if not isinstance(x, SparseVariable) and not _is_scipy_sparse(x):
        x, y = y, x
    s = _sparse(x, "add")
    return apply(ops.AddDenseOp, s.value, _dense(y, s, "add"))


def sub(x, y) -> TensorVariable:
    """``x - y`` of a sparse and a dense matrix (either order): a dense matrix; of two sparse
    matrices: sparse, ``x``'s format."""
    if _both_sparse(x, y):
        return TWO_SPARSE["sub"](x, y)
    if isinstance(x, SparseVariable) or _is_scipy_sparse(x):
        s = _sparse(x, "sub")
        return add(s, -_dense(y, s, "sub"))
    s = _sparse(y, "sub")
    return add(mul(s, -1), _dense(x, s, "sub"))


def mul(x, y) -> SparseVariable:
    """``x * y`` of a sparse matrix and a dense matrix or a scalar (either order): sparse,
    with the sparse operand's structure; of two sparse matrices: sparse, ``x``'s format,
    storing the places both store."""
    if _both_sparse(x, y):
        return TWO_SPARSE["mul"](x, y)
    if not isinstance(x, SparseVariable) and not _is_scipy_sparse(x):
        x, y = y, x
    s = _sparse(x, "mul")
    d = _dense(y, s, "mul", ranks=(0, 2))
    if d.ndim == 0:
        d = dimshuffle(d, ("x", "x"))
    return wrap_sparse(build_op(ops.MulDenseOp, s.value, d).result)


def sp_sum(x, axis=None, sparse_grad: bool = False) -> TensorVariable:
    """The sum of the entries of the sparse ``x``: all of them (``axis=None``), or along
    ``axis`` 0 or 1 (``-1`` and ``-2`` count from the end); dense. The gradient is structured
    (nonzero only where ``x`` stores an entry) whatever ``sparse_grad`` says."""
    if axis is not None:
        if axis not in (-2, -1, 0, 1):
            raise ValueError(f"sp_sum: axis must be None, 0 or 1, got {axis}")
        axis %= 2
    return apply(ops.SumOp, _sparse(x, "sp_sum").value, axis=axis)


__all__ = ["SparseType", "SparseVariable", "wrap_sparse", "FORMATS", "matrix", "csr_matrix", "csc_matrix",
           "csr_dmatrix", "csc_dmatrix", "csr_fmatrix", "csc_fmatrix", "as_sparse_variable",
           "as_sparse", "dense_from_sparse", "csr_from_dense", "csc_from_dense", "transpose",
           "structured_dot", "dot", "add", "sub", "mul", "sp_sum", "_is_sparse_variable"]
