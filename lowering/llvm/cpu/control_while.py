"""``loops.while`` in LLVM IR: a do-while loop whose carried values (flattened) are phis.

>>> WhileOp in CPU_LOWERING
True
"""
from __future__ import annotations

from lowering.dialects.loops.control import WhileOp

from .context import CPU_LOWERING, FunctionLowering
from .control import lower_body
from .values import flatten, rebuild


@CPU_LOWERING.register(WhileOp)
def _while(fl: FunctionLowering, op):
    b = fl.builder
    inits = [x for v in op.inits for x in flatten(fl.get(v))]
    preheader = b.block
    body_block = fl.fn.append_basic_block("while.body")
    exit_block = fl.fn.append_basic_block("while.exit")
    b.branch(body_block)
    b.position_at_end(body_block)
    phis = []
    for value in inits:
        phi = b.phi(value.type)
        phi.add_incoming(value, preheader)
        phis.append(phi)
    parts = iter(phis)
    carried = [rebuild(b, v.type, parts) for v in op.inits]
    go_on, *following = lower_body(fl, op.body.block, carried)
    following = [x for value in following for x in flatten(value)]
    latch = b.block
    b.cbranch(go_on, body_block, exit_block)
    for phi, value in zip(phis, following):
        phi.add_incoming(value, latch)
    b.position_at_end(exit_block)
    final = iter(following)
    return [rebuild(b, r.type, final) for r in op.outs]
