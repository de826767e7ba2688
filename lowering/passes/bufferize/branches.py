"""Bufferizing ``tensor.if``: a ``loops.if`` whose branches hold the lowered ops of the tensor
branches, so that only the taken branch's loops, checks and allocations run.

- The condition's element is compared with zero (``i1`` conditions are used as they are).
- Each branch is lowered in its own block of the ``loops.if``, its arguments standing for the
  lowered inputs (a branch reads the inputs' buffers; what it learns about them, such as sizes
  loaded with ``loops.dim``, stays in the branch). Constants go to the function's top.
- Each result is in the memory its ``result_places`` entry names (``place-on-device``; the
  host when the op has none). A rank-0 result on the host is a scalar: each branch yields its
  element.
- Any other result is a fresh contiguous buffer of the result's buffer type: a branch yields
  the allocation its op made when that is one of exactly this type that nothing else holds,
  else a copy made in the branch. The result owns its memory, as a ``loops.alloc`` does
  (``plan-memory`` frees it after its last use, the function may return it).

>>> from lowering.ir.parser import parse_module
>>> from lowering.passes.bufferize.bufferize import Bufferize
>>> m = parse_module('''
... func.func @f(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
...   %r = tensor.if %c, %x : tensor<i1>, (tensor<?xf64>) -> tensor<?xf64> {
...   ^bb0(%a: tensor<?xf64>):
...     %e = tensor.exp %a : tensor<?xf64>
...     tensor.yield %e : tensor<?xf64>
...   } else {
...   ^bb0(%a: tensor<?xf64>):
...     tensor.yield %a : tensor<?xf64>
...   }
...   func.return %r : tensor<?xf64>
... }''')
>>> Bufferize().apply(m)
>>> [op.name for op in m.functions[0].body.block.ops]
['scalar.constant', 'scalar.constant', 'loops.load', 'loops.if', 'func.return']
>>> loop_if = list(m.functions[0].body.block.ops)[3]
>>> [op.name for op in loop_if.then_region.block.ops]
['loops.dim', 'loops.alloc', 'loops.parallel', 'loops.yield']
>>> [op.name for op in loop_if.else_region.block.ops]
['loops.dim', 'loops.alloc', 'loops.copy', 'loops.yield']
"""
from __future__ import annotations

from dataclasses import replace

from lowering.dialects import loops
from lowering.dialects.tensor.branches import IfOp
from lowering.ir.builder import Builder
from lowering.ir.core import Block, Value
from lowering.ir.location import default_location
from lowering.ir.passes import PassFailure
from lowering.ir.types import I1

from ..gpu.place_on_device import HOST, RESULT_PLACES
from .core import BUFFERIZE, Arith, FunctionLowering, Lowered, result_buffer_type
from .device import memory_space_of


@BUFFERIZE.register(IfOp)
def lower_if(ctx: FunctionLowering, op: IfOp) -> list[Lowered]:
    if ctx.space != "host":
        raise PassFailure(f"bufferize: tensor.if at {op.location.short()} is placed on a GPU; "
                          f"it runs on the host (place-on-device places its branches)", op)
    element = ctx.element(op.condition)
    flag = element if element.type == I1 else ctx.ix.ne(element, 0)
    spaces = [memory_space_of(p) for p in op.get_attr(RESULT_PLACES) or [HOST] * len(op.outs)]
    types = [r.type.element if _as_scalar(r, space) else result_buffer_type(r.type, space)
             for r, space in zip(op.outs, spaces)]
    branch_op = ctx.b.insert(loops.IfOp.build(flag, types, location=op.location))
    for tensor_branch, region in zip(op.branches, branch_op.regions):
        block = region.block
        block.last_op.erase()  # the empty yield ``build`` put there
        yielded = _lower_branch(ctx, op, tensor_branch.block, block, spaces)
        block.append(loops.YieldOp.build(yielded, location=op.location))
    return [Lowered(r.type, scalar=v) if _as_scalar(r, space) else
            Lowered(r.type, buffer=v, owned=True, space=space)
            for r, v, space in zip(op.outs, branch_op.results, spaces)]


def _as_scalar(result: Value, space: str) -> bool:
    """Whether a result is yielded as its element: a rank-0 value on the host."""
    return result.type.rank == 0 and space == "host"


def _lower_branch(ctx: FunctionLowering, op: IfOp, source: Block, target: Block,
                  spaces: list[str]) -> list[Value]:
    """Lower the ops of ``source`` (a tensor branch) into ``target``; the values to yield (in
    memory ``spaces``, one per result)."""
    saved = (ctx.block, ctx.b, ctx.ix, ctx.values, ctx.op)
    ctx.block, ctx.b = target, Builder.at_end(target)
    ctx.ix = Arith(ctx.b, ctx.constant)
    ctx.values = {}
    for arg, value in zip(source.args, op.inputs):
        # A copy: sizes or buffers the branch finds for an input stay in the branch. The input
        # is not the branch's to give away.
        outer = saved[3][value]
        ctx.bind(arg, replace(outer, sizes=list(outer.sizes), owned=False))
    try:
        for inner in list(source.ops)[:-1]:
            ctx.op = inner
            with default_location(inner.location):
                ctx.lower_op(inner)
        ctx.op = op
        yielded, given = [], set()
        for value, result, space in zip(source.last_op.operands, op.outs, spaces):
            if _as_scalar(result, space):
                yielded.append(ctx.element(value))
                continue
            lowered = ctx.lowered(value)
            wanted = result_buffer_type(result.type, space)
            if lowered.owned and lowered.buffer is not None and lowered.buffer.type == wanted \
                    and lowered.buffer not in given:
                buffer = lowered.buffer
            else:
                buffer = ctx.alloc(result.type, ctx.sizes(value), space=space)
                ctx.copy(value, buffer)
            given.add(buffer)
            yielded.append(buffer)
        return yielded
    finally:
        ctx.block, ctx.b, ctx.ix, ctx.values, ctx.op = saved
