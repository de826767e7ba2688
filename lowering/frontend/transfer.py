"""``x.transfer(target)``: asking for a variable to be on a device.

A transfer does not change a value, so it builds no op: it returns a ``TransferredVariable`` with
the *same* IR value and the requested ``target`` (the GPU placement passes decide where work runs;
the compiler reads an output's ``target`` to keep it on the device instead of copying it back).
There is one transferred variable per value and target. ``transfer('cpu')`` gives back the host
variable.

Targets: ``'cpu'``; ``None`` (the default GPU context, as in Theano); ``'gpu'``, ``'cuda'``,
``'cudaN'``; or a context name from the ``contexts`` flag (``'dev0'``).

>>> from lowering.frontend.constructors import matrix
>>> a = matrix("a")
>>> b = a.transfer(None)
>>> b.value is a.value, b.target, b.transfer("cpu") is a, a.transfer("cpu") is a
(True, None, True, True)
>>> b is a.transfer(None)
True

``context_name(target)`` is the name IR placement uses for a target (``'cuda'`` for None).
"""
from __future__ import annotations

import re

from lowering.compile.gpu.placement import context_name  # noqa: F401  (re-exported)
from lowering.config import config

from .variable import TensorVariable


class TransferredVariable(TensorVariable):
    """A variable the user asked to have on a device: same value as ``host``, plus ``target``."""

    def __init__(self, host: TensorVariable, target):
        # Not registered as *the* variable of the value: that stays the host variable.
        self.value = host.value
        self.host = host
        self._target = target
        self.tag = host.tag

    @property
    def target(self):
        return self._target

    def __str__(self):
        return f"GpuFromHost<{self._target}>.0"

    __repr__ = __str__


def check_target(target) -> None:
    """An error naming the allowed targets unless ``target`` is one."""
    if target is None or target == "cpu":
        return
    contexts = config.context_devices()
    if isinstance(target, str) and (re.fullmatch(r"gpu\d*|cuda\d*", target) or target in contexts):
        return
    named = f", or a context of the contexts flag ({', '.join(contexts)})" if contexts else \
        " (named contexts come from the contexts flag, e.g. contexts=dev0->cuda0)"
    raise ValueError(f"unknown transfer target {target!r}; allowed: 'cpu', None (the default GPU "
                     f"context), 'gpu', 'cuda', 'cudaN'{named}")


def transfer(x: TensorVariable, target) -> TensorVariable:
    """``x`` with the request to be on ``target`` (see the module docstring)."""
    check_target(target)
    host = x.host if isinstance(x, TransferredVariable) else x
    if target == "cpu":
        return host
    cache = host.__dict__.setdefault("_transfers", {})
    if target not in cache:
        cache[target] = TransferredVariable(host, target)
    return cache[target]
