"""The programs here are written as Theano programs are (``import lowering as theano``), each a
small version of a classic deep-learning tutorial's model, checked against NumPy and trained a
few steps. They use float64 whatever ``LOWERING_FLAGS`` sets, so the NumPy references agree to
rounding."""
import pytest

from lowering.config import config


@pytest.fixture(autouse=True)
def float64_by_default():
    with config.change_flags(floatX="float64"):
        yield
