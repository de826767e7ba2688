"""Products: ``dot`` (NumPy's semantics) and ``outer``.

``tensor.dot`` covers ranks 1 and 2 (vector·vector, gemv, gemm shapes); a scalar operand makes an
elementwise product, and a left operand of higher rank is flattened to a matrix around the product,
as NumPy's ``dot`` contracts its last dim.

>>> from lowering.frontend.constructors import fmatrix, fvector, tensor3, matrix
>>> str(dot(fmatrix(), fvector()).type), dot(tensor3(), matrix()).ndim
('TensorType(float32, vector)', 3)
"""
from __future__ import annotations

from lowering.dialects.tensor import DotOp

from .build import apply
from .constructors import as_tensor_variable
from .elemwise import cast, common_dtype, mul
from .shapes import dimshuffle, flatten, reshape, shape_i
from .variable import TensorVariable


def dot(a, b) -> TensorVariable:
    """The NumPy dot product of ``a`` and ``b`` (operands are promoted to one dtype). A sparse
    operand (a variable with its own ``__dot__``, as ``theano.sparse``'s) computes its product
    itself, as in Theano."""
    for x, y, method in ((a, b, "__dot__"), (b, a, "__rdot__")):
        if not isinstance(x, TensorVariable) and hasattr(type(x), method):
            return getattr(x, method)(y)
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if b.ndim > 2:  # NumPy's and Theano's: a's last axis against b's second to last
        from .tensordot import tensordot  # a dot between reshapes, built on this one
        return tensordot(a, b, [[a.ndim - 1], [b.ndim - 2]])
    dtype = common_dtype(a, b)
    a_, b_ = cast(a, dtype), cast(b, dtype)
    if a.ndim <= 2:
        return apply(DotOp, a_, b_, named=[a, b])
    # (d0, ..., k) . (k[, m]): a matrix product on (d0 * ..., k), then the leading dims back.
    # The row count is the product of the leading sizes, not -1, which is ambiguous when k == 0.
    lead = [shape_i(a_, d) for d in range(a.ndim - 1)]
    rows = lead[0]
    for size in lead[1:]:
        rows = rows * size
    product = apply(DotOp, reshape(a_, (rows, shape_i(a_, -1))), b_, named=[a, b])
    return reshape(product, lead + ([shape_i(b_, 1)] if b.ndim == 2 else []))


def outer(x, y) -> TensorVariable:
    """The outer product of two vectors (higher ranks are flattened first, as NumPy's)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    x = flatten(x) if x.ndim != 1 else x
    y = flatten(y) if y.ndim != 1 else y
    return mul(dimshuffle(x, (0, "x")), dimshuffle(y, ("x", 0)))
