"""``python-calls``: ops written in Python as calls the CPU backend compiles.

After ``bufferize``, a ``tensor.custom`` op on host buffers (``theano.printing.Print``, a
user's ``theano.Op``) still stands for "run this Python code, which makes fresh arrays". Machine
code cannot take arrays it did not allocate, so each one becomes (``loops.python_call``)::

    %sizes..., %token = loops.python_call "Op"(%inputs...) {key, result_types}
    %out = loops.alloc(%dynamic sizes of the result) ...   (one per result)
    loops.python_results %token, %out...

and its results' uses read the allocations, which ``plan-memory`` (run after this pass) frees
or reuses like every temporary. An op on a GPU context (``device``) is left as it is.

>>> from lowering.ir.parser import parse_module
>>> from lowering.dialects.tensor.custom import register_custom
>>> class Same:
...     name = "Same"
...     def run(self, values):
...         return values
>>> key = register_custom(Same())
>>> m = parse_module(f'''
... func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {{
...   %y = "tensor.custom"(%x) {{key = {key}, op_name = "Same"}} : (!loops.buffer<?xf32>)
...        -> !loops.buffer<?xf32>
...   func.return %y : !loops.buffer<?xf32>
... }}''')
>>> PythonCalls().apply(m)
>>> [op.name for op in m.functions[0].body.block.ops]
['loops.python_call', 'loops.alloc', 'loops.python_results', 'func.return']
"""
from __future__ import annotations

from lowering.dialects.loops import AllocOp, BufferType, PythonCallOp, PythonResultsOp
from lowering.dialects.tensor.custom import CustomOp
from lowering.ir.core import Operation
from lowering.ir.passes import ModulePass, register_pass


@register_pass
class PythonCalls(ModulePass):
    """Turn host ``tensor.custom`` ops on buffers into ``loops.python_call`` and its results."""

    name = "python-calls"

    def apply(self, module: Operation) -> None:
        for op in [op for op in module.walk() if isinstance(op, CustomOp)]:
            if op.device is None and all(isinstance(v.type, BufferType)
                                         for v in (*op.operands, *op.results)):
                lower_python_call(op)


def lower_python_call(op: CustomOp) -> None:
    """Replace ``op`` (buffer form) by a ``loops.python_call``, allocations of its results and
    the ``loops.python_results`` that fills them."""
    block, location = op.parent, op.location
    types = [r.type for r in op.results]
    call = PythonCallOp.build(list(op.operands), op.key, op.op_name, types, location=location)
    block.insert_before(call, op)
    sizes = iter(call.sizes)
    outputs = []
    for t in types:
        dims = [next(sizes) for _ in range(t.rank)]
        shape = [d if static is None else static for d, static in zip(dims, t.shape)]
        alloc = AllocOp.build(shape, t.element, location=location)
        block.insert_before(alloc, op)
        outputs.append(alloc.result)
    block.insert_before(PythonResultsOp.build(call.token, outputs, location=location), op)
    for result, output in zip(op.results, outputs):
        result.replace_all_uses_with(output)
    op.erase()
