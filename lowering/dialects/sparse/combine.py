"""The sparse dialect's ops on two sparse operands, and the change of storage format:

- ``sparse.convert``: the same matrix in the other encoding (CSR to CSC and back), each outer
  slice's coordinates rising;
- ``sparse.add``: ``a + b``, sparse, storing the places either stores (the union);
- ``sparse.mul``: ``a * b`` entry by entry, storing the places both store (the intersection);
- ``sparse.spmm``: the product of two ``#csr`` matrices, a ``#csr`` matrix (Gustavson's
  row-by-row product, as scipy.sparse computes it);
- ``sparse.concat``: matrices joined along their encoding's outer dimension.

``add`` and ``mul`` take operands of one encoding (the front end converts one if they differ).
Entries a result stores may be zero (``a + (-a)``): scipy.sparse drops those, these keep them;
the matrices are equal.

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import CSR, F64, TensorType
>>> a, b = Block([TensorType((None, 4), F64, CSR), TensorType((4, None), F64, CSR)]).args
>>> str(SpmmOp.build(a, b).result.type), str(ConvertOp.build(a, "csc").result.type)
('tensor<?x?xf64, #csr>', 'tensor<?x4xf64, #csc>')
"""
from __future__ import annotations

from lowering.dialects.tensor.base import op_errors
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.dialects.tensor.typing import check_one_number_type, merge_dim
from lowering.ir.attributes import IntAttr
from lowering.ir.constraints import AnySparseTensor
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result, var_operand
from lowering.ir.types import SPARSE_ENCODINGS, TensorType

from .ops import SparseOp, TransposeOp, tensor_of


def _encoding(encoding):
    return SPARSE_ENCODINGS[encoding] if isinstance(encoding, str) else encoding


@register_op
class ConvertOp(SparseOp):
    """``sparse.convert(s)``: ``s`` stored in the result type's encoding (its coordinates
    rising in each outer slice)."""

    name = "sparse.convert"
    assembly_format = "$input attr-dict : functional-type(operands, results)"
    input = operand(AnySparseTensor)
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, s: Value, encoding, location=None) -> "ConvertOp":
        t = tensor_of(s)
        return cls.create([s], [TensorType(t.shape, t.element, _encoding(encoding))],
                          location=location)

    def inferred_type(self):
        t = self.input.type
        return TensorType(t.shape, t.element, self.result.type.encoding)

    def grad(self, output_grads):
        g = output_grads[0]
        if g is None:
            return [None]
        return [ConvertOp.build(g, self.input.type.encoding, self.location).result]


def in_encoding(s: Value, encoding, location=None) -> Value:
    """``s`` in ``encoding``: itself, or converted."""
    encoding = _encoding(encoding)
    if s.type.encoding == encoding:
        return s
    return ConvertOp.build(s, encoding, location).result


def _same_shape_type(name: str, at: TensorType, bt: TensorType) -> TensorType:
    check_one_number_type([at, bt])
    if at.encoding != bt.encoding:
        raise VerifyError(f"the operands must have one encoding, got {at} and {bt}")
    shape = tuple(merge_dim(f"shapes {format_shape(at.shape)} and {format_shape(bt.shape)} "
                            f"differ", a, b) for a, b in zip(at.shape, bt.shape))
    return TensorType(shape, at.element, at.encoding)


class _PairOp(SparseOp):
    """An elementwise op on two sparse matrices of one shape and encoding: sparse."""

    assembly_format = "$lhs, $rhs attr-dict : functional-type(operands, results)"
    lhs = operand(AnySparseTensor)
    rhs = operand(AnySparseTensor)
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, a: Value, b: Value, location=None):
        with op_errors(cls.name):
            rtype = _same_shape_type(cls.name, tensor_of(a), tensor_of(b))
        return cls.create([a, b], [rtype], location=location)

    def inferred_type(self):
        return _same_shape_type(self.name, self.lhs.type, self.rhs.type)


@register_op
class AddSparseOp(_PairOp):
    """``sparse.add(a, b)``: ``a + b``, storing every place ``a`` or ``b`` stores."""

    name = "sparse.add"

    def grad(self, output_grads):
        g = output_grads[0]
        return [g, g]


@register_op
class MulSparseOp(_PairOp):
    """``sparse.mul(a, b)``: ``a * b`` entry by entry, storing the places both store."""

    name = "sparse.mul"

    def grad(self, output_grads):
        g = output_grads[0]
        if g is None:
            return [None, None]
        loc = self.location
        return [MulSparseOp.build(g, self.rhs, loc).result,
                MulSparseOp.build(g, self.lhs, loc).result]


def _spmm_type(at: TensorType, bt: TensorType) -> TensorType:
    check_one_number_type([at, bt])
    if at.encoding.name != "csr" or bt.encoding.name != "csr":
        raise VerifyError(f"both operands must be #csr, got {at} and {bt}")
    merge_dim(f"incompatible shapes {format_shape(at.shape)} and {format_shape(bt.shape)}",
              at.shape[1], bt.shape[0])
    return TensorType((at.shape[0], bt.shape[1]), at.element, at.encoding)


@register_op
class SpmmOp(SparseOp):
    """``sparse.spmm(a, b)``: the product of the ``#csr`` matrices ``a`` (m, k) and ``b``
    (k, n), ``#csr``, storing each place some product ``a[i, k] * b[k, j]`` reaches."""

    name = "sparse.spmm"
    assembly_format = "$lhs, $rhs attr-dict : functional-type(operands, results)"
    lhs = operand(AnySparseTensor)
    rhs = operand(AnySparseTensor)
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, a: Value, b: Value, location=None) -> "SpmmOp":
        with op_errors(cls.name):
            rtype = _spmm_type(tensor_of(a), tensor_of(b))
        return cls.create([a, b], [rtype], location=location)

    def inferred_type(self):
        return _spmm_type(self.lhs.type, self.rhs.type)

    def grad(self, output_grads):
        """``g . b^T`` and ``a^T . g`` (Theano's ``true_dot`` gradients), each in its
        operand's encoding."""
        g = output_grads[0]
        if g is None:
            return [None, None]
        loc = self.location
        ga = sparse_product(g, TransposeOp.build(self.rhs, loc).result, loc)
        gb = sparse_product(TransposeOp.build(self.lhs, loc).result, g, loc)
        return [in_encoding(ga, self.lhs.type.encoding, loc),
                in_encoding(gb, self.rhs.type.encoding, loc)]


def sparse_product(a: Value, b: Value, location=None) -> Value:
    """``a . b`` of two sparse matrices of any encodings: ``#csr`` unless both are ``#csc``
    (then ``(b^T . a^T)^T``, ``#csc``), converting an operand where the encodings differ."""
    if a.type.encoding.name == "csc" and b.type.encoding.name == "csc":
        bt, at = (TransposeOp.build(v, location).result for v in (b, a))
        return TransposeOp.build(SpmmOp.build(bt, at, location).result, location).result
    return SpmmOp.build(in_encoding(a, "csr", location), in_encoding(b, "csr", location),
                        location).result


def add_sparse(a: Value, b: Value, location=None) -> Value:
    """``a + b`` of two sparse matrices, in ``a``'s encoding."""
    return AddSparseOp.build(a, in_encoding(b, a.type.encoding, location), location).result


def sum_sparse(a: Value, b: Value, location=None) -> Value:
    """``a + b`` of two sparse matrices (gradient contributions): their values added when they
    share their structure, else ``sparse.add``."""
    from lowering.dialects.tensor.elementwise import AddOp as DenseAddOp
    from .ops import AssembleOp, DisassembleOp, same_structure
    if not same_structure(a, b):
        return add_sparse(a, b, location)
    pa, pb = DisassembleOp.build(a, location), DisassembleOp.build(b, location)
    values = DenseAddOp.build(pa.values, pb.values, location=location).result
    return AssembleOp.build(pa.positions, pa.coordinates, values, pa.shape, a.type.encoding,
                            a.type.shape, location).result


def _concat_type(types: list[TensorType], axis: int) -> TensorType:
    if not types:
        raise VerifyError("needs at least one operand")
    check_one_number_type(types)
    first = types[0]
    if any(t.encoding != first.encoding for t in types):
        raise VerifyError(f"the operands must have one encoding, got "
                          f"{', '.join(str(t) for t in types)}")
    if axis != first.encoding.outer:
        raise VerifyError(f"{first.encoding} matrices join along axis {first.encoding.outer}, "
                          f"not {axis}")
    inner = first.shape[1 - axis]
    for t in types[1:]:
        inner = merge_dim(f"the operands' sizes in dimension {1 - axis} differ "
                          f"({', '.join(format_shape(t.shape) for t in types)})",
                          inner, t.shape[1 - axis])
    sizes = [t.shape[axis] for t in types]
    total = None if None in sizes else sum(sizes)
    shape = (total, inner) if axis == 0 else (inner, total)
    return TensorType(shape, first.element, first.encoding)


@register_op
class ConcatOp(SparseOp):
    """``sparse.concat(xs...) {axis}``: the matrices joined along ``axis``, which must be their
    encoding's outer dimension (rows of ``#csr`` matrices, columns of ``#csc`` ones), so the
    storage is the operands' storages one after the other (scipy.sparse's ``vstack`` and
    ``hstack``)."""

    name = "sparse.concat"
    assembly_format = "$inputs `axis` $axis attr-dict : functional-type($inputs, results)"
    inputs = var_operand(AnySparseTensor)
    result = result(AnySparseTensor)
    axis = attr(IntAttr)

    @classmethod
    def build(cls, *xs, axis: int, location=None) -> "ConcatOp":
        with op_errors(cls.name):
            rtype = _concat_type([tensor_of(x) for x in xs], axis)
        return cls.create(list(xs), [rtype], {"axis": IntAttr(axis)}, location=location)

    def inferred_type(self):
        return _concat_type([x.type for x in self.operands], self.axis)

    def grad(self, output_grads):
        """Each operand's stretch of the result's stored values, over its own structure."""
        from lowering.dialects.tensor import AddOp as DenseAddOp, ShapeIOp, SubtensorOp
        from .ops import AssembleOp, DisassembleOp, on_structure
        g = output_grads[0]
        if g is None:
            return [None] * len(self.operands)
        loc = self.location
        values = DisassembleOp.build(on_structure(self.result, g, loc), loc).values
        grads, start = [], None
        for x in self.operands:
            parts = DisassembleOp.build(x, loc)
            size = ShapeIOp.build(parts.values, 0, location=loc).result
            stop = size if start is None else DenseAddOp.build(start, size, location=loc).result
            piece = SubtensorOp.build(values, (slice(start, stop),), location=loc).result
            grads.append(AssembleOp.build(parts.positions, parts.coordinates, piece, parts.shape,
                                          x.type.encoding, x.type.shape, loc).result)
            start = stop
        return grads


__all__ = ["ConvertOp", "AddSparseOp", "MulSparseOp", "SpmmOp", "in_encoding", "sparse_product",
           "add_sparse", "sum_sparse", "ConcatOp"]
