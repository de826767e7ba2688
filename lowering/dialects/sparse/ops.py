"""The sparse dialect's ops: value-semantic ops on sparse matrices (``tensor<?x?xf64, #csr>``).

A sparse tensor is a rank-2 tensor whose type carries a storage encoding (``#csr`` or
``#csc``, ``lowering.ir.types.SparseEncoding``), as in MLIR's sparse_tensor dialect. Dense
tensor ops do not accept them (``TensorOf`` rejects an encoded type); these ops take and give
them:

- ``sparse.assemble`` / ``sparse.disassemble``: a sparse value from, and to, its storage arrays
  (positions, coordinates, values) and its shape; ``function()`` passes sparse arguments and
  results through them, so compiled code only ever sees dense arrays at its boundary;
- ``sparse.to_dense``, ``sparse.from_dense`` (conversions), ``sparse.transpose`` (CSR <-> CSC
  over the same arrays);
- ``sparse.matmul`` (sparse times dense matrix or vector, a dense result), ``sparse.add_dense``
  (a dense result), ``sparse.mul_dense`` and ``sparse.sample`` (a sparse result with the sparse
  operand's structure: stored values times, or replaced by, the dense entries there),
  ``sparse.sum`` (over all entries or one axis, a dense result).

Gradients flow to dense operands, and through sparse values as sparse values with the same
structure (Theano's structured gradients).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import CSR, F64, TensorType
>>> s, d = Block([TensorType((None, 4), F64, CSR), TensorType((4, None), F64)]).args
>>> str(MatmulOp.build(s, d).result.type), str(TransposeOp.build(s).result.type)
('tensor<?x?xf64>', 'tensor<4x?xf64, #csc>')
"""
from __future__ import annotations

from lowering.dialects.tensor.base import TensorOp, op_errors
from lowering.dialects.tensor.shape_ops import format_shape
from lowering.dialects.tensor.typing import check_one_number_type, merge_dim
from lowering.ir.attributes import IntAttr
from lowering.ir.constraints import AnySparseTensor, ConstraintVar, TensorOf
from lowering.ir.core import Value, VerifyError, attr, operand, register_op, result
from lowering.ir.types import I64, SPARSE_ENCODINGS, TensorType

E = ConstraintVar("E")  # the element type the operands and results share


def tensor_of(value: Value) -> TensorType:
    """The tensor type of ``value``, dense or sparse (an error names what it is instead)."""
    t = value.type
    if not isinstance(t, TensorType):
        raise VerifyError(f"expected a tensor value, got {t}")
    return t


class SparseOp(TensorOp):
    """A pure op with a sparse operand or result. Not constant-folded: a folded value would be
    a dense attribute, which a sparse result cannot hold."""

    def fold(self):
        return None


def _fits_broadcast(st: TensorType, dt: TensorType, name: str) -> None:
    """A dense operand of an elementwise op with a sparse one: rank 2, each dimension the
    sparse one's size or typed 1 (broadcast, as Theano's broadcasting)."""
    if dt.rank != 2:
        raise VerifyError(f"the dense operand of {name} must have rank 2, got {dt}")
    for a, b in zip(st.shape, dt.shape):
        if b != 1:
            merge_dim(f"shapes {format_shape(st.shape)} and {format_shape(dt.shape)} differ", a, b)


# ---------------------------------------------------------------------------------------------
# Storage


@register_op
class AssembleOp(SparseOp):
    """``sparse.assemble(positions, coordinates, values, shape)``: the sparse matrix stored in
    these arrays (MLIR's ``sparse_tensor.assemble``). ``shape`` is ``(rows, columns)``; for CSR
    ``positions`` has rows + 1 entries, row ``i``'s entries being ``positions[i]`` to
    ``positions[i + 1]`` of ``coordinates`` (their columns) and ``values``; CSC swaps the roles
    of rows and columns."""

    name = "sparse.assemble"
    assembly_format = ("$positions, $coordinates, $values, $shape attr-dict : "
                       "functional-type(operands, results)")
    positions = operand(TensorOf(I64, rank=1))
    coordinates = operand(TensorOf(I64, rank=1))
    values = operand(TensorOf(E, rank=1))
    shape = operand(TensorOf(I64, shape=(2,)))
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, positions: Value, coordinates: Value, values: Value, shape: Value,
              encoding, static_shape=(None, None), location=None) -> "AssembleOp":
        encoding = SPARSE_ENCODINGS[encoding] if isinstance(encoding, str) else encoding
        rtype = TensorType(tuple(static_shape), tensor_of(values).element, encoding)
        return cls.create([positions, coordinates, values, shape], [rtype], location=location)

    def verify_(self):
        if self.result.type.element != self.values.type.element:
            raise VerifyError(f"{self.name}: the result's element type must be the values' "
                              f"({self.values.type.element}), got {self.result.type}", self)

    def grad(self, output_grads):
        """Only the values have a gradient (Theano's ``CSM``): the result's gradient at the
        stored places, in storage order."""
        g = output_grads[0]
        if g is None:
            return [None] * 4
        at_places = on_structure(self.result, g, self.location)
        return [None, None, DisassembleOp.build(at_places, self.location).values, None]


@register_op
class DisassembleOp(SparseOp):
    """``sparse.disassemble(s)``: the positions, coordinates, values and shape (i64, 2 entries)
    of ``s`` (MLIR's ``sparse_tensor.disassemble``): fresh arrays of exactly the stored
    entries."""

    name = "sparse.disassemble"
    assembly_format = "$input attr-dict : functional-type(operands, results)"
    input = operand(AnySparseTensor)
    positions = result(TensorOf(I64, rank=1))
    coordinates = result(TensorOf(I64, rank=1))
    values = result(TensorOf(rank=1))
    shape = result(TensorOf(I64, shape=(2,)))

    @classmethod
    def build(cls, s: Value, location=None) -> "DisassembleOp":
        element = tensor_of(s).element
        types = [TensorType((None,), I64), TensorType((None,), I64),
                 TensorType((None,), element), TensorType((2,), I64)]
        return cls.create([s], types, location=location)

    def verify_(self):
        if self.values.type.element != self.input.type.element:
            raise VerifyError(f"{self.name}: the values must have the input's element type "
                              f"{self.input.type.element}, got {self.values.type}", self)

    def grad(self, output_grads):
        """The values' gradient, stored in the input's structure (Theano's
        ``CSMProperties``); the positions, coordinates and shape have none."""
        g = output_grads[2]
        if g is None:
            return [None]
        t = self.input.type
        return [AssembleOp.build(self.positions, self.coordinates, g, self.shape, t.encoding,
                                 t.shape, self.location).result]


def structure_root(s: Value) -> Value:
    """The sparse value whose positions and coordinates ``s`` reuses as they are: through the
    ops that only make new values over their operand's structure (``sparse.sample``,
    ``sparse.mul_dense``, and an assemble of a disassemble's positions and coordinates)."""
    while True:
        op = getattr(s, "op", None)
        if isinstance(op, (SampleOp, MulDenseOp)):
            s = op.lhs
            continue
        if isinstance(op, AssembleOp):
            parts = getattr(op.positions, "op", None)
            if isinstance(parts, DisassembleOp) and op.coordinates is parts.coordinates \
                    and op.shape is parts.shape and parts.input.type.encoding == s.type.encoding:
                s = parts.input
                continue
        return s


def same_structure(a: Value, b: Value) -> bool:
    """Whether the sparse values ``a`` and ``b`` are known to store the same places in the
    same order (so their values line up)."""
    return a.type.encoding == b.type.encoding and structure_root(a) is structure_root(b)


def on_structure(s: Value, g: Value, location=None) -> Value:
    """The sparse ``g`` stored in ``s``'s structure: ``g``'s entries at ``s``'s places (``g``
    itself when it already has that structure, else sampled from its dense form)."""
    if same_structure(g, s):
        return g
    return SampleOp.build(s, ToDenseOp.build(g, location).result, location).result


# ---------------------------------------------------------------------------------------------
# Conversions


@register_op
class ToDenseOp(SparseOp):
    """``sparse.to_dense(s)``: the dense matrix (zeros where nothing is stored; entries stored
    twice add up, as scipy.sparse's ``toarray``)."""

    name = "sparse.to_dense"
    assembly_format = "$input attr-dict : functional-type(operands, results)"
    input = operand(AnySparseTensor)
    result = result(TensorOf(rank=2))

    @classmethod
    def build(cls, s: Value, location=None) -> "ToDenseOp":
        t = tensor_of(s)
        return cls.create([s], [TensorType(t.shape, t.element)], location=location)

    def inferred_type(self):
        t = self.input.type
        return TensorType(t.shape, t.element)

    def grad(self, output_grads):
        g = output_grads[0]
        return [None if g is None else SampleOp.build(self.input, g, self.location).result]


@register_op
class FromDenseOp(SparseOp):
    """``sparse.from_dense(x)``: the nonzero entries of the dense matrix ``x``, stored in the
    result type's encoding (Theano's ``csr_from_dense``/``csc_from_dense``)."""

    name = "sparse.from_dense"
    assembly_format = "$input attr-dict : functional-type(operands, results)"
    input = operand(TensorOf(rank=2))
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, x: Value, encoding, location=None) -> "FromDenseOp":
        encoding = SPARSE_ENCODINGS[encoding] if isinstance(encoding, str) else encoding
        t = tensor_of(x)
        with op_errors(cls.name):
            if t.rank != 2:
                raise VerifyError(f"the input must be a matrix, got {t}")
            if t.element.is_bool:
                raise VerifyError(f"the input must hold numbers, not booleans ({t})")
        return cls.create([x], [TensorType(t.shape, t.element, encoding)], location=location)

    def inferred_type(self):
        t = self.input.type
        return TensorType(t.shape, t.element, self.result.type.encoding)

    def grad(self, output_grads):
        g = output_grads[0]
        return [None if g is None else ToDenseOp.build(g, self.location).result]


@register_op
class TransposeOp(SparseOp):
    """``sparse.transpose(s)``: the transpose, stored in the same arrays under the other
    encoding (the transpose of a CSR matrix is a CSC one)."""

    name = "sparse.transpose"
    assembly_format = "$input attr-dict : functional-type(operands, results)"
    input = operand(AnySparseTensor)
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, s: Value, location=None) -> "TransposeOp":
        return cls.create([s], [_transposed(tensor_of(s))], location=location)

    def inferred_type(self):
        return _transposed(self.input.type)

    def grad(self, output_grads):
        g = output_grads[0]
        return [None if g is None else TransposeOp.build(g, self.location).result]


def _transposed(t: TensorType) -> TensorType:
    return TensorType(t.shape[::-1], t.element, t.encoding.transposed())


# ---------------------------------------------------------------------------------------------
# Arithmetic


def _matmul_type(st: TensorType, dt: TensorType) -> TensorType:
    check_one_number_type([st, dt])
    if dt.rank not in (1, 2):
        raise VerifyError(f"the dense operand must be a vector or a matrix, got {dt}")
    merge_dim(f"incompatible shapes {format_shape(st.shape)} and {format_shape(dt.shape)}",
           st.shape[1], dt.shape[0])
    return TensorType(st.shape[:1] + dt.shape[1:], st.element)


@register_op
class MatmulOp(SparseOp):
    """``sparse.matmul(s, d)``: the product of the sparse matrix ``s`` (m, k) and the dense
    matrix (k, n) or vector (k,) ``d``, dense (Theano's ``structured_dot``)."""

    name = "sparse.matmul"
    assembly_format = "$lhs, $rhs attr-dict : functional-type(operands, results)"
    lhs = operand(AnySparseTensor)
    rhs = operand(TensorOf())
    result = result(TensorOf())

    @classmethod
    def build(cls, s: Value, d: Value, location=None) -> "MatmulOp":
        with op_errors(cls.name):
            rtype = _matmul_type(tensor_of(s), tensor_of(d))
        return cls.create([s, d], [rtype], location=location)

    def inferred_type(self):
        return _matmul_type(self.lhs.type, self.rhs.type)

    def grad(self, output_grads):
        from lowering.dialects.tensor import DimShuffleOp, DotOp
        from lowering.dialects.tensor.shape_ops import match_type
        g = output_grads[0]
        if g is None or not self.result.type.element.is_float:
            return [None, None]
        s, d, loc = self.lhs, self.rhs, self.location
        gd = MatmulOp.build(TransposeOp.build(s, loc).result, g, loc).result
        # d(s)_ij = sum_k g_ik d_jk, needed only where s stores an entry.
        if d.type.rank == 1:
            outer = DotOp.build(DimShuffleOp.build(g, [0, "x"], location=loc).result,
                                DimShuffleOp.build(d, ["x", 0], location=loc).result,
                                location=loc).result
        else:
            outer = DotOp.build(g, DimShuffleOp.build(d, [1, 0], location=loc).result,
                                location=loc).result
        return [SampleOp.build(s, outer, loc).result, match_type(gd, d, loc)]


def _elementwise_check(name: str, st: TensorType, dt: TensorType) -> None:
    check_one_number_type([st, dt])
    _fits_broadcast(st, dt, name)


@register_op
class AddDenseOp(SparseOp):
    """``sparse.add_dense(s, d)``: ``s + d``, dense (``d`` may broadcast along dimensions typed
    1)."""

    name = "sparse.add_dense"
    assembly_format = "$lhs, $rhs attr-dict : functional-type(operands, results)"
    lhs = operand(AnySparseTensor)
    rhs = operand(TensorOf(rank=2))
    result = result(TensorOf(rank=2))

    @classmethod
    def build(cls, s: Value, d: Value, location=None) -> "AddDenseOp":
        with op_errors(cls.name):
            rtype = _add_type(tensor_of(s), tensor_of(d))
        return cls.create([s, d], [rtype], location=location)

    def inferred_type(self):
        return _add_type(self.lhs.type, self.rhs.type)

    def grad(self, output_grads):
        from lowering.dialects.tensor.gradutil import unbroadcast
        g = output_grads[0]
        if g is None:
            return [None, None]
        return [SampleOp.build(self.lhs, g, self.location).result,
                unbroadcast(g, self.rhs.type, self.location)]


def _add_type(st: TensorType, dt: TensorType) -> TensorType:
    _elementwise_check("sparse.add_dense", st, dt)
    return TensorType(tuple(merge_dim("", a, None if b == 1 else b)
                            for a, b in zip(st.shape, dt.shape)), st.element)


class _StructuredOp(SparseOp):
    """A sparse result with the structure of the sparse operand ``lhs``, its values computed
    from the stored values and the dense operand's entries at the same places."""

    assembly_format = "$lhs, $rhs attr-dict : functional-type(operands, results)"
    lhs = operand(AnySparseTensor)
    rhs = operand(TensorOf(rank=2))
    result = result(AnySparseTensor)

    @classmethod
    def build(cls, s: Value, d: Value, location=None) -> "_StructuredOp":
        with op_errors(cls.name):
            _elementwise_check(cls.name, tensor_of(s), tensor_of(d))
        return cls.create([s, d], [s.type], location=location)

    def inferred_type(self):
        _elementwise_check(self.name, self.lhs.type, self.rhs.type)
        return self.lhs.type


@register_op
class MulDenseOp(_StructuredOp):
    """``sparse.mul_dense(s, d)``: ``s * d``, sparse with ``s``'s structure (``d`` may
    broadcast along dimensions typed 1)."""

    name = "sparse.mul_dense"

    def grad(self, output_grads):
        from lowering.dialects.tensor.gradutil import unbroadcast
        g = output_grads[0]
        if g is None:
            return [None, None]
        s, d, loc = self.lhs, self.rhs, self.location
        gd = ToDenseOp.build(MulDenseOp.build(g, ToDenseOp.build(s, loc).result, loc).result,
                             loc).result
        return [MulDenseOp.build(g, d, loc).result, unbroadcast(gd, d.type, loc)]


@register_op
class SampleOp(_StructuredOp):
    """``sparse.sample(s, d)``: sparse with ``s``'s structure, each stored value replaced by
    ``d``'s entry at its place (the gradient of a sparse value is one of these)."""

    name = "sparse.sample"

    def grad(self, output_grads):
        from lowering.dialects.tensor.gradutil import unbroadcast
        g = output_grads[0]
        if g is None:
            return [None, None]
        return [None, unbroadcast(ToDenseOp.build(g, self.location).result, self.rhs.type,
                                  self.location)]


@register_op
class SumOp(SparseOp):
    """``sparse.sum(s) {axis}``: the sum of all entries (rank 0), or along ``axis`` 0 (one per
    column) or 1 (one per row); dense (Theano's ``sp_sum``)."""

    name = "sparse.sum"
    assembly_format = "$input attr-dict : functional-type(operands, results)"
    input = operand(AnySparseTensor)
    axis = attr(IntAttr, default=None)
    result = result(TensorOf())

    @classmethod
    def build(cls, s: Value, axis: int | None = None, location=None) -> "SumOp":
        t = tensor_of(s)
        with op_errors(cls.name):
            rtype = _sum_type(t, axis)
        attrs = {} if axis is None else {"axis": IntAttr(axis)}
        return cls.create([s], [rtype], attributes=attrs, location=location)

    def inferred_type(self):
        return _sum_type(self.input.type, self.axis)

    def grad(self, output_grads):
        from lowering.dialects.tensor import DimShuffleOp
        g = output_grads[0]
        if g is None:
            return [None]
        pattern = {None: ["x", "x"], 0: ["x", 0], 1: [0, "x"]}[self.axis]
        spread = DimShuffleOp.build(g, pattern, location=self.location).result
        return [SampleOp.build(self.input, spread, self.location).result]


def _sum_type(t: TensorType, axis) -> TensorType:
    if axis not in (None, 0, 1):
        raise VerifyError(f"axis must be None, 0 or 1, got {axis}")
    if t.element.is_bool:
        raise VerifyError(f"the input must hold numbers, not booleans ({t})")
    shape = () if axis is None else (t.shape[1 - axis],)
    return TensorType(shape, t.element)


__all__ = ["AssembleOp", "DisassembleOp", "ToDenseOp", "FromDenseOp", "TransposeOp", "MatmulOp",
           "AddDenseOp", "MulDenseOp", "SampleOp", "SumOp", "SparseOp", "same_structure", "on_structure",
           "structure_root"]