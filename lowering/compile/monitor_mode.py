"""``MonitorMode``: a mode that calls your functions around every node it runs (Theano's
``theano.compile.MonitorMode``), to inspect values while a function computes.

``pre_func(i, node, fn)`` is called before node ``i`` runs and ``post_func(i, node, fn)`` after:
``node`` is the node of ``f.maker.fgraph.toposort()`` at position ``i`` (``node.op``,
``node.inputs``, ``node.outputs``), ``fn.inputs`` and ``fn.outputs`` are one-element lists
holding the node's input and output values (outputs are ``[None]`` before it runs).

Granularity: one call per node of the optimized graph, that is per op of the function's
tensor-level IR after the mode's graph optimizations (``optimizer``: ``'default'`` reads
``config.optimizer``; ``'fast_run'``, ``'fast_compile'``, ``'merge'``, ``'None'``), run one op at a
time by the reference interpreter. Fused elementwise ops are one node, as in Theano's
``Composite``; constants are not nodes.

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> def inspect_inputs(i, node, fn):
...     print(i, node, "input(s) value(s):", [input[0] for input in fn.inputs], end=" ")
>>> def inspect_outputs(i, node, fn):
...     print("output(s) value(s):", [output[0] for output in fn.outputs])
>>> x = T.dscalar("x")
>>> f = theano.function([x], [5 * x], mode=MonitorMode(pre_func=inspect_inputs,
...                                                    post_func=inspect_outputs))
>>> f(3)
0 Elemwise{mul,no_inplace}(TensorConstant{5.0}, x) input(s) value(s): [array(5.), array(3.)] output(s) value(s): [array(15.)]
[array(15.)]
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from lowering.ir.interpreter import Interpreter

from .fgraph import FunctionGraph
from .pipeline import _OPTIMIZER_FLAG, Mode, register_executor

__all__ = ["MonitorMode"]

_EXECUTOR_IDS = itertools.count()


@dataclass(frozen=True, init=False)
class MonitorMode(Mode):
    """A mode calling ``pre_func`` and ``post_func`` around every node (see the module doc)."""

    pre_func: Callable | None = None
    post_func: Callable | None = None

    def __init__(self, pre_func=None, post_func=None, optimizer="default", linker=None, *,
                 name: str = "MonitorMode", optimizations=None, executors=None,
                 check_passes: bool = False):
        from lowering.config import config
        for hook_name, hook in (("pre_func", pre_func), ("post_func", post_func)):
            if hook is not None and not callable(hook):
                raise TypeError(f"MonitorMode: {hook_name} must be a function (i, node, fn) or "
                                f"None, got {type(hook).__name__}")
        if linker is not None:
            raise ValueError(f"MonitorMode runs nodes one at a time with its own linker; "
                             f"linker={linker!r} cannot be used with it")
        if optimizations is None:
            flag = config.optimizer if optimizer == "default" else \
                "None" if optimizer is None else optimizer
            if flag not in _OPTIMIZER_FLAG:
                raise ValueError(f"MonitorMode: unknown optimizer {optimizer!r}; use 'default', "
                                 f"{', '.join(repr(k) for k in _OPTIMIZER_FLAG)}")
            optimizations = _OPTIMIZER_FLAG[flag]
        if executors is None:  # an executor of its own, which knows the hooks
            executors = (f"monitor{next(_EXECUTOR_IDS)}",)
            register_executor(executors[0], lambda module: MonitorExecutor(module, pre_func,
                                                                           post_func))
        for field_name, value in [("name", name), ("optimizations", tuple(optimizations)),
                                  ("executors", tuple(executors)),
                                  ("check_passes", check_passes), ("pre_func", pre_func),
                                  ("post_func", post_func)]:
            object.__setattr__(self, field_name, value)


class NodeThunk:
    """The ``fn`` the hooks get: the node's value cells, and calling it runs the node."""

    def __init__(self, interpreter: Interpreter, op):
        self._interpreter = interpreter
        self._op = op
        self.inputs = [[interpreter.value(v)] for v in op.operands]
        self.outputs = [[None] for _ in op.results]

    def __call__(self):
        for cell, value in zip(self.outputs, self._interpreter.run_op(self._op)):
            cell[0] = value


class MonitorExecutor:
    """Runs a module's function op by op in the interpreter, calling the hooks around each
    node."""

    call_lock = None  # each call has its own interpreter

    def __init__(self, module, pre_func, post_func):
        import lowering.dialects  # noqa: F401  (registers every interpreter rule)
        funcs = [op for op in module.regions[0].block.ops if op.name == "func.func"]
        if len(funcs) != 1:
            raise ValueError(f"expected a module with one function, got {len(funcs)}")
        self.block = funcs[0].regions[0].block
        self.pre_func, self.post_func = pre_func, post_func
        nodes = FunctionGraph(funcs[0]).toposort()
        self.nodes = {node.ir_op: (i, node) for i, node in enumerate(nodes)}

    def __call__(self, args: list) -> list:
        interp = Interpreter()
        for arg, value in zip(self.block.args, args):
            interp.env[arg] = value
        terminator = self.block.terminator
        for op in self.block.ops:
            if op is terminator:
                return [interp.value(v) for v in op.operands]
            found = self.nodes.get(op)
            if found is None:  # a constant
                interp.run_op(op)
                continue
            i, node = found
            fn = NodeThunk(interp, op)
            if self.pre_func is not None:
                self.pre_func(i, node, fn)
            fn()
            if self.post_func is not None:
                self.post_func(i, node, fn)
        return []
