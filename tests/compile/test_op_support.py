"""Every op has a rule in each layer on its way to each backend it reaches, or says why not; an
op declared unsupported fails to compile with an error naming it and the user's line."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import lowering
from lowering.compile.cpu.executor import CpuCompileError
from lowering.compile.op_support import (BACKENDS, CPU, GPU, INTERPRETED, Backend, Support,
                                         has_gradient, has_pretty_form, support)
from lowering.dialects.loops import CallOp, LoadOp
from lowering.dialects.test import ExpWithoutLoopsOp
from lowering.dialects.tensor import ElementwiseOp, ExpOp, SumOp, TensorOp
from lowering.frontend.build import apply
from lowering.ir.context import default_context
from lowering.ir.core import operand, result
from lowering.ir.rules import RuleTable
from lowering.passes.bufferize.core import BUFFERIZE, DEVICE_BUFFERIZE


def test_every_op_has_a_rule_for_each_backend_it_reaches_unless_it_says_why_not():
    ours = [cls for name, cls in sorted(default_context().ops.items())
            if not name.split(".")[0].startswith("test")]
    gaps = [f"{cls.name} on {backend.name}: {state.reason}"
            for cls in ours for backend in BACKENDS
            if (state := support(cls, backend)).state == "missing"]
    assert gaps == []
    assert len(ours) > 150  # every dialect is registered: the check covers them


def test_support_reads_each_step_of_the_path_from_its_tables():
    interpreter, lowering_ = RuleTable("run"), RuleTable("lower")
    backend = Backend("toy", {"tensor": ((interpreter,), (lowering_,))})

    class Twice(TensorOp):
        name = "tensor.twice_for_this_test"

    assert support(Twice, backend) == Support("missing", "no rule in run")
    interpreter.register(TensorOp)(lambda interp, op, args: args)  # a base class serves it
    assert support(Twice, backend) == Support("missing", "no rule in lower")
    lowering_.unsupported(Twice, "twice has no loops yet")
    assert support(Twice, backend) == Support("no", "twice has no loops yet")
    lowering_.register(Twice)(lambda ctx, op: [])
    assert support(Twice, backend) == Support("yes")
    assert support(CallOp, backend) == Support("n/a")  # loops ops never reach this backend


def test_the_real_backends_follow_each_dialects_path():
    assert [support(ExpOp, b).state for b in BACKENDS] == ["yes", "yes", "yes"]
    assert support(LoadOp, GPU) == Support("yes")  # a kernel lowers it with the CPU's rule
    assert support(CallOp, CPU) == Support("yes")
    assert support(CallOp, GPU) == Support(
        "no", "external functions (BLAS, C) cannot be called from a GPU kernel")
    assert support(default_context().ops["gpu.thread_id"], CPU) == Support("n/a")
    assert support(default_context().ops["func.func"], INTERPRETED) == Support("structure")


def test_ops_a_gpu_cannot_run_are_declared_in_the_device_rules_only():
    class HostOnly(ElementwiseOp):
        name = "tensor.host_only_for_this_test"

    BUFFERIZE.register(HostOnly)(BUFFERIZE.find(ExpOp))
    DEVICE_BUFFERIZE.unsupported(HostOnly, "it needs the host's memory")
    assert support(HostOnly, GPU) == Support("no", "it needs the host's memory")
    assert DEVICE_BUFFERIZE.find(ExpOp) is BUFFERIZE.find(ExpOp)  # the rest falls back
    # A scan runs on both: on the GPU its steps launch kernels from the host's loop.
    scan = default_context().ops["tensor.scan"]
    assert support(scan, CPU) == support(scan, GPU) == Support("yes")
    with open(Path(lowering.__file__).parent.parent / "docs" / "ops.md") as f:
        row = next(line for line in f if line.startswith("| `tensor.scan` |"))
    assert row.split(" | ")[3] == "yes"  # the GPU column


def test_gradient_and_pretty_form_come_from_the_op_classes():
    assert has_gradient(ExpOp) and has_gradient(SumOp)
    assert not has_gradient(default_context().ops["tensor.fused"])
    assert has_pretty_form(LoadOp)
    assert all(has_pretty_form(cls) for cls in default_context().ops.values())

    class Formatted(TensorOp):
        name = "tensor.formatted_for_this_test"
        assembly_format = "$input attr-dict : type($input) -> type($output)"
        input = operand()
        output = result()

    assert has_pretty_form(Formatted) and not has_pretty_form(TensorOp)


BUFFERIZE.unsupported(ExpWithoutLoopsOp, "this op has no loop form")


def test_an_op_declared_unsupported_fails_to_compile_naming_it_and_the_users_line():
    assert BUFFERIZE.find(ElementwiseOp) is not None  # what it would inherit otherwise
    x = lowering.tensor.dvector("x")
    line = inspect.currentframe().f_lineno + 1
    y = apply(ExpWithoutLoopsOp, x)
    interpreted = lowering.function([x], y, mode="INTERP")
    np.testing.assert_allclose(interpreted(np.array([0.0, 1.0])), [1.0, np.e])
    with pytest.raises(CpuCompileError) as raised:
        lowering.function([x], y, mode="FAST_RUN")(np.array([0.0, 1.0]))
    message = str(raised.value)
    assert "test.exp_without_loops" in message
    assert f"test_op_support.py:{line}:" in message
    assert "is not supported: this op has no loop form" in message


def test_lowering_opt_refuses_an_unsupported_op_at_its_line(tmp_path, capsys):
    from lowering.cli import main
    path = tmp_path / "model.mlir"
    path.write_text('func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {\n'
                    '  %y = "test.exp_without_loops"(%x) : (tensor<?xf64>) -> '
                    'tensor<?xf64>\n'
                    '  func.return %y : tensor<?xf64>\n'
                    '}\n')
    assert main([str(path), "--load-dialect", "test", "-p", "bufferize"]) == 1
    err = capsys.readouterr().err
    assert "test.exp_without_loops" in err and "model.mlir:2:" in err
    assert "is not supported: this op has no loop form" in err
