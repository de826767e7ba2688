"""The vector math library: exp, log, sin, tanh, ... as LLVM IR that loops vectorize.

Each function is defined once per module and float type as an internal, ``alwaysinline`` function
named ``lowering.<name>.<f32|f64>`` (``lowering.exp.f32``).  Its body is straight-line code:
arithmetic, intrinsics that have vector forms (``llvm.fma``, ``llvm.fabs``, ``llvm.rint``, ...),
bit manipulation and selects; no branches and no calls into libm.  After inlining, LLVM's loop
vectorizer widens a loop calling it like any other arithmetic.

Special values follow NumPy (C99 Annex F): NaN in gives NaN out, infinities and signed zeros come
out as NumPy gives them, results overflow to inf and underflow through the subnormals to 0.
``MATH_FUNCTIONS`` lists the functions with their arity, their documented error bound in ulps
(checked by ``tests/llvm/test_vecmath.py``, measured by ``benchmarks/vecmath_accuracy.py``; see
``docs/vecmath.md``) and notes on their domain.

>>> import llvmlite.ir as ir
>>> module = ir.Module()
>>> fn = define_math_function(module, "exp", ir.FloatType())
>>> fn.name, define_math_function(module, "exp", ir.FloatType()) is fn
('lowering.exp.f32', True)
>>> MATH_FUNCTIONS["pow"].arity, MATH_FUNCTIONS["exp"].max_ulp["f32"]
(2, 1.0)
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

import llvmlite.ir as ir

from lowering.llvm.vecmath import exp as _exp
from lowering.llvm.vecmath import inverse_hyperbolic as _invh
from lowering.llvm.vecmath import inverse_trig as _inv
from lowering.llvm.vecmath import log as _log
from lowering.llvm.vecmath import special as _special
from lowering.llvm.vecmath import trig as _trig
from lowering.llvm.vecmath.emit import MathBuilder, format_of


@dataclasses.dataclass(frozen=True)
class MathFunction:
    """One function of the library.

    ``max_ulp`` maps ``"f32"``/``"f64"`` to the documented bound on the error, in units in the last
    place of the exact result (0.5 would be correct rounding); ``domain`` says where it holds and
    what happens elsewhere.
    """

    name: str
    arity: int
    max_ulp: Mapping[str, float]
    domain: str
    emit: Callable[..., ir.Value] = dataclasses.field(repr=False, compare=False)


def _f(name: str, arity: int, f32: float, f64: float, domain: str, emit) -> MathFunction:
    return MathFunction(name, arity, {"f32": f32, "f64": f64}, domain, emit)


_HUGE_TRIG = ("f64 arguments of 2**19 and more are reduced to 2**-104 absolute, so the rare ones "
              "within 2**-50 of a multiple of π/2 (only crafted huge doubles) exceed the bound")

MATH_FUNCTIONS: dict[str, MathFunction] = {f.name: f for f in (
    _f("exp", 1, 1.0, 1.0, "all x; inf above ~88.72 (f32) / ~709.78 (f64), 0 below the "
       "subnormal range", _exp.emit_exp),
    _f("exp2", 1, 1.0, 1.0, "all x; exact at integers", _exp.emit_exp2),
    _f("expm1", 1, 1.0, 1.0, "all x; -1 for very negative x", _exp.emit_expm1),
    _f("log", 1, 1.0, 1.0, "x > 0; -inf at ±0, NaN below 0", _log.emit_log),
    _f("log2", 1, 1.0, 1.0, "x > 0; exact at powers of two", _log.emit_log2),
    _f("log10", 1, 1.0, 1.0, "x > 0", _log.emit_log10),
    _f("log1p", 1, 1.0, 1.0, "x > -1; -inf at -1, NaN below", _log.emit_log1p),
    _f("sin", 1, 1.0, 1.0, f"all finite x; NaN at ±inf. {_HUGE_TRIG}", _trig.emit_sin),
    _f("cos", 1, 1.0, 1.0, f"all finite x; NaN at ±inf. {_HUGE_TRIG}", _trig.emit_cos),
    _f("tan", 1, 1.0, 1.5, f"all finite x; NaN at ±inf. {_HUGE_TRIG}", _trig.emit_tan),
    _f("arcsin", 1, 1.0, 1.0, "[-1, 1]; NaN outside", _inv.emit_arcsin),
    _f("arccos", 1, 1.0, 1.0, "[-1, 1]; NaN outside", _inv.emit_arccos),
    _f("arctan", 1, 1.0, 1.0, "all x", _inv.emit_arctan),
    _f("arctan2", 2, 1.0, 1.0, "all (y, x), C99 signed zeros and infinities",
       _inv.emit_arctan2),
    _f("sinh", 1, 1.0, 1.0, "all x; overflows to ±inf near |x| = 89.4 (f32) / 710.5 (f64)",
       _exp.emit_sinh),
    _f("cosh", 1, 1.0, 1.0, "all x", _exp.emit_cosh),
    _f("tanh", 1, 1.0, 1.0, "all x", _exp.emit_tanh),
    _f("arcsinh", 1, 1.5, 1.5, "all x", _invh.emit_arcsinh),
    _f("arccosh", 1, 1.0, 1.0, "x ≥ 1; NaN below", _invh.emit_arccosh),
    _f("arctanh", 1, 1.5, 1.5, "[-1, 1]; ±inf at ±1, NaN outside", _invh.emit_arctanh),
    _f("sigmoid", 1, 1.0, 1.0, "all x; 1/(1+exp(-x)) without overflow", _exp.emit_sigmoid),
    _f("softplus", 1, 1.0, 1.0, "all x; log1p(exp(x)) without overflow", _log.emit_softplus),
    _f("pow", 2, 0.501, 1.0, "all (x, y), C99/NumPy special cases; f32 evaluated in f64",
       _log.emit_pow),
    _f("sqrt", 1, 0.5, 0.5, "x ≥ -0 (correctly rounded); NaN below", _special.emit_sqrt),
    _f("erf", 1, 1.5, 1.5, "all x", _special.emit_erf),
    _f("cbrt", 1, 1.0, 1.0, "all x", _special.emit_cbrt),
)}


def function_name(name: str, ty: ir.Type) -> str:
    """The symbol of ``name`` for ``ty``: ``lowering.<name>.<f32|f64>``.

    >>> function_name("tanh", ir.DoubleType())
    'lowering.tanh.f64'
    """
    return f"lowering.{name}.{format_of(ty).name}"


def define_math_function(module: ir.Module, name: str, ty: ir.Type,
                         ldexp_instruction: bool | None = None) -> ir.Function:
    """Add the definition of math function ``name`` for ``ty`` to ``module`` (once) and return it.

    ``ty`` is ``ir.FloatType()`` or ``ir.DoubleType()``; the function takes ``arity`` arguments of
    that type and returns one.  Calling again returns the function already defined.
    ``ldexp_instruction`` chooses how powers of two are applied (see ``MathBuilder``; the same
    results either way); by default, the fastest way on this host.
    """
    if name not in MATH_FUNCTIONS:
        raise ValueError(f"no vector math function '{name}' (known: "
                         f"{', '.join(sorted(MATH_FUNCTIONS))})")
    info = MATH_FUNCTIONS[name]
    fmt = format_of(ty)
    symbol = function_name(name, ty)
    existing = module.globals.get(symbol)
    if existing is not None:
        if not isinstance(existing, ir.Function):
            raise ValueError(f"'{symbol}' already names something that is not a function")
        return existing
    fn = ir.Function(module, ir.FunctionType(fmt.ir_type, [fmt.ir_type] * info.arity), symbol)
    fn.linkage = "internal"
    if (name, fmt.name) in WITH_VECTOR_VERSIONS:
        _define_with_vector_versions(module, fn, name, ldexp_instruction)
        return fn
    for attribute in ("alwaysinline", "nounwind", "readnone"):
        fn.attributes.add(attribute)
    mb = MathBuilder(ir.IRBuilder(fn.append_basic_block("entry")), fmt, ldexp_instruction)
    mb.builder.ret(info.emit(mb, *fn.args))
    return fn


# Functions whose loops run faster with a branch on the whole vector (a fast path that holds
# for nearly every argument, the exact but costly one only where a lane needs it) than with
# straight-line code computing both: they are defined with a branch and not inlined, and vector
# versions ``<name>.v4/.v8/.v16`` are offered to LLVM's loop vectorizer through the vector
# function ABI (the ``vector-function-abi-variant`` attribute), which calls them in place of
# the scalar function in vectorized loops. The versions have external linkage, so that nothing
# removes them before the vectorizer has used them.
WITH_VECTOR_VERSIONS = {("sin", "f32"): False, ("cos", "f32"): True}  # -> is the cosine


def _define_with_vector_versions(module: ir.Module, fn: ir.Function, name: str,
                                 ldexp_instruction: bool | None) -> None:
    cosine = WITH_VECTOR_VERSIONS[name, format_of(fn.return_value.type).name]
    for attribute in ("noinline", "nounwind", "readnone"):
        fn.attributes.add(attribute)
    exact = _trig.define_sin_cos_f32(fn, ldexp_instruction, cosine)
    mappings = []
    for lanes in _trig.VECTOR_WIDTHS:
        vector = _trig.define_sin_cos_f32_vector(module, fn, exact, lanes, cosine)
        mappings.append(f"_ZGV_LLVM_N{lanes}v_{fn.name}({vector.name})")
    # llvmlite knows no string attributes: added to the set directly, printed as given.
    set.add(fn.attributes, f'"vector-function-abi-variant"="{",".join(mappings)}"')
