"""``SparseType``: the type of a sparse matrix variable (Theano's ``theano.sparse.SparseType``),
its format (``'csr'`` or ``'csc'``) and dtype. Calling one makes a new input variable.

>>> t = SparseType("csr", "float32")
>>> x = t("x")
>>> x.format, x.dtype, str(x.type), t == SparseType("csr", "float32")
('csr', 'float32', 'Sparse[float32, csr]', True)
"""
from __future__ import annotations

from lowering.frontend.types import canonical_dtype
from lowering.ir.core import Block
from lowering.ir.types import SPARSE_ENCODINGS, TensorType as IRTensorType, scalar_type_of

FORMATS = tuple(SPARSE_ENCODINGS)


class SparseType:
    """A sparse matrix type: ``format`` (``'csr'`` or ``'csc'``) and ``dtype``; the IR type is
    ``tensor<?x?xDTYPE, #FORMAT>``."""

    ndim = 2
    broadcastable = (False, False)
    # The class of this type's variables; ``basic`` sets it (as Theano's ``SparseType.Variable``).
    Variable = None

    def __init__(self, format: str, dtype, shape=None):
        if format not in FORMATS:
            raise ValueError(f"unknown sparse format {format!r}; supported: "
                             f"{', '.join(FORMATS)}")
        self.format = format
        self.dtype = canonical_dtype(dtype)
        self.shape = (None, None) if shape is None else tuple(shape)

    @property
    def ir_type(self) -> IRTensorType:
        return IRTensorType(self.shape, scalar_type_of(self.dtype), SPARSE_ENCODINGS[self.format])

    @staticmethod
    def from_ir(ir_type: IRTensorType) -> "SparseType":
        return SparseType(ir_type.encoding.name, ir_type.dtype.name, ir_type.shape)

    def __call__(self, name: str | None = None):
        """A new input variable of this type: the argument of a detached block of its own."""
        return self.Variable(Block().add_arg(self.ir_type, name))

    make_variable = __call__

    def __eq__(self, other):
        return (isinstance(other, SparseType) and self.format == other.format
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((SparseType, self.format, self.dtype))

    def __str__(self):
        return f"Sparse[{self.dtype}, {self.format}]"

    __repr__ = __str__
