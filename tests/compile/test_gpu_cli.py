"""lowering-opt --target cuda: the gpu stage and PTX of a Python file's function, on any machine
(no GPU needed); the PTX assembles with ptxas."""
from __future__ import annotations

import contextlib
import io
import os

import pytest

from lowering.cli import main
from lowering.llvm.gpu.ptxas import assemble_ptx, ptxas_available

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGREG = os.path.join(ROOT, "examples", "logreg.py")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def logreg_ptx() -> str:
    status, out, err = run(f"{LOGREG}:train", "--target", "cuda", "--emit", "ptx")
    assert status == 0, err
    return out


def test_emit_ptx_of_the_training_step(logreg_ptx):
    assert ".entry" in logreg_ptx and ".target sm_" in logreg_ptx


@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not installed")
def test_the_emitted_ptx_assembles_with_ptxas(logreg_ptx):
    arch = next(line.split()[1] for line in logreg_ptx.splitlines()
                if line.startswith(".target"))
    assert assemble_ptx(logreg_ptx, arch)


def test_emit_gpu_prints_the_host_function_and_its_kernels():
    status, out, err = run(f"{LOGREG}:train", "--target", "cuda", "--emit", "gpu")
    assert status == 0, err
    assert "gpu.module @" in out and "gpu.launch_func @" in out
    # The weights are arguments in device memory, updated there in place (what runs).
    header = next(line for line in out.splitlines() if "func.func @train" in line)
    assert '%w: !loops.buffer<?xf64, space="device">' in header
    assert "lowering.updated_in_place = [[2 : i64, 2 : i64], [3 : i64, 3 : i64]]" in header
    # The graph as built returns the new weights, on the device.
    status, out, err = run(f"{LOGREG}:train", "--target", "cuda", "--emit", "gpu",
                           "--unoptimized")
    assert status == 0, err
    header = next(line for line in out.splitlines() if "func.func @train" in line)
    assert '%w: !loops.buffer<?xf64, strides=[?], offset=?, space="device">' in header
    assert 'lowering.result_devices = ["cpu", "cpu", "cuda", "cuda"]' in header


def test_emit_ptx_from_ir_text(tmp_path):
    source = tmp_path / "f.mlir"
    source.write_text('''
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}''')
    status, out, err = run(str(source), "--emit", "ptx")
    assert status == 0, err
    assert ".entry" in out
    status, llvm_ir, err = run(str(source), "--target", "cuda", "--emit", "llvm")
    assert status == 0, err
    assert "nvptx" in llvm_ir


def test_an_unknown_target_is_a_usage_error():
    status, _, err = run("-", "--target", "tpu")
    assert status == 2 and "--target" in err and "cuda" in err


def test_emit_ptx_shows_the_kernels_function_runs_by_default(logreg_ptx):
    import runpy

    from lowering.config import config
    with config.change_flags(device="cuda", **{"gpuarray.simulate": True}):
        train = runpy.run_path(LOGREG, run_name="__lowering_opt__")["train"]
        runs = train.ir("ptx")
    assert logreg_ptx.count(".entry") == runs.count(".entry")
    status, unoptimized, err = run(f"{LOGREG}:train", "--target", "cuda", "--emit", "ptx",
                                   "--unoptimized")
    assert status == 0, err
    assert unoptimized.count(".entry") > logreg_ptx.count(".entry")
