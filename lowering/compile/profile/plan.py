"""The per-node execution plan that profiling runs: one small compiled function per node.

A ``Function`` normally runs its whole module with one native call, so nothing inside a call can
be timed. With profiling on, the optimized tensor-level function is also split into one module
per top-level op (a *node*, as ``f.maker.fgraph.toposort()`` lists them): the node's operands are
the arguments of its module, its results are the results, and the constants it reads are copied
in. Each node module is compiled by the Function's own executor (the CPU backend, or the
interpreter in mode ``INTERP``), and a profiled call runs the nodes one after another from
Python, with ``time.perf_counter()`` around each.

What this measures, honestly:

- a node's time is the time of its compiled code, plus the small cost of one executor call;
- an op that is a view in the whole function (``dimshuffle``, basic indexing, ``reshape``: no
  work, no memory) runs in the interpreter, which makes the same NumPy view: compiled alone it
  would copy its result (a compiled function returns fresh arrays), a cost the real function
  does not have;
- a ``tensor.if`` is a node of its own, which picks the branch, and the ops of its branches are
  nodes too: a call runs (and counts) only the nodes of the branch it takes, so the profile
  shows which branch ran how often;
- a node that its executor cannot compile alone runs in the interpreter too; the profile tables
  show which ran how in their ``<type>`` column (``C``: compiled, ``Py``: interpreted);
- the plan writes nothing in place: each node writes fresh arrays, so a profiled call allocates
  what the whole function would compute in place (the memory profile reports the function's own
  decisions, not the plan's).

>>> import numpy as np
>>> from lowering.ir.parser import parse_module
>>> from lowering.compile.interpreter_executor import InterpreterExecutor
>>> module = parse_module('''
... func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
...   %c = "tensor.constant"() {value = dense<2.0> : tensor<1xf64>} : () -> tensor<1xf64>
...   %y = "tensor.exp"(%x) : (tensor<?xf64>) -> tensor<?xf64>
...   %z = "tensor.mul"(%y, %c) : (tensor<?xf64>, tensor<1xf64>) -> tensor<?xf64>
...   func.return %z : tensor<?xf64>
... }''')
>>> plan = NodePlan(module, InterpreterExecutor)
>>> [node.ir_op.name for node in plan.nodes], [node.impl for node in plan.nodes]
(['tensor.exp', 'tensor.mul'], ['Py', 'Py'])
>>> results, times = plan.run([np.zeros(3)])
>>> results[0], len(times)
(array([2., 2., 2.]), 2)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from lowering.ir.core import Operation, OpResult, Value

# A factory builds an executor from a one-function module: ``factory(module)(values) -> results``.
ExecutorFactory = Callable[[Operation], Callable[[list], list]]


def is_constant(value: Value) -> bool:
    """Whether ``value`` is a ``tensor.constant`` (a leaf of the graph, copied into each node
    module that reads it rather than passed in)."""
    return isinstance(value, OpResult) and value.op.name == "tensor.constant"


def external_values(op: Operation) -> list[Value]:
    """The values ``op`` (with everything nested in it) reads but does not define, in order of
    first use: what its node module takes as arguments (or copies, for constants)."""
    defined: set[Value] = set()
    for nested in op.walk():
        defined.update(nested.results)
        for region in nested.regions:
            for block in region.blocks:
                defined.update(block.args)
    seen: dict[Value, None] = {}
    for nested in op.walk():
        for value in nested.operands:
            if value not in defined:
                seen.setdefault(value, None)
    return list(seen)


def node_module(op: Operation, name: str) -> tuple[Operation, list[Value]]:
    """A module whose one function ``name`` computes ``op`` alone, and the values (of the
    enclosing function) its arguments stand for. Constants ``op`` reads are copied in.

    >>> from lowering.ir.parser import parse_module
    >>> m = parse_module('''
    ... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
    ...   %y = "tensor.neg"(%x) : (tensor<?xf32>) -> tensor<?xf32>
    ...   func.return %y : tensor<?xf32>
    ... }''')
    >>> neg = m.functions[0].body.block.first_op
    >>> single, args = node_module(neg, "f_node0")
    >>> [a.name_hint for a in args], single.functions[0].sym_name
    (['x'], 'f_node0')
    """
    from lowering.dialects.builtin import FuncOp, ModuleOp, ReturnOp
    externals = external_values(op)
    constants = [v for v in externals if is_constant(v)]
    arguments = [v for v in externals if not is_constant(v)]
    func = FuncOp.build(name, [v.type for v in arguments], [r.type for r in op.results],
                        location=op.location)
    block = func.body.block
    value_map: dict[Value, Value] = {}
    for original, arg in zip(arguments, block.args):
        arg.name_hint = original.name_hint
        value_map[original] = arg
    for constant in dict.fromkeys(c.op for c in constants):
        block.append(constant.clone(value_map))
    copy = block.append(op.clone(value_map))
    block.append(ReturnOp.create(list(copy.results), location=op.location))
    return ModuleOp.build([func]), arguments


@dataclass
class PlannedNode:
    """One node of a plan: the IR op (in the Function's optimized module), its executor,
    where its arguments come from and where its results go (slots of the plan's value table)."""

    index: int
    ir_op: Operation
    run: Callable[[list], list]
    impl: str                      # "C": compiled code; "Py": the interpreter
    argument_slots: list[int]
    result_slots: list[int]
    operand_slots: list[int]       # the slot of each operand, in order (-1: a constant)
    compile_time: float = 0.0
    compile_error: str = ""        # why the node runs in the interpreter, if it had to


@dataclass
class NodePlan:
    """The nodes of ``module``'s one function, each compiled alone by ``factory``, and the
    bookkeeping to run them in order: a table of value slots (the function's arguments first,
    then every node result) from which each node reads and into which it writes.

    ``run(values)`` returns the function's results and each node's seconds. After a run,
    ``last_outputs`` holds the (shape, dtype name, strides, bytes) of each node's results and
    ``describe_slot(slot)`` those of any value.
    """

    module: Operation
    factory: ExecutorFactory
    nodes: list[PlannedNode] = field(init=False)
    num_arguments: int = field(init=False)
    return_slots: list[int] = field(init=False)
    slot_of: dict[Value, int] = field(init=False)
    compile_time: float = field(init=False)

    def __post_init__(self):
        funcs = [op for op in self.module.regions[0].block.ops if op.name == "func.func"]
        if len(funcs) != 1:
            raise ValueError(f"a profiling plan needs a module with one function, got "
                             f"{len(funcs)}")
        func = funcs[0]
        block = func.regions[0].block
        name = func.attributes["sym_name"].data
        self.slot_of = {arg: k for k, arg in enumerate(block.args)}
        self.num_arguments = len(block.args)
        self.nodes = []
        self._constant_values: dict[int, object] = {}
        started = time.perf_counter()
        self._steps = self._plan_block(block, name)
        self.return_slots = [self._return_slot(v) for v in block.last_op.operands]
        self.compile_time = time.perf_counter() - started
        self._table_size = len(self.slot_of)
        self.last_outputs: list[list[tuple]] = [[] for _ in self.nodes]
        self.last_arguments: list[tuple] = []
        self._producer = {slot: (node.index, k) for node in self.nodes
                          for k, slot in enumerate(node.result_slots)}

    def _plan_block(self, block, name: str) -> list:
        """The steps running ``block``'s ops (its terminator aside): a node per op, and a
        ``Branching`` per ``tensor.if``, whose branches' ops are nodes of their own."""
        steps: list = []
        for op in block.ops:
            if op is block.last_op:
                break
            if op.name == "tensor.constant":
                continue
            if op.name == "tensor.if":
                steps.append(self._plan_branching(op, name))
                continue
            node = self._plan_node(op, f"{name}_node{len(self.nodes)}")
            self.nodes.append(node)
            steps.append(node)
        return steps

    def _plan_branching(self, op: Operation, name: str) -> "Branching":
        """A ``tensor.if`` as the nodes of both branches (their arguments read the slots of the
        op's inputs), then a node of its own that picks the branch (the order of
        ``FunctionGraph.toposort``)."""
        condition = self._return_slot(op.operands[0])
        inputs = [self._return_slot(v) for v in op.operands[1:]]
        branches = []
        for region in op.regions:
            block = region.block
            for arg, slot in zip(block.args, inputs):
                self.slot_of[arg] = slot
            steps = self._plan_block(block, name)
            branches.append((steps, [self._return_slot(v) for v in block.last_op.operands]))
        node = PlannedNode(len(self.nodes), op, _picks_a_branch, "Py", [condition], [],
                           [-1 if is_constant(v) else self.slot_of[v] for v in op.operands])
        self.nodes.append(node)
        for r in op.results:
            self.slot_of[r] = len(self.slot_of)
            node.result_slots.append(self.slot_of[r])
        return Branching(node, condition, branches)

    def _plan_node(self, op: Operation, name: str) -> PlannedNode:
        started = time.perf_counter()
        module, arguments = node_module(op, name)
        run, impl, error = self._compile(module, op)
        argument_slots = [self.slot_of[v] for v in arguments]
        operand_slots = [-1 if is_constant(v) else self.slot_of[v] for v in op.operands]
        result_slots = []
        for r in op.results:
            self.slot_of[r] = len(self.slot_of)
            result_slots.append(self.slot_of[r])
        return PlannedNode(len(self.nodes), op, run, impl, argument_slots, result_slots,
                           operand_slots, time.perf_counter() - started, error)

    def _compile(self, module: Operation, op: Operation) -> tuple[Callable, str, str]:
        from ..interpreter_executor import InterpreterExecutor
        from .memory import VIEW_OPS
        if self.factory is InterpreterExecutor or op.name in VIEW_OPS:
            # A view costs nothing in the whole function; compiled alone it would copy.
            return InterpreterExecutor(module), "Py", ""
        try:
            return self.factory(module), "C", ""
        except Exception as exc:  # noqa: BLE001 - any backend failure: run it interpreted
            return InterpreterExecutor(module), "Py", f"{type(exc).__name__}: {exc}"

    def _return_slot(self, value: Value) -> int:
        """The slot of a returned value; a returned constant gets a slot, filled once here."""
        if value in self.slot_of:
            return self.slot_of[value]
        if not is_constant(value):
            raise ValueError(f"returned value {value!r} is neither an argument nor a node result")
        from lowering.ir.interpreter import Interpreter
        slot = self.slot_of[value] = len(self.slot_of)
        self._constant_values[slot] = Interpreter().run_op(value.op)[value.index]
        return slot

    def run(self, values: list, on_node: Callable[[PlannedNode, float, float], None] | None = None
            ) -> tuple[list, list[float]]:
        """Run the nodes in order on the function's argument ``values``: the function's results
        and each node's seconds. ``on_node(node, start, seconds)`` is told of each node run
        (``start`` is a ``time.perf_counter()`` reading)."""
        table: list = [None] * self._table_size
        table[:len(values)] = values
        self.last_arguments = [_describe(v) for v in values]
        for slot, constant in self._constant_values.items():
            table[slot] = constant
        times: list[float] = []
        self._run_steps(self._steps, table, on_node, times)
        return [table[s] for s in self.return_slots], times

    def _run_steps(self, steps: list, table: list, on_node, times: list[float]) -> None:
        """Run ``steps`` on the value ``table``: each node timed, and of each ``Branching``
        only the branch its condition takes."""
        clock = time.perf_counter
        outputs = self.last_outputs
        for step in steps:
            if isinstance(step, Branching):
                start = clock()
                taken = 0 if bool(np.asarray(table[step.condition]) != 0) else 1
                picking = clock() - start
                branch_steps, yielded = step.branches[taken]
                self._run_steps(branch_steps, table, on_node, times)
                node, results, resumed = step.node, [table[s] for s in yielded], clock()
            else:
                node = step
                arguments = [table[s] for s in node.argument_slots]
                start = resumed = clock()
                picking = 0.0
                results = node.run(arguments)
            # A branching node's own time: picking the branch and handing on its results.
            seconds = picking + clock() - resumed
            times.append(seconds)
            shapes = []
            for slot, r in zip(node.result_slots, results):
                table[slot] = r
                shapes.append(_describe(r))
            outputs[node.index] = shapes
            if on_node is not None:
                on_node(node, start, seconds)

    def describe_slot(self, slot: int) -> tuple | None:
        """(shape, dtype name, strides, bytes) of the value in ``slot`` at the last run (None for
        a constant's -1 or before any run)."""
        if 0 <= slot < len(self.last_arguments):
            return self.last_arguments[slot]
        if slot in self._producer:
            index, k = self._producer[slot]
            described = self.last_outputs[index]
            return described[k] if k < len(described) else None
        if slot in self._constant_values:
            return _describe(self._constant_values[slot])
        return None


@dataclass
class Branching:
    """The step of a ``tensor.if``: its node, the slot of its condition and, for the then and
    the else branch, the steps running it and the slots of the values it yields."""

    node: PlannedNode
    condition: int
    branches: list[tuple[list, list[int]]]


def _picks_a_branch(arguments: list) -> list:
    raise RuntimeError("a tensor.if node is run by its plan (NodePlan._run_steps), which runs "
                       "the branch its condition takes")


def _describe(array) -> tuple:
    """(shape, dtype name, strides in bytes, size in bytes) of a node's result."""
    a = np.asarray(array)
    return a.shape, a.dtype.name, a.strides, a.nbytes
