"""A more precise run of a function's IR: the checking mode's reference for float results.

``WideInterpreter`` runs IR as the reference interpreter does, except that elementwise float
math (``exp``, ``log``, ``sigmoid``, ``sub``, ...) keeps its results in ``np.longdouble`` (64
bits of mantissa on x86-64, where float64 has 53) instead of rounding them to the result type
after every op. Every other op (casts, reductions, indexing, ...) is given its operands rounded
to their types, as in a normal run. ``log(1 - sigmoid(30))`` in float64 loses three digits to
the rounding of ``sigmoid(30)`` to float64; this run keeps them, so it tells which of two
float64 answers is nearer the exact one. Where ``np.longdouble`` is float64 (some platforms),
float64 graphs gain nothing, but float32 and float16 ones still do.

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering.frontend.graph import toposort
>>> x = T.dvector("x")
>>> y = T.log(1 - T.nnet.sigmoid(x))
>>> interp = WideInterpreter()
>>> interp.env[x.value] = np.array([30.0])
>>> for op in toposort([y.value]):
...     _ = interp.run_op(op)
>>> bool(abs(interp.value(y.value)[0] + 30.0) < 1e-5)
True
"""
from __future__ import annotations

import numpy as np

from lowering.dialects.tensor import ElementwiseOp
from lowering.dialects.tensor.elementwise import check_broadcast
from lowering.ir.core import Value
from lowering.ir.interpreter import Interpreter

WIDE = np.dtype(np.longdouble)
# Scalar kinds whose float results are real functions of their operands (casts round on
# purpose, and comparisons and predicates give booleans).
_WIDENED_KINDS = ("float", "arith")


class WideInterpreter(Interpreter):
    """The reference interpreter with elementwise float math in ``np.longdouble``; ``value``
    gives every value rounded to its type, so results and other ops see ordinary arrays."""

    def value(self, v: Value):
        value = super().value(v)
        dtype = getattr(v.type, "dtype", None)
        if isinstance(value, np.ndarray) and value.dtype == WIDE and dtype is not None \
                and dtype != WIDE:
            return value.astype(dtype)
        return value

    def run_op(self, op):
        wide = self._run_wide(op) if _widens(op) else None
        if wide is None:
            return super().run_op(op)
        self.env[op.result] = wide
        return [wide]

    def _run_wide(self, op) -> np.ndarray | None:
        """The op's result in long double, or None where its function does not take long
        double operands (it then runs as usual)."""
        operands = [np.asarray(super(WideInterpreter, self).value(v)) for v in op.operands]
        check_broadcast(op, operands)
        try:
            with np.errstate(all="ignore"):
                result = np.asarray(op.scalar_op.numpy_fn(*[a.astype(WIDE) for a in operands]))
        except (TypeError, ValueError):
            return None
        if result.dtype != WIDE:
            return None  # computed at a lower precision: no better than the usual run
        return result


def _widens(op) -> bool:
    return (isinstance(op, ElementwiseOp) and op.scalar_op.kind in _WIDENED_KINDS
            and op.scalar_op.numpy_fn is not None and not op.scalar_attributes()
            and op.result.type.dtype.kind == "f")
