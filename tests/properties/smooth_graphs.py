"""Random float64 graphs that are differentiable where they are evaluated, for gradient checks.

``SmoothGraphBuilder`` is a ``GraphBuilder`` restricted to float64 and to operations whose
result is smooth at the drawn values: every kink or jump (``abs`` at 0, ``maximum`` where the
operands meet, a ``switch`` condition changing, a tie for a ``max``) is at least ``MARGIN`` away,
and functions stay in their domain (``log`` and ``sqrt`` of values above 0.2, ``exp`` below 3).
Central finite differences with a step far below ``MARGIN`` then approximate the gradient.
It keeps the structural operations (dot, dimshuffle, reshape, indexing with slices and repeated
integer indices, set/inc_subtensor) and adds ``T.nnet`` functions and joins.

>>> bool(smooth_at(np.array([0.5, -0.5]), "abs")), bool(smooth_at(np.array([1e-9]), "abs"))
(True, False)
>>> off_branch_cut(np.array([1e-9, 0.5]), np.array([1.0, -1.0])), off_branch_cut(1e-9, -1.0)
(True, False)
"""
from __future__ import annotations

import warnings

import numpy as np
from hypothesis import strategies as st

import lowering.tensor as T

from . import mirror
from .graphs import GraphBuilder, Node, broadcast_together, operand_graph, operand_value

# How far every kink, jump or tie stays from the values drawn (the finite-difference step is
# 1e-6, so a perturbation never crosses one).
MARGIN = 1e-3


def _above(limit):
    return lambda v: v.size == 0 or bool(np.min(v) > limit)


def _away_from_zero(limit):
    return lambda v: v.size == 0 or bool(np.min(np.abs(v)) > limit)


# Unary functions and where they are smooth (and of moderate size).
UNARY_DOMAINS = {
    "neg": None, "sqr": None, "sin": None, "cos": None, "tanh": None, "arctan": None,
    "exp": lambda v: v.size == 0 or bool(np.max(v) < 3), "abs": _away_from_zero(MARGIN),
    "log": _above(0.2), "sqrt": _above(0.2), "log1p": _above(-0.8), "inv": _away_from_zero(0.2),
    "expm1": lambda v: v.size == 0 or bool(np.max(v) < 3),
}
BINARY = ("add", "sub", "mul", "true_div", "maximum", "minimum", "pow", "arctan2")
NNET = {
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "softplus": lambda v: np.logaddexp(0, v),
    "softmax": lambda v: np.exp(v - v.max(-1, keepdims=True)) / np.exp(
        v - v.max(-1, keepdims=True)).sum(-1, keepdims=True),
    "log_softmax": lambda v: (v - v.max(-1, keepdims=True)) - np.log(np.exp(
        v - v.max(-1, keepdims=True)).sum(-1, keepdims=True)),
}


def smooth_at(value: np.ndarray, name: str) -> bool:
    """Whether the unary function ``name`` is smooth (and moderate) at every element of
    ``value``."""
    domain = UNARY_DOMAINS[name]
    return domain is None or domain(value)


def off_branch_cut(y, x) -> bool:
    """Whether ``arctan2(y, x)`` is smooth at these (broadcast) operands: it jumps by 2 pi
    where ``y`` crosses 0 with ``x < 0``, so ``y`` stays MARGIN away from 0 there."""
    y, x = np.broadcast_arrays(np.asarray(y, float), np.asarray(x, float))
    return bool(np.all((x >= 0) | (np.abs(y) > MARGIN)))


def _ties(value: np.ndarray, axis) -> bool:
    """Whether the largest or smallest two values over ``axis`` are closer than MARGIN."""
    axes = tuple(range(value.ndim)) if axis is None else (axis,) if isinstance(axis, int) else \
        tuple(a % value.ndim for a in axis)
    if not axes:
        return False
    moved = np.moveaxis(value, axes, tuple(range(-len(axes), 0)))
    flat = np.sort(moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,)), axis=-1)
    if flat.shape[-1] < 2 or flat.size == 0:
        return False
    gaps = np.minimum(flat[..., -1] - flat[..., -2], flat[..., 1] - flat[..., 0])
    return bool(np.min(gaps) < MARGIN)


class SmoothGraphBuilder(GraphBuilder):
    """A ``GraphBuilder`` of smooth float64 operations (see the module's documentation)."""

    reduction_names = ("sum", "prod", "mean", "max", "min")

    def __init__(self, draw, max_side: int = 3):
        super().__init__(draw, "float64", dtypes=("float64",), min_side=1, max_side=max_side)

    def elements(self, dtype: str):
        # Magnitudes 0.1 to 2: away from 0 (abs, inv) and small enough for products and exp.
        return st.one_of(st.floats(0.1, 2.0), st.floats(-2.0, -0.1))

    def families(self) -> list:
        return [self.smooth_unary, self.smooth_binary, self.smooth_unary, self.smooth_binary,
                self.nnet, self.smooth_switch, self.reduction, self.dot, self.dimshuffle,
                self.reshape, self.subtensor, self.update_subtensor, self.join]

    def into_domain(self, x: Node, name: str) -> Node:
        """``x``, or where ``name`` is not smooth at its values, ``sqr(x) + 0.5`` (for log,
        sqrt, inv, ...: above 0.2) or ``tanh(x)`` (for exp: below 3)."""
        if smooth_at(x.value, name):
            return x
        if name in ("exp", "expm1"):
            return self._add(T.tanh(x.var), np.tanh(x.value), f"T.tanh({x.name})")
        return self._add(T.sqr(x.var) + 0.5, x.value * x.value + 0.5, f"T.sqr({x.name}) + 0.5")

    def smooth_unary(self) -> Node | None:
        name = self.choose(sorted(UNARY_DOMAINS))
        x = self.into_domain(self.pick(), name)
        value = mirror.elementwise(name, x.value, floatx=self.floatx)
        return self._add(getattr(T, name)(x.var), value, f"T.{name}({x.name})")

    def smooth_binary(self) -> Node | None:
        draw = self.draw
        x = self.pick()
        name = self.choose(BINARY)
        other = draw(st.sampled_from([n for n in self.pool if broadcast_together(x, n)]
                                     + [2, 0.5, -1.5, 3.0]))
        a, b = (x, other) if draw(st.booleans()) else (other, x)
        integer_power = isinstance(b, int) and not isinstance(b, bool)
        # Denominators and bases of real powers are moved into (0.5, ...) when they are not
        # away from zero.
        if name == "true_div" and isinstance(b, Node):
            b = self.into_domain(b, "inv")
        if name == "pow" and isinstance(a, Node) and not integer_power:
            a = self.into_domain(a, "log")
        va, vb = np.asarray(operand_value(a), float), np.asarray(operand_value(b), float)
        if name == "true_div" and not _away_from_zero(0.2)(vb):
            return None
        if name in ("maximum", "minimum") and not _away_from_zero(MARGIN)(va - vb):
            return None
        if name == "pow" and not ((integer_power or _above(0.2)(va)) and np.all(np.abs(vb) < 3)):
            return None
        if name == "arctan2" and not (_above(0.2)(np.abs(va) + np.abs(vb))
                                      and off_branch_cut(va, vb)):
            return None
        value = mirror.elementwise(name, operand_value(a), operand_value(b), floatx=self.floatx)
        if not np.all(np.isfinite(value)) or np.max(np.abs(value), initial=0) > 1e4:
            return None
        var = getattr(T, name)(operand_graph(a), operand_graph(b))
        return self._add(var, value, f"T.{name}({_name(a)}, {_name(b)})")

    def smooth_switch(self) -> Node | None:
        """``switch(a > b, x, y)`` where ``a`` and ``b`` never meet, or ``clip``."""
        draw = self.draw
        x = self.pick()
        if draw(st.booleans()):
            low, high = sorted(draw(st.lists(st.floats(-2, 2), min_size=2, max_size=2)))
            if not (_away_from_zero(MARGIN)(x.value - low) and _away_from_zero(MARGIN)(
                    x.value - high)):
                return None
            value = mirror.clip(x.value, low, high, self.floatx)
            return self._add(T.clip(x.var, low, high), value, f"T.clip({x.name}, {low}, {high})")
        fits = [n for n in self.pool if broadcast_together(x, n)]
        cond, other = draw(st.sampled_from(fits)), draw(st.sampled_from(fits))
        threshold = draw(st.floats(-1, 1))
        if not (_away_from_zero(MARGIN)(cond.value - threshold)
                and broadcast_together(cond, x, other)):
            return None
        value = mirror.switch(cond.value > threshold, x.value, other.value, self.floatx)
        var = T.switch(cond.var > threshold, x.var, other.var)
        return self._add(var, value, f"T.switch({cond.name} > {threshold}, {x.name}, {other.name})")

    def apply_reduction(self, x: Node, name: str, axis, keepdims: bool) -> Node | None:
        if name in ("max", "min") and _ties(x.value, axis):
            return None
        if name == "prod" and x.value.size > 12:
            return None  # products of many factors get large
        return super().apply_reduction(x, name, axis, keepdims)

    def nnet(self) -> Node | None:
        x = self.pick()
        name = self.choose(sorted(NNET))
        if name in ("softmax", "log_softmax") and (x.var.ndim == 0 or x.value.size == 0):
            return None
        value = NNET[name](x.value)
        if name in ("softmax", "log_softmax") and x.var.ndim == 1:
            value = value[None, :]  # Theano 1.0: the softmax of a vector is a 1 x n row
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (that case's deprecation warning)
            var = getattr(T.nnet, name)(x.var)
        return self._add(var, value, f"T.nnet.{name}({x.name})")

    def join(self) -> Node | None:
        """``concatenate`` or ``stack`` of a node with a transformed copy of itself."""
        draw = self.draw
        x = self.pick()
        if x.var.ndim == 0:
            return None
        axis = draw(st.integers(0, x.var.ndim - 1))
        other = x.var * 2.0 + 1.0
        other_value = x.value * 2.0 + 1.0
        if draw(st.booleans()):
            value = np.concatenate([x.value, other_value], axis=axis)
            return self._add(T.concatenate([x.var, other], axis=axis), value,
                             f"T.concatenate([{x.name}, {x.name} * 2 + 1], axis={axis})")
        value = np.stack([x.value, other_value], axis=axis)
        return self._add(T.stack([x.var, other], axis=axis), value,
                         f"T.stack([{x.name}, {x.name} * 2 + 1], axis={axis})")


def _name(operand) -> str:
    return operand.name if isinstance(operand, Node) else repr(operand)
