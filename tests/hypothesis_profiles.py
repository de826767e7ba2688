"""The hypothesis profiles of the test suite; ``tests/conftest.py`` loads one.

- ``dev`` (the default): a failure prints its ``@reproduce_failure`` blob; no deadlines (a
  loaded machine is no bug); failing examples are kept in ``.hypothesis/`` (git-ignored) and
  replayed first on the next run.
- ``ci`` (the default where ``CI`` is set, as ``.ci/run`` does): the same, but no example
  database and no shrinking, so that a failure is reported at once (shrinking alone can take
  minutes on a busy machine) with the blob that replays it, where the ``dev`` profile shrinks
  it; slow data generation on a loaded machine is not reported either.

``HYPOTHESIS_PROFILE=<name>`` picks one, and ``--hypothesis-profile=<name>`` on the pytest
command line wins over both. Tests give their own ``max_examples``, which every profile keeps.

>>> profile_for({"CI": "true"}), profile_for({}), profile_for({"CI": "1", "HYPOTHESIS_PROFILE": "dev"})
('ci', 'dev', 'dev')
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

settings.register_profile("dev", print_blob=True, deadline=None)
settings.register_profile(
    "ci", settings.get_profile("dev"), database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],
    suppress_health_check=[HealthCheck.too_slow])


def profile_for(environ) -> str:
    """The profile an environment (``os.environ``) selects."""
    return environ.get("HYPOTHESIS_PROFILE") or ("ci" if environ.get("CI") else "dev")


def load_profile(environ=os.environ) -> None:
    """Loads the profile ``environ`` selects (``--hypothesis-profile`` is applied after)."""
    settings.load_profile(profile_for(environ))
