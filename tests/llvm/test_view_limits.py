"""Run-time windows of ``loops.subview`` at the int64 limits: the backend's bounds check is exact
(a last element beyond the int64 range never wraps back inside the buffer) and a step that a
window of one element never uses may be anything."""
from __future__ import annotations

import numpy as np
import pytest

from to_llvm_testing import CompiledCallError, compile_loops

WINDOW = '''
func.func @window(%x: !loops.buffer<8x8xf64>, %o: index, %n: index, %s: index)
    -> !loops.buffer<?x8xf64> {
  %sub = loops.subview %x[%o, 0] [%n, 8] [%s, 1]
      : !loops.buffer<8x8xf64> -> !loops.buffer<?x8xf64, strides=[?, 1], offset=?>
  %out = loops.alloc(%n) : !loops.buffer<?x8xf64>
  loops.copy %sub, %out : !loops.buffer<?x8xf64, strides=[?, 1], offset=?>, !loops.buffer<?x8xf64>
  func.return %out : !loops.buffer<?x8xf64>
}'''

_COMPILED: dict = {}


def _window():
    if "window" not in _COMPILED:
        _COMPILED["window"] = compile_loops(WINDOW)
    return _COMPILED["window"]


@pytest.mark.parametrize("offset, count, step", [
    (0, 2 ** 62 + 1, 4),  # (count - 1) * step is 2**64: wrapped, the last row would be row 0
    (2, 2 ** 61 + 1, 8),  # the same, the last row would be row 2
    (1, 3, 2 ** 63 - 1),  # wrapped, the last row would be row -1
    (7, 2, -2 ** 63),
    (3, 2 ** 63 - 1, 2),
])
def test_a_window_whose_last_element_overflows_is_an_index_error(offset, count, step):
    with pytest.raises(CompiledCallError) as info:
        _window()("window", np.zeros((8, 8)), np.int64(offset), np.int64(count), np.int64(step))
    assert info.value.kind == "index" and "loops.subview" in info.value.message


@pytest.mark.parametrize("offset, step", [(7, -2 ** 63), (0, 2 ** 63 - 1), (5, 2 ** 62)])
def test_a_window_of_one_row_ignores_its_step(offset, step):
    x = np.arange(64.0).reshape(8, 8)
    (got,) = _window()("window", x, np.int64(offset), np.int64(1), np.int64(step))
    np.testing.assert_array_equal(got, x[offset:offset + 1])
