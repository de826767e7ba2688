"""Elementwise operations with Theano's (and NumPy's) dtype and broadcasting rules.

Tensor-dialect elementwise ops take operands of one element type and one rank, so the front end
first brings the operands together, as Theano does:

1. **dtype**: tensors (and NumPy data) promote as NumPy does (``int8 + float32 → float32``).
   Python scalars are *weak*: they take the dtype of the tensors they combine with when they fit
   (``x32 * 2.0`` stays float32, ``i8 + 1`` stays int8); a Python float with integer tensors gives
   ``floatX`` promoted with them (NumPy's rule with ``floatX`` for the default float). Mismatched
   tensors get explicit ``tensor.cast`` ops.
2. **kinds**: real functions (``exp``, ``/``, ...) of integers compute in a float type: float64,
   or float32 when ``floatX`` is float32 and the integers have at most 16 bits. Arithmetic on
   booleans computes in int8 (as Theano; NumPy's ``True + True`` is not arithmetic), except that
   the maximum and minimum of booleans are their logical or and and. Bitwise and logical ops
   accept only integers and booleans.
3. **rank**: lower-rank operands get leading broadcastable dims (``tensor.dimshuffle`` with
   ``'x'``); constants are made with that shape directly.

>>> from lowering.frontend.constructors import fvector, ivector, bvector
>>> x = fvector("x")
>>> (1 / (1 + exp(-x))).dtype, (x * 2.0).dtype, (bvector() + 1).dtype, (ivector() / 2).dtype
('float32', 'float32', 'int8', 'float64')
"""
from __future__ import annotations

import numpy as np

from lowering.config import config
from lowering.dialects.tensor import ConstantOp
from lowering.dialects.tensor.elementwise import ELEMENTWISE_OPS, CastOp, ClipOp, SelectOp
from lowering.ir.types import scalar_type_of

from .build import apply
from .constructors import as_array, constant
from .errors import GraphTypeError
from .types import canonical_dtype
from .variable import TensorVariable, wrap

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _kind(dtype: str) -> int:
    return _KIND_ORDER[np.dtype(dtype).kind]


def _is_weak(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _operands(args) -> list:
    """Variables and weak Python scalars as they are; other data (NumPy arrays and scalars,
    lists) as arrays, which keep their own dtype."""
    return [a if isinstance(a, TensorVariable) or _is_weak(a) else as_array(a) for a in args]


def float_dtype_for(dtype: str) -> str:
    """The float dtype real functions of ``dtype`` compute in.

    >>> float_dtype_for("float32"), float_dtype_for("int32"), float_dtype_for("int8")
    ('float32', 'float64', 'float64')
    """
    if np.dtype(dtype).kind in "fc":
        return dtype
    if config.floatX != "float64" and np.dtype(dtype).itemsize <= 2:
        return "float32"
    return "float64"


def common_dtype(*args) -> str:
    """The dtype operands (variables, NumPy data, Python scalars) are brought to.

    >>> from lowering.frontend.constructors import fvector, bvector
    >>> common_dtype(fvector(), 2.0), common_dtype(bvector(), 1000), common_dtype(1, 2.5)
    ('float32', 'int16', 'float64')
    """
    strong = [a.dtype for a in args if not _is_weak(a)]
    weak = [a for a in args if _is_weak(a)]
    if not strong:
        return str(np.result_type(*[np.dtype(_weak_default(w)) for w in weak]))
    dtype = str(np.result_type(*strong))
    for w in weak:
        wkind = _kind(_weak_default(w))
        if isinstance(w, complex) and _kind(dtype) < wkind:
            # A Python complex number takes the precision of the tensors (x32 * 1j: complex64).
            dtype = complex_dtype_for(float_dtype_for(dtype))
        elif wkind > _kind(dtype):
            dtype = str(np.result_type(dtype, _weak_default(w)))
        elif isinstance(w, int) and not isinstance(w, bool) and np.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= w <= info.max:
                # An int that does not fit widens the type (int8 + 1000 → int16), as Theano's
                # autocasting does, instead of wrapping around.
                dtype = str(np.result_type(dtype, _smallest_int(w)))
    return dtype


def _smallest_int(w: int) -> str:
    for name in ("int8", "int16", "int32", "int64"):
        info = np.iinfo(name)
        if info.min <= w <= info.max:
            return name
    return "uint64"


def _weak_default(w) -> str:
    if isinstance(w, bool):
        return "bool"
    if isinstance(w, int):
        return "uint64" if w >= 2 ** 63 else "int64"
    if isinstance(w, complex):
        return complex_dtype_for(config.floatX)
    return config.floatX


def complex_dtype_for(dtype: str) -> str:
    """The complex dtype with parts of float ``dtype`` (float16 parts widen to float32).

    >>> complex_dtype_for("float32"), complex_dtype_for("float64"), complex_dtype_for("complex64")
    ('complex64', 'complex128', 'complex64')
    """
    if np.dtype(dtype).kind == "c":
        return dtype
    return "complex128" if dtype == "float64" else "complex64"


def _operand_dtype(short: str, dtype: str) -> str:
    """The dtype the op named ``short`` computes in, for operands promoted to ``dtype``."""
    kind = ELEMENTWISE_OPS[short].scalar_op.kind
    if kind == "float":
        return float_dtype_for(dtype)
    if kind == "arith" and dtype == "bool":
        return "int8"
    if kind == "logical" and np.dtype(dtype).kind == "f":
        raise GraphTypeError(f"tensor.{short}: bitwise and logical operations need integer or "
                             f"boolean operands, got {dtype}")
    return dtype


def align(args, dtype: str, rank: int | None = None) -> list:
    """Operands as IR values of ``dtype`` and one rank (the highest, or ``rank``)."""
    from .shapes import dimshuffle

    if rank is None:
        rank = max((a.ndim if isinstance(a, TensorVariable) else np.ndim(a) for a in args), default=0)
    out = []
    for a in args:
        if isinstance(a, TensorVariable):
            if a.dtype != dtype:
                a = cast(a, dtype)
            if a.ndim < rank:
                a = dimshuffle(a, ("x",) * (rank - a.ndim) + tuple(range(a.ndim)))
            out.append(a)
        else:
            arr = np.asarray(a, dtype=dtype) if _is_weak(a) else as_array(a).astype(dtype)
            arr = arr.reshape((1,) * (rank - arr.ndim) + arr.shape)
            out.append(wrap(ConstantOp.build(arr).result))
    return out


# On booleans, the maximum is the logical or and the minimum the logical and (NumPy's results).
_BOOLEAN_FORMS = {"maximum": "or", "minimum": "and"}


def elementwise(short: str, *args) -> TensorVariable:
    """The elementwise op named ``short`` (``"add"``, ``"exp"``, ...) on Theano-style operands.

    >>> from lowering.frontend.constructors import imatrix
    >>> y = elementwise("exp", imatrix())
    >>> y.dtype, y.value.op.operands[0].op.name
    ('float64', 'tensor.cast')
    """
    operands = _operands(args)
    common = common_dtype(*operands)
    if common == "bool" and short in _BOOLEAN_FORMS:
        short = _BOOLEAN_FORMS[short]
    dtype = _operand_dtype(short, common)
    named = [a for a in operands if isinstance(a, TensorVariable)]
    return apply(ELEMENTWISE_OPS[short], *align(operands, dtype), named=named)


# ---------------------------------------------------------------------------------------------
# cast, switch, clip


def cast(x, dtype) -> TensorVariable:
    """``x`` converted to ``dtype`` (a name, a NumPy dtype or ``'floatX'``); ``x`` itself when it
    already has it.

    >>> from lowering.frontend.constructors import vector
    >>> v = vector()
    >>> cast(v, "float32").dtype, cast(v, "float64") is v
    ('float32', True)
    """
    dtype = canonical_dtype(dtype)
    if not isinstance(x, TensorVariable):
        return constant(x, dtype=dtype)
    if x.dtype == dtype:
        return x
    return apply(CastOp, x, to=scalar_type_of(dtype))


def switch(cond, ift, iff) -> TensorVariable:
    """Elementwise ``ift if cond else iff``; a non-boolean ``cond`` means ``cond != 0``.

    >>> from lowering.frontend.constructors import vector
    >>> x = vector()
    >>> switch(x > 0, x, 0).dtype
    'float64'
    """
    cond_var = cond if isinstance(cond, TensorVariable) else constant(cond)
    if cond_var.dtype != "bool":
        cond_var = elementwise("ne", cond_var, 0)
    branches = _operands((ift, iff))
    dtype = common_dtype(*branches)
    rank = max([cond_var.ndim] + [b.ndim if isinstance(b, TensorVariable) else np.ndim(b)
                                  for b in branches])
    (cond_v,) = align([cond_var], "bool", rank)
    a, b = align(branches, dtype, rank)
    return apply(SelectOp, cond_v, a, b,
                 named=[v for v in (cond_var, *branches) if isinstance(v, TensorVariable)])


where = switch


def clip(x, a_min, a_max) -> TensorVariable:
    """``x`` limited to ``[a_min, a_max]`` elementwise (``a_max`` wins where ``a_min > a_max``)."""
    args = _operands((x, a_min, a_max))
    dtype = _operand_dtype("clip", common_dtype(*args))
    return apply(ClipOp, *align(args, dtype), named=[a for a in args if isinstance(a, TensorVariable)])


# ---------------------------------------------------------------------------------------------
# The named functions (Theano's names; NumPy's where Theano has none)


def _unary(short: str, name: str, doc: str):
    def fn(x) -> TensorVariable:
        return elementwise(short, x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(short: str, name: str, doc: str):
    def fn(x, y) -> TensorVariable:
        return elementwise(short, x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


neg = _unary("neg", "neg", "-x.")
abs = _unary("abs", "abs", "|x|.")  # noqa: A001 - Theano's name
abs_ = abs
sgn = _unary("sign", "sgn", "The sign of x: -1, 0 or 1.")
sign = sgn
sqr = _unary("sqr", "sqr", "x * x.")
sqrt = _unary("sqrt", "sqrt", "Square root.")
exp = _unary("exp", "exp", "e ** x.")
exp2 = _unary("exp2", "exp2", "2 ** x.")
expm1 = _unary("expm1", "expm1", "exp(x) - 1, accurate near 0.")
log = _unary("log", "log", "Natural logarithm.")
log2 = _unary("log2", "log2", "Base-2 logarithm.")
log10 = _unary("log10", "log10", "Base-10 logarithm.")
log1p = _unary("log1p", "log1p", "log(1 + x), accurate near 0.")
inv = _unary("reciprocal", "inv", "1 / x.")
reciprocal = inv
sin = _unary("sin", "sin", "Sine.")
cos = _unary("cos", "cos", "Cosine.")
tan = _unary("tan", "tan", "Tangent.")
arcsin = _unary("arcsin", "arcsin", "Inverse sine.")
arccos = _unary("arccos", "arccos", "Inverse cosine.")
arctan = _unary("arctan", "arctan", "Inverse tangent.")
sinh = _unary("sinh", "sinh", "Hyperbolic sine.")
cosh = _unary("cosh", "cosh", "Hyperbolic cosine.")
tanh = _unary("tanh", "tanh", "Hyperbolic tangent.")
arcsinh = _unary("arcsinh", "arcsinh", "Inverse hyperbolic sine.")
arccosh = _unary("arccosh", "arccosh", "Inverse hyperbolic cosine.")
arctanh = _unary("arctanh", "arctanh", "Inverse hyperbolic tangent.")
sigmoid = _unary("sigmoid", "sigmoid", "1 / (1 + exp(-x)).")
softplus = _unary("softplus", "softplus", "log(1 + exp(x)), without overflow.")
erf = _unary("erf", "erf", "The error function.")
floor = _unary("floor", "floor", "Largest integer <= x (as a float).")
ceil = _unary("ceil", "ceil", "Smallest integer >= x (as a float).")
round_half_to_even = _unary("round", "round_half_to_even",
                            "Nearest integer, halves to even (as a float).")
round_half_away_from_zero = _unary("round_half_away_from_zero", "round_half_away_from_zero",
                                   "Nearest integer, halves away from zero (as a float).")
_ROUNDING_MODES = {"half_to_even": round_half_to_even,
                   "half_away_from_zero": round_half_away_from_zero}


def round(a, mode: str | None = None) -> TensorVariable:  # noqa: A001
    """The nearest integer of each element (as a float); ``mode`` says where halves go:
    ``"half_to_even"`` (the default, as NumPy) or ``"half_away_from_zero"`` (as C's ``round``).

    >>> from lowering.frontend.constructors import dvector
    >>> x = dvector("x")
    >>> round(x).value.op.name, round(x, "half_away_from_zero").value.op.name
    ('tensor.round', 'tensor.round_half_away_from_zero')
    """
    try:
        return _ROUNDING_MODES["half_to_even" if mode is None else mode](a)
    except KeyError:
        raise ValueError(f"round: mode {mode!r} is not one of "
                         f"{', '.join(map(repr, _ROUNDING_MODES))}") from None

trunc = _unary("trunc", "trunc", "x rounded toward zero (as a float).")
invert = _unary("not", "invert", "Logical not of booleans, bitwise not of integers.")
bitwise_not = invert
isnan = _unary("isnan", "isnan", "Whether x is NaN.")
isinf = _unary("isinf", "isinf", "Whether x is +-inf.")

add = _binary("add", "add", "x + y.")
sub = _binary("sub", "sub", "x - y.")
mul = _binary("mul", "mul", "x * y.")
true_div = _binary("div", "true_div", "x / y, true division (integers give floats).")
int_div = _binary("floordiv", "int_div", "x // y, floor division.")
floor_div = int_div
mod = _binary("mod", "mod", "x % y, with the sign of y (as Python and NumPy).")
pow = _binary("pow", "pow", "x ** y.")  # noqa: A001
maximum = _binary("maximum", "maximum", "The larger of x and y, elementwise.")
minimum = _binary("minimum", "minimum", "The smaller of x and y, elementwise.")
arctan2 = _binary("arctan2", "arctan2", "The angle of the point (x=b, y=a): arctan2(a, b).")
eq = _binary("eq", "eq", "x == y, elementwise (Python's == stays identity).")
neq = _binary("ne", "neq", "x != y, elementwise (Python's != stays identity).")
lt = _binary("lt", "lt", "x < y.")
le = _binary("le", "le", "x <= y.")
gt = _binary("gt", "gt", "x > y.")
ge = _binary("ge", "ge", "x >= y.")
and_ = _binary("and", "and_", "Logical and of booleans, bitwise and of integers.")
or_ = _binary("or", "or_", "Logical or of booleans, bitwise or of integers.")
xor = _binary("xor", "xor", "Logical xor of booleans, bitwise xor of integers.")
bitwise_and, bitwise_or, bitwise_xor = and_, or_, xor
