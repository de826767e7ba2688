"""lowering.arg_devices / lowering.result_devices from function()'s inputs, outputs and shared
variables."""
from __future__ import annotations

import numpy as np

import lowering.tensor as T
from lowering.compile.gpu.placement import (context_name, mark_placement, output_device,
                                            shared_device)
from lowering.compile.graph_to_module import build_module
from lowering.compile.io import In, Out, graph_value
from lowering.compile.shared_storage import SharedContainer
from lowering.config import config
from lowering.dialects.function_attrs import ARG_DEVICES, RESULT_DEVICES
from lowering.ir.types import F32, I64, TensorType

SIMULATED = {"gpuarray.simulate": True, "device": "cuda"}


def test_context_names_follow_the_front_end_spelling():
    with config.change_flags(device="cuda1", contexts="dev0->cuda0"):
        assert [context_name(t) for t in (None, "gpu", "cuda", "cuda1", "gpu2", "dev0", "cpu")] \
            == ["cuda", "cuda", "cuda", "cuda", "cuda2", "dev0", "cpu"]


def test_shared_variables_without_a_target_follow_the_device_flag():
    floats = SharedContainer(np.zeros(3, np.float32), TensorType((None,), F32))
    counter = SharedContainer(np.array(0), TensorType((), I64))
    assert shared_device(floats) == shared_device(counter) == "cpu"
    with config.change_flags(device="cuda"):
        assert (shared_device(floats), shared_device(counter)) == ("cuda", "cpu")


class _PlacedContainer(SharedContainer):
    """A container that says where it lives, as the front end's device containers do."""

    __slots__ = ("target",)


def test_shared_variables_with_a_target_are_where_it_says():
    placed = _PlacedContainer(np.zeros(3, np.float32), TensorType((None,), F32))
    placed.target = "dev1"
    assert shared_device(placed) == "dev1"
    placed.target = "cpu"
    with config.change_flags(device="cuda"):
        assert shared_device(placed) == "cpu"


def test_borrowed_outputs_stay_on_the_gpu_only_with_device_cuda():
    x = T.fvector("x")
    assert output_device(Out(x, borrow=True)) == "cpu"
    with config.change_flags(device="cuda", contexts="dev0->cuda0"):
        assert output_device(Out(x, borrow=True)) == "cuda"
        assert output_device(Out(x)) == "cpu"
        assert output_device(Out(x.transfer("dev0"))) == "dev0"


def test_marks_arguments_results_and_updates():
    from lowering import shared
    with config.change_flags(SIMULATED):
        w = shared(np.ones(4, np.float32), name="w")
        steps = shared(0, name="steps")
        x, y = T.fvector("x"), T.fvector("y")
        inputs = [In(x), In(y.transfer(None))]
        outputs = [Out(x * w), Out((x + y).transfer(None))]
        built = build_module([graph_value(s.variable) for s in inputs],
                             [graph_value(o.variable) for o in outputs],
                             [(w.container, graph_value(w * 2)),
                              (steps.container, graph_value(steps + 1))])
        mark_placement(built, inputs, outputs)
    func = built.func
    assert ARG_DEVICES.get(func) == ["cpu", "cuda", "cuda", "cpu"]
    assert RESULT_DEVICES.get(func) == ["cpu", "cuda", "cuda", "cpu"]
