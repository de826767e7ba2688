"""Fixtures of the tests that run the CUDA path on the strict driver stand-in (a pytest plugin
the suite's ``conftest.py`` loads): ``standin`` installs it with ``device=cuda``, ``cuda`` is
the ``CudaDevice`` of the default context on it, its counters reset. A test module's own
fixture of the same name wins."""
import pytest

from cuda_standin import install
from lowering.config import config


@pytest.fixture
def standin():
    with install() as standin, config.change_flags(device="cuda", print_active_device=False):
        yield standin


@pytest.fixture
def cuda(standin):
    from lowering.compile.gpu.device import device_for
    device = device_for("cuda")
    device.counters.reset()
    return device
