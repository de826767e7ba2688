"""Sparse arguments and results of ``function()``: the boundary between scipy.sparse matrices
and compiled code, which only passes dense arrays.

As MLIR's sparse assembler does for public functions, each sparse input becomes four dense
inputs (positions, coordinates, values, shape) that a ``sparse.assemble`` turns back into the
sparse value inside the function, and each sparse output a ``sparse.disassemble`` into four
dense outputs. ``SparseFunction`` converts a call's scipy.sparse arguments into those arrays
(checking that they store a valid matrix) and the arrays it gets back into scipy.sparse
matrices of the output's format.

>>> import numpy as np, scipy.sparse as sp
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import CSR, F64, TensorType
>>> from lowering.dialects.sparse import ToDenseOp
>>> x = Block([TensorType((None, None), F64, CSR)]).args[0]
>>> boundary = SparseBoundary.of([x], x)
>>> len(boundary.inputs), len(boundary.outputs)
(4, 4)
>>> boundary.arguments([sp.csr_matrix(np.eye(2))])[0].tolist()   # the positions
[0, 1, 2]
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lowering.dialects.sparse import AssembleOp, DisassembleOp
from lowering.dialects.sparse.interpret import check_storage, scipy_sparse
from lowering.ir.core import Block, Value
from lowering.ir.types import I64, TensorType

from .io import In, Out, graph_value


def _is_sparse(variable) -> bool:
    try:
        value = graph_value(variable)
    except TypeError:
        return False
    return isinstance(value.type, TensorType) and value.type.encoding is not None


def has_sparse(inputs, outputs) -> bool:
    """Whether any input or output of a ``function()`` call is a sparse variable."""
    outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    ins = inputs if isinstance(inputs, (list, tuple)) else []
    return any(_is_sparse(getattr(v, "variable", v)) for v in (*ins, *outs) if v is not None)


@dataclass
class SparseBoundary:
    """The dense inputs and outputs standing for a function's sparse ones, the ``givens`` that
    assemble each sparse input from its arrays, and where each user argument and result is."""

    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    givens: dict = field(default_factory=dict)
    input_types: list = field(default_factory=list)   # per user input: its sparse type or None
    output_types: list = field(default_factory=list)  # per user output: likewise
    single: bool = False

    @classmethod
    def of(cls, inputs, outputs) -> "SparseBoundary":
        single = outputs is not None and not isinstance(outputs, (list, tuple))
        boundary = cls(single=single)
        for pos, item in enumerate(inputs):
            variable = item.variable if isinstance(item, In) else item
            if not _is_sparse(variable):
                boundary.inputs.append(item)
                boundary.input_types.append(None)
                continue
            if isinstance(item, In):
                raise TypeError(f"input #{pos}: In() options are not supported for sparse "
                                f"inputs; pass the sparse variable itself")
            boundary.inputs.extend(boundary._assemble(graph_value(variable)))
            boundary.input_types.append(graph_value(variable).type)
        for pos, item in enumerate([outputs] if single else list(outputs or ())):
            variable = item.variable if isinstance(item, Out) else item
            if not _is_sparse(variable):
                boundary.outputs.append(item)
                boundary.output_types.append(None)
                continue
            value = graph_value(variable)
            boundary.outputs.extend(DisassembleOp.build(value).results)
            boundary.output_types.append(value.type)
        return boundary

    def _assemble(self, value: Value) -> list[Value]:
        t = value.type
        name = value.name_hint or "sparse"
        block = Block([TensorType((None,), I64), TensorType((None,), I64),
                       TensorType((None,), t.element), TensorType((2,), I64)])
        for arg, part in zip(block.args, ("positions", "coordinates", "values", "shape")):
            arg.name_hint = f"{name}_{part}"
        assembled = AssembleOp.build(*block.args, t.encoding, t.shape)
        self.givens[value] = assembled.result
        return list(block.args)

    # -- calls ------------------------------------------------------------------------------

    def arguments(self, args) -> list:
        """The dense arguments of a call with the user's ``args``."""
        out = []
        for pos, (arg, t) in enumerate(zip(args, self.input_types)):
            if t is None:
                out.append(arg)
            else:
                out.extend(storage_arrays(arg, t, f"input #{pos}"))
        out.extend(args[len(self.input_types):])
        return out

    def results(self, values):
        """The user's results from the dense ones."""
        values = list(values)
        out = []
        for t in self.output_types:
            if t is None:
                out.append(values.pop(0))
            else:
                parts, values = values[:4], values[4:]
                out.append(sparse_matrix(*parts, t))
        return out[0] if self.single else out


def storage_arrays(matrix, type: TensorType, what: str) -> list[np.ndarray]:
    """``matrix`` (a scipy.sparse matrix) as the positions, coordinates, values and shape of
    the sparse ``type``, converted to its format and checked (TypeError, ValueError)."""
    sp = scipy_sparse()
    if not sp.issparse(matrix):
        raise TypeError(f"{what} must be a scipy.sparse matrix ({type.encoding.name}_matrix) for "
                        f"the sparse variable of type {type}, got {_kind(matrix)}")
    if matrix.ndim != 2:
        raise TypeError(f"{what} must be a matrix, got {matrix.ndim} dimensions")
    if not takes_without_loss(type.dtype, matrix.dtype):
        raise TypeError(f"{what} holds {matrix.dtype} values, which {type} ({type.dtype}) "
                        f"cannot take without losing precision")
    for d, (want, got) in enumerate(zip(type.shape, matrix.shape)):
        if want is not None and want != got:
            raise ValueError(f"{what} has shape {matrix.shape}; {type} needs size {want} in "
                             f"dimension {d}")
    make = sp.csr_matrix if type.encoding.name == "csr" else sp.csc_matrix
    stored = make(matrix)
    positions = np.asarray(stored.indptr, dtype=np.int64)
    coordinates = np.asarray(stored.indices, dtype=np.int64)
    values = np.asarray(stored.data, dtype=type.dtype)
    rows, cols = stored.shape
    outer = (rows, cols)[type.encoding.outer]
    check_storage(positions, coordinates, values, outer, (rows, cols)[1 - type.encoding.outer],
                  what)
    return [positions, coordinates, values, np.array([rows, cols], dtype=np.int64)]


def takes_without_loss(dtype, other) -> bool:
    """Whether values of dtype ``other`` convert to ``dtype`` without losing precision (a wider
    float or integer, or an integer into a float; no float into an integer).

    >>> takes_without_loss("float32", "int64"), takes_without_loss("float32", "float64")
    (True, False)
    """
    dtype, other = np.dtype(dtype), np.dtype(other)
    return np.can_cast(other, dtype, "same_kind") and not (
        other.kind == dtype.kind and other.itemsize > dtype.itemsize)


def sparse_matrix(positions, coordinates, values, shape, type: TensorType):
    """The scipy.sparse matrix of ``type``'s format stored in these arrays."""
    sp = scipy_sparse()
    make = sp.csr_matrix if type.encoding.name == "csr" else sp.csc_matrix
    return make((np.asarray(values), np.asarray(coordinates), np.asarray(positions)),
                shape=tuple(int(n) for n in shape))


def _kind(x) -> str:
    return type(x).__name__ if not hasattr(x, "shape") else \
        f"{type(x).__name__} of shape {tuple(x.shape)}"


class SparseFunction:
    """A compiled function with sparse arguments or results: calls convert them (see the
    module docstring); everything else is the dense ``Function``'s (``inner``)."""

    def __init__(self, inner, boundary: SparseBoundary):
        self.inner = inner
        self.boundary = boundary

    def __call__(self, *args, **kwargs):
        if len(args) > len(self.boundary.input_types):
            raise TypeError(f"the function takes {len(self.boundary.input_types)} arguments, "
                            f"got {len(args)}")
        # The dense function was given its outputs as a list: it returns a list.
        return self.boundary.results(self.inner(*self.boundary.arguments(args), **kwargs))

    def copy(self, *args, **kwargs) -> "SparseFunction":
        """``Function.copy`` of the dense function, with the same boundary."""
        return SparseFunction(self.inner.copy(*args, **kwargs), self.boundary)

    def __reduce__(self):
        raise TypeError("a function with sparse inputs or outputs cannot be pickled")

    def __getattr__(self, name):
        if name in ("inner", "boundary") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def expand_sparse_updates(pairs: list[tuple]) -> list[tuple]:
    """``updates`` pairs with each update of a sparse shared variable (one with
    ``sparse_storage``: its positions, coordinates, values and shape shared variables) made
    four updates of those, from a ``sparse.disassemble`` of the new value."""
    out = []
    for target, new in pairs:
        parts = getattr(target, "sparse_storage", None)
        if parts is None:
            out.append((target, new))
            continue
        want = graph_value(target).type
        try:
            value = graph_value(new)
        except TypeError:
            raise TypeError(f"updates: the new value of the sparse shared variable {target} "
                            f"must be a sparse variable of type {want}, got "
                            f"{type(new).__name__}") from None
        got = value.type
        if getattr(got, "encoding", None) != want.encoding or got.element != want.element:
            raise TypeError(f"updates: the new value of the sparse shared variable {target} "
                            f"must have its type {want}, got {got}")
        out.extend(zip(parts, DisassembleOp.build(value).results))
    return out
