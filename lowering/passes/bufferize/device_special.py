"""Special functions on a GPU: not supported, said at bufferization with the op and the user's line.

``tensor.erfc``, ``tensor.gammaln``, ``tensor.gamma``, ``tensor.j0`` and ``tensor.j1`` compile to
calls of the C library's functions, which a GPU kernel cannot make, and the kernels' math library
has no versions of them; they are declared unsupported in ``DEVICE_BUFFERIZE``, so the support
matrix shows it.

>>> from lowering.dialects.tensor import GammaLnOp
>>> "GPU" in DEVICE_BUFFERIZE.unsupported_reason(GammaLnOp)
True
"""
from __future__ import annotations

from lowering.dialects.tensor.special_functions import SPECIAL_ELEMENTWISE_OPS

from .core import DEVICE_BUFFERIZE

REASON = ("special functions (erfc, gammaln, gamma, j0, j1) call the C library, which a GPU "
          "kernel cannot; compile this function for the CPU")

for _cls in SPECIAL_ELEMENTWISE_OPS.values():
    DEVICE_BUFFERIZE.unsupported(_cls, REASON)
del _cls
