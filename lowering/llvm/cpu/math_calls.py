"""Calls of the math functions (``exp``, ``tanh``, ``arctan2``, ...) in generated code.

A function the vector math library has (``vecmath.MATH_FUNCTIONS``) is defined in the module as
an ``alwaysinline`` function of straight-line code, so the loop around it vectorizes. A function
it lacks calls the C library's (``asinhf``/``asinh``): correct to libm's accuracy, which is
NumPy's too, but one scalar call per element.

>>> import llvmlite.ir as ir
>>> module = ir.Module()
>>> fn = ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()]), "f")
>>> builder = ir.IRBuilder(fn.append_basic_block())
>>> _ = builder.ret(math_call(builder, "exp", [fn.args[0]]))
>>> "lowering.exp.f32" in str(module)
True
"""
from __future__ import annotations

import llvmlite.ir as ir

from .context import TranslationError
from .values import DOUBLE, FLOAT

# Scalar-dialect name -> C library name (double precision; ``f`` is appended for float).
LIBM_NAMES = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "cbrt": "cbrt", "sin": "sin",
    "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arctan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "erf": "erf", "pow": "pow",
    "hypot": "hypot",
    "erfc": "erfc", "gammaln": "lgamma", "gamma": "tgamma", "j0": "j0", "j1": "j1",
}


def libm_symbol(name: str, ty: ir.Type) -> str:
    """The C library symbol computing ``name`` in ``ty``.

    >>> libm_symbol("arcsinh", ir.FloatType()), libm_symbol("arctan2", ir.DoubleType())
    ('asinhf', 'atan2')
    """
    base = LIBM_NAMES[name]
    return base + "f" if ty == FLOAT else base


def uses_libm(name: str) -> bool:
    """Whether ``name`` is computed by a C library call (the vector library lacks it)."""
    from ..vecmath.library import MATH_FUNCTIONS  # (imported when code is generated, not to load it)
    return name not in MATH_FUNCTIONS and name in LIBM_NAMES


def math_call(builder: ir.IRBuilder, name: str, args) -> ir.Value:
    """Call math function ``name`` on ``args`` (all ``float`` or all ``double``)."""
    ty = args[0].type
    if ty not in (FLOAT, DOUBLE):
        raise TranslationError(f"math function '{name}' is computed in float or double, not {ty}")
    from ..vecmath.library import MATH_FUNCTIONS, define_math_function
    module = builder.module
    if name in MATH_FUNCTIONS:
        fn = define_math_function(module, name, ty)
    elif name in LIBM_NAMES:
        symbol = libm_symbol(name, ty)
        fn = module.globals.get(symbol)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(ty, [ty] * len(args)), symbol)
            fn.attributes.add("nounwind")
            fn.attributes.add("readnone")
    else:
        raise TranslationError(f"no implementation of math function '{name}' (neither the "
                               f"vector math library nor the C library has it)")
    return builder.call(fn, list(args))
