"""The Philox counter-based generator (Salmon et al., "Parallel random numbers: as easy as 1, 2,
3", SC 2011), composed from scalar integer ops.

This is the one definition of the generator: the functions below build ``scalar`` ops (integer
multiplies, xors, casts), so the interpreter runs it on NumPy arrays, the CPU code generator and
the GPU kernels compile the same ops, and all of them give the same bits. ``philox4x32`` is
Philox4x32-10 (cuRAND's and Random123's default); ``philox4x64`` is Philox4x64-10, the variant
NumPy's ``numpy.random.Philox`` implements, which the tests compare with.

A generator is applied through an ``Emitter``, which places each op it makes:

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.interpreter import Interpreter
>>> from lowering.ir.types import UI32
>>> block = Block([UI32] * 6)
>>> emit = Emitter(block.append)
>>> words = philox4x32(emit, block.args[:4], block.args[4:])
>>> interp = Interpreter()
>>> _ = interp.run_block(block, [np.uint32(0)] * 6)
>>> [hex(int(interp.value(w))) for w in words]
['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
"""
from __future__ import annotations

from typing import Callable, Sequence

from lowering.ir.core import Operation, Value
from lowering.ir.types import UI32, UI64, ScalarType

from .ops import AddOp, AndOp, CastOp, ConstantOp, FloorDivOp, MulOp, XorOp

ROUNDS = 10
# Multipliers and Weyl increments (the key schedule) of the two widths.
MULTIPLIERS = {32: (0xD2511F53, 0xCD9E8D57), 64: (0xD2E7470EE14C6C93, 0xCA5A826395121157)}
WEYL = {32: (0x9E3779B9, 0xBB67AE85), 64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)}
_WORD = {32: UI32, 64: UI64}


class Emitter:
    """Makes scalar ops and hands each to ``place`` (which puts it in a block or a loop body);
    ``constant(value, type)``, if given, makes the constants instead (hoisted out of loops).

    >>> from lowering.ir.core import Block
    >>> block = Block([UI32])
    >>> e = Emitter(block.append)
    >>> str(e.xor(block.args[0], e.constant(1, UI32)).type), len(list(block.ops))
    ('ui32', 2)
    """

    def __init__(self, place: Callable[[Operation], object],
                 constant: Callable[[object, ScalarType], Value] | None = None):
        self.place = place
        self._constant = constant  # where constants come from, when not placed like the rest

    def _emit(self, op: Operation) -> Value:
        self.place(op)
        return op.result

    def constant(self, value, element: ScalarType) -> Value:
        if self._constant is not None:
            return self._constant(value, element)
        return self._emit(ConstantOp.build(value, element))

    def apply(self, op_class, *operands: Value) -> Value:
        """The result of the scalar function op ``op_class`` on ``operands``."""
        return self._emit(op_class.build(*operands))

    def cast(self, value: Value, element: ScalarType) -> Value:
        if value.type == element:
            return value
        return self._emit(CastOp.build(value, element))

    def add(self, a: Value, b: Value) -> Value:
        return self.apply(AddOp, a, b)

    def mul(self, a: Value, b: Value) -> Value:
        return self.apply(MulOp, a, b)

    def xor(self, a: Value, b: Value) -> Value:
        return self.apply(XorOp, a, b)

    def high_half(self, value: Value) -> Value:
        """The upper 32 bits of a ui64, as a ui64 (a shift: division by 2**32)."""
        return self.apply(FloorDivOp, value, self.constant(1 << 32, UI64))

    def low_half(self, value: Value) -> Value:
        """The lower 32 bits of a ui64, as a ui64."""
        return self.apply(AndOp, value, self.constant(0xFFFFFFFF, UI64))


def mulhilo32(e: Emitter, a: Value, b: Value) -> tuple[Value, Value]:
    """The high and low words of the 64-bit product of two ui32 values."""
    product = e.mul(e.cast(a, UI64), e.cast(b, UI64))
    return e.cast(e.high_half(product), UI32), e.cast(product, UI32)


def mulhilo64(e: Emitter, a: Value, b: Value) -> tuple[Value, Value]:
    """The high and low words of the 128-bit product of two ui64 values, from 32-bit limbs."""
    a_lo, a_hi, b_lo, b_hi = e.low_half(a), e.high_half(a), e.low_half(b), e.high_half(b)
    lo_lo, lo_hi, hi_lo = e.mul(a_lo, b_lo), e.mul(a_lo, b_hi), e.mul(a_hi, b_lo)
    middle = e.add(e.add(e.high_half(lo_lo), e.low_half(lo_hi)), e.low_half(hi_lo))
    high = e.add(e.add(e.mul(a_hi, b_hi), e.high_half(lo_hi)),
                 e.add(e.high_half(hi_lo), e.high_half(middle)))
    return high, e.mul(a, b)


_MULHILO = {32: mulhilo32, 64: mulhilo64}


def philox4(e: Emitter, counter: Sequence[Value], key: Sequence[Value], width: int,
            rounds: int = ROUNDS) -> list[Value]:
    """Philox4x``width``: four output words from four counter words and two key words (all
    ``ui32`` or all ``ui64``), word 0 the least significant, as Random123 and NumPy order them."""
    word = _WORD[width]
    mulhilo = _MULHILO[width]
    m0, m1 = (e.constant(m, word) for m in MULTIPLIERS[width])
    w0, w1 = (e.constant(w, word) for w in WEYL[width])
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_ in range(rounds):
        if round_:
            k0, k1 = e.add(k0, w0), e.add(k1, w1)
        hi0, lo0 = mulhilo(e, m0, c0)
        hi1, lo1 = mulhilo(e, m1, c2)
        c0, c1, c2, c3 = e.xor(e.xor(hi1, c1), k0), lo1, e.xor(e.xor(hi0, c3), k1), lo0
    return [c0, c1, c2, c3]


def philox4x32(e: Emitter, counter: Sequence[Value], key: Sequence[Value]) -> list[Value]:
    """Philox4x32-10 on ui32 words."""
    return philox4(e, counter, key, 32)


def philox4x64(e: Emitter, counter: Sequence[Value], key: Sequence[Value]) -> list[Value]:
    """Philox4x64-10 on ui64 words (NumPy's ``Philox``)."""
    return philox4(e, counter, key, 64)
