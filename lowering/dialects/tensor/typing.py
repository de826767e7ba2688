"""Static type inference shared by tensor ops: broadcasting and dtype promotion.

Broadcasting follows Theano: operands of an elementwise op have the same rank, and a dimension
broadcasts only where its type says ``1``. A static size wins over ``?``; two different static sizes
(neither 1) are an error.

>>> from lowering.ir.types import F32, TensorType
>>> broadcast_shapes([(None, 1), (1, 5)])
(None, 5)
>>> promote_dtypes(["int8", "float32"]), promote_dtypes(["int64", "float32"])
('float32', 'float64')
"""
from __future__ import annotations

import numpy as np

from lowering.ir.core import VerifyError
from lowering.ir.types import ScalarType, TensorType, scalar_type_of


class ShapeError(VerifyError):
    """Operand shapes that cannot go together (raised when the graph is built)."""


def broadcast_dim(dims) -> int | None:
    """The result size of one dimension broadcast across operands."""
    static = {d for d in dims if d is not None and d != 1}
    if len(static) > 1:
        raise ShapeError(f"incompatible dimension sizes {sorted(static)}")
    if static:
        return static.pop()
    if any(d is None for d in dims):
        return None
    return 1


def broadcast_shapes(shapes) -> tuple[int | None, ...]:
    """The broadcast result shape of same-rank operand shapes."""
    shapes = [tuple(s) for s in shapes]
    ranks = {len(s) for s in shapes}
    if len(ranks) > 1:
        raise ShapeError(f"operands have different ranks {sorted(ranks)}; insert a dimshuffle first")
    if not shapes:
        return ()
    return tuple(broadcast_dim(dims) for dims in zip(*shapes))


def promote_dtypes(dtypes) -> str:
    """NumPy's (and Theano's) upcast of several dtypes, as a dtype name."""
    return str(np.result_type(*[np.dtype(d) for d in dtypes]))


def promote_types(types) -> ScalarType:
    return scalar_type_of(promote_dtypes([t.dtype for t in types]))


_FLOAT_FOR_INT = {1: "float32", 8: "float32", 16: "float32", 32: "float64", 64: "float64"}


def float_result_type(element: ScalarType, floatx: str = "float64") -> ScalarType:
    """The float type a transcendental function of ``element`` returns (Theano's
    ``upgrade_to_float``): floats keep their type; small ints go to float32, wide ints to float64.
    """
    if element.is_float:
        return element
    return scalar_type_of(_FLOAT_FOR_INT[element.bits])


def merge_dim(what: str, a: int | None, b: int | None) -> int | None:
    """One size known from two operands: equal when both are static (else ShapeError(what)).

    >>> merge_dim("sizes differ", None, 3), merge_dim("sizes differ", 3, 3)
    (3, 3)
    """
    if a is not None and b is not None and a != b:
        raise ShapeError(what)
    return a if a is not None else b


def check_one_number_type(types) -> None:
    """The operands ``types`` share one element type, a number (not i1); VerifyError if not."""
    elements = {t.element for t in types}
    if len(elements) > 1:
        raise VerifyError(f"operands must have one element type, got "
                          f"{', '.join(str(t) for t in types)}")
    if types[0].element.is_bool:
        raise VerifyError(f"operands must be numbers, not booleans ({types[0]})")


def tensor_of(value) -> TensorType:
    """The TensorType of an SSA value, or an error naming what it is instead."""
    t = value.type
    if not isinstance(t, TensorType):
        raise VerifyError(f"expected a tensor value, got {t}")
    if t.encoding is not None:
        raise VerifyError(f"expected a dense tensor, got the sparse {t}; convert it with "
                          f"sparse.to_dense")
    return t


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """A non-negative axis in ``range(rank)``, or an error naming it."""
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise VerifyError(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis % rank if rank else 0


def normalize_axes(axes, rank: int) -> tuple[int, ...]:
    """Sorted unique non-negative axes; ``None`` means all axes."""
    if axes is None:
        return tuple(range(rank))
    if isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    out = sorted({normalize_axis(int(a), rank) for a in axes})
    if len(out) != len(tuple(axes)):
        raise VerifyError(f"repeated axis in {tuple(axes)}")
    return tuple(out)
