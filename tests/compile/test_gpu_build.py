"""compile_for_gpu: the gpu stage and PTX of a tensor module, their disk cache, one context per
function, and the gpu/ptx stages of Function.ir."""
from __future__ import annotations

import numpy as np
import pytest

import lowering.tensor as T
from lowering import function
from lowering.compile.gpu import build as gpu_build
from lowering.compile.gpu.build import GpuCompileError, compile_for_gpu, program_context
from lowering.compile.pipeline import StageUnavailableError
from lowering.config import config
from lowering.ir.parser import parse_module
from lowering.ir.printer import print_op
from lowering.llvm.gpu.ptxas import assemble_ptx, ptxas_available

SOURCE = '''
func.func @f(%x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32>
    attributes {lowering.arg_devices = ["cpu", "DEVICE"], lowering.result_devices = ["DEVICE"]} {
  %y = "tensor.mul"(%x, %w) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %z = "tensor.exp"(%y) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %z : tensor<?xf32>
}'''


def module(context="cuda"):
    return parse_module(SOURCE.replace("DEVICE", context))


@pytest.fixture
def private_cache(tmp_path):
    with config.change_flags(cache_dir=str(tmp_path / "cache")):
        gpu_build._built.clear()
        yield
        gpu_build._built.clear()


def test_the_gpu_stage_holds_the_host_function_and_its_kernels(private_cache):
    program = compile_for_gpu(module(), block_size=32)
    host = program.host
    assert [a.type.memory_space for a in host.regions[0].block.args] == ["host", "device"]
    names = [op.name for op in host.regions[0].block.ops]
    assert "gpu.to_device" in names and "gpu.launch_func" in names
    assert "gpu.to_host" not in names  # the result stays on the device
    assert [m.sym_name for m in program.gpu_modules] and program.context == "cuda"
    assert {"place", "bufferize", "map-to-gpu"} <= set(program.timings)
    original = module()
    compile_for_gpu(original, block_size=32)
    assert print_op(original) == print_op(module())  # the input is left alone


def test_a_warm_compile_parses_the_stage_from_the_disk_cache(private_cache):
    first = compile_for_gpu(module(), block_size=32)
    text = print_op(first.module, print_locations=True)
    del first
    gpu_build._built.clear()
    again = compile_for_gpu(module(), block_size=32)
    assert again.from_disk and print_op(again.module, print_locations=True) == text
    other = compile_for_gpu(module(), block_size=64)  # other options: another entry
    assert not other.from_disk


def test_ptx_is_made_once_per_architecture_and_cached(private_cache, monkeypatch):
    program = compile_for_gpu(module(), block_size=32)
    ptx = program.ptx("sm_80")
    assert ".target sm_80" in ptx
    assert program.ptx_modules("sm_80") is program.ptx_modules("sm_80")  # made once
    if ptxas_available():
        assert assemble_ptx(ptx, "sm_80")
    from lowering.llvm.gpu import to_ptx

    def no_translation(*args, **kwargs):
        raise AssertionError("the PTX should come from the cache")

    monkeypatch.setattr(to_ptx, "translate_gpu_module", no_translation)
    fresh = gpu_build.GpuProgram(program.module, "cuda", 32)
    assert fresh.ptx("sm_80") == ptx
    assert fresh.ptx_modules("sm_80")[program.gpu_modules[0].sym_name].kernels


def test_a_function_lives_in_one_context():
    with config.change_flags(contexts="dev0->cuda0;dev1->cuda1"):
        assert program_context(module("dev1")) == "dev1"
        mixed = parse_module(SOURCE.replace('["cpu", "DEVICE"]', '["cpu", "dev0"]')
                             .replace("DEVICE", "dev1"))
        with pytest.raises(GpuCompileError, match="several GPU contexts.*dev0, dev1"):
            program_context(mixed)


def test_functions_built_for_the_cpu_have_no_gpu_stage():
    x = T.fvector("x")
    f = function([x], T.exp(x))
    with pytest.raises(StageUnavailableError, match="stage 'gpu'.*device=cpu"):
        f.ir("gpu")
    with pytest.raises(StageUnavailableError):
        f.ir("ptx")


def test_function_stages_for_gpu_functions():
    x = T.fvector("x")
    with config.change_flags({"gpuarray.simulate": True}, device="cuda"):
        f = function([x], T.exp(x))
    assert "gpu.launch_func @" in f.ir("gpu")
    assert ".entry" in f.ir("ptx")
    np.testing.assert_allclose(f(np.zeros(2, np.float32)), [1, 1])
