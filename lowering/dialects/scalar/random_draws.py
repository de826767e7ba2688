"""One random draw from a Philox4x32-10 block, as scalar ops: the element function of the
tensor dialect's random ops.

Draw ``i`` of a stream with 64-bit ``key`` and 64-bit ``counter`` is made from the block
``philox4x32(counter + i, key)``, the sum's low and high words as counter words 0 and 1 (words 2
and 3 are zero) and the key's low and high words as key words 0 and 1. It depends on nothing but
those three numbers, so any element can be computed alone: in any order, in any thread, fused
into any loop. One call uses one block per element, and the stream's counter advances by the
number of elements.

- ``bits``: word 0 (``ui32``);
- ``uniform``: ``[0, 1)`` with the type's precision: ``(w0 >> 8) * 2**-24`` for ``f32``,
  ``((w0 >> 5) * 2**26 + (w1 >> 6)) * 2**-53`` for ``f64``;
- ``normal``: Box-Muller, ``sqrt(-2 log(1 - u1)) * cos(2 pi u2)`` with ``u1`` and ``u2``
  uniform from words (0, 1) and (2, 3) for ``f64``, words 0 and 1 for ``f32``.

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.interpreter import Interpreter
>>> from lowering.ir.types import F64, UI64
>>> block = Block([UI64, UI64, UI64])
>>> value = draw(Emitter(block.append), "uniform", F64, *block.args)
>>> interp = Interpreter()
>>> _ = interp.run_block(block, [np.uint64(0), np.uint64(0), np.arange(3, dtype=np.uint64)])
>>> interp.value(value).round(6).tolist()
[0.399046, 0.972241, 0.019449]
"""
from __future__ import annotations

import math

from lowering.ir.core import Value
from lowering.ir.types import F32, F64, UI32, UI64, ScalarType

from .ops import CosOp, FloorDivOp, LogOp, SqrtOp, SubOp
from .philox import Emitter, philox4x32

DISTRIBUTIONS = ("bits", "uniform", "normal")


def element_type_ok(distribution: str, element: ScalarType) -> bool:
    """Whether ``distribution`` draws values of type ``element``.

    >>> element_type_ok("bits", UI32), element_type_ok("normal", UI32)
    (True, False)
    """
    return element == UI32 if distribution == "bits" else element in (F32, F64)


def block_words(e: Emitter, key: Value, counter: Value, index: Value) -> list[Value]:
    """The four ``ui32`` words of block ``counter + index`` under ``key`` (all ``ui64``)."""
    position = e.add(counter, index)
    zero = e.constant(0, UI32)
    words = [e.cast(position, UI32), e.cast(e.high_half(position), UI32), zero, zero]
    return philox4x32(e, words, [e.cast(key, UI32), e.cast(e.high_half(key), UI32)])


def _shift(e: Emitter, word: Value, bits: int) -> Value:
    return e.apply(FloorDivOp, word, e.constant(1 << bits, word.type))


def uniform(e: Emitter, words: list[Value], element: ScalarType) -> Value:
    """A value in ``[0, 1)`` from one word (``f32``) or two (``f64``), every bit of the
    mantissa random."""
    if element == F32:
        return e.mul(e.cast(_shift(e, words[0], 8), F32), e.constant(2.0 ** -24, F32))
    high = e.cast(_shift(e, words[0], 5), UI64)
    low = e.cast(_shift(e, words[1], 6), UI64)
    mantissa = e.add(e.mul(high, e.constant(1 << 26, UI64)), low)
    return e.mul(e.cast(mantissa, F64), e.constant(2.0 ** -53, F64))


def normal(e: Emitter, words: list[Value], element: ScalarType) -> Value:
    """A standard normal value (Box-Muller's cosine branch)."""
    per = 1 if element == F32 else 2
    u1 = uniform(e, words[:per], element)
    u2 = uniform(e, words[per:2 * per], element)
    one = e.constant(1.0, element)
    radius = e.apply(SqrtOp, e.mul(e.constant(-2.0, element),
                                   e.apply(LogOp, e.apply(SubOp, one, u1))))
    return e.mul(radius, e.apply(CosOp, e.mul(e.constant(2 * math.pi, element), u2)))


def draw(e: Emitter, distribution: str, element: ScalarType, key: Value, counter: Value,
         index: Value) -> Value:
    """Draw ``index`` of the stream (``key``, ``counter``) from ``distribution`` as ``element``."""
    words = block_words(e, key, counter, index)
    if distribution == "bits":
        return words[0]
    if distribution == "uniform":
        return uniform(e, words, element)
    if distribution == "normal":
        return normal(e, words, element)
    raise ValueError(f"unknown distribution {distribution!r} (known: {', '.join(DISTRIBUTIONS)})")
