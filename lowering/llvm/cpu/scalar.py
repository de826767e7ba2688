"""The scalar dialect in LLVM IR: one emitter per function, reading each op class's declared
``kind`` (its typing rule) and ``short`` name, with NumPy's results.

- ``"float"`` ops (``exp``, ``div``, ``floor``, ...) convert integer operands to the result's
  float type first, as the op's ``evaluate`` does; transcendental functions call the vector math
  library (``cpu.math_calls``); ``sqrt`` is ``llvm.sqrt`` (correctly rounded), ``round`` is
  ``llvm.roundeven`` (halves to even, as ``numpy.round``).
- ``"arith"`` ops wrap on integers (no ``nsw``); ``floordiv``/``mod``/integer ``pow`` are in
  ``cpu.division``; ``maximum``/``minimum`` are NumPy's loops: ``(a > b or isnan(a)) ? a : b``,
  so NaN propagates and of two equal values (``-0.0`` and ``0.0``) the second operand is
  returned; NumPy's half loop compares with ``>=`` and returns the first.
- comparisons are ordered except ``ne`` (true when either side is NaN); ``i1`` compares as
  unsigned (False < True).
- ``f16`` is computed in ``f32`` and rounded back, as NumPy's half loops do.

No fast-math flags are used, except where an op says so: every result is the IEEE result NumPy
computes, so the compiled code, NumPy and the interpreter agree bit for bit on the correctly
rounded operations. The exception is the combining step of a reduction: ``bufferize`` marks it
``{fastmath = "reassoc"}`` (``scalar.allow_reassociation``), which lets LLVM reorder that chain
of operations, so that it vectorizes and interleaves the reduction (several independent
accumulators, summed at the end: an order close to NumPy's pairwise sums, not the strict
left-to-right one). On float
``add``/``mul`` it is LLVM's ``reassoc`` flag; on float ``maximum``/``minimum`` it is
``llvm.maximum``/``llvm.minimum``, which are associative (NaN still propagates; a tie of ``-0.0``
and ``0.0`` gives ``0.0`` for the maximum and ``-0.0`` for the minimum, in any order).

>>> import llvmlite.ir as ir
>>> from lowering.ir.types import I32
>>> from lowering.dialects.scalar import FloorDivOp
>>> module = ir.Module()
>>> i32 = ir.IntType(32)
>>> fn = ir.Function(module, ir.FunctionType(i32, [i32, i32]), "f")
>>> builder = ir.IRBuilder(fn.append_basic_block())
>>> _ = builder.ret(ScalarEmitter(builder).emit(FloorDivOp, list(fn.args), [I32, I32], I32))
>>> "srem i32" in str(module)
True
"""
from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from lowering.dialects.scalar import ConstantOp, ScalarOp, allows_reassociation
from lowering.dialects.scalar.position import LinearIndexOp
from lowering.ir.types import ScalarType

from .casts import convert, narrow, widen, work_type
from .complex_math import emit_complex, involves_complex
from .context import CPU_LOWERING, translation_error
from .division import float_floordiv_mod, int_floordiv_mod, int_power
from .math_calls import math_call
from .values import I1, constant

MathCall = Callable[[ir.IRBuilder, str, list], ir.Value]

# Functions of the vector math library (or libm), by short name.
MATH = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
        "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "sigmoid",
        "softplus", "erf", "arctan2",
        "erfc", "gammaln", "gamma", "j0", "j1"}
_ROUNDING = {"floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
             "round": "llvm.roundeven", "round_half_away_from_zero": "llvm.round",
             "sqrt": "llvm.sqrt"}
_FCMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class ScalarEmitter:
    """Emits scalar-dialect functions on LLVM values with an ``ir.IRBuilder``.

    ``math(builder, name, args)`` calls a transcendental function (default: the vector math
    library, with libm for what it lacks); another backend may pass its own. ``reassoc``: the
    op may be reassociated with the others of its chain (a reduction's combining step).
    """

    def __init__(self, builder: ir.IRBuilder, math: MathCall = math_call, reassoc: bool = False):
        self.b = builder
        self.math = math
        self.reassoc = reassoc

    def emit(self, op_class: type[ScalarOp], args: list, arg_types: list[ScalarType],
             result: ScalarType) -> ir.Value:
        """The value of ``op_class`` applied to ``args`` (of ``arg_types``), of type ``result``."""
        short, kind = op_class.short, op_class.kind
        if kind != "select" and involves_complex(arg_types, result):
            return emit_complex(self.b, op_class, args, arg_types, result, self.math)
        if kind == "cast":
            return convert(self.b, args[0], arg_types[0], result)
        if kind == "select":
            return self.b.select(*args)
        if kind == "float":
            work = work_type(result)
            values = [convert(self.b, v, t, work) for v, t in zip(args, arg_types)]
            return narrow(self.b, self._float_function(short, values), result)
        element = arg_types[0]
        if kind == "predicate":
            if not element.is_float:
                return ir.Constant(I1, 0)
            return self._predicate(short, widen(self.b, args[0], element))
        if kind == "compare":
            return self._compare(short, [widen(self.b, v, element) for v in args], element)
        if kind == "logical":
            return self._logical(short, args)
        if kind == "arith":
            if element.is_float:
                values = [widen(self.b, v, element) for v in args]
                return narrow(self.b, self._float_arith(short, values, element.bits == 16),
                              element)
            return self._int_arith(short, args, element.is_signed)
        raise ValueError(f"scalar op {op_class.name} has unknown kind '{kind}'")

    # -- helpers ---------------------------------------------------------------------------

    def _intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        ty = args[0].type
        fn = self.b.module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * len(args)))
        return self.b.call(fn, list(args))

    def _f(self, ty: ir.Type, value: float) -> ir.Constant:
        return ir.Constant(ty, value)

    # -- float-kind functions (operands already in the float type) ---------------------------

    def _float_function(self, short: str, v: list) -> ir.Value:
        b = self.b
        if short in MATH:
            return self.math(b, short, v)
        if short in _ROUNDING:
            return self._intrinsic(_ROUNDING[short], v[0])
        if short == "div":
            return b.fdiv(v[0], v[1])
        if short == "reciprocal":
            return b.fdiv(self._f(v[0].type, 1.0), v[0])
        raise ValueError(f"no lowering for float function '{short}'")

    def _predicate(self, short: str, x: ir.Value) -> ir.Value:
        if short == "isnan":
            return self.b.fcmp_unordered("uno", x, x)
        if short == "isinf":
            fabs = self._intrinsic("llvm.fabs", x)
            return self.b.fcmp_ordered("==", fabs, self._f(x.type, float("inf")))
        raise ValueError(f"no lowering for predicate '{short}'")

    def _compare(self, short: str, v: list, element: ScalarType) -> ir.Value:
        b = self.b
        op = _FCMP[short]
        if element.is_float:
            if short == "ne":
                return b.fcmp_unordered(op, v[0], v[1])
            return b.fcmp_ordered(op, v[0], v[1])
        if element.is_signed:
            return b.icmp_signed(op, v[0], v[1])
        return b.icmp_unsigned(op, v[0], v[1])

    def _logical(self, short: str, v: list) -> ir.Value:
        b = self.b
        if short == "not":
            return b.not_(v[0])
        return {"and": b.and_, "or": b.or_, "xor": b.xor}[short](v[0], v[1])

    # -- arithmetic --------------------------------------------------------------------------

    def _float_max_min(self, greater: bool, a: ir.Value, c: ir.Value, ties_first: bool) -> ir.Value:
        b = self.b
        wins = b.fcmp_ordered((">" if greater else "<") + ("=" if ties_first else ""), a, c)
        return b.select(b.or_(wins, b.fcmp_unordered("uno", a, a)), a, c)

    def _float_arith(self, short: str, v: list, half: bool) -> ir.Value:
        b = self.b
        ty = v[0].type
        if short == "neg":
            return b.fneg(v[0])
        if short == "abs":
            return self._intrinsic("llvm.fabs", v[0])
        if short == "sign":
            x, zero = v[0], self._f(ty, 0.0)
            inner = b.select(b.fcmp_unordered("uno", x, x), x, zero)
            inner = b.select(b.fcmp_ordered("<", x, zero), self._f(ty, -1.0), inner)
            return b.select(b.fcmp_ordered(">", x, zero), self._f(ty, 1.0), inner)
        if short == "sqr":
            return b.fmul(v[0], v[0])
        if short in ("add", "sub", "mul"):
            flags = ("reassoc",) if self.reassoc else ()
            return {"add": b.fadd, "sub": b.fsub, "mul": b.fmul}[short](v[0], v[1], flags=flags)
        if short == "floordiv":
            return float_floordiv_mod(b, v[0], v[1])[0]
        if short == "mod":
            return float_floordiv_mod(b, v[0], v[1])[1]
        if short == "pow":
            return self.math(b, "pow", v)
        if short in ("maximum", "minimum") and self.reassoc:
            return self._intrinsic(f"llvm.{short}", v[0], v[1])
        if short == "maximum":
            return self._float_max_min(True, v[0], v[1], half)
        if short == "minimum":
            return self._float_max_min(False, v[0], v[1], half)
        if short == "clip":
            return self._float_max_min(False, self._float_max_min(True, v[0], v[1], half), v[2],
                                       half)
        raise ValueError(f"no lowering for float arithmetic '{short}'")

    def _int_max_min(self, greater: bool, a: ir.Value, c: ir.Value, signed: bool) -> ir.Value:
        cmp = self.b.icmp_signed if signed else self.b.icmp_unsigned
        return self.b.select(cmp(">" if greater else "<", a, c), a, c)

    def _int_arith(self, short: str, v: list, signed: bool) -> ir.Value:
        b = self.b
        ty = v[0].type
        zero = ir.Constant(ty, 0)
        if short == "neg":
            return b.sub(zero, v[0])
        if short == "abs":
            if not signed:
                return v[0]
            return b.select(b.icmp_signed("<", v[0], zero), b.sub(zero, v[0]), v[0])
        if short == "sign":
            positive = b.zext(b.icmp_signed(">", v[0], zero) if signed
                              else b.icmp_unsigned("!=", v[0], zero), ty)
            if not signed:
                return positive
            return b.sub(positive, b.zext(b.icmp_signed("<", v[0], zero), ty))
        if short == "sqr":
            return b.mul(v[0], v[0])
        if short in ("add", "sub", "mul"):
            return {"add": b.add, "sub": b.sub, "mul": b.mul}[short](v[0], v[1])
        if short == "floordiv":
            return int_floordiv_mod(b, v[0], v[1], signed)[0]
        if short == "mod":
            return int_floordiv_mod(b, v[0], v[1], signed)[1]
        if short == "pow":
            return int_power(b, v[0], v[1], signed)
        if short == "maximum":
            return self._int_max_min(True, v[0], v[1], signed)
        if short == "minimum":
            return self._int_max_min(False, v[0], v[1], signed)
        if short == "clip":
            return self._int_max_min(False, self._int_max_min(True, v[0], v[1], signed), v[2],
                                     signed)
        raise ValueError(f"no lowering for integer arithmetic '{short}'")


# ---------------------------------------------------------------------------------------------
# Rules


@CPU_LOWERING.register(ScalarOp)
def _lower_scalar_op(fl, op):
    args = [fl.get(v) for v in op.operands]
    try:
        value = ScalarEmitter(fl.builder, reassoc=allows_reassociation(op)).emit(
            type(op), args, [v.type for v in op.operands], op.result.type)
    except ValueError as exc:
        raise translation_error(op, str(exc)) from None
    return [value]



@CPU_LOWERING.register(ConstantOp)
def _constant(fl, op: ConstantOp):
    return [constant(op.result.type, op.numpy_value)]


# The position of a fused body's element is the loop indices' combination, which bufferize
# writes in its place; no loop nest holds the op itself.
CPU_LOWERING.unsupported(LinearIndexOp, "only in tensor.fused bodies: bufferize replaces it with "
                                        "the position the loop indices give")
