"""``plan-memory``: every temporary is freed after its last use (views and loops included),
returned buffers are not, dead temporaries are reused only where sizes are provably equal, and
results do not change: random graphs run in the interpreter (which poisons freed memory and
refuses double frees) give the same results with and without the pass."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from lowering.dialects.loops import AllocOp, DeallocOp, RuntimeCheckError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.pass_manager import PassManager
from lowering.ir.printer import print_op
from lowering.ir.verifier import verify
from lowering.passes.plan_memory import PlanMemory

from .bufferize_graphs import assert_same, bufferized, graph_cases, run
from .opt_helpers import module_from

SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]


def planned(module, **options):
    copy = module.clone()
    PlanMemory(**options).apply(copy)
    verify(copy)
    return copy


def names(module) -> list[str]:
    return [op.name for op in module.functions[0].body.block.ops]


PREFIX = '''
func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
  %c0 = "scalar.constant"() {value = 0 : index} : () -> index
  %c1 = "scalar.constant"() {value = 1 : index} : () -> index
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
'''


def test_a_temporary_is_freed_after_the_loop_that_reads_it_last():
    module = module_from(PREFIX + '''
  %t = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %t : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = loops.load %t[%i] : !loops.buffer<?xf32>
    loops.store %v, %y[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  %m = loops.dim %t, 0 : !loops.buffer<?xf32>
  func.return %y : !loops.buffer<?xf32>
}''')
    after = planned(module, reuse=False)
    assert names(after)[-4:] == ["loops.parallel", "loops.dealloc", "loops.dim", "func.return"]
    freed = [op for op in after.functions[0].body.block.ops if isinstance(op, DeallocOp)]
    assert [op.buffer.name_hint for op in freed] == ["t"]  # never the returned %y
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(run(after, [x])[0], x)


def test_a_buffer_lives_while_a_view_of_it_is_used():
    module = module_from(PREFIX + '''
  %t = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %t : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %v = loops.transpose_view %t [x, 0] : !loops.buffer<?xf32> -> !loops.buffer<1x?xf32>
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.fill %c1f, %y : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = loops.load %v[%c0, %i] : !loops.buffer<1x?xf32>
    loops.store %a, %y[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  func.return %y : !loops.buffer<?xf32>
}'''.replace("%t = loops.alloc", '%c1f = "scalar.constant"() {value = 1.0 : f32} : () -> f32\n'
             '  %t = loops.alloc'))
    after = planned(module, reuse=False)
    assert names(after)[-3:] == ["loops.parallel", "loops.dealloc", "func.return"]
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(run(after, [x])[0], x)


def test_buffers_carried_by_loops_or_passed_to_calls_of_functions_are_left_alone():
    module = module_from(PREFIX + '''
  %t = loops.alloc(%n) : !loops.buffer<?xf32>
  %r = loops.for %i = %c0 to %n step %c1 iter_args(%b = %t) -> !loops.buffer<?xf32> {
    loops.yield %b : !loops.buffer<?xf32>
  }
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %y : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  func.return %y : !loops.buffer<?xf32>
}''')
    assert "loops.dealloc" not in names(planned(module))


def test_an_allocation_inside_a_loop_is_freed_inside_it():
    module = module_from(PREFIX + '''
  %y = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = loops.alloc() : !loops.buffer<f32>
    %v = loops.load %x[%i] : !loops.buffer<?xf32>
    loops.store %v, %s[] : !loops.buffer<f32>
    %w = loops.load %s[] : !loops.buffer<f32>
    loops.store %w, %y[%i] : !loops.buffer<?xf32>
    loops.yield
  }
  func.return %y : !loops.buffer<?xf32>
}''')
    after = planned(module)
    loop = [op for op in after.functions[0].body.block.ops if op.name == "loops.parallel"][0]
    inner = [op.name for op in loop.body.block.ops]
    assert inner[inner.index("loops.dealloc") - 1] == "loops.load"
    assert inner[-1] == "loops.yield"


REUSE = PREFIX + '''
  %m = loops.dim %x, 0 : !loops.buffer<?xf32>
  %a = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %a : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %b = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %a, %b : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %c = loops.alloc(SIZE) : !loops.buffer<?xf32>
  loops.copy %b, %c : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  func.return %c : !loops.buffer<?xf32>
}'''


@pytest.mark.parametrize("size, reused", [("%n", True), ("%m", True), ("%k", False)])
def test_a_dead_temporary_is_reused_only_for_provably_equal_sizes(size, reused):
    text = REUSE.replace("SIZE", size)
    if size == "%k":  # a size nothing relates to %n
        text = text.replace("%m = loops.dim %x, 0 : !loops.buffer<?xf32>",
                            '%k = "scalar.add"(%n, %c0) : (index, index) -> index')
    after = planned(module_from(text))
    allocs = [op for op in after.functions[0].body.block.ops if isinstance(op, AllocOp)]
    assert len(allocs) == (2 if reused else 3)
    returned = after.functions[0].body.block.last_op.operands[0]
    assert (returned.name_hint == "a") == reused  # %c takes the memory of the dead %a
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(run(after, [x])[0], x)


def test_sizes_checked_equal_by_an_assert_allow_reuse_after_the_check():
    text = '''
func.func @f(%x: !loops.buffer<?xf32>, %y: !loops.buffer<?xf32>)
    -> (!loops.buffer<?xf32>, !loops.buffer<?xf32>) {
  %n = loops.dim %x, 0 : !loops.buffer<?xf32>
  %m = loops.dim %y, 0 : !loops.buffer<?xf32>
  %a = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %x, %a : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  %b = loops.alloc(%n) : !loops.buffer<?xf32>
  loops.copy %a, %b : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  CHECK
  %c = loops.alloc(%m) : !loops.buffer<?xf32>
  loops.copy %y, %c : !loops.buffer<?xf32>, !loops.buffer<?xf32>
  func.return %b, %c : !loops.buffer<?xf32>, !loops.buffer<?xf32>
}'''
    check = ('%ok = "scalar.eq"(%n, %m) : (index, index) -> i1\n'
             '  loops.assert %ok, "sizes differ" {error_code = 1 : i64}')
    with_check = planned(module_from(text.replace("CHECK", check)))
    without = planned(module_from(text.replace("CHECK", "")))
    assert names(with_check).count("loops.alloc") == 2
    assert names(without).count("loops.alloc") == 3
    x, y = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    for after in (with_check, without):
        b, c = run(after, [x, y])
        np.testing.assert_array_equal(b, x)
        np.testing.assert_array_equal(c, y)
    with pytest.raises(RuntimeCheckError, match="sizes differ"):
        run(with_check, [x, np.ones(4, np.float32)])


def test_the_pass_prints_and_is_in_the_registry():
    module = planned(module_from(REUSE.replace("SIZE", "%n")))
    assert "loops.dealloc" in print_op(module)
    passes = PassManager("plan-memory{reuse=false}").passes
    assert passes == [PlanMemory(reuse=False)]


# ---------------------------------------------------------------------------------------------
# Random graphs: bufferize, then plan-memory, in the interpreter


def check(module, arrays, tolerance=None, pipeline="plan-memory"):
    loops = bufferized(module)
    planned_loops = loops.clone()
    PassManager(pipeline).run(planned_loops)
    for op in planned_loops.walk():  # every temporary is freed, nothing returned is
        if isinstance(op, AllocOp) and not any(u.op.name == "func.return" for u in
                                               op.result.uses):
            escaping = any(u.op.name in ("loops.for", "loops.yield") for u in op.result.uses)
            assert escaping or any(isinstance(u.op, DeallocOp) for u in op.result.uses), op
    try:
        before = [np.asarray(v) for v in run(loops, arrays)]
    except InterpreterError:
        with pytest.raises(RuntimeCheckError):
            run(planned_loops, arrays)
        return
    after = [np.asarray(v) for v in run(planned_loops, arrays)]
    assert_same(before, after, tolerance)


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True))
def test_random_graphs_give_the_same_results_with_freed_and_reused_buffers(case):
    check(*case)


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=False))
def test_random_graphs_ending_in_sums_and_products_with_blas_calls(case):
    module, arrays = case
    loops = bufferized(module, use_blas=True, blas_min_work=0)
    planned_loops = planned(loops)
    try:
        before = [np.asarray(v) for v in run(loops, arrays)]
    except InterpreterError:
        return
    assert_same(before, [np.asarray(v) for v in run(planned_loops, arrays)])


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True))
def test_random_optimized_graphs_with_fused_ops(case):
    module, arrays = case
    PassManager("canonicalize,cse,stabilize,specialize,fuse").run(module)
    check(module, arrays)
