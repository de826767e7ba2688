"""Bufferize ``tensor.grad_filter``: its value is its input's, so it takes the input's buffer
(without ownership, so the function never hands out the same allocation twice)."""
from __future__ import annotations

import dataclasses

from lowering.dialects.tensor import GradFilterOp

from .core import BUFFERIZE


@BUFFERIZE.register(GradFilterOp)
def _lower_grad_filter(ctx, op):
    return [dataclasses.replace(ctx.lowered(op.input), owned=False)]
