"""Philox as scalar ops (``lowering.dialects.scalar.philox``), run by the reference interpreter:
Philox4x32-10 against Random123's known-answer vectors, Philox4x64-10 against NumPy's
``numpy.random.Philox`` (the 4x64 variant), and the draws built on them."""
from __future__ import annotations

import numpy as np
import pytest

from lowering.dialects.scalar.philox import Emitter, philox4x32, philox4x64
from lowering.dialects.scalar.random_draws import draw
from lowering.dialects.tensor.random import draws
from lowering.ir.core import Block
from lowering.ir.interpreter import Interpreter
from lowering.ir.types import F32, F64, UI32, UI64

# Random123's kat_vectors for philox4x32 with 10 rounds: (counter, key, output), word 0 first.
KAT_4X32 = [
    ([0, 0, 0, 0], [0, 0], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
    ([0xffffffff] * 4, [0xffffffff] * 2, [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
    ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0],
     [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]),
]


def run_generator(generator, word, counters, keys):
    """The generator's four output words for arrays of counter and key words."""
    block = Block([word] * 6)
    outputs = generator(Emitter(block.append), block.args[:4], block.args[4:])
    interp = Interpreter()
    interp.run_block(block, [np.asarray(c, word.dtype) for c in counters]
                     + [np.asarray(k, word.dtype) for k in keys])
    return [np.asarray(interp.value(w)) for w in outputs]


@pytest.mark.parametrize("counter, key, expected", KAT_4X32)
def test_philox4x32_gives_random123s_known_answers(counter, key, expected):
    words = run_generator(philox4x32, UI32, counter, key)
    assert [int(w) for w in words] == expected
    assert all(w.dtype == np.uint32 for w in words)


def numpy_block(key, counter):
    """NumPy's Philox output for block ``counter`` (it increments before each block)."""
    value = sum(int(c) << (64 * i) for i, c in enumerate(counter))
    before = (value - 1) % (1 << 256)
    words = np.array([(before >> (64 * i)) & (2 ** 64 - 1) for i in range(4)], np.uint64)
    return np.random.Philox(key=np.array(key, np.uint64), counter=words).random_raw(4)


def test_philox4x64_is_numpys_philox_bit_for_bit():
    rng = np.random.default_rng(20)
    keys = rng.integers(0, 2 ** 64, size=(40, 2), dtype=np.uint64)
    counters = rng.integers(0, 2 ** 64, size=(40, 4), dtype=np.uint64)
    counters[:5] = [0, 0, 0, 0]                     # the start of a stream
    counters[5:10, 0] = 2 ** 64 - 1                 # word 0 at its maximum
    keys[10:15] = 2 ** 64 - 1                       # the key schedule wrapping
    words = run_generator(philox4x64, UI64, counters.T, keys.T)
    got = np.stack(words, axis=1)
    want = np.stack([numpy_block(k, c) for k, c in zip(keys, counters)])
    np.testing.assert_array_equal(got, want)


def test_a_draw_is_a_function_of_key_counter_and_position_only():
    whole = draws("bits", UI32, 99, 1000, (6,))
    np.testing.assert_array_equal(draws("bits", UI32, 99, 1003, (3,)), whole[3:])
    first = run_generator(philox4x32, UI32, [1000 + np.arange(6), 0, 0, 0], [99, 0])[0]
    np.testing.assert_array_equal(whole, first)
    assert not np.array_equal(draws("bits", UI32, 98, 1000, (6,)), whole)


def test_the_counter_carries_into_its_high_word():
    near = 2 ** 32 - 1
    got = draws("bits", UI32, 5, near, (2,))
    want = run_generator(philox4x32, UI32, [[near, 0], [0, 1], 0, 0], [5, 0])[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("element, bits", [(F32, 24), (F64, 53)])
def test_uniform_draws_use_every_mantissa_bit_and_stay_below_one(element, bits):
    values = draws("uniform", element, 3, 0, (20000,))
    assert values.dtype == element.dtype
    assert 0 <= values.min() and values.max() < 1
    scaled = values.astype(np.float64) * 2.0 ** bits
    np.testing.assert_array_equal(scaled, np.floor(scaled))   # multiples of 2**-bits
    assert (scaled % 2 == 1).any()                          # the last bit is random too


def test_uniform_f64_is_made_from_the_first_two_words():
    w0, w1, _, _ = run_generator(philox4x32, UI32, [np.arange(4), 0, 0, 0], [11, 0])
    want = ((w0 >> 5).astype(np.float64) * 2 ** 26 + (w1 >> 6)) * 2.0 ** -53
    np.testing.assert_array_equal(draws("uniform", F64, 11, 0, (4,)), want)


def test_normal_draws_are_box_muller_of_two_uniforms():
    block = Block([UI64, UI64, UI64])
    value = draw(Emitter(block.append), "normal", F64, *block.args)
    interp = Interpreter()
    interp.run_block(block, [np.uint64(4), np.uint64(0), np.arange(5, dtype=np.uint64)])
    w = run_generator(philox4x32, UI32, [np.arange(5), 0, 0, 0], [4, 0])
    u1 = ((w[0] >> 5).astype(np.float64) * 2 ** 26 + (w[1] >> 6)) * 2.0 ** -53
    u2 = ((w[2] >> 5).astype(np.float64) * 2 ** 26 + (w[3] >> 6)) * 2.0 ** -53
    want = np.sqrt(-2 * np.log(1 - u1)) * np.cos(2 * np.pi * u2)
    np.testing.assert_allclose(interp.value(value), want, rtol=1e-15)


def test_an_unknown_distribution_is_an_error_naming_the_known_ones():
    block = Block([UI64, UI64, UI64])
    with pytest.raises(ValueError, match="unknown distribution 'gamma' .*bits, uniform, normal"):
        draw(Emitter(block.append), "gamma", F64, *block.args)
