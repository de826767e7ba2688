"""Base classes and the constant op of the tensor dialect.

Every tensor op is a value-semantic, side-effect-free op whose class has a ``build`` classmethod
that infers the result type from its operands (so the front end and rewrites never spell types out):

>>> import numpy as np
>>> c = ConstantOp.build(np.arange(3, dtype="float32"))
>>> str(c.result.type)
'tensor<3xf32>'
"""
from __future__ import annotations

import contextlib
from typing import ClassVar

import numpy as np

from lowering.ir.attributes import DenseAttr
from lowering.ir.constraints import AnyTensor
from lowering.ir.core import PURE, Operation, VerifyError, attr, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.traits import HAS_CANONICALIZATION_PATTERNS
from lowering.ir.types import TensorType


@contextlib.contextmanager
def op_errors(name: str, op=None):
    """Prefix type errors raised inside the block with the op name and attach ``op`` to them.

    >>> try:
    ...     with op_errors("tensor.x"):
    ...         raise VerifyError("bad axis")
    ... except VerifyError as e:
    ...     print(e)
    tensor.x: bad axis
    """
    try:
        yield
    except VerifyError as exc:
        message = exc.message if exc.message.startswith(name) else f"{name}: {exc.message}"
        raise type(exc)(message, op if op is not None else exc.op) from None


def check_result_type(op, expected: TensorType, value_dependent: bool = False) -> None:
    """Verify that ``op``'s result has the inferred type.

    With ``value_dependent`` a static size may stand where inference gives ``?`` and vice versa
    (sizes computed from operand values), but two different static sizes are an error.
    """
    got = op.result.type
    if not isinstance(got, TensorType):
        raise VerifyError(f"{op.name}: result must be a tensor, got {got}", op)
    same = got == expected
    if value_dependent and not same:
        same = (got.element == expected.element and got.rank == expected.rank
                and all(a is None or b is None or a == b for a, b in zip(got.shape, expected.shape)))
    if not same:
        raise VerifyError(f"{op.name}: result type {got} differs from the inferred {expected}", op)


class TensorOp(Operation):
    """A pure op on tensors. Subclasses implement ``build`` and ``verify_``; their
    canonicalization patterns live in ``canonical.py`` (``add_canonicalization_pattern``).

    >>> from lowering.ir.patterns import rewrite_pattern
    >>> from lowering.ir.traits import CANONICALIZATION_PATTERNS, add_canonicalization_pattern
    >>> p = rewrite_pattern(ConstantOp)(lambda op, rewriter: False)
    >>> add_canonicalization_pattern(ConstantOp, p)
    >>> p in ConstantOp.canonicalization_patterns()
    True
    >>> CANONICALIZATION_PATTERNS[ConstantOp].remove(p)
    """

    traits = frozenset({PURE, HAS_CANONICALIZATION_PATTERNS})
    # Whether the result may have a static size where inference gives '?' and vice versa (sizes
    # computed from operand values): ``check_result_type``'s ``value_dependent``.
    value_dependent_type: ClassVar[bool] = False

    def inferred_type(self) -> TensorType | None:
        """The result type that the operands and attributes give (raise VerifyError when they do
        not go together); None for ops whose ``verify_`` checks their results themselves."""
        return None

    def verify_(self):
        # Type inference, the one rule most tensor ops have beyond their field constraints.
        with op_errors(self.name, self):
            expected = self.inferred_type()
        if expected is not None:
            check_result_type(self, expected, self.value_dependent_type)

    # Folding evaluates the op's interpreter rule when every operand is a constant; results larger
    # than this stay computed at run time instead of bloating the module.
    FOLD_MAX_ELEMENTS = 4096
    # Operands larger than this are not folded from either (a parsed splat can have billions of
    # elements: computing on it would allocate them all).
    FOLD_MAX_OPERAND_ELEMENTS = 1 << 20

    def fold(self):
        """Constant-fold through the interpreter rule when all operands are ``tensor.constant``."""
        from lowering.ir.interpreter import INTERPRETER, Interpreter
        if not all(isinstance(v.owner, ConstantOp) for v in self.operands if hasattr(v, "op")) or \
                not all(hasattr(v, "op") for v in self.operands) or self.regions:
            return None
        rule = INTERPRETER.find(type(self))
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
    result = result(AnyTensor)

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
        # The result type relates to the attribute's value: its element type, a shape it fits.
        t = self.result.type
        dense = self.attributes["value"]
        if t.element != dense.type.element:
            raise VerifyError(f"value element type {dense.type.element} differs from result {t}", self)
        if not t.accepts_shape(dense.array.shape):
            raise VerifyError(f"value of shape {dense.array.shape} does not fit {t}", self)

    def fold(self):
        return None  # already a constant


@INTERPRETER.register(ConstantOp)
def _constant(interp, op, args):
    return [op.attributes["value"].elements(op).copy()]
