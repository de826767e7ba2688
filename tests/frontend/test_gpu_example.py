"""examples/gpu_check.py, seed 002's GPU check: on the CPU by default, on the GPU with
device=cuda (here the simulated device)."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import lowering as theano

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpu_check.py"


def load():
    spec = importlib.util.spec_from_file_location("example_gpu_check", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_check_runs_on_the_cpu_by_default():
    env = {k: v for k, v in os.environ.items() if k not in ("LOWERING_FLAGS", "THEANO_FLAGS")}
    done = subprocess.run([sys.executable, str(EXAMPLE), "2"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "[Elemwise{exp,no_inplace}(<TensorType(float64, vector)>)]"
    assert lines[1].startswith("Looping 2 times took") and lines[-1] == "Used the cpu"


def test_with_device_cuda_the_check_says_gpu():
    with theano.config.change_flags({"gpuarray.simulate": True}, device="cuda"):
        example = load()
    assert example.f.executor_name == "gpu"
    assert str(example.f.maker.fgraph.toposort()) == (
        "[GpuElemwise{exp,no_inplace}(<GpuArrayType<None>(float64, (False,))>), "
        "HostFromGpu(gpuarray)(GpuElemwise{exp,no_inplace}.0)]")
    assert example.used_device(example.f) == "gpu"
    assert example.x.get_value().shape == (230400,)
