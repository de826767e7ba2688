"""Structured elementwise functions of sparse matrices: a function of the stored values only,
keeping the structure (Theano's ``structured_monoid`` functions, ``structured_add_s_v``,
``mul_s_v``, ``row_scale``, ``col_scale``, ``sp_ones_like``, ``sp_zeros_like``).

Each takes the values out of the sparse operand (``sparse.disassemble``), applies the dense
function to them, and puts them back over the same positions and coordinates
(``sparse.assemble``), as Theano's ``structured_monoid`` does with ``csm_properties`` and
``CSM``; so the places where nothing is stored stay empty (``structured_exp`` does not make
them 1), and gradients flow to the stored values (structured gradients).

>>> import numpy as np, scipy.sparse as sp
>>> import lowering as theano
>>> x = theano.sparse.csc_matrix("x", dtype="float32")
>>> f = theano.function([x], structured_add(x, 2))
>>> a = sp.csc_matrix(np.array([[0, 0, -1], [0, -2, 1], [3, 0, 0]], dtype="float32"))
>>> f(a).toarray().tolist()
[[0.0, 0.0, 1.0], [0.0, 0.0, 3.0], [5.0, 0.0, 0.0]]
"""
from __future__ import annotations

import math

import numpy as np

from lowering.dialects import sparse as ops
from lowering.frontend import elemwise as E
from lowering.frontend.build import build_op
from lowering.frontend.complex_numbers import conj as _conj
from lowering.frontend.constructors import as_tensor_variable, constant
from lowering.frontend.shapes import dimshuffle, ones_like, zeros_like
from lowering.frontend.variable import TensorVariable, wrap

from .basic import SparseVariable, _dense, _sparse, mul, wrap_sparse


def with_values(x: SparseVariable, values: TensorVariable) -> SparseVariable:
    """A sparse matrix with ``x``'s structure holding ``values`` (one per stored entry of
    ``x``, in storage order)."""
    parts = build_op(ops.DisassembleOp, x.value)
    t = x.value.type
    return wrap_sparse(build_op(ops.AssembleOp, wrap(parts.positions), wrap(parts.coordinates),
                                values, wrap(parts.shape), encoding=t.encoding.name,
                                static_shape=t.shape).result)


def stored_values(x: SparseVariable) -> TensorVariable:
    """The values ``x`` stores, in storage order."""
    return wrap(build_op(ops.DisassembleOp, x.value).values)


def _scalar(v, name: str, what: str) -> TensorVariable:
    t = as_tensor_variable(v) if isinstance(v, TensorVariable) else constant(np.asarray(v))
    if t.ndim != 0:
        raise TypeError(f"{name}: {what} must be a scalar (as Theano's structured functions "
                        f"take), got {t.type}")
    return t


def structured_monoid(tensor_op, name: str | None = None):
    """The structured version of the dense elementwise ``tensor_op``: ``f(x, *scalars)``
    applies ``tensor_op(values, *scalars)`` to the values ``x`` stores (Theano's
    ``structured_monoid``)."""
    label = name or getattr(tensor_op, "__name__", "structured")

    def apply_to_values(x, *args):
        s = _sparse(x, label)
        scalars = [_scalar(a, label, f"argument #{i + 1}") for i, a in enumerate(args)]
        return with_values(s, tensor_op(stored_values(s), *scalars))

    apply_to_values.__name__ = label
    apply_to_values.__doc__ = (f"``{label}`` of the stored values of a sparse matrix, keeping "
                               f"its structure.")
    return apply_to_values


def _deg2rad(v):
    return v * (math.pi / 180.0)


def _rad2deg(v):
    return v * (180.0 / math.pi)


structured_sigmoid = structured_monoid(E.sigmoid, "structured_sigmoid")
structured_exp = structured_monoid(E.exp, "structured_exp")
structured_log = structured_monoid(E.log, "structured_log")
structured_pow = structured_monoid(E.pow, "structured_pow")
structured_minimum = structured_monoid(E.minimum, "structured_minimum")
structured_maximum = structured_monoid(E.maximum, "structured_maximum")
structured_add = structured_monoid(E.add, "structured_add")
sin = structured_monoid(E.sin, "sin")
tan = structured_monoid(E.tan, "tan")
arcsin = structured_monoid(E.arcsin, "arcsin")
arctan = structured_monoid(E.arctan, "arctan")
sinh = structured_monoid(E.sinh, "sinh")
arcsinh = structured_monoid(E.arcsinh, "arcsinh")
tanh = structured_monoid(E.tanh, "tanh")
arctanh = structured_monoid(E.arctanh, "arctanh")
rint = structured_monoid(E.round_half_to_even, "rint")
sgn = structured_monoid(E.sgn, "sgn")
ceil = structured_monoid(E.ceil, "ceil")
floor = structured_monoid(E.floor, "floor")
log1p = structured_monoid(E.log1p, "log1p")
expm1 = structured_monoid(E.expm1, "expm1")
deg2rad = structured_monoid(_deg2rad, "deg2rad")
rad2deg = structured_monoid(_rad2deg, "rad2deg")
trunc = structured_monoid(E.trunc, "trunc")
sqr = structured_monoid(E.sqr, "sqr")
sqrt = structured_monoid(E.sqrt, "sqrt")
conj = structured_monoid(_conj, "conj")
abs_ = structured_monoid(E.abs_, "abs_")
neg = structured_monoid(E.neg, "neg")


def sp_ones_like(x) -> SparseVariable:
    """A sparse matrix with ``x``'s structure storing ones."""
    s = _sparse(x, "sp_ones_like")
    return with_values(s, ones_like(stored_values(s)))


def sp_zeros_like(x) -> SparseVariable:
    """A sparse matrix of ``x``'s shape, format and dtype storing nothing."""
    s = _sparse(x, "sp_zeros_like")
    parts = build_op(ops.DisassembleOp, s.value)
    t = s.value.type
    empty = np.zeros(0, dtype=s.dtype)
    return wrap_sparse(build_op(
        ops.AssembleOp, zeros_like(wrap(parts.positions)), constant(np.zeros(0, np.int64)),
        constant(empty), wrap(parts.shape), encoding=t.encoding.name,
        static_shape=t.shape).result)


def _vector(v, s: SparseVariable, name: str) -> TensorVariable:
    t = as_tensor_variable(v) if isinstance(v, TensorVariable) else \
        constant(np.asarray(v, dtype=s.dtype))
    if t.ndim != 1:
        raise TypeError(f"{name}: the dense operand must be a vector, got {t.type}")
    return t


def _along(x, y, name: str, axis: int):
    """``x`` and the vector ``y`` spread along ``axis`` (0: one entry per column)."""
    s = _sparse(x, name)
    v = _vector(y, s, name)
    spread = dimshuffle(v, ("x", 0) if axis == 0 else (0, "x"))
    return s, spread


def mul_s_v(x, y) -> SparseVariable:
    """Each stored value of ``x`` times ``y``'s entry for its column (``y`` has one per
    column): sparse, ``x``'s structure."""
    s, row = _along(x, y, "mul_s_v", 0)
    return mul(s, row)


def structured_add_s_v(x, y) -> SparseVariable:
    """Each stored value of ``x`` plus ``y``'s entry for its column: sparse, ``x``'s
    structure (places where nothing is stored stay empty)."""
    s, row = _along(x, y, "structured_add_s_v", 0)
    sampled = wrap_sparse(build_op(ops.SampleOp, s.value, _cast_like(row, s)).result)
    return with_values(s, stored_values(s) + stored_values(sampled))


def _cast_like(d: TensorVariable, s: SparseVariable) -> TensorVariable:
    return _dense(d, s, "the dense operand", ranks=(2,))


def row_scale(x, s) -> SparseVariable:
    """Each row ``i`` of the sparse ``x`` times ``s[i]`` (``s`` has one entry per row)."""
    m, column = _along(x, s, "row_scale", 1)
    return mul(m, column)


def col_scale(x, s) -> SparseVariable:
    """Each column ``j`` of the sparse ``x`` times ``s[j]`` (``s`` has one entry per
    column)."""
    m, row = _along(x, s, "col_scale", 0)
    return mul(m, row)


__all__ = ["structured_monoid", "structured_sigmoid", "structured_exp", "structured_log",
           "structured_pow", "structured_minimum", "structured_maximum", "structured_add",
           "sin", "tan", "arcsin", "arctan", "sinh", "arcsinh", "tanh",
           "arctanh", "rint", "sgn", "ceil", "floor", "log1p", "expm1", "deg2rad", "rad2deg",
           "trunc", "sqr", "sqrt", "conj", "abs_", "neg", "sp_ones_like", "sp_zeros_like",
           "mul_s_v", "structured_add_s_v", "row_scale", "col_scale"]
