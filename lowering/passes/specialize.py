"""``specialize``: cheaper forms of general ops, for the machine rather than for the reader.

- small constant powers: ``x ** 2`` is ``sqr(x)``, ``x ** 3`` is ``sqr(x) * x``, ``x ** 4`` is
  ``sqr(sqr(x))``; for floats also ``x ** 0.5`` is ``sqrt(x)``, ``x ** -0.5`` is
  ``1 / sqrt(x)``, ``x ** -1`` is ``reciprocal(x)``, ``x ** -2`` is ``reciprocal(sqr(x))``;
- ``1 / x`` is ``reciprocal(x)``, ``x * x`` is ``sqr(x)``;
- a product with scale and accumulation becomes one BLAS-shaped op: a sum of terms (read through
  ``add``, ``sub``, ``neg`` and multiplications by scalars, like terms collected) holding a
  matrix-vector or matrix-matrix ``dot`` is ``tensor.gemv(y, alpha, A, x, beta)`` or
  ``tensor.gemm(C, alpha, A, B, beta)``: ``w - 0.01 * (0.02 * w + dot(x.T, g))`` is
  ``gemv(w, -0.01, x.T, g, 0.9998)``, Theano's ``CGemv{inplace}`` of the logistic regression.

The canonicalization patterns run alongside.

>>> from lowering.ir.parser import parse_module
>>> module = parse_module('''
... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
...   %c = "tensor.constant"() {value = dense<2.0> : tensor<1xf32>} : () -> tensor<1xf32>
...   %p = "tensor.pow"(%x, %c) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
...   func.return %p : tensor<?xf32>
... }''')
>>> Specialize().apply(module)
>>> [op.name for op in module.functions[0].body.block.ops]
['tensor.sqr', 'func.return']
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lowering.dialects.tensor import (AddOp, ConstantOp, DimShuffleOp, DivOp, DotOp, GemmOp,
                                      GemvOp, MulOp, NegOp, PowOp, ReciprocalOp, SqrOp, SqrtOp,
                                      SubOp)
from lowering.dialects.tensor.canonical import (NewOps, ValueKeys, defining, float_tensor,
                                                is_scalar_shaped, is_splat, rewrite_to,
                                                same_value, single_use, splat)
from lowering.ir.context import Context
from lowering.ir.core import Operation, Value
from lowering.ir.passes import ModulePass, context_field, option, register_pass
from lowering.ir.patterns import apply_patterns_greedily, rewrite_pattern

from .canonicalize import patterns_of_known_ops
from .cse import eliminate_common_subexpressions

# ---------------------------------------------------------------------------------------------
# Powers and reciprocals


def _power(new: NewOps, x: Value, exponent) -> Value | None:
    """``x ** exponent`` from sqr, mul, sqrt and reciprocal, or None for other exponents."""
    floats = float_tensor(x)
    if exponent == 2:
        return new(SqrOp, x)
    if exponent == 3:
        return new(MulOp, new(SqrOp, x), x)
    if exponent == 4:
        return new(SqrOp, new(SqrOp, x))
    if not floats:
        return None  # integer x ** -k truncates, and sqrt would change the type
    if exponent == 0.5:
        return new(SqrtOp, x)
    if exponent == -0.5:
        return new(ReciprocalOp, new(SqrtOp, x))
    if exponent == -1:
        return new(ReciprocalOp, x)
    if exponent == -2:
        return new(ReciprocalOp, new(SqrOp, x))
    return None


@rewrite_pattern(PowOp)
def small_powers(op, rewriter) -> bool:
    """``x ** c`` for a constant ``c`` in -2, -1, -0.5, 0.5, 2, 3, 4: cheaper ops."""
    exponent = splat(op.rhs)
    if exponent is None or isinstance(exponent, bool) or not is_scalar_shaped(op.rhs):
        return False
    return rewrite_to(rewriter, op, lambda new: _power(new, op.lhs, exponent))


@rewrite_pattern(DivOp)
def one_over(op, rewriter) -> bool:
    """``1 / x`` is ``reciprocal(x)``."""
    return is_splat(op.lhs, 1) and rewrite_to(rewriter, op,
                                               lambda new: new(ReciprocalOp, op.rhs))


@rewrite_pattern(MulOp)
def square(op, rewriter) -> bool:
    """``x * x`` is ``sqr(x)``."""
    return same_value(op.lhs, op.rhs) and rewrite_to(rewriter, op, lambda new: new(SqrOp, op.lhs))


# ---------------------------------------------------------------------------------------------
# gemv and gemm


@dataclass
class Term:
    """``coefficient * prod(scales) * value``; ``scales`` are rank-0 values."""

    coefficient: float
    value: Value
    scales: list[Value] = field(default_factory=list)

    def scaled(self, coefficient: float, scales=()) -> "Term":
        return Term(self.coefficient * coefficient, self.value, self.scales + list(scales))


def _scalar_factor(value: Value) -> tuple[float, list[Value]] | None:
    """``(number, [])`` for a constant scalar, ``(1, [s])`` for a rank-0 ``s`` broadcast by a
    dimshuffle, else None."""
    if not is_scalar_shaped(value):
        return None
    number = splat(value)
    if number is not None and not isinstance(number, bool) and np.isfinite(number):
        return float(number), []
    shuffle = defining(value, DimShuffleOp)
    if shuffle is not None and shuffle.input.type.rank == 0:
        return 1.0, [shuffle.input]
    if value.type.rank == 0:
        return 1.0, [value]
    return None


_LINEAR_OPS = (AddOp, SubOp, NegOp, MulOp)


# Sums are read this deep at most (deeper values are terms as they are): long chains cost
# linear time and no deep recursion.
MAX_DEPTH = 64


def read_linear(value: Value, root: bool = True, depth: int = 0) -> list[Term]:
    """``value`` as a sum of scaled terms, reading through the add, sub, neg and
    multiplication-by-a-scalar ops of ``value`` (when ``root``) and of the values only it reads.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> a, b = Block([TensorType((None,), F64), TensorType((None,), F64)]).args
    >>> two = ConstantOp.build(np.full(1, 2.0)).result
    >>> terms = read_linear(SubOp.build(a, MulOp.build(two, b).result).result)
    >>> [(t.coefficient, t.value is a) for t in terms]
    [(1.0, True), (-2.0, False)]
    """
    op = defining(value, *_LINEAR_OPS)
    if op is None or not float_tensor(value) or value.type.rank == 0 or depth >= MAX_DEPTH or \
            not (root or single_use(value)):
        return [Term(1.0, value)]
    deeper = depth + 1
    if isinstance(op, NegOp):
        return [t.scaled(-1.0) for t in read_linear(op.input, False, deeper)]
    if isinstance(op, MulOp):
        for scale, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            factor = _scalar_factor(scale)
            if factor is not None and other.type == value.type:
                return [t.scaled(*factor) for t in read_linear(other, False, deeper)]
        return [Term(1.0, value)]
    rhs = read_linear(op.rhs, False, deeper)
    if isinstance(op, SubOp):
        rhs = [t.scaled(-1.0) for t in rhs]
    return read_linear(op.lhs, False, deeper) + rhs


def collect_like_terms(terms: list[Term]) -> list[Term]:
    """Terms of one value and the same scales added up, in first-seen order."""
    keys = ValueKeys()
    collected: dict = {}
    for t in terms:
        key = (keys(t.value), tuple(keys(s) for s in t.scales))
        if key in collected:
            collected[key].coefficient += t.coefficient
        else:
            collected[key] = Term(t.coefficient, t.value, list(t.scales))
    return list(collected.values())


def _scale_value(new: NewOps, term: Term, element) -> Value:
    """The rank-0 value ``term.coefficient * prod(term.scales)``."""
    factors = list(term.scales)
    if term.coefficient != 1.0 or not factors:
        factors.insert(0, new.constant(np.asarray(term.coefficient, dtype=element.dtype)))
    value = factors[0]
    for s in factors[1:]:
        value = new(MulOp, value, s)
    return value


def _term_value(new: NewOps, term: Term) -> Value:
    """``term`` as a value of its term's type."""
    v = term.value
    if term.coefficient == 1.0 and not term.scales:
        return v
    if not term.scales:
        scale = new.constant(np.full((1,) * v.type.rank, term.coefficient, dtype=v.type.dtype))
    else:
        scale = new(DimShuffleOp, _scale_value(new, term, v.type.element), ["x"] * v.type.rank)
    return new(MulOp, v, scale)


def _sum_of(new: NewOps, terms: list[Term]) -> Value:
    total = None
    for t in terms:
        if total is not None and t.coefficient < 0:
            value = _term_value(new, t.scaled(-1.0))
            total = new(SubOp, total, value)
            continue
        value = _term_value(new, t)
        total = value if total is None else new(AddOp, total, value)
    return total


def _blas_product(value: Value) -> tuple[type, Value, Value] | None:
    """``(GemvOp or GemmOp, A, B)`` for a single-use f32/f64 dot of matrix-vector,
    vector-matrix (``A`` then ``B.T @ x``) or matrix-matrix shape."""
    dot = defining(value, DotOp)
    if dot is None or not single_use(value) or value.type.element.dtype.name not in (
            "float32", "float64"):
        return None
    ranks = (dot.lhs.type.rank, dot.rhs.type.rank)
    if ranks == (2, 1):
        return GemvOp, dot.lhs, dot.rhs
    if ranks == (1, 2):
        return GemvOp, dot.rhs, dot.lhs  # x . A is A.T . x; the transpose is built later
    if ranks == (2, 2):
        return GemmOp, dot.lhs, dot.rhs
    return None


def _is_linear_root(op: Operation) -> bool:
    value = op.results[0]
    if not single_use(value):
        return True
    user = value.uses[0].op
    return not (isinstance(user, _LINEAR_OPS) and float_tensor(user.result)
                and user.result.type.rank > 0)


@rewrite_pattern(AddOp, SubOp, MulOp, NegOp)
def scaled_product_into_blas(op, rewriter) -> bool:
    """``y * beta + dot(A, x) * alpha`` (as a sum of scaled terms) is ``gemv(y, alpha, A, x,
    beta)``; with matrices, ``gemm``."""
    if not float_tensor(op.result) or op.result.type.rank not in (1, 2) or \
            not _is_linear_root(op):
        return False
    terms = collect_like_terms(read_linear(op.result))
    for index, term in enumerate(terms):
        found = _blas_product(term.value)
        if found is None or term.value.type != op.result.type:
            continue
        others = [t for i, t in enumerate(terms) if i != index and t.coefficient != 0.0]
        if not others:
            continue
        kind, lhs, rhs = found

        def make(new, term=term, others=others, kind=kind, lhs=lhs, rhs=rhs):
            element = op.result.type.element
            if len(others) == 1 and not others[0].scales:
                acc = others[0].value
                beta = new.constant(np.asarray(others[0].coefficient, dtype=element.dtype))
            else:
                acc = _sum_of(new, others)
                beta = new.constant(np.asarray(1.0, dtype=element.dtype))
            if acc.type != op.result.type:
                return None
            if kind is GemvOp and defining(term.value, DotOp).lhs.type.rank == 1:
                lhs = new(DimShuffleOp, lhs, [1, 0])
            alpha = _scale_value(new, term, element)
            return new(kind, acc, alpha, lhs, rhs, beta)
        if rewrite_to(rewriter, op, make):
            return True
    return False


SPECIALIZATIONS = [small_powers, one_over, square, scaled_product_into_blas]


@register_pass
class Specialize(ModulePass):
    """Cheaper forms: small powers, reciprocals, and scaled products as gemv/gemm."""

    name = "specialize"
    max_iterations: int = option(10, "most sweeps over the IR", minimum=1)
    context: Context | None = context_field()

    def apply(self, module: Operation) -> None:
        patterns = SPECIALIZATIONS + patterns_of_known_ops(module, self.context)
        apply_patterns_greedily(module, patterns, max_iterations=self.max_iterations,
                                raise_on_cap=False)
        eliminate_common_subexpressions(module)
