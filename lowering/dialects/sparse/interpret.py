"""How the sparse ops run in the interpreter: a sparse value is a ``scipy.sparse`` matrix
(``csr_matrix`` for ``#csr``, ``csc_matrix`` for ``#csc``), a dense one a NumPy array. scipy
is an optional dependency (the ``sparse`` extra), imported when a sparse op first runs.

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> from lowering.ir.interpreter import Interpreter
>>> from .ops import FromDenseOp
>>> x = Block([TensorType((None, None), F64)]).args[0]
>>> op = FromDenseOp.build(x, "csr")
>>> [s] = INTERPRETER.find(FromDenseOp)(Interpreter(), op, [np.array([[0.0, 2.0], [3.0, 0.0]])])
>>> s.format, s.indptr.tolist(), s.indices.tolist(), s.data.tolist()
('csr', [0, 1, 2], [1, 0], [2.0, 3.0])
"""
from __future__ import annotations

import numpy as np

from lowering.dialects.tensor.shape_ops import fit_result
from lowering.ir.interpreter import INTERPRETER

from .ops import (AddDenseOp, AssembleOp, DisassembleOp, FromDenseOp, MatmulOp, MulDenseOp,
                  SampleOp, SumOp, ToDenseOp, TransposeOp)


def scipy_sparse():
    """The ``scipy.sparse`` module, or an ImportError saying how to get it."""
    try:
        import scipy.sparse
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("sparse tensors need scipy: pip install 'lowering[sparse]'") from exc
    return scipy.sparse


def as_format(matrix, type):
    """``matrix`` (a scipy.sparse matrix) in the storage format of the sparse tensor ``type``,
    with its element type."""
    sp = scipy_sparse()
    make = sp.csr_matrix if type.encoding.name == "csr" else sp.csc_matrix
    return make(matrix, dtype=type.dtype)


@INTERPRETER.register(AssembleOp)
def _assemble(interp, op, args):
    positions, coordinates, values, shape = (np.asarray(a) for a in args)
    rows, cols = (int(n) for n in shape)
    t = op.result.type
    outer = (rows, cols)[t.encoding.outer]
    inner = (rows, cols)[1 - t.encoding.outer]
    check_storage(positions, coordinates, values, outer, inner, op.name)
    sp = scipy_sparse()
    make = sp.csr_matrix if t.encoding.name == "csr" else sp.csc_matrix
    return [make((values.astype(t.dtype, copy=False), coordinates, positions),
                 shape=(rows, cols))]


def check_storage(positions, coordinates, values, outer: int, inner: int, what: str) -> None:
    """Raise ValueError unless the arrays store a valid compressed matrix: ``outer`` + 1
    non-decreasing positions from 0 to the number of values, one coordinate per value, each in
    ``[0, inner)``.

    >>> check_storage(np.array([0, 2]), np.array([0, 3]), np.ones(2), 1, 3, "x")
    Traceback (most recent call last):
    ...
    ValueError: x: coordinates must be in [0, 3) (the size of the compressed dimension)
    """
    if positions.shape != (outer + 1,):
        raise ValueError(f"{what}: {outer + 1} positions expected, got {positions.shape[0]}")
    if coordinates.shape != values.shape:
        raise ValueError(f"{what}: {coordinates.shape[0]} coordinates for {values.shape[0]} "
                         f"values")
    if positions[0] != 0 or positions[-1] != values.shape[0] or np.any(np.diff(positions) < 0):
        raise ValueError(f"{what}: positions must rise from 0 to the number of values "
                         f"({values.shape[0]})")
    if coordinates.size and (coordinates.min() < 0 or coordinates.max() >= inner):
        raise ValueError(f"{what}: coordinates must be in [0, {inner}) (the size of the "
                         f"compressed dimension)")


@INTERPRETER.register(DisassembleOp)
def _disassemble(interp, op, args):
    s = as_format(args[0], op.input.type)
    return [s.indptr.astype(np.int64), s.indices.astype(np.int64), s.data.copy(),
            np.array(s.shape, dtype=np.int64)]


@INTERPRETER.register(ToDenseOp)
def _to_dense(interp, op, args):
    return [fit_result(op, args[0].toarray())]


@INTERPRETER.register(FromDenseOp)
def _from_dense(interp, op, args):
    dense = np.asarray(args[0])
    return [as_format(scipy_sparse().coo_matrix(dense), op.result.type)]


@INTERPRETER.register(TransposeOp)
def _transpose(interp, op, args):
    return [as_format(args[0].transpose(), op.result.type)]


@INTERPRETER.register(MatmulOp)
def _matmul(interp, op, args):
    s, d = args
    d = np.asarray(d)
    if s.shape[1] != d.shape[0]:
        raise ValueError(f"{op.name}: incompatible shapes {s.shape} and {d.shape}")
    return [fit_result(op, np.asarray(s @ d))]


def _fitting_dense(op, s, d) -> np.ndarray:
    """The dense operand, checked to have the sparse one's size in each dimension its type
    does not mark 1 (only those broadcast, as in compiled code)."""
    d = np.asarray(d)
    declared = op.rhs.type.shape
    if any(t != 1 and n != m for t, n, m in zip(declared, d.shape, s.shape)):
        raise ValueError(f"{op.name}: the dense operand of shape {d.shape} does not fit the "
                         f"sparse one of shape {s.shape}")
    return d


def _dense_at_entries(op, s, d):
    """``d`` (broadcast to ``s``'s shape) at each stored entry of ``s``, in storage order."""
    d = _fitting_dense(op, s, d)
    d = np.broadcast_to(d, s.shape)
    outer = np.repeat(np.arange(len(s.indptr) - 1), np.diff(s.indptr))
    rows, cols = (outer, s.indices) if s.format == "csr" else (s.indices, outer)
    return d[rows, cols]


def _with_values(s, values, type):
    out = as_format(s, type).copy()
    out.data = np.asarray(values, dtype=type.dtype)
    return out


@INTERPRETER.register(AddDenseOp)
def _add_dense(interp, op, args):
    s, d = args
    return [fit_result(op, s.toarray() + _fitting_dense(op, s, d))]


@INTERPRETER.register(MulDenseOp)
def _mul_dense(interp, op, args):
    s, d = args
    s = as_format(s, op.result.type)
    return [_with_values(s, s.data * _dense_at_entries(op, s, d), op.result.type)]


@INTERPRETER.register(SampleOp)
def _sample(interp, op, args):
    s, d = args
    s = as_format(s, op.result.type)
    return [_with_values(s, _dense_at_entries(op, s, d), op.result.type)]


@INTERPRETER.register(SumOp)
def _sum(interp, op, args):
    s = args[0]
    if op.axis is None:
        return [fit_result(op, np.asarray(s.sum(), dtype=op.result.type.dtype))]
    return [fit_result(op, np.asarray(s.sum(axis=op.axis)).reshape(-1))]


# -- two sparse operands (``combine``) ------------------------------------------------------------

from .combine import AddSparseOp, ConcatOp, ConvertOp, MulSparseOp, SpmmOp  # noqa: E402


def _same_shapes(op, a, b) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{op.name}: shapes {a.shape} and {b.shape} differ")


@INTERPRETER.register(ConvertOp)
def _convert(interp, op, args):
    out = as_format(args[0], op.result.type).copy()
    out.sort_indices()
    return [out]


@INTERPRETER.register(AddSparseOp)
def _add_sparse(interp, op, args):
    a, b = args
    _same_shapes(op, a, b)
    return [as_format(a + b, op.result.type)]


@INTERPRETER.register(MulSparseOp)
def _mul_sparse(interp, op, args):
    a, b = args
    _same_shapes(op, a, b)
    return [as_format(a.multiply(b), op.result.type)]


@INTERPRETER.register(SpmmOp)
def _spmm(interp, op, args):
    a, b = args
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{op.name}: incompatible shapes {a.shape} and {b.shape}")
    return [as_format(a @ b, op.result.type)]


@INTERPRETER.register(ConcatOp)
def _concat(interp, op, args):
    inner = {m.shape[1 - op.axis] for m in args}
    if len(inner) > 1:
        raise ValueError(f"{op.name}: the operands' sizes in dimension {1 - op.axis} differ "
                         f"({', '.join(str(m.shape) for m in args)})")
    stack = scipy_sparse().vstack if op.axis == 0 else scipy_sparse().hstack
    return [as_format(stack(args, format=op.result.type.encoding.name), op.result.type)]
