"""What graph a printed object stands for: the results and the node order that ``debugprint``
(``lowering.printing``) and ``pydotprint`` (``lowering.printing_dot``) both draw.
"""
from __future__ import annotations

import lowering.frontend  # noqa: F401  (installs the Theano presentation of graphs)
from lowering.compile.fgraph import Apply, FunctionGraph, GraphVariable, GraphView
from lowering.compile.function import Function
from lowering.compile.io import graph_value

__all__ = ["results_to_print"]


def results_to_print(obj) -> tuple[list[GraphVariable], list[Apply]]:
    """The results to print for ``obj`` (a variable, a list of variables, an Apply node, a
    FunctionGraph or a compiled Function), and the order of its nodes when it has one (a
    function's ``toposort()``; else empty). A variable ``x.transfer(target)`` prints as
    Theano's ``GpuFromHost<target>`` over ``x``.

    >>> import lowering.tensor as T
    >>> x = T.vector("x")
    >>> results, order = results_to_print([x.transfer("cuda0")])
    >>> results[0].owner.op, results[0].owner.inputs[0].name, order
    ('GpuFromHost<cuda0>', 'x', [])
    """
    if isinstance(obj, Function):
        fgraph = obj.maker.fgraph
        return list(fgraph.outputs), fgraph.toposort()
    if isinstance(obj, FunctionGraph):
        return list(obj.outputs), obj.toposort()
    if isinstance(obj, Apply):
        return list(obj.outputs), []
    items = obj if isinstance(obj, (list, tuple)) else [obj]
    view = GraphView()
    results = []
    for item in items:
        if isinstance(item, GraphVariable):
            results.append(item)
            continue
        try:
            var = view.variable(graph_value(item))
        except TypeError:
            raise TypeError(f"debugprint cannot print an object of type "
                            f"{type(item).__name__}: {item!r}") from None
        target = getattr(item, "target", "cpu")
        results.append(var if target == "cpu" else _TransferNode(var, target).outputs[0])
    return results, []


class _TransferNode:
    """``x.transfer(target)`` in a printed graph: Theano's ``GpuFromHost<target>`` node over
    ``x`` (a transfer builds no IR op; the request lives on the variable)."""

    def __init__(self, host: GraphVariable, target):
        self.op = f"GpuFromHost<{target}>"
        self.inputs = [host]
        self.outputs = [_TransferredView(self, host)]


class _TransferredView:
    name = None

    def __init__(self, owner: _TransferNode, host: GraphVariable):
        self.owner = owner
        self.type = host.type
