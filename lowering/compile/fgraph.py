"""A Theano-style view of a compiled function's IR: ``f.maker.fgraph.toposort()``.

Theano code inspects compiled functions through ``FunctionGraph`` objects: ``toposort()`` lists
``Apply`` nodes with ``.op``, ``.inputs`` and ``.outputs``, and variables print as Theano prints
them. Here the IR of the function is the truth and these are thin views of it:

- every op of the function except constants is a node (constants are leaf variables, as in Theano);
- a node's ``op`` is what the **presentation** makes of the IR op; the front end installs one
  giving Theano's op classes (``Elemwise{exp,no_inplace}``), so ``isinstance(node.op, T.Elemwise)``
  works; without it, nodes show the IR op names;
- variables print through the same presentation (``x``, ``<TensorType(float32, vector)>``);
- results the compiled code computes in an operand's memory (``inplace_patterns``, from the
  backend) are passed to the presentation as ``op_view(ir_op, inplace_pattern={0: 0})``, which
  Theano prints ``Elemwise{...}[(0, 0)]``.

>>> import numpy as np
>>> from lowering.compile.graph_to_module import build_module
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> x = Block([TensorType((None,), F64)]).args[0]; x.name_hint = "x"
>>> fg = FunctionGraph(build_module([x], [x]).func)
>>> fg.inputs, fg.outputs, fg.toposort()
([x], [x], [])
"""
from __future__ import annotations

from typing import Callable

from lowering.ir.core import Operation, OpResult, Value


class IROpView:
    """The default view of an IR op: prints as its name (``tensor.exp``), with the results
    computed in an operand's memory as ``{result: operand}`` (``tensor.sub{0: 0}``)."""

    def __init__(self, op: Operation, inplace_pattern: dict | None = None):
        self.ir_op = op
        self.inplace_pattern = dict(inplace_pattern or {})

    def __str__(self):
        return self.ir_op.name + (str(self.inplace_pattern) if self.inplace_pattern else "")

    __repr__ = __str__


def _default_leaf_text(value: Value) -> str:
    if value.name_hint:
        return value.name_hint
    if isinstance(value, OpResult) and value.op.name == "tensor.constant":
        return f"constant{{{value.op.attributes['value']}}}"
    return f"<{value.type}>"


class Presentation:
    """How graph views print: ``op_view(ir_op)`` gives a node's op object; ``leaf_text(value)``
    the text of an input or constant; ``result_name(value)`` a result's own name, or None."""

    def __init__(self):
        self.op_view: Callable[[Operation], object] = IROpView
        self.leaf_text: Callable[[Value], str] = _default_leaf_text
        self.result_name: Callable[[Value], "str | None"] = lambda value: value.name_hint


PRESENTATION = Presentation()


def install_presentation(op_view=None, leaf_text=None, result_name=None) -> None:
    """Replace parts of the presentation (the front end calls this once, on import)."""
    if op_view is not None:
        PRESENTATION.op_view = op_view
    if leaf_text is not None:
        PRESENTATION.leaf_text = leaf_text
    if result_name is not None:
        PRESENTATION.result_name = result_name


def is_leaf(value: Value) -> bool:
    """Inputs and constants are leaves; every other op result belongs to a node."""
    return not isinstance(value, OpResult) or value.op.name == "tensor.constant"


class Apply:
    """A node: ``op`` (the presented op), ``inputs`` and ``outputs`` (GraphVariables)."""

    __slots__ = ("ir_op", "op", "inputs", "outputs")

    def __init__(self, ir_op: Operation, view: "GraphView"):
        self.ir_op = ir_op
        pattern = view.inplace_patterns.get(ir_op)
        self.op = PRESENTATION.op_view(ir_op, inplace_pattern=pattern) if pattern else \
            PRESENTATION.op_view(ir_op)
        self.outputs = [view.variable(r) for r in ir_op.results]
        self.inputs = [view.variable(v) for v in _node_inputs(ir_op)]

    def __str__(self):
        return f"{self.op}({', '.join(map(str, self.inputs))})"

    __repr__ = __str__


class GraphVariable:
    """A variable of a graph view: an IR value with ``owner`` (its Apply, or None for leaves),
    ``index`` (which output of the owner), ``name`` and ``type`` (the IR type)."""

    __slots__ = ("value", "index", "view")

    def __init__(self, value: Value, view: "GraphView"):
        self.value = value
        self.view = view
        self.index = value.index if isinstance(value, OpResult) else 0

    @property
    def owner(self) -> "Apply | None":
        # Made on demand, so that viewing a deep graph never recurses.
        return None if is_leaf(self.value) else self.view.node(self.value.op)

    @property
    def type(self):
        return self.value.type

    @property
    def name(self) -> str | None:
        if self.owner is None:
            return self.value.name_hint
        return PRESENTATION.result_name(self.value)

    def __str__(self):
        if self.owner is None:
            return PRESENTATION.leaf_text(self.value)
        name = self.name
        return name if name else f"{self.owner.op}.{self.index}"

    __repr__ = __str__


class GraphView:
    """Views of IR values and ops, made once each so that identities are stable."""

    def __init__(self, inplace_patterns: dict | None = None):
        self._variables: dict[Value, GraphVariable] = {}
        self._nodes: dict[Operation, Apply] = {}
        self.inplace_patterns = inplace_patterns or {}

    def variable(self, value: Value) -> GraphVariable:
        var = self._variables.get(value)
        if var is None:
            var = self._variables[value] = GraphVariable(value, self)
        return var

    def node(self, op: Operation) -> Apply:
        node = self._nodes.get(op)
        if node is None:
            node = self._nodes[op] = Apply(op, self)
        return node


class FunctionGraph:
    """The view of one ``func.func``: ``inputs`` (its arguments), ``outputs`` (what it returns:
    the outputs, then the updated shared values) and ``toposort()``. ``inplace_patterns``:
    ``{op: {result: operand}}`` for the results computed in an operand's memory."""

    def __init__(self, func: Operation, inplace_patterns: dict | None = None):
        self.func = func
        self.view = GraphView(inplace_patterns)
        block = func.regions[0].blocks[0]
        self.inputs = [self.view.variable(a) for a in block.args]
        self.outputs = [self.view.variable(v) for v in block.last_op.operands]
        self._order = [self.view.node(op) for op in _computing_ops(block)]

    def toposort(self) -> list[Apply]:
        """The nodes in the order the function computes them (the ops of an ifelse's branches
        before the ifelse, as Theano lists them)."""
        return list(self._order)

    @property
    def apply_nodes(self) -> set[Apply]:
        return set(self._order)

    def __str__(self):
        return f"FunctionGraph({', '.join(map(str, self.outputs))})"


def _computing_ops(block) -> list[Operation]:
    """The ops of ``block`` but its terminator and constants, each ``tensor.if`` after the ops
    of its two branches."""
    found = []
    for op in block.ops:
        if op is block.last_op or op.name == "tensor.constant":
            continue
        if op.name == "tensor.if":
            for region in op.regions:
                found.extend(_computing_ops(region.block))
        found.append(op)
    return found


def _node_inputs(op: Operation) -> list[Value]:
    """What a node reads, as Theano shows it: an op's operands; for a ``tensor.if`` (Theano's
    ``IfElse``), its condition and the values its then and else branches yield."""
    if op.name == "tensor.if":
        return [op.operands[0], *(v for region in op.regions
                                  for v in region.blocks[0].last_op.operands)]
    return list(op.operands)
