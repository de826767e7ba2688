"""Suite-wide fixtures, and the hypothesis profile (see ``hypothesis_profiles``)."""
import pytest

from hypothesis_profiles import load_profile
from lowering.config import config

load_profile()


@pytest.fixture(autouse=True)
def _restore_config_flags():
    """Seed programs set flags globally (``theano.config.floatX = 'float32'``); each test starts
    from the flags as they were and leaves them so."""
    saved = dict(config._values)
    yield
    config._values.clear()
    config._values.update(saved)
