"""What ``Function`` and the GPU executor's direct call agree on.

``GpuExecutor.raw_call`` (and the profiled run, ``GpuProfilePlan.raw_run``) returns the list of
results, or ``NORMALIZE_CODE`` when a host argument is not yet an array of its dtype and rank:
``Function`` then checks and converts the arguments and calls ``recover``.

This module has no dependencies, so the executor and its profiled run both read it without
importing each other.

>>> NORMALIZE_CODE
-1
"""
from __future__ import annotations

NORMALIZE_CODE = -1
