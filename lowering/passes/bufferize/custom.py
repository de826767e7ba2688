"""Bufferizing ``tensor.custom`` (ops written in Python): the op stays, on buffers.

Its operands become their buffers and its results fresh buffers that the Python code makes
(host arrays, or device arrays for an op with a ``device``), contiguous, in the op's memory
space. The GPU's host program runs it (``gpu.host`` host rule); for the CPU, the
``python-calls`` pass turns it into ``loops.python_call`` and allocations of its results. Results
are not marked owned: the code may hand back one of its inputs, so a returned result is copied.

>>> from lowering.ir.parser import parse_module
>>> from lowering.passes.bufferize.bufferize import Bufferize
>>> from lowering.dialects.tensor.custom import register_custom
>>> class Same:
...     name = "Same"
...     def run(self, values):
...         return values
>>> key = register_custom(Same())
>>> m = parse_module(f'''
... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {{
...   %y = "tensor.custom"(%x) {{key = {key}, op_name = "Same"}} : (tensor<?xf32>) -> tensor<?xf32>
...   func.return %y : tensor<?xf32>
... }}''')
>>> Bufferize().apply(m)
>>> [str(v.type) for v in next(o for o in m.functions[0].body.block.ops
...                            if o.name == "tensor.custom").results]
['!loops.buffer<?xf32>']
"""
from __future__ import annotations

from lowering.dialects.tensor.custom import CustomOp

from .core import BUFFERIZE, Lowered, result_buffer_type


@BUFFERIZE.register(CustomOp)
def lower_custom(ctx, op: CustomOp) -> list[Lowered]:
    operands = [ctx.buffer(v) for v in op.operands]
    types = [result_buffer_type(r.type, ctx.space) for r in op.results]
    new = ctx.b.insert(CustomOp.create(operands, types, dict(op.attributes),
                                       location=op.location))
    return [Lowered(r.type, buffer=b, space=ctx.space) for r, b in zip(op.results, new.results)]
