"""``sink-into-branches``: move the ops only one branch of a ``tensor.if`` needs into it (see
``lowering.dialects.tensor.branch_sinking``, which does it).

>>> from lowering.ir.passes import PASS_REGISTRY
>>> PASS_REGISTRY["sink-into-branches"] is SinkIntoBranches
True
"""
from __future__ import annotations

from lowering.dialects.tensor.branch_sinking import sink_into_branches
from lowering.ir.core import Operation
from lowering.ir.passes import ModulePass, register_pass

__all__ = ["SinkIntoBranches", "sink_into_branches"]


@register_pass
class SinkIntoBranches(ModulePass):
    """Move ops that only one branch of a tensor.if needs into that branch (lazy branches)."""

    name = "sink-into-branches"

    def apply(self, module: Operation) -> None:
        sink_into_branches(module)
