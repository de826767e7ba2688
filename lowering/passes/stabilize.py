"""``stabilize``: rewrites that make results finite where the naive graph overflows.

Each rewrite replaces a form that loses everything at extreme inputs by one that stays finite and
accurate there (Theano's and PyTensor's stabilizations)::

    log(sigmoid(x))        -> -softplus(-x)     log(1 - sigmoid(x)) -> -softplus(x)
    log(1 + exp(x))        -> softplus(x)       log1p(exp(x))       -> softplus(x)
    log1p(-sigmoid(x))     -> -softplus(x)      log(softmax(x))     -> log_softmax(x)
    log(1 + x)             -> log1p(x)          log(1 - x)          -> log1p(-x)
    exp(x) - 1             -> expm1(x)          1 - exp(x)          -> -expm1(x)
    log(exp(x))            -> x

Theano's sigmoid forms come first, so that the rewrites above see them (they also make values
more accurate where ``1 - p`` cancels, which is why they are not canonicalizations)::

    n / (1 + exp(x))       -> n * sigmoid(-x)   exp(x) / (1 + exp(x)) -> sigmoid(x)
    1 - sigmoid(x)         -> sigmoid(-x)       exp(x) * sigmoid(-x)  -> sigmoid(x)

and, for the gradients ``grad`` builds from such graphs, products are put in order: a tree of
``mul``, ``div``, ``neg`` and ``reciprocal`` is read as ``c * (a * b * ...) / (d * ...)``, then

- a factor in both the numerator and the denominator cancels (``(g / p) * p`` is ``g``) when it
  is positive and finite in exact arithmetic (a sigmoid, an exp, a softplus: ``x / x`` stays),
- ``exp(x) * sigmoid(-x)`` is ``sigmoid(x)``, and a denominator ``1 + exp(x)`` is a numerator
  ``sigmoid(-x)``,
- a sum among the factors is distributed over the others when that lets a term cancel:
  ``(u / q + v / p) * p * q`` is ``u * p + v * q``.

That is how the gradient of the cross-entropy of a logistic regression, ``-(g * p / (1 + e)) * e``
with ``p = 1 / (1 + e)`` and ``g`` holding ``y / p`` and ``(1 - y) / (1 - p)``, becomes
``(1 - y) * sigmoid(z) - y * sigmoid(-z)``, finite for every logit (Theano's result too).

The canonicalization patterns of every op run alongside, so that what a rewrite builds is kept
canonical. The DebugMode check accepts any value where the graph before gave inf or NaN.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> module = parse_module('''
... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
...   %s = "tensor.sigmoid"(%x) : (tensor<?xf32>) -> tensor<?xf32>
...   %l = "tensor.log"(%s) : (tensor<?xf32>) -> tensor<?xf32>
...   func.return %l : tensor<?xf32>
... }''')
>>> Stabilize().apply(module)
>>> [op.name for op in module.functions[0].body.block.ops]
['tensor.neg', 'tensor.softplus', 'tensor.neg', 'func.return']
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lowering.dialects.tensor import (AddOp, DivOp, ExpM1Op, ExpOp, Log1pOp, LogOp, LogSoftmaxOp,
                                      MulOp, NegOp, ReciprocalOp, SigmoidOp, SoftmaxOp,
                                      SoftplusOp, SubOp)
from lowering.dialects.tensor.canonical import (NewOps, ValueKeys, defining, float_tensor,
                                                is_scalar_shaped, is_splat, operand_pair,
                                                rewrite_to, same_value, single_use, splat,
                                                strip_neg)
from lowering.ir.context import Context
from lowering.ir.core import Operation, Value
from lowering.ir.passes import ModulePass, context_field, option, register_pass
from lowering.ir.patterns import apply_patterns_greedily, rewrite_pattern

from .canonicalize import patterns_of_known_ops
from .cse import eliminate_common_subexpressions

# ---------------------------------------------------------------------------------------------
# Logarithms and exponentials


def _one_minus(value: Value) -> Value | None:
    """``x`` when ``value`` is ``1 - x``."""
    sub = defining(value, SubOp)
    return sub.rhs if sub is not None and is_splat(sub.lhs, 1) else None


def _one_plus(value: Value) -> Value | None:
    """``x`` when ``value`` is ``1 + x`` or ``x + 1``."""
    add = defining(value, AddOp)
    if add is None:
        return None
    for one, x in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if is_splat(one, 1):
            return x
    return None


@rewrite_pattern(LogOp, benefit=3)
def log_sigmoid(op, rewriter) -> bool:
    """``log(sigmoid(x))`` is ``-softplus(-x)``: finite where sigmoid underflows to 0."""
    sigmoid = defining(op.input, SigmoidOp)
    return sigmoid is not None and rewrite_to(
        rewriter, op, lambda new: new.neg(new(SoftplusOp, new.neg(sigmoid.input))))


@rewrite_pattern(LogOp, benefit=3)
def log_one_minus_sigmoid(op, rewriter) -> bool:
    """``log(1 - sigmoid(x))`` is ``-softplus(x)``: finite where sigmoid rounds to 1."""
    x = _one_minus(op.input)
    sigmoid = defining(x, SigmoidOp) if x is not None else None
    return sigmoid is not None and rewrite_to(
        rewriter, op, lambda new: new.neg(new(SoftplusOp, sigmoid.input)))


@rewrite_pattern(LogOp, Log1pOp, benefit=3)
def log_one_plus_exp(op, rewriter) -> bool:
    """``log(1 + exp(x))`` and ``log1p(exp(x))`` are ``softplus(x)``: finite where exp
    overflows."""
    if isinstance(op, LogOp):
        x = one_plus_exp(op.input)
    else:
        exp = defining(op.input, ExpOp)
        x = exp.input if exp is not None else None
    return x is not None and rewrite_to(rewriter, op, lambda new: new(SoftplusOp, x))


@rewrite_pattern(Log1pOp, benefit=3)
def log1p_of_minus_sigmoid(op, rewriter) -> bool:
    """``log1p(-sigmoid(x))`` is ``-softplus(x)``."""
    neg = defining(op.input, NegOp)
    sigmoid = defining(neg.input, SigmoidOp) if neg is not None else None
    return sigmoid is not None and rewrite_to(
        rewriter, op, lambda new: new.neg(new(SoftplusOp, sigmoid.input)))


@rewrite_pattern(LogOp, benefit=3)
def log_of_softmax(op, rewriter) -> bool:
    """``log(softmax(x))`` is ``log_softmax(x)``: finite where a probability underflows."""
    softmax = defining(op.input, SoftmaxOp)
    return softmax is not None and rewrite_to(
        rewriter, op, lambda new: new(LogSoftmaxOp, softmax.input, softmax.axis))


@rewrite_pattern(LogOp, benefit=2)
def log_one_plus_x(op, rewriter) -> bool:
    """``log(1 + x)`` is ``log1p(x)`` and ``log(1 - x)`` is ``log1p(-x)``: accurate (and not 0)
    for tiny ``x``."""
    if not float_tensor(op.input):
        return False
    x = _one_plus(op.input)
    if x is not None:
        return rewrite_to(rewriter, op, lambda new: new(Log1pOp, x))
    x = _one_minus(op.input)
    return x is not None and rewrite_to(rewriter, op, lambda new: new(Log1pOp, new.neg(x)))


@rewrite_pattern(SubOp, AddOp, benefit=2)
def exp_minus_one(op, rewriter) -> bool:
    """``exp(x) - 1`` (or ``exp(x) + -1``) is ``expm1(x)``; ``1 - exp(x)`` is ``-expm1(x)``."""
    if isinstance(op, SubOp):
        exp = defining(op.lhs, ExpOp)
        if exp is not None and is_splat(op.rhs, 1):
            return rewrite_to(rewriter, op, lambda new: new(ExpM1Op, exp.input))
        exp = defining(op.rhs, ExpOp)
        if exp is not None and is_splat(op.lhs, 1):
            return rewrite_to(rewriter, op, lambda new: new.neg(new(ExpM1Op, exp.input)))
        return False
    for e, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        exp = defining(e, ExpOp)
        if exp is not None and is_splat(c, -1):
            return rewrite_to(rewriter, op, lambda new, x=exp.input: new(ExpM1Op, x))
    return False


@rewrite_pattern(LogOp, benefit=3)
def log_of_exp(op, rewriter) -> bool:
    """``log(exp(x))`` is ``x`` (exact where exp does not overflow, and finite where it does)."""
    exp = defining(op.input, ExpOp)
    return exp is not None and rewrite_to(rewriter, op, lambda new: exp.input)


# ---------------------------------------------------------------------------------------------
# Sigmoid forms (Theano's local_exp_over_1_plus_exp, local_1msigmoid, local_sigm_times_exp)


def one_plus_exp(value: Value) -> Value | None:
    """``x`` when ``value`` is ``1 + exp(x)`` (either order), else None."""
    add = defining(value, AddOp)
    if add is None:
        return None
    found = operand_pair(add, lambda v: defining(v, ExpOp) is not None)
    if found is None or not is_splat(found[2], 1):
        return None
    return found[1].op.input


@rewrite_pattern(DivOp, benefit=2)
def over_one_plus_exp(op, rewriter) -> bool:
    """``n / (1 + exp(x))`` is ``n * sigmoid(-x)`` (``sigmoid(-x)`` for ``n = 1``), and
    ``exp(x) / (1 + exp(x))`` is ``sigmoid(x)``."""
    x = one_plus_exp(op.rhs)
    if x is None or not float_tensor(op.result):
        return False
    numerator = defining(op.lhs, ExpOp)
    if numerator is not None and same_value(numerator.input, x):
        return rewrite_to(rewriter, op, lambda new: new(SigmoidOp, x))

    def make(new):
        sigmoid = new(SigmoidOp, new.neg(x))
        return sigmoid if is_splat(op.lhs, 1) else new(MulOp, op.lhs, sigmoid)
    return rewrite_to(rewriter, op, make)


@rewrite_pattern(ReciprocalOp, benefit=2)
def reciprocal_one_plus_exp(op, rewriter) -> bool:
    """``1 / (1 + exp(x))`` written as a reciprocal is ``sigmoid(-x)``."""
    x = one_plus_exp(op.input)
    return x is not None and rewrite_to(rewriter, op, lambda new: new(SigmoidOp, new.neg(x)))


@rewrite_pattern(SubOp, benefit=2)
def one_minus_sigmoid(op, rewriter) -> bool:
    """``1 - sigmoid(x)`` is ``sigmoid(-x)``."""
    sigmoid = defining(op.rhs, SigmoidOp)
    if sigmoid is None or not is_splat(op.lhs, 1):
        return False
    return rewrite_to(rewriter, op, lambda new: new(SigmoidOp, new.neg(sigmoid.input)))


def exp_times_sigmoid(a: Value, b: Value) -> Value | None:
    """``x`` when ``a * b`` is ``exp(x) * sigmoid(-x)`` (in either order), which is
    ``sigmoid(x)``; else None."""
    for e, s in ((a, b), (b, a)):
        exp, sigmoid = defining(e, ExpOp), defining(s, SigmoidOp)
        if exp is None or sigmoid is None:
            continue
        neg_x, core_x = strip_neg(exp.input)
        neg_y, core_y = strip_neg(sigmoid.input)
        if neg_x != neg_y and same_value(core_x, core_y):
            return exp.input
    return None


@rewrite_pattern(MulOp, benefit=2)
def sigmoid_times_exp(op, rewriter) -> bool:
    """``exp(x) * sigmoid(-x)`` is ``sigmoid(x)``."""
    x = exp_times_sigmoid(op.lhs, op.rhs)
    return x is not None and rewrite_to(rewriter, op, lambda new: new(SigmoidOp, x))


# ---------------------------------------------------------------------------------------------
# Products


_PRODUCT_OPS = (MulOp, DivOp, NegOp, ReciprocalOp)


@dataclass
class Product:
    """``coefficient * prod(numerators) / prod(denominators)``; ``ops`` counts the mul, div, neg
    and reciprocal ops of the tree it was read from."""

    coefficient: float = 1.0
    numerators: list[Value] = field(default_factory=list)
    denominators: list[Value] = field(default_factory=list)
    ops: int = 0

    def times(self, other: "Product", ops: int = 0) -> "Product":
        return Product(self.coefficient * other.coefficient,
                       self.numerators + other.numerators, self.denominators + other.denominators,
                       self.ops + other.ops + ops)

    def inverse(self) -> "Product":
        return Product(1.0 / self.coefficient, list(self.denominators), list(self.numerators),
                       self.ops)


# Trees are read this deep at most (deeper values are factors or terms as they are), so that
# long chains cost linear time and no deep recursion.
MAX_DEPTH = 64


def read_product(value: Value, root: bool = True, depth: int = 0) -> Product:
    """``value`` as a Product, reading through the product ops of ``value`` itself (when
    ``root``) and of the values only it reads.

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F64, TensorType
    >>> a, b = Block([TensorType((2,), F64), TensorType((2,), F64)]).args
    >>> p = read_product(NegOp.build(DivOp.build(a, b).result).result)
    >>> p.coefficient, p.numerators == [a], p.denominators == [b], p.ops
    (-1.0, True, True, 2)
    """
    op = defining(value, *_PRODUCT_OPS)
    # A shared neg is read through too: its sign costs nothing where it is folded in.
    if op is not None and float_tensor(value) and depth < MAX_DEPTH and (
            root or single_use(value) or isinstance(op, NegOp)):
        deeper = depth + 1
        if isinstance(op, MulOp):
            return read_product(op.lhs, False, deeper).times(
                read_product(op.rhs, False, deeper), 1)
        if isinstance(op, DivOp):
            return read_product(op.lhs, False, deeper).times(
                read_product(op.rhs, False, deeper).inverse(), 1)
        inner = read_product(op.input, False, deeper)
        if isinstance(op, NegOp):
            return Product(-inner.coefficient, inner.numerators, inner.denominators,
                           inner.ops + 1)
        return Product(1.0, [], [], 1).times(inner.inverse())
    number = splat(value)
    if (number is not None and is_scalar_shaped(value) and not isinstance(number, bool)
            and np.isfinite(number) and number != 0):
        return Product(float(number))
    return Product(1.0, [value])


def _cancellable(value: Value) -> bool:
    """Whether ``value / value`` is 1 in exact arithmetic for every input: only for factors that
    are never zero nor infinite there (``x / x`` is NaN at 0 and must stay so)."""
    return defining(value, SigmoidOp, ExpOp, SoftplusOp) is not None


def simplify_product(product: Product, new: NewOps) -> tuple[Product, bool]:
    """Cancel factors, merge ``exp(x) * sigmoid(-x)`` and turn denominators ``1 + exp(x)`` into
    numerators ``sigmoid(-x)``; returns the product and whether anything changed."""
    numerators, denominators = list(product.numerators), []
    changed = False
    for d in product.denominators:
        x = one_plus_exp(d)
        if x is not None:
            numerators.append(new(SigmoidOp, new.neg(x)))
            changed = True
        else:
            denominators.append(d)
    merged = True
    while merged:
        merged = False
        for i in range(len(numerators)):
            for j in range(i + 1, len(numerators)):
                x = exp_times_sigmoid(numerators[i], numerators[j])
                if x is not None:
                    sigmoid = new(SigmoidOp, x)
                    numerators = [v for k, v in enumerate(numerators) if k not in (i, j)]
                    numerators.append(sigmoid)
                    merged = changed = True
                    break
            if merged:
                break
    if not denominators:
        return Product(product.coefficient, numerators, [], product.ops), changed
    value_keys = ValueKeys()
    keys = [value_keys(v) for v in numerators]
    kept_denominators = []
    for d in denominators:
        key = value_keys(d)
        if key in keys and _cancellable(d):
            index = keys.index(key)
            del numerators[index], keys[index]
            changed = True
        else:
            kept_denominators.append(d)
    return Product(product.coefficient, numerators, kept_denominators, product.ops), changed


def _multiply(new: NewOps, values: list[Value]) -> Value:
    result = values[0]
    for v in values[1:]:
        result = new(MulOp, result, v)
    return result


def build_product(new: NewOps, product: Product, like: Value) -> tuple[Value, bool]:
    """The value of ``product`` (``like`` gives the element type and rank of constants) and
    whether it comes out negated (the caller adds the ``neg`` or subtracts)."""
    coefficient = product.coefficient
    negated = coefficient < 0
    magnitude = abs(coefficient)
    t = like.type
    factors = list(product.numerators)
    if magnitude != 1.0 or not factors:
        factors.append(new.constant(np.full((1,) * t.rank, magnitude, dtype=t.dtype)))
    value = _multiply(new, factors)
    if product.denominators:
        value = new(DivOp, value, _multiply(new, product.denominators))
    return value, negated


def product_cost(product: Product) -> int:
    """How many ops ``build_product`` (plus a ``neg``) makes for ``product``."""
    factors = len(product.numerators) + (abs(product.coefficient) != 1.0 or
                                         not product.numerators)
    denominators = len(product.denominators)
    return (factors - 1) + (denominators if denominators else 0) + (product.coefficient < 0)


def read_sum(value: Value, root: bool = True, depth: int = 0) -> list[tuple[int, Value]]:
    """``value`` as signed terms ``[(+1 or -1, term), ...]``, reading through the add, sub and
    neg ops of ``value`` (when ``root``) and of the values only it reads."""
    op = defining(value, AddOp, SubOp, NegOp)
    if op is None or not float_tensor(value) or depth >= MAX_DEPTH or not (
            root or single_use(value)):
        return [(1, value)]
    if isinstance(op, NegOp):
        return [(-sign, t) for sign, t in read_sum(op.input, False, depth + 1)]
    rhs = read_sum(op.rhs, False, depth + 1)
    if isinstance(op, SubOp):
        rhs = [(-sign, t) for sign, t in rhs]
    return read_sum(op.lhs, False, depth + 1) + rhs


def _is_product_root(op: Operation) -> bool:
    """Whether ``op`` heads its product tree (no product op absorbs it)."""
    value = op.results[0]
    if not single_use(value):
        return True
    return not (isinstance(value.uses[0].op, _PRODUCT_OPS) and float_tensor(value.uses[0].op.result))


def _distribute(new: NewOps, product: Product, like: Value) -> Value | None:
    """Distribute the first sum among the numerators over the other factors if that lets a term
    cancel; None when no sum does."""
    for index, factor in enumerate(product.numerators):
        if defining(factor, AddOp, SubOp) is None or not single_use(factor):
            continue
        terms = read_sum(factor)
        if len(terms) < 2:
            continue
        rest = Product(product.coefficient,
                       product.numerators[:index] + product.numerators[index + 1:],
                       list(product.denominators))
        simplified = []
        any_changed = False
        for sign, term in terms:
            combined = read_product(term, single_use(term)).times(rest)
            combined.coefficient *= sign
            result, changed = simplify_product(combined, new)
            simplified.append(result)
            any_changed = any_changed or changed
        if not any_changed:
            continue
        return _build_sum(new, simplified, like)
    return None


def _build_sum(new: NewOps, products: list[Product], like: Value) -> Value:
    built = [build_product(new, p, like) for p in products]
    order = sorted(range(len(built)), key=lambda i: built[i][1])  # positive terms first
    total, negated = built[order[0]]
    if negated:
        total = new(NegOp, total)
    for i in order[1:]:
        value, negated = built[i]
        total = new(SubOp if negated else AddOp, total, value)
    return total


@rewrite_pattern(*_PRODUCT_OPS, benefit=1)
def simplify_products(op, rewriter) -> bool:
    """Read a product tree, cancel and merge its factors (distributing a sum when that cancels
    something), and rebuild it when that changed something or takes fewer ops."""
    if not float_tensor(op.result) or not _is_product_root(op):
        return False
    product = read_product(op.result)

    def make(new):
        simplified, changed = simplify_product(product, new)
        distributed = _distribute(new, simplified, op.result)
        if distributed is not None:
            return distributed
        if not changed and product_cost(simplified) >= product.ops:
            return None
        value, negated = build_product(new, simplified, op.result)
        return new(NegOp, value) if negated else value
    return rewrite_to(rewriter, op, make)


STABILIZATIONS = [log_sigmoid, log_one_minus_sigmoid, log_one_plus_exp, log1p_of_minus_sigmoid,
                  log_of_softmax, log_one_plus_x, exp_minus_one, log_of_exp, over_one_plus_exp,
                  reciprocal_one_plus_exp, one_minus_sigmoid, sigmoid_times_exp,
                  simplify_products]


@register_pass
class Stabilize(ModulePass):
    """Rewrite forms that overflow (log of sigmoid, log(1 + exp), ...) into finite ones."""

    name = "stabilize"
    max_iterations: int = option(10, "most sweeps over the IR", minimum=1)
    context: Context | None = context_field()

    def apply(self, module: Operation) -> None:
        patterns = STABILIZATIONS + patterns_of_known_ops(module, self.context)
        apply_patterns_greedily(module, patterns, max_iterations=self.max_iterations,
                                raise_on_cap=False)
        eliminate_common_subexpressions(module)  # rewrites build the same sigmoid, neg twice
