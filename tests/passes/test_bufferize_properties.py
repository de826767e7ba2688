"""Property tests: random tensor-dialect graphs over every dtype, broadcasting, shapes with 0
and 1 and strided inputs give the same results in the interpreter before and after bufferize
(or fail, both, the bufferized one with a ``loops.assert``); the bufferized IR verifies and
prints and parses back (checked in ``bufferized``)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from lowering.dialects.loops import RuntimeCheckError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.pass_manager import PassManager

from .bufferize_graphs import assert_same, bufferized, graph_cases, run

SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]


def check(module, arrays, tolerance=None):
    try:
        before = [np.asarray(v) for v in run(module, arrays)]
    except InterpreterError:
        with pytest.raises(RuntimeCheckError):
            run(bufferized(module), arrays)
        return
    after = [np.asarray(v) for v in run(bufferized(module), arrays)]
    assert_same(before, after, tolerance)


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True))
def test_graphs_without_float_sums_give_identical_results(case):
    check(*case)


@settings(max_examples=80, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=False))
def test_graphs_ending_in_a_float_sum_agree_up_to_summation_order(case):
    # Inputs lie in [-8, 8] and a sum has at most 27 terms: a different order of the terms
    # changes f32/f64 results by far less than this; f16 reference sums round every step.
    check(*case, tolerance=1e-2)


@settings(max_examples=60, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True))
def test_graphs_after_the_graph_optimizations(case):
    """The input bufferize gets in the compiler: optimized graphs, with fused ops."""
    module, arrays = case
    PassManager("canonicalize,cse,stabilize,specialize,fuse").run(module)
    check(module, arrays)
