"""Thread and block ids and sizes: ``gpu.thread_id``, ``gpu.block_id``, ``gpu.block_dim``,
``gpu.grid_dim``, each an ``index`` along ``dimension`` "x", "y" or "z" (CUDA's threadIdx,
blockIdx, blockDim, gridDim). Valid only in a kernel body.

``"gpu.thread_id"() {dimension = "x"} : () -> index``

>>> ThreadIdOp.build("y").dimension
'y'
"""
from __future__ import annotations

import numpy as np

from lowering.ir.attributes import StringAttr
from lowering.ir.constraints import EnumAttr, Index
from lowering.ir.core import PURE, Operation, attr, register_op, result
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.types import INDEX

from .checks import DIMENSIONS, IN_KERNEL
from .threads import current_thread


class _IdOp(Operation):
    """One component of a per-thread or per-launch triple, as an ``index``."""

    traits = frozenset({PURE, IN_KERNEL})
    assembly_format = "$dimension attr-dict : type($result)"
    dimension = attr(EnumAttr(DIMENSIONS))
    result = result(Index)

    @classmethod
    def build(cls, dimension: str, location=None) -> "_IdOp":
        if dimension not in DIMENSIONS:
            raise ValueError(f"{cls.name}: dimension must be \"x\", \"y\" or \"z\", got "
                             f"{dimension!r}")
        return cls.create(result_types=[INDEX], attributes={"dimension": StringAttr(dimension)},
                          location=location)


@register_op
class ThreadIdOp(_IdOp):
    """The thread's position in its block (threadIdx)."""

    name = "gpu.thread_id"


@register_op
class BlockIdOp(_IdOp):
    """The block's position in the grid (blockIdx)."""

    name = "gpu.block_id"


@register_op
class BlockDimOp(_IdOp):
    """The number of threads per block (blockDim)."""

    name = "gpu.block_dim"


@register_op
class GridDimOp(_IdOp):
    """The number of blocks in the grid (gridDim)."""

    name = "gpu.grid_dim"


_AXIS = {d: i for i, d in enumerate(DIMENSIONS)}


def _rule(field: str):
    def rule(interp, op, args):
        triple = getattr(current_thread(interp, op), field)
        return [np.int64(triple[_AXIS[op.attributes["dimension"].data]])]
    return rule


INTERPRETER.register(ThreadIdOp)(_rule("thread_id"))
INTERPRETER.register(BlockIdOp)(_rule("block_id"))
INTERPRETER.register(BlockDimOp)(_rule("block_dim"))
INTERPRETER.register(GridDimOp)(_rule("grid_dim"))
