"""Base classes and the constant op of the tensor dialect.

Every tensor op is a value-semantic, side-effect-free op whose class has a ``build`` classmethod
that infers the result type from its operands (so the front end and rewrites never spell types out):

>>> import numpy as np
>>> c = ConstantOp.build(np.arange(3, dtype="float32"))
>>> str(c.result.type)
'tensor<3xf32>'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import DenseAttr
from lowering.ir.core import PURE, Operation, VerifyError, attr, register_op, result
from lowering.ir.interpreter import interpreter_rule
from lowering.ir.types import TensorType


# Canonicalization patterns by op class, filled by ``add_canonicalization_pattern`` (the patterns
# live in ``canonical.py``, away from the op definitions); a class also gets its bases' patterns.
_CANONICALIZATION_PATTERNS: dict[type, list] = {}


def add_canonicalization_pattern(op_class: type, pattern) -> None:
    """Make ``pattern`` one of the canonicalization patterns of ``op_class`` and its subclasses.

    >>> from lowering.ir.patterns import rewrite_pattern
    >>> p = rewrite_pattern(ConstantOp)(lambda op, rewriter: False)
    >>> add_canonicalization_pattern(ConstantOp, p)
    >>> p in ConstantOp.canonicalization_patterns()
    True
    >>> _CANONICALIZATION_PATTERNS[ConstantOp].remove(p)
    """
    patterns = _CANONICALIZATION_PATTERNS.setdefault(op_class, [])
    if pattern not in patterns:
        patterns.append(pattern)


class TensorOp(Operation):
    """A pure op on tensors. Subclasses implement ``build`` and ``verify_``."""

    traits = frozenset({PURE})

    @classmethod
    def canonicalization_patterns(cls) -> list:
        """The patterns registered for this class and its bases (``add_canonicalization_pattern``)."""
        return [p for klass in cls.__mro__ for p in _CANONICALIZATION_PATTERNS.get(klass, ())]

    # Folding evaluates the op's interpreter rule when every operand is a constant; results larger
    # than this stay computed at run time instead of bloating the module.
    FOLD_MAX_ELEMENTS = 4096
    # Operands larger than this are not folded from either (a parsed splat can have billions of
    # elements: computing on it would allocate them all).
    FOLD_MAX_OPERAND_ELEMENTS = 1 << 20

    def fold(self):
        """Constant-fold through the interpreter rule when all operands are ``tensor.constant``."""
        from lowering.ir.interpreter import RULES, Interpreter
        if not all(isinstance(v.owner, ConstantOp) for v in self.operands if hasattr(v, "op")) or \
                not all(hasattr(v, "op") for v in self.operands) or self.regions:
            return None
        rule = RULES.get(self.name)
        if rule is None or self._too_large_to_fold():
            return None
        try:
            values = rule(Interpreter(), self, [v.owner.attributes["value"].array for v in self.operands])
        except (ValueError, IndexError, TypeError, ZeroDivisionError, FloatingPointError):
            return None  # leave the error to run time, where it names the call
        out = []
        for res, val in zip(self.results, values):
            arr = np.asarray(val, dtype=res.type.dtype)
            if arr.size > self.FOLD_MAX_ELEMENTS or not res.type.accepts_shape(arr.shape):
                return None
            out.append(DenseAttr.from_array(arr))
        return out

    def _too_large_to_fold(self) -> bool:
        operands = [v.owner.attributes["value"].array.size for v in self.operands]
        results = [int(np.prod(r.type.shape, dtype=object)) for r in self.results
                   if isinstance(r.type, TensorType) and None not in r.type.shape]
        return (max(operands, default=0) > self.FOLD_MAX_OPERAND_ELEMENTS
                or max(results, default=0) > self.FOLD_MAX_ELEMENTS)

    @classmethod
    def materialize_constant(cls, attribute, type, location):
        """Folding hook: turn a folded constant (a DenseAttr) into a ``tensor.constant``."""
        if not isinstance(type, TensorType):
            return None
        array = attribute.array if isinstance(attribute, DenseAttr) else np.asarray(attribute)
        return ConstantOp.build(np.asarray(array, dtype=type.dtype), type=type, location=location)


@register_op
class ConstantOp(TensorOp):
    """A constant tensor: ``tensor.constant dense<1.0> : tensor<f32>``.

    The result type may be more general than the value's exact shape (``?`` where the value has a
    size), as Theano's constants are (a ``(1,) of -1.0`` constant broadcasts).
    """

    name = "tensor.constant"
    assembly_format = "$value attr-dict"
    value = attr(DenseAttr)
    result = result()

    @classmethod
    def infer_result_types(cls, operand_types, attributes) -> list[TensorType]:
        """The result type the assembly format leaves out: the value's (a constant of a more
        general type prints in the generic form)."""
        return [attributes["value"].type]

    @classmethod
    def build(cls, array, type: TensorType | None = None, location=None) -> "ConstantOp":
        dense = DenseAttr.from_array(np.asarray(array))
        return cls.create(result_types=[type or dense.type], attributes={"value": dense},
                          location=location)

    def verify_(self):
        t = self.result.type
        dense = self.attributes["value"]
        if not isinstance(t, TensorType):
            raise VerifyError("tensor.constant must produce a tensor", self)
        if t.element != dense.type.element:
            raise VerifyError(f"value element type {dense.type.element} differs from result {t}", self)
        if not t.accepts_shape(dense.array.shape):
            raise VerifyError(f"value of shape {dense.array.shape} does not fit {t}", self)

    def fold(self):
        return None  # already a constant


@interpreter_rule("tensor.constant")
def _constant(interp, op, args):
    return [op.attributes["value"].elements(op).copy()]
