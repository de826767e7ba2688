"""Forward-mode rules (``R_OP``) of the sparse ops: the tangent of a sparse value is a sparse
value with its structure, as its gradient is (``rop`` of the tensor dialect describes the
table).

>>> from lowering.ir.core import Block
>>> from lowering.ir.types import CSR, F64, TensorType
>>> from lowering.dialects.tensor.rop import R_OP
>>> s, d, v = Block([TensorType((None, None), F64, CSR), TensorType((None, 3), F64),
...                  TensorType((None, 3), F64)]).args
>>> op = MatmulOp.build(s, d)
>>> [t] = R_OP.lookup(op)(op, [None, v])
>>> t.op.name, str(t.type)
('sparse.matmul', 'tensor<?x3xf64>')
"""
from __future__ import annotations

from lowering.dialects.tensor.elementwise import AddOp
from lowering.dialects.tensor.gradutil import as_type
from lowering.dialects.tensor.rop import R_OP, linear_in, multilinear_in

from .ops import (AddDenseOp, AssembleOp, DisassembleOp, FromDenseOp, MatmulOp, MulDenseOp,
                  SampleOp, SumOp, ToDenseOp, TransposeOp)

R_OP.register(MatmulOp)(multilinear_in(0, 1))
R_OP.register(ToDenseOp, TransposeOp, SumOp)(linear_in(0))
R_OP.register(SampleOp)(linear_in(1))          # the structure is not differentiated
R_OP.register(AssembleOp)(linear_in(2))        # linear in the stored values


@R_OP.register(DisassembleOp)
def _disassemble(op: DisassembleOp, tangents) -> list:
    """Only the values carry a tangent: those of the input's tangent."""
    if tangents[0] is None:
        return [None] * 4
    return [None, None, DisassembleOp.build(tangents[0], op.location).values, None]


@R_OP.register(FromDenseOp)
def _from_dense(op: FromDenseOp, tangents) -> list:
    """The input's tangent at the stored places (the structure is not differentiated)."""
    if tangents[0] is None:
        return [None]
    return [SampleOp.build(op.result, tangents[0], op.location).result]


@R_OP.register(AddDenseOp)
def _add_dense(op: AddDenseOp, tangents) -> list:
    """``to_dense(vs) + vd``: the sum is linear in both operands together."""
    vs, vd = tangents
    loc = op.location
    terms = [ToDenseOp.build(vs, loc).result] if vs is not None else []
    terms += [vd] if vd is not None else []
    if not terms:
        return [None]
    total = terms[0] if len(terms) == 1 else AddOp.build(*terms, location=loc).result
    return [as_type(total, op.result.type, loc)]


@R_OP.register(MulDenseOp)
def _mul_dense(op: MulDenseOp, tangents) -> list:
    """``vs * d + s * vd``, both with ``s``'s structure (summed densely, then sampled there)."""
    vs, vd = tangents
    s, d, loc = op.lhs, op.rhs, op.location
    terms = ([MulDenseOp.build(vs, d, loc).result] if vs is not None else []) + \
        ([MulDenseOp.build(s, vd, loc).result] if vd is not None else [])
    if len(terms) < 2:
        return [terms[0] if terms else None]
    dense = AddOp.build(*(ToDenseOp.build(t, loc).result for t in terms), location=loc).result
    return [SampleOp.build(s, dense, loc).result]


# -- two sparse operands (``combine``) ------------------------------------------------------------

from .combine import AddSparseOp, ConcatOp, ConvertOp, MulSparseOp, SpmmOp  # noqa: E402

R_OP.register(ConvertOp)(linear_in(0))


def _sum_of(terms: list, location):
    """The sum of the sparse ``terms`` (None when there is none)."""
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = AddSparseOp.build(total, t, location).result
    return total


@R_OP.register(AddSparseOp)
def _add_sparse(op: AddSparseOp, tangents) -> list:
    return [_sum_of(list(tangents), op.location)]


def _product_rule(cls):
    """``va . b + a . vb`` for the bilinear sparse op ``cls``."""
    def rule(op, tangents) -> list:
        va, vb = tangents
        a, b, loc = op.lhs, op.rhs, op.location
        return [_sum_of([cls.build(va, b, loc).result if va is not None else None,
                         cls.build(a, vb, loc).result if vb is not None else None], loc)]
    return rule


R_OP.register(MulSparseOp)(_product_rule(MulSparseOp))
R_OP.register(SpmmOp)(_product_rule(SpmmOp))


@R_OP.register(ConcatOp)
def _concat(op: ConcatOp, tangents) -> list:
    """The tangents joined; an operand without one stands as its structure holding zeros."""
    if all(t is None for t in tangents):
        return [None]
    from lowering.dialects.tensor import ConstantOp
    import numpy as np
    loc = op.location
    parts = []
    for x, t in zip(op.operands, tangents):
        if t is None:
            zero = ConstantOp.build(np.zeros((1, 1), dtype=x.type.dtype), location=loc).result
            t = SampleOp.build(x, zero, loc).result
        parts.append(t)
    return [ConcatOp.build(*parts, axis=op.axis, location=loc).result]
