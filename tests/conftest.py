"""Suite-wide fixtures, and the hypothesis profile (see ``hypothesis_profiles``)."""
import pytest

from hypothesis_profiles import load_profile
from lowering.config import config
from lowering.dialects import test as test_dialect

pytest_plugins = ["cuda_standin.fixtures"]  # the driver stand-in's fixtures: standin, cuda

load_profile()


@pytest.fixture(autouse=True)
def _restore_config_flags():
    """Seed programs set flags globally (``theano.config.floatX = 'float32'``); each test starts
    from the flags as they were and leaves them so."""
    saved = dict(config._values)
    yield
    config._values.clear()
    config._values.update(saved)


@pytest.fixture
def test_context():
    """A new context with the default dialects and the test dialect (``lowering.dialects.test``):
    the test's own, so the default context never learns the test ops."""
    return test_dialect.new_context()
