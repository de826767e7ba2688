"""``loops.while``: a loop that runs its body until the body says stop (a do-while).

The body's arguments are the carried values; its ``loops.yield`` gives an ``i1`` first (true:
run the body again) and then the next carried values. The body runs at least once; the results
are the carried values it yielded last. A loop that may run zero times sits inside a
``loops.for`` of at most one iteration.

>>> from lowering.ir.types import INDEX
>>> from lowering.ir.core import Block
>>> from lowering.dialects import scalar
>>> start = Block([INDEX]).args[0]
>>> loop = WhileOp.build([start], [INDEX])
>>> [str(a.type) for a in loop.body.block.args], str(loop.results[0].type)
(['index'], 'index')
"""
from __future__ import annotations

from lowering.ir.core import Block, Operation, Region, VerifyError, register_op, var_operand, \
    var_result, region
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.traits import HasParent
from lowering.ir.types import I1

from .control import ForOp, ParallelOp, YieldOp, _check_body


@register_op
class WhileOp(Operation):
    """A do-while loop carrying values: the body's ``loops.yield`` gives an ``i1`` (run again)
    and the next carried values; the results are the last ones."""

    name = "loops.while"
    assembly_format = "$inits attr-dict : functional-type($inits, $outs) $body"
    inits = var_operand()
    outs = var_result()
    body = region()

    @classmethod
    def build(cls, inits, types=None, location=None) -> "WhileOp":
        """The loop carrying ``inits`` (of ``types``, by default theirs), with an empty body
        block taking the carried values."""
        inits = list(inits)
        types = list(types) if types is not None else [v.type for v in inits]
        return cls.create(operands=inits, result_types=types, regions=[Region([Block(types)])],
                          location=location)

    def verify_(self):
        types = [v.type for v in self.inits]
        got = [r.type for r in self.outs]
        if got != types:
            raise VerifyError(f"{self.name}: result types ({', '.join(map(str, got))}) differ "
                              f"from the initial values' ({', '.join(map(str, types))})", self)
        _check_body(self, types, [I1, *types])


# The loops' terminator ends a while body too.
YieldOp.traits = frozenset({t for t in YieldOp.traits if not isinstance(t, HasParent)}
                           | {HasParent(ForOp, ParallelOp, WhileOp)})


@INTERPRETER.register(WhileOp)
def _while(interp, op, args):
    carried = list(args)
    while True:
        go_on, *carried = interp.run_region(op.body, carried)
        if not bool(go_on):
            return carried


