"""``loops.if`` compiled to LLVM branches: scalar and buffer results, allocations made in a
branch, and checks in the branch not taken, against the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

from to_llvm_testing import CompiledCallError, compile_loops, interpret

# Doubles the vector into a fresh buffer, or fails a check (n < 0 never holds), depending on the
# flag; the second result is a scalar chosen by the branch.
BRANCHES = '''
func.func @pick(%x: !loops.buffer<?xf32>, %flag: i1) -> (!loops.buffer<?xf32>, index) {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %c7 = "scalar.constant"() {value = 7 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %out, %k = loops.if %flag -> (!loops.buffer<?xf32>, index) {
    %y = loops.alloc(%n) : !loops.buffer<?xf32>
    loops.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = loops.load %x[%i] : !loops.buffer<?xf32>
      %w = "scalar.add"(%v, %v) : (f32, f32) -> f32
      loops.store %w, %y[%i] : !loops.buffer<?xf32>
      loops.yield
    }
    loops.yield %y, %c1 : !loops.buffer<?xf32>, index
  } else {
    %never = "scalar.lt"(%n, %c0) : (index, index) -> i1
    loops.assert %never, "the else branch ran" {error_code = 1 : i64}
    %z = loops.alloc(%n) : !loops.buffer<?xf32>
    loops.yield %z, %c7 : !loops.buffer<?xf32>, index
  }
  func.return %out, %k : !loops.buffer<?xf32>, index
}
'''


@pytest.mark.parametrize("size", [0, 5, 1000])
def test_the_taken_branch_gives_the_results_as_in_the_interpreter(size):
    x = np.arange(size, dtype=np.float32)
    compiled = compile_loops(BRANCHES)
    out, k = compiled("pick", x, np.bool_(True))
    expected_out, expected_k = interpret(BRANCHES, "pick", x, np.bool_(True))
    assert out.tolist() == expected_out.tolist() == (2 * x).tolist()
    assert int(k) == int(expected_k) == 1


def test_the_branch_not_taken_does_not_run_and_the_taken_one_can_fail():
    compiled = compile_loops(BRANCHES)
    x = np.ones(3, dtype=np.float32)
    out, _ = compiled("pick", x, np.bool_(True))  # the failing check is in the else branch
    assert out.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(CompiledCallError, match="the else branch ran"):
        compiled("pick", x, np.bool_(False))


def test_a_conditional_without_results_inside_a_loop():
    text = '''
func.func @clip(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %zero = "scalar.constant"() {value = 0.0 : f32} : () -> f32
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.for %i = %c0 to %n step %c1 {
    %v = loops.load %x[%i] : !loops.buffer<?xf32>
    %neg = "scalar.lt"(%v, %zero) : (f32, f32) -> i1
    loops.if %neg {
      loops.store %zero, %y[%i] : !loops.buffer<?xf32>
      loops.yield
    } else {
      loops.store %v, %y[%i] : !loops.buffer<?xf32>
      loops.yield
    }
    loops.yield
  }
  func.return %y : !loops.buffer<?xf32>
}
'''
    x = np.array([-1.0, 2.0, -3.0, 4.0], dtype=np.float32)
    (out,) = compile_loops(text)("clip", x)
    (expected,) = interpret(text, "clip", x)
    assert out.tolist() == expected.tolist() == [0.0, 2.0, 0.0, 4.0]
