"""The scalar dialect: one op per elementwise function, on ScalarType values.

This module is the single description of what ``exp``, ``add``, ``cast`` ... compute. Each op class
declares, as class variables that the interpreter and the code generators read:

- ``short``: the function's short name (``"exp"``), shared with the tensor op ``tensor.exp``;
- ``arity``: the number of operands;
- ``kind``: the typing rule, one of ``KINDS`` (``"float"``, ``"arith"``, ``"logical"``,
  ``"compare"``, ``"predicate"``), or ``"select"`` / ``"cast"`` for those two ops;
- ``numpy_fn``: the NumPy reference implementation;
- ``is_differentiable``: whether the function has a non-zero derivative in its float operands;
- ``complex_result``: what the function gives for complex operands (``"same"``: their type,
  ``"real"``: the type of their parts), or ``None`` when it refuses them (comparisons, floor...).

``result_element`` infers the result type and ``evaluate`` runs the function on NumPy scalars or
arrays (converting integer operands of ``"float"`` ops to the float type first):

>>> from lowering.ir.types import F32, I32
>>> str(ExpOp.result_element([I32])), str(AddOp.result_element([F32, F32]))
('f64', 'f32')
>>> import numpy as np
>>> ExpOp.evaluate(np.int32(0)), FloorDivOp.evaluate(np.int8(7), np.int8(0))
(np.float64(1.0), np.int8(0))
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from lowering.ir.attributes import Attribute, ComplexAttr, FloatAttr, IntAttr
from lowering.ir.constraints import AnyScalar, Bool, ConstraintVar
from lowering.ir.core import (COMMUTATIVE, PURE, TERMINATOR, Operation, VerifyError, attr, operand,
                              register_op, result, var_operand)
from lowering.ir.types import I1, ScalarType, complex_type_of, scalar_type_of

from . import functions as fn

FLOAT, INT, BOOL, COMPLEX = "float", "int", "bool", "complex"


def element_class(element: ScalarType) -> str:
    """``"float"``, ``"int"`` (signed, unsigned and index), ``"bool"`` (i1) or ``"complex"``.

    >>> from lowering.ir.types import I1, UI8, C64
    >>> element_class(I1), element_class(UI8), element_class(C64)
    ('bool', 'int', 'complex')
    """
    if not isinstance(element, ScalarType):
        raise VerifyError(f"expected a scalar element type, got {element}")
    if element.is_complex:
        return COMPLEX
    return FLOAT if element.is_float else BOOL if element.is_bool else INT


_FLOAT_FOR_INT = {1: "float32", 8: "float32", 16: "float32", 32: "float64", 64: "float64"}


def float_type_for(element: ScalarType) -> ScalarType:
    """The float type a math function of ``element`` computes in (Theano's ``upgrade_to_float``):
    floats keep their type, i1/i8/i16 (and unsigned) go to f32, wider integers to f64.

    >>> from lowering.ir.types import I16, I64, F16
    >>> str(float_type_for(I16)), str(float_type_for(I64)), str(float_type_for(F16))
    ('f32', 'f64', 'f16')
    """
    if element.is_float or element.is_complex:
        return element
    return scalar_type_of(_FLOAT_FOR_INT[element.bits])


@dataclass(frozen=True)
class Kind:
    """A typing rule shared by a family of scalar ops.

    ``accepts``: the element classes operands may have (all operands share one type);
    ``result``: ``"same"`` (the operands' type), ``"float"`` (``float_type_for`` the operands'
    type; integers are converted before computing), ``"i1"``, ``"real"`` (the parts' type of
    complex operands) or ``"complex"`` (the complex type with parts of the operands' type).
    """

    name: str
    accepts: frozenset
    result: str
    summary: str


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("float", frozenset({FLOAT, INT, BOOL}), "float",
         "real math function; integer operands are converted to their float type first"),
    Kind("arith", frozenset({FLOAT, INT}), "same",
         "arithmetic on integers (wrapping, as NumPy) and floats"),
    Kind("logical", frozenset({INT, BOOL}), "same",
         "logical on i1, bitwise on integers"),
    Kind("compare", frozenset({FLOAT, INT, BOOL}), "i1", "comparison (NaN compares unequal)"),
    Kind("predicate", frozenset({FLOAT, INT, BOOL}), "i1", "test of a float property"),
    Kind("complex_part", frozenset({COMPLEX}), "real", "a real part of a complex number"),
    Kind("complex_same", frozenset({COMPLEX}), "same", "a complex function of a complex number"),
    Kind("complex_of", frozenset({FLOAT}), "complex",
         "a complex number from two f32 or f64 numbers"),
)}


class ScalarOp(Operation):
    """Base of every scalar function op; subclasses only declare the class variables."""

    traits = frozenset({PURE})
    short: ClassVar[str] = ""
    arity: ClassVar[int] = 0
    kind: ClassVar[str] = ""
    numpy_fn: ClassVar[Callable | None] = None
    is_differentiable: ClassVar[bool] = False
    complex_result: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in vars(cls):
            cls.short = cls.name.split(".", 1)[1]

    # -- typing ---------------------------------------------------------------------------

    @classmethod
    def result_element(cls, operand_elements, **attrs) -> ScalarType:
        """The result type for operands of these element types (an error names what is wrong)."""
        elements = list(operand_elements)
        if len(elements) != cls.arity:
            raise VerifyError(f"{cls.name}: expected {cls.arity} operand(s), got {len(elements)}")
        kind = KINDS[cls.kind]
        if len(set(elements)) > 1:
            raise VerifyError(f"{cls.name}: operands must have one element type, got "
                              f"{', '.join(map(str, elements))}")
        element = elements[0]
        found = element_class(element)
        if found == COMPLEX and COMPLEX not in kind.accepts:
            if cls.complex_result is None:
                raise VerifyError(f"{cls.name}: operand type {element} is not accepted "
                                  f"({cls.short} is not defined for complex numbers)")
            return element if cls.complex_result == "same" else element.real_part
        if found not in kind.accepts:
            raise VerifyError(f"{cls.name}: operand type {element} is not accepted "
                              f"(expects {' or '.join(sorted(kind.accepts))})")
        if kind.result == "same":
            return element
        if kind.result == "float":
            return float_type_for(element)
        if kind.result == "real":
            return element.real_part
        if kind.result == "complex":
            try:
                return complex_type_of(element)
            except TypeError as exc:
                raise VerifyError(f"{cls.name}: {exc}") from None
        return I1

    # -- semantics ------------------------------------------------------------------------

    @classmethod
    def evaluate(cls, *values, **attrs):
        """Apply the function to NumPy scalars or broadcastable arrays of one dtype; the result
        has exactly the dtype of ``result_element``."""
        arrays = [np.asarray(v) for v in values]
        out = cls.result_element([scalar_type_of(a.dtype) for a in arrays], **attrs)
        if cls.kind == "float":
            arrays = [a.astype(out.dtype, copy=False) for a in arrays]
        with np.errstate(all="ignore"):
            value = cls.numpy_fn(*arrays)
        return np.asarray(value).astype(out.dtype, copy=False)[()]

    def evaluate_attributes(self) -> dict:
        """Keyword arguments ``evaluate`` and ``result_element`` need besides the operands."""
        return {}

    @classmethod
    def infer_result_types(cls, operand_types, attributes) -> list[ScalarType]:
        """The result type an assembly format leaves out: ``result_element``'s."""
        return [cls.result_element(operand_types)]

    # -- construction and checks ----------------------------------------------------------

    @classmethod
    def build(cls, *operands, location=None) -> "ScalarOp":
        """Make the op on scalar values, inferring its result type."""
        out = cls.result_element([v.type for v in operands])
        return cls.create(operands=operands, result_types=[out], location=location)

    def verify_(self):
        # The operands' element classes a kind accepts and the result type it gives are the
        # kind's typing rule (``result_element``, shared with the tensor ops), not a constraint.
        try:
            expected = self.result_element([v.type for v in self.operands],
                                           **self.evaluate_attributes())
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        if self.result.type != expected:
            raise VerifyError(f"{self.name}: result type {self.result.type} should be {expected}",
                              self)

    def fold(self):
        """Evaluate at compile time when every operand is a ``scalar.constant``."""
        if not all(isinstance(getattr(v, "owner", None), ConstantOp) for v in self.operands):
            return None
        value = self.evaluate(*[v.owner.numpy_value for v in self.operands],
                              **self.evaluate_attributes())
        return [scalar_attribute(value, self.result.type)]

    @classmethod
    def materialize_constant(cls, attribute, type, location):
        """Folding hook: turn a folded attribute into a ``scalar.constant``."""
        if not isinstance(type, ScalarType):
            return None
        return ConstantOp.create(result_types=[type], attributes={"value": attribute},
                                 location=location)


def scalar_attribute(value, element: ScalarType) -> Attribute:
    """The attribute holding a scalar of type ``element``.

    >>> from lowering.ir.types import F32, I1
    >>> str(scalar_attribute(0.5, F32)), str(scalar_attribute(True, I1))
    ('5.000000e-01 : f32', 'true')
    """
    value = np.asarray(value, dtype=element.dtype)[()]
    if element.is_complex:
        return ComplexAttr(complex(value), element)
    if element.is_float:
        return FloatAttr(float(value), element)
    return IntAttr(int(value), element)


# ---------------------------------------------------------------------------------------------
# Constants and terminators


@register_op
class ConstantOp(Operation):
    """A scalar constant: ``%c = "scalar.constant"() {value = 1.0 : f32} : () -> f32``.

    >>> from lowering.ir.types import F32
    >>> c = ConstantOp.build(2.5, F32)
    >>> str(c.result.type), c.numpy_value
    ('f32', np.float32(2.5))
    """

    name = "scalar.constant"
    assembly_format = "$value attr-dict"
    traits = frozenset({PURE})
    value = attr((IntAttr, FloatAttr, ComplexAttr))
    result = result(AnyScalar)

    @classmethod
    def infer_result_types(cls, operand_types, attributes) -> list[ScalarType]:
        """The result type an assembly format leaves out: the value's."""
        return [attributes["value"].type]

    @classmethod
    def build(cls, value, element: ScalarType, location=None) -> "ConstantOp":
        return cls.create(result_types=[element],
                          attributes={"value": scalar_attribute(value, element)}, location=location)

    @property
    def numpy_value(self):
        """The value as a NumPy scalar of the result's dtype."""
        return np.asarray(self.attributes["value"].value, dtype=self.result.type.dtype)[()]

    def verify_(self):
        t = self.result.type
        a = self.attributes["value"]
        if a.type != t:
            raise VerifyError(f"scalar.constant: value type {a.type} differs from result {t}", self)
        if not t.is_float and not t.is_complex and not (a.value in (0, 1) if t.is_bool else
                                   np.iinfo(t.dtype).min <= a.value <= np.iinfo(t.dtype).max):
            raise VerifyError(f"scalar.constant: {a.value} does not fit in {t}", self)


@register_op
class YieldOp(Operation):
    """Ends a scalar body (of a fused op or a loop), giving back its values."""

    name = "scalar.yield"
    assembly_format = "attr-dict ($values^ : type($values))?"
    traits = frozenset({TERMINATOR})
    values = var_operand()


# ---------------------------------------------------------------------------------------------
# Arity bases


class UnaryOp(ScalarOp):
    assembly_format = "$input attr-dict : type($input)"
    arity = 1
    input = operand(AnyScalar)
    result = result(AnyScalar)


# The one element type of the operands of a binary, clip or select op (and a select's result).
_SAME = ConstraintVar("T", AnyScalar)


class BinaryOp(ScalarOp):
    assembly_format = "$lhs, $rhs attr-dict : type($lhs, $rhs)"
    arity = 2
    lhs = operand(_SAME)
    rhs = operand(_SAME)
    result = result(AnyScalar)


def _unary(name: str, kind: str, numpy_fn, differentiable: bool, doc: str,
           complex_result: str | None = None, module: str = __name__):
    cls = type(_class_name(name), (UnaryOp,), {
        "name": name, "kind": kind, "numpy_fn": staticmethod(numpy_fn),
        "is_differentiable": differentiable, "__doc__": doc, "__module__": module,
        "complex_result": complex_result})
    return register_op(cls)


def _binary(name: str, kind: str, numpy_fn, differentiable: bool, doc: str, commutative=False,
            complex_result: str | None = None, module: str = __name__):
    traits = frozenset({PURE, COMMUTATIVE}) if commutative else frozenset({PURE})
    cls = type(_class_name(name), (BinaryOp,), {
        "name": name, "kind": kind, "numpy_fn": staticmethod(numpy_fn), "traits": traits,
        "is_differentiable": differentiable, "__doc__": doc, "__module__": module,
        "complex_result": complex_result})
    return register_op(cls)


_CLASS_NAMES = {"floordiv": "FloorDiv", "arcsin": "ArcSin", "arccos": "ArcCos", "arctan": "ArcTan",
                "arcsinh": "ArcSinh", "arccosh": "ArcCosh", "arctanh": "ArcTanh",
                "arctan2": "ArcTan2", "isnan": "IsNan", "isinf": "IsInf", "expm1": "ExpM1",
                "log1p": "Log1p", "softplus": "Softplus",
                "round_half_away_from_zero": "RoundHalfAwayFromZero",
                "gammaln": "GammaLn"}


def _class_name(name: str) -> str:
    short = name.split(".", 1)[1]
    return _CLASS_NAMES.get(short, short.capitalize()) + "Op"


# ---------------------------------------------------------------------------------------------
# Unary functions: (kind, NumPy reference, differentiable, description)

NegOp = _unary("scalar.neg", "arith", np.negative, True, "-x (wraps for integers).",
               complex_result="same")
AbsOp = _unary("scalar.abs", "arith", np.absolute, True,
               "|x| (abs of the most negative int wraps; the modulus of a complex number).",
               complex_result="real")
SignOp = _unary("scalar.sign", "arith", np.sign, False, "-1, 0 or 1 (NaN for NaN).")
SqrOp = _unary("scalar.sqr", "arith", fn.sqr, True, "x * x.", complex_result="same")
ExpOp = _unary("scalar.exp", "float", np.exp, True, "e ** x.", complex_result="same")
Exp2Op = _unary("scalar.exp2", "float", np.exp2, True, "2 ** x.")
ExpM1Op = _unary("scalar.expm1", "float", np.expm1, True, "exp(x) - 1, accurate near 0.")
LogOp = _unary("scalar.log", "float", np.log, True, "Natural logarithm (-inf at 0, NaN below).")
Log2Op = _unary("scalar.log2", "float", np.log2, True, "Base-2 logarithm.")
Log10Op = _unary("scalar.log10", "float", np.log10, True, "Base-10 logarithm.")
Log1pOp = _unary("scalar.log1p", "float", np.log1p, True, "log(1 + x), accurate near 0.")
SqrtOp = _unary("scalar.sqrt", "float", np.sqrt, True, "Square root (NaN below 0).")
ReciprocalOp = _unary("scalar.reciprocal", "float", fn.reciprocal, True, "1 / x.")
SinOp = _unary("scalar.sin", "float", np.sin, True, "Sine.")
CosOp = _unary("scalar.cos", "float", np.cos, True, "Cosine.")
TanOp = _unary("scalar.tan", "float", np.tan, True, "Tangent.")
ArcSinOp = _unary("scalar.arcsin", "float", np.arcsin, True, "Inverse sine (NaN outside [-1, 1]).")
ArcCosOp = _unary("scalar.arccos", "float", np.arccos, True,
                  "Inverse cosine (NaN outside [-1, 1]).")
ArcTanOp = _unary("scalar.arctan", "float", np.arctan, True, "Inverse tangent.")
SinhOp = _unary("scalar.sinh", "float", np.sinh, True, "Hyperbolic sine.")
CoshOp = _unary("scalar.cosh", "float", np.cosh, True, "Hyperbolic cosine.")
TanhOp = _unary("scalar.tanh", "float", np.tanh, True, "Hyperbolic tangent.")
ArcSinhOp = _unary("scalar.arcsinh", "float", np.arcsinh, True, "Inverse hyperbolic sine.")
ArcCoshOp = _unary("scalar.arccosh", "float", np.arccosh, True,
                   "Inverse hyperbolic cosine (NaN below 1).")
ArcTanhOp = _unary("scalar.arctanh", "float", np.arctanh, True,
                   "Inverse hyperbolic tangent (NaN outside [-1, 1]).")
SigmoidOp = _unary("scalar.sigmoid", "float", fn.sigmoid, True, "1 / (1 + exp(-x)).")
SoftplusOp = _unary("scalar.softplus", "float", fn.softplus, True, "log(1 + exp(x)).")
ErfOp = _unary("scalar.erf", "float", fn.erf, True, "The error function.")
FloorOp = _unary("scalar.floor", "float", np.floor, False, "Largest integer <= x, as a float.")
CeilOp = _unary("scalar.ceil", "float", np.ceil, False, "Smallest integer >= x, as a float.")
RoundOp = _unary("scalar.round", "float", np.rint, False,
                 "Nearest integer, halves to even (numpy.round), as a float.")
RoundHalfAwayFromZeroOp = _unary("scalar.round_half_away_from_zero", "float",
                                 fn.round_half_away_from_zero, False,
                                 "Nearest integer, halves away from zero (C's round), as a float.")
TruncOp = _unary("scalar.trunc", "float", np.trunc, False, "x rounded toward zero, as a float.")
NotOp = _unary("scalar.not", "logical", np.invert, False,
               "Logical not on i1, bitwise invert on integers.")
IsNanOp = _unary("scalar.isnan", "predicate", fn.isnan, False, "Whether x is NaN.")
IsInfOp = _unary("scalar.isinf", "predicate", fn.isinf, False, "Whether x is +-inf.")

# ---------------------------------------------------------------------------------------------
# Binary functions

AddOp = _binary("scalar.add", "arith", np.add, True, "x + y.", commutative=True,
                complex_result="same")
SubOp = _binary("scalar.sub", "arith", np.subtract, True, "x - y.", complex_result="same")
MulOp = _binary("scalar.mul", "arith", np.multiply, True, "x * y.", commutative=True,
                complex_result="same")
DivOp = _binary("scalar.div", "float", np.true_divide, True,
                "True division x / y (integers are divided as floats).", complex_result="same")
FloorDivOp = _binary("scalar.floordiv", "arith", np.floor_divide, False,
                     "floor(x / y), NumPy's signs; integer division by zero gives 0.")
ModOp = _binary("scalar.mod", "arith", np.mod, True,
                "x - floor(x / y) * y (sign of y, as NumPy); integer x % 0 gives 0.")
PowOp = _binary("scalar.pow", "arith", fn.power, True,
                "x ** y; integer x ** -k truncates (0 unless x is 1 or -1).")
MaximumOp = _binary("scalar.maximum", "arith", np.maximum, True,
                    "The larger of x and y (NaN if either is NaN).", commutative=True)
MinimumOp = _binary("scalar.minimum", "arith", np.minimum, True,
                    "The smaller of x and y (NaN if either is NaN).", commutative=True)
ArcTan2Op = _binary("scalar.arctan2", "float", np.arctan2, True,
                    "The angle of the point (x=rhs, y=lhs): arctan2(y, x).")
EqOp = _binary("scalar.eq", "compare", np.equal, False, "x == y.", commutative=True)
NeOp = _binary("scalar.ne", "compare", np.not_equal, False, "x != y.", commutative=True)
LtOp = _binary("scalar.lt", "compare", np.less, False, "x < y.")
LeOp = _binary("scalar.le", "compare", np.less_equal, False, "x <= y.")
GtOp = _binary("scalar.gt", "compare", np.greater, False, "x > y.")
GeOp = _binary("scalar.ge", "compare", np.greater_equal, False, "x >= y.")
AndOp = _binary("scalar.and", "logical", np.bitwise_and, False,
                "Logical and on i1, bitwise and on integers.", commutative=True)
OrOp = _binary("scalar.or", "logical", np.bitwise_or, False,
               "Logical or on i1, bitwise or on integers.", commutative=True)
XorOp = _binary("scalar.xor", "logical", np.bitwise_xor, False,
                "Logical xor on i1, bitwise xor on integers.", commutative=True)


# ---------------------------------------------------------------------------------------------
# Ternary functions and casts


@register_op
class ClipOp(ScalarOp):
    """``minimum(maximum(x, lo), hi)``: ``hi`` wins when ``lo > hi``."""

    name = "scalar.clip"
    assembly_format = "$input, $lo, $hi attr-dict : type($input, $lo, $hi)"
    arity = 3
    kind = "arith"
    numpy_fn = staticmethod(fn.clip)
    is_differentiable = True
    input = operand(_SAME)
    lo = operand(_SAME)
    hi = operand(_SAME)
    result = result(_SAME)


@register_op
class SelectOp(ScalarOp):
    """``on_true if cond else on_false``; ``cond`` is i1, the branches share any type."""

    name = "scalar.select"
    assembly_format = ("$cond, $on_true, $on_false attr-dict : "
                       "type($cond), type($on_true, $on_false)")
    arity = 3
    kind = "select"
    numpy_fn = staticmethod(fn.select)
    is_differentiable = True
    cond = operand(Bool)
    on_true = operand(_SAME)
    on_false = operand(_SAME)
    result = result(_SAME)

    @classmethod
    def result_element(cls, operand_elements, **attrs) -> ScalarType:
        elements = list(operand_elements)
        if len(elements) != 3:
            raise VerifyError(f"{cls.name}: expected 3 operands, got {len(elements)}")
        cond, on_true, on_false = elements
        if cond != I1:
            raise VerifyError(f"{cls.name}: the condition must be i1, got {cond}")
        if on_true != on_false:
            raise VerifyError(f"{cls.name}: branches must have one element type, got "
                              f"{on_true} and {on_false}")
        element_class(on_true)
        return on_true

    @classmethod
    def evaluate(cls, cond, on_true, on_false):
        out = cls.result_element([scalar_type_of(np.asarray(v).dtype)
                                  for v in (cond, on_true, on_false)])
        return np.asarray(fn.select(cond, on_true, on_false)).astype(out.dtype, copy=False)[()]


@register_op
class CastOp(ScalarOp):
    """Conversion to the result type, as NumPy's ``astype``: integers wrap, floats to integers
    truncate toward zero, anything to i1 tests ``!= 0``."""

    name = "scalar.cast"
    assembly_format = "$input attr-dict : type($input) -> type($result)"
    arity = 1
    kind = "cast"
    numpy_fn = staticmethod(lambda x, to: np.asarray(x).astype(to.dtype))
    is_differentiable = True
    input = operand(AnyScalar)
    result = result(AnyScalar)

    @classmethod
    def result_element(cls, operand_elements, to: ScalarType | None = None, **attrs) -> ScalarType:
        elements = list(operand_elements)
        if len(elements) != 1:
            raise VerifyError(f"{cls.name}: expected 1 operand, got {len(elements)}")
        element_class(elements[0])
        if not isinstance(to, ScalarType):
            raise VerifyError(f"{cls.name}: the target must be a scalar type, got {to}")
        if elements[0].is_complex and not to.is_complex:
            raise VerifyError(f"{cls.name}: casting from {elements[0]} to {to} is ambiguous: "
                              f"take real, imag, abs or angle")
        return to

    @classmethod
    def evaluate(cls, value, to: ScalarType):
        cls.result_element([scalar_type_of(np.asarray(value).dtype)], to=to)
        with np.errstate(all="ignore"):
            return np.asarray(value).astype(to.dtype)[()]

    @classmethod
    def build(cls, value, to: ScalarType, location=None) -> "CastOp":
        cls.result_element([value.type], to=to)
        return cls.create(operands=[value], result_types=[to], location=location)

    def evaluate_attributes(self) -> dict:
        return {"to": self.result.type}


# ---------------------------------------------------------------------------------------------
# Fast-math marks (MLIR's ``arith`` ``fastmath`` attribute, reduced to what is used)

FASTMATH = "fastmath"
REASSOC = "reassoc"


def allow_reassociation(op: Operation) -> Operation:
    """Mark ``op`` ``{fastmath = "reassoc"}``: a chain of such ops (a reduction's combining
    step) may be evaluated in any grouping and order. The interpreter computes it as written;
    code generators may reorder it (several accumulators, vectors), which changes float results
    by rounding only. Returns ``op``.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32
    >>> x = Block([F32]).args[0]
    >>> allows_reassociation(allow_reassociation(AddOp.build(x, x)))
    True
    """
    from lowering.ir.attributes import StringAttr
    op.attributes[FASTMATH] = StringAttr(REASSOC)
    return op


def allows_reassociation(op: Operation) -> bool:
    """Whether ``op`` is marked with ``allow_reassociation``."""
    mark = op.attributes.get(FASTMATH)
    return mark is not None and getattr(mark, "value", None) == REASSOC


# Short name -> class, for every scalar function op (the tensor dialect mirrors these names).
SCALAR_OPS: dict[str, type[ScalarOp]] = {
    cls.short: cls for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, ScalarOp) and "name" in vars(cls)}

__all__ = ["FLOAT", "INT", "BOOL", "KINDS", "Kind", "ScalarOp", "UnaryOp", "BinaryOp", "ConstantOp",
           "YieldOp", "SCALAR_OPS", "element_class", "float_type_for", "scalar_attribute",
           "FASTMATH", "REASSOC", "allow_reassociation", "allows_reassociation",
           *sorted(cls.__name__ for cls in SCALAR_OPS.values())]
