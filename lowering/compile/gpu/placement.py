"""Where a GPU function's arguments and results live: the ``lowering.arg_devices`` and
``lowering.result_devices`` attributes ``function()`` puts on the function it builds when the
``device`` flag asks for a GPU.

Each entry is ``"cpu"`` (a host NumPy array) or a GPU context name (``"cuda"``, the default
context, ``"cudaN"``, or a name of the ``contexts`` flag):

- an explicit input is on the host, unless its variable asks for a device (``x.transfer(None)``
  given as an input: the caller passes a device array);
- a shared variable is where its container says (``container.target``, set by the front end:
  a float variable made while ``device=cuda*`` lives on the default context, ``shared(...,
  target='dev1')`` on that context, integer scalars on the host); a container that says nothing
  follows the same rule with the ``device`` flag of now;
- an output stays on the device when it asks to (``x.transfer(None)``, a target naming a
  context) or is borrowed (``Out(x, borrow=True)``) while ``device=cuda*``; other outputs are
  copied to the host;
- the new value of a shared variable goes where the variable lives (so updates of resident
  variables never leave the device).

>>> context_name(None), context_name("gpu1"), context_name("cpu"), context_name("dev0")
('cuda', 'cuda1', 'cpu', 'dev0')
"""
from __future__ import annotations

import re

import numpy as np

from lowering.dialects.function_attrs import ARG_DEVICES, RESULT_DEVICES

HOST = "cpu"
DEFAULT_CONTEXT = "cuda"


def gpu_device_flag() -> bool:
    """Whether the ``device`` flag asks for a GPU (``cuda``, ``cudaN``, ``gpu``, ``gpuN``)."""
    from lowering.config import config
    return config.device.startswith(("cuda", "gpu"))


def context_name(target) -> str:
    """The context name of a placement target: ``"cpu"``; ``"cuda"`` for None, ``"gpu"``,
    ``"cuda"`` and the ``device`` flag's own value; ``"cudaN"`` for ``"gpuN"``; else the name."""
    from lowering.config import config
    if target == HOST:
        return HOST
    if target is None or target in ("gpu", "cuda", config.device):
        return DEFAULT_CONTEXT
    if re.fullmatch(r"gpu\d+", str(target)):
        return "cuda" + str(target)[3:]
    return str(target)


def input_device(spec) -> str:
    """Where an explicit input (an ``In``) is when the function is called."""
    return context_name(getattr(spec.variable, "target", HOST))


def output_device(spec) -> str:
    """Where an output (an ``Out``) is returned."""
    target = getattr(spec.variable, "target", HOST)
    if target != HOST:
        return context_name(target)
    return DEFAULT_CONTEXT if spec.borrow and gpu_device_flag() else HOST


def shared_device(container) -> str:
    """Where a shared variable's value lives between calls."""
    target = getattr(container, "target", _UNSAID)
    if target is not _UNSAID:
        return context_name(target)
    value = container.value
    dtype = np.dtype(getattr(value, "dtype", np.float64))
    if gpu_device_flag() and not (dtype.kind in "biu" and len(np.shape(value)) == 0):
        return DEFAULT_CONTEXT
    return HOST


_UNSAID = object()


def mark_placement(built, inputs, outputs) -> None:
    """Set ``lowering.arg_devices`` and ``lowering.result_devices`` on the function of ``built`` (a
    ``graph_to_module.BuiltModule``) from its inputs (``In``), outputs (``Out``) and shared
    variables (see the module docstring)."""
    args = [input_device(spec) for spec in inputs] + \
        [shared_device(c) for c in built.shared]
    results = [output_device(spec) for spec in outputs] + \
        [shared_device(c) for c in built.update_targets]
    ARG_DEVICES.set(built.func, args)
    RESULT_DEVICES.set(built.func, results)
