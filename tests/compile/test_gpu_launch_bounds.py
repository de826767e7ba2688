"""Every kernel of the examples fits the block it is launched with: the PTX declares the block
size (``.maxntid``) and ``ptxas -v`` then allocates at most 65,536 registers per block, for the
default block size and for the largest (1,024 threads)."""
from __future__ import annotations

import os
import runpy

import pytest

from lowering.compile.gpu.build import compile_for_gpu
from lowering.config import config
from lowering.ir.parser import parse_module
from lowering.llvm.gpu.ptxas import kernel_resources, ptxas_available

pytestmark = pytest.mark.skipif(not ptxas_available(), reason="ptxas is not installed")

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")
FUNCTIONS = [("logreg.py", "train", "float64"), ("logreg.py", "train", "float32"),
             ("logreg.py", "predict", "float64"), ("logreg_shared.py", "train", "float32"),
             ("exp_check.py", "f", "float32"), ("gpu_check.py", "f", "float32")]
REGISTERS_PER_BLOCK = 65536


def optimized_module(example: str, name: str, floatx: str):
    with config.change_flags({"gpuarray.simulate": True}, device="cuda", floatX=floatx):
        namespace = runpy.run_path(os.path.join(EXAMPLES, example), run_name="__lowering_opt__")
        return parse_module(namespace[name].ir("optimized"))


@pytest.mark.parametrize("block_size", [1024])  # up to 256 threads, 255 registers fit
@pytest.mark.parametrize("example, name, floatx", FUNCTIONS)
def test_registers_times_block_fit_every_kernel(example, name, floatx, block_size):
    program = compile_for_gpu(optimized_module(example, name, floatx), block_size=block_size)
    checked = 0
    for ptx in program.ptx_modules("sm_90").values():
        resources = kernel_resources(ptx.ptx, "sm_90")
        for kernel in ptx.kernels:
            threads = ptx.max_threads[kernel]
            assert f".maxntid {threads}" in ptx.ptx
            assert resources[kernel].registers * threads <= REGISTERS_PER_BLOCK, \
                (kernel, resources[kernel], threads)
            checked += 1
    assert checked
