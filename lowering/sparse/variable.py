"""``SparseVariable``: the user's handle on a sparse value of a graph (Theano's
``theano.sparse.SparseVariable``). Its operators build sparse ops: ``s + d`` (dense result),
``s * d`` (sparse, ``s``'s structure), ``s.T``, ``s.toarray()``, ``s.sum(axis)``.

>>> from lowering.sparse import csr_matrix
>>> s = csr_matrix("s")
>>> str(s.T.type), s.T.format
('Sparse[float64, csc]', 'csc')
"""
from __future__ import annotations

import weakref

from lowering.ir.core import Block, Value

from .type import SparseType

_VARIABLES: "weakref.WeakValueDictionary[Value, SparseVariable]" = weakref.WeakValueDictionary()


def wrap_sparse(value: Value) -> "SparseVariable":
    """The variable of the sparse ``value``: the live one if there is one, else a new one."""
    var = _VARIABLES.get(value)
    return var if var is not None else SparseVariable(value)


def new_sparse_input(type: SparseType, name: str | None = None) -> "SparseVariable":
    """A new sparse input variable: the argument of a detached block of its own."""
    return SparseVariable(Block().add_arg(type.ir_type, name))


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

    # -- operators (defined in basic, which builds the ops) ----------------------------------

    @property
    def T(self) -> "SparseVariable":
        from .basic import transpose
        return transpose(self)

    def toarray(self):
        from .basic import dense_from_sparse
        return dense_from_sparse(self)

    def sum(self, axis=None, sparse_grad: bool = False):
        from .basic import sp_sum
        return sp_sum(self, axis, sparse_grad)

    def __add__(self, other):
        from .basic import add
        return add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        from .basic import sub
        return sub(self, other)

    def __rsub__(self, other):
        from .basic import sub
        return sub(other, self)

    def __mul__(self, other):
        from .basic import mul
        return mul(self, other)

    __rmul__ = __mul__

    def __neg__(self):
        from .basic import mul
        return mul(self, -1)

    def __dot__(self, other):
        from .basic import dot
        return dot(self, other)

    def __rdot__(self, other):
        from .basic import dot
        return dot(other, self)
