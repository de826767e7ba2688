"""``map-to-gpu`` and ``outline-kernels`` on random graphs (elementwise ops of every dtype,
broadcasting, reductions, indexing, products, reshapes; strided and empty inputs) placed on the
device at random: the kernels, run thread by thread, give what the loops IR gave before the
passes, and what the tensor graph gives."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lowering.dialects.loops import RuntimeCheckError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.pass_manager import PassManager

from .bufferize_graphs import assert_same, graph_cases, run
from .map_to_gpu_helpers import DEVICE, mapped
from .placement_cases import casts_floats_to_integers, random_devices, set_devices

SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]


def check(module, arrays, devices, bufferize: str, pipeline: str, tolerance=None) -> None:
    assume(not casts_floats_to_integers(module))
    set_devices(module, *devices)
    loops = module.clone()
    PassManager(f"{DEVICE},{bufferize},inplace,plan-memory").run(loops)
    after = mapped(loops, pipeline)
    try:
        expected = [np.asarray(v) for v in run(module, arrays)]
    except InterpreterError:
        with pytest.raises(RuntimeCheckError):
            run(after, arrays)
        return
    with np.errstate(all="ignore"):
        assert_same(expected, [np.asarray(v) for v in run(loops, arrays)], tolerance)
        assert_same(expected, [np.asarray(v) for v in run(after, arrays)], tolerance)


@settings(max_examples=30, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True), data=st.data(), blocks=st.integers(1, 3))
def test_random_graphs_give_the_same_results_on_kernels(case, data, blocks):
    module, arrays = case
    check(module, arrays, data.draw(random_devices(module)), "bufferize",
          f"map-to-gpu{{block-size=16 max-blocks={blocks}}},outline-kernels")


@settings(max_examples=20, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=False), data=st.data(), optimize=st.booleans())
def test_random_summing_graphs_agree_on_kernels(case, data, optimize):
    module, arrays = case
    if optimize:
        PassManager("canonicalize,cse,stabilize,specialize,fuse").run(module)
    check(module, arrays, data.draw(random_devices(module)),
          "bufferize{use-blas blas-min-work=1}",
          "map-to-gpu{block-size=8 max-blocks=2 tile-size=2},outline-kernels", tolerance=1e-2)
