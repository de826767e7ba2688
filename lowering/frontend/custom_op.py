"""User-defined ops: Theano's ``Op`` and ``Apply``, for ops written in Python.

A subclass of ``Op`` gives ``make_node`` (returning ``Apply(self, inputs, outputs)``, the outputs
made with ``input.type()``) and either ``perform(node, inputs, output_storage)``, which computes
with NumPy arrays, or ``make_thunk(node, storage_map, compute_map, no_recycling)``, which returns
a function reading ``storage_map[input][0]`` and storing each result in
``storage_map[output][0]``; ``grad(inputs, output_grads)`` lets ``T.grad`` go through it.
Calling the op (``op(x)``) builds its node and returns its output variable (a list when it has
several).

In the IR a node is one ``tensor.custom`` op whose key names the node here. Compiled CPU code
calls the node's code (``loops.python_call``), lending it the input buffers as NumPy arrays for
the call (an op that keeps one must copy it) and copying its checked results; what it raises
reaches the caller of the function. A node whose inputs were moved to the
GPU (``x.transfer(None)``, ``gpu_contiguous(as_cuda_ndarray_variable(x))``) runs on the device,
its thunk getting C-contiguous device arrays (``pycuda.gpuarray.GPUArray``, or the simulated
device's arrays) in ``storage_map``.

>>> import numpy as np
>>> import lowering as theano
>>> import lowering.tensor as T
>>> class Double(Op):
...     __props__ = ()
...     def make_node(self, x):
...         x = T.as_tensor_variable(x)
...         return Apply(self, [x], [x.type()])
...     def perform(self, node, inputs, output_storage):
...         output_storage[0][0] = inputs[0] * 2
>>> x = T.dvector("x")
>>> f = theano.function([x], Double()(x) + 1)
>>> f(np.array([1.0, 2.0]))
array([3., 5.])
>>> [str(node.op) for node in f.maker.fgraph.toposort()]
['Double', 'Elemwise{add,no_inplace}']
"""
from __future__ import annotations

import threading

import numpy as np

from lowering.compile.gpu.arrays import (SimulatedGpuArray, is_c_contiguous, is_device_array,
                                         to_host_array)
from lowering.compile.gpu.host import GPU_HOST, host_rule
from lowering.config import config
from lowering.dialects.tensor.custom import (CustomOp, custom_implementation, register_custom,
                                             run_custom)
from lowering.ir.core import IRError, OpResult

from .errors import GraphBuildError
from .theano_ops import Apply as _NodeView
from .variable import _VARIABLES, TensorVariable, wrap

__all__ = ["Op", "Apply", "MethodNotDefined", "custom_op_of"]


class MethodNotDefined(NotImplementedError):
    """An ``Op`` subclass lacks a method the graph needs (``make_node``, or ``perform`` for an op
    without its own ``make_thunk``)."""


class Op:
    """Base class of ops written in Python (Theano's ``theano.Op``); see the module docstring.

    ``__props__`` (a tuple of attribute names) makes two ops of the class equal when those
    attributes are (and sets their hash and text: ``Scale{factor=2}``; ``()``: all instances
    are equal); without it ops compare by identity, unless the subclass defines ``__eq__`` /
    ``__hash__`` itself. ``default_output`` picks the output ``op(...)`` returns when the node
    has several.
    """

    default_output: int | None = None

    def make_node(self, *inputs) -> "Apply":
        """Theano's default: an op with ``itypes`` and ``otypes`` (lists of tensor types) takes
        inputs of exactly those types and gives new outputs of the ``otypes``."""
        itypes, otypes = getattr(self, "itypes", None), getattr(self, "otypes", None)
        if itypes is None or otypes is None:
            raise MethodNotDefined(f"{type(self).__name__}.make_node is not defined: an op "
                                   f"needs a make_node returning Apply(self, inputs, outputs), "
                                   f"or itypes and otypes")
        if len(inputs) != len(itypes):
            raise ValueError(f"{self}: expected {len(itypes)} input(s), got {len(inputs)}")
        from .constructors import as_tensor_variable
        inputs = [as_tensor_variable(i) for i in inputs]
        if not all(i.type == t for i, t in zip(inputs, itypes)):
            raise TypeError(f"{self}: expected inputs of types {[str(t) for t in itypes]}, got "
                            f"{[str(i.type) for i in inputs]}")
        return Apply(self, inputs, [t() for t in otypes])

    def __call__(self, *inputs, **kwargs):
        node = self.make_node(*inputs, **kwargs)
        if not isinstance(node, Apply):
            raise TypeError(f"{type(self).__name__}.make_node must return an Apply, got "
                            f"{type(node).__name__}")
        if self.default_output is not None:
            return node.outputs[self.default_output]
        return node.outputs[0] if len(node.outputs) == 1 else list(node.outputs)

    def grad(self, inputs: list, output_grads: list) -> list:
        """The gradients with respect to ``inputs`` (symbolic variables, one per input) given
        the gradients of the outputs; ``T.grad`` through this op needs it."""
        raise MethodNotDefined(f"{type(self).__name__} defines no grad(inputs, output_grads), "
                               f"so T.grad cannot go through it")

    def R_op(self, inputs: list, eval_points: list) -> list:
        """The tangents of the outputs (one per output) given the inputs' ``eval_points`` (None
        where an input has none); ``T.Rop`` through this op needs it."""
        raise MethodNotDefined(f"{type(self).__name__} defines no R_op(inputs, eval_points), "
                               f"so T.Rop cannot go through it")

    def perform(self, node: "Apply", inputs: list, output_storage: list) -> None:
        raise MethodNotDefined(f"{type(self).__name__} defines neither perform(node, inputs, "
                               f"output_storage) nor make_thunk(node, storage_map, compute_map, "
                               f"no_recycling): one of them computes its outputs")

    def make_thunk(self, node: "Apply", storage_map: dict, compute_map: dict, no_recycling,
                   impl=None):
        """A function computing the node's outputs through ``perform``, with its values in
        ``storage_map`` (one-element lists per variable)."""
        input_cells = [storage_map[v] for v in node.inputs]
        output_cells = [storage_map[v] for v in node.outputs]

        def thunk():
            self.perform(node, [cell[0] for cell in input_cells], output_cells)
            for variable in node.outputs:
                compute_map[variable][0] = True

        thunk.inputs, thunk.outputs, thunk.lazy = input_cells, output_cells, False
        return thunk

    # -- identity and text ----------------------------------------------------------------------

    def _props(self) -> tuple | None:
        """The values of the ``__props__`` attributes, or None when the class declares none."""
        names = getattr(self, "__props__", None)
        return None if names is None else tuple(getattr(self, name) for name in names)

    def __eq__(self, other):
        props = self._props()
        if props is None:
            return self is other
        return type(self) is type(other) and props == other._props()

    def __hash__(self):
        props = self._props()
        return object.__hash__(self) if props is None else hash((type(self),) + props)

    def __str__(self):
        props = self._props()
        if not props:
            return type(self).__name__
        shown = ", ".join(f"{name}={value}" for name, value in zip(self.__props__, props))
        return f"{type(self).__name__}{{{shown}}}"

    __repr__ = __str__


class Apply(_NodeView):
    """A node: ``op`` applied to ``inputs`` giving ``outputs`` (Theano's ``theano.Apply``).

    ``inputs`` are symbolic variables; ``outputs`` are new variables (``x.type()``), which become
    the node's results. ``operation`` is the ``tensor.custom`` IR op.
    """

    def __init__(self, op: Op, inputs, outputs):
        if not isinstance(op, Op):
            raise TypeError(f"Apply needs an Op (a subclass of lowering.Op), got "
                            f"{type(op).__name__}")
        self.op = op
        self.inputs = [_checked_input(op, i, v) for i, v in enumerate(inputs)]
        self.outputs = list(outputs)
        for index, out in enumerate(self.outputs):
            _check_new_output(op, index, out, self.outputs[:index], self.inputs)
        device = _device_of_inputs(op, self.inputs)
        key = register_custom(_NodeRunner(self))
        try:
            self.operation = CustomOp.build([v.value for v in self.inputs],
                                            [o.value.type for o in self.outputs], key, str(op),
                                            device=device)
        except (IRError, TypeError, ValueError) as exc:
            raise GraphBuildError(f"{op}: {exc}") from None
        for out, result in zip(self.outputs, self.operation.results):
            _rebind(out, result)
        if config.compute_test_value != "off" and device is None:
            from .build import compute_test_values
            compute_test_values(self.operation)

    @property
    def nin(self) -> int:
        return len(self.inputs)

    @property
    def nout(self) -> int:
        return len(self.outputs)

    @property
    def out(self) -> TensorVariable:
        """The only output (an error when there are several)."""
        if len(self.outputs) != 1:
            raise AttributeError(f"{self.op} has {len(self.outputs)} outputs; use .outputs")
        return self.outputs[0]

    def __str__(self):
        return f"{self.op}({', '.join(map(str, self.inputs))})"

    __repr__ = __str__


def _checked_input(op: Op, index: int, value) -> TensorVariable:
    if not isinstance(value, TensorVariable):
        raise TypeError(f"{op}: input {index} of Apply must be a symbolic variable, got "
                        f"{type(value).__name__}; convert it in make_node with "
                        f"T.as_tensor_variable")
    return value


def _check_new_output(op: Op, index: int, out, earlier: list, inputs: list) -> None:
    if not isinstance(out, TensorVariable):
        raise TypeError(f"{op}: output {index} of Apply must be a new variable (input.type()), "
                        f"got {type(out).__name__}")
    if isinstance(out.value, OpResult) or out.value.uses or any(out is v for v in earlier) \
            or any(out.value is v.value for v in inputs):
        raise ValueError(f"{op}: output {index} ({out}) is already part of a graph; outputs "
                         f"must be new variables made with input.type()")


def _device_of_inputs(op: Op, inputs: list) -> str | None:
    """The GPU context of the node: the one its inputs were moved to (None: the CPU)."""
    from .transfer import context_name
    contexts = {context_name(v.target) for v in inputs if v.target != "cpu"}
    if len(contexts) > 1:
        raise ValueError(f"{op}: its inputs are on different GPU contexts "
                         f"({', '.join(sorted(contexts))}); transfer them to one")
    return contexts.pop() if contexts else None


def _rebind(variable: TensorVariable, result: OpResult) -> None:
    """Make ``variable`` (made by ``type()``) the variable of the node's ``result``."""
    old = variable.value
    result.name_hint = old.name_hint
    if _VARIABLES.get(old) is variable:
        del _VARIABLES[old]
    variable.value = result
    _VARIABLES[result] = variable


class _NodeRunner:
    """The implementation of one node: runs its thunk on argument values, one call at a time.

    The thunk is made once (as Theano makes it once per function); output cells are emptied
    before each run (every output is in ``no_recycling``), so results are fresh arrays.
    """

    def __init__(self, node: Apply):
        self.node = node
        self.name = str(node.op)
        self._thunk = None
        self._lock = threading.Lock()

    @property
    def op(self) -> Op:
        return self.node.op

    def grad(self, output_grads: list) -> list:
        """The node's op's ``grad`` on its inputs and the outputs' gradients (zeros for outputs
        the cost does not reach), as graph values."""
        from .constructors import as_tensor_variable
        from .shapes import zeros_like
        node = self.node
        grads = [zeros_like(out) if g is None else wrap(g)
                 for out, g in zip(node.outputs, output_grads)]
        found = node.op.grad(list(node.inputs), grads)
        if len(found) != len(node.inputs):
            raise ValueError(f"{node.op}.grad gave {len(found)} gradient(s) for "
                             f"{len(node.inputs)} input(s)")
        return [None if g is None else as_tensor_variable(g).value for g in found]

    def R_op(self, eval_points: list) -> list:
        """The node's op's ``R_op`` on its inputs and the inputs' tangents, as graph values."""
        from .constructors import as_tensor_variable
        node = self.node
        found = node.op.R_op(list(node.inputs), [None if v is None else wrap(v)
                                                  for v in eval_points])
        if len(found) != len(node.outputs):
            raise ValueError(f"{node.op}.R_op gave {len(found)} tangent(s) for "
                             f"{len(node.outputs)} output(s)")
        return [None if t is None else as_tensor_variable(t).value for t in found]

    def run(self, values: list) -> list:
        node = self.node
        with self._lock:
            if self._thunk is None:
                variables = list(node.inputs) + list(node.outputs)
                # Variables hash and compare by identity, as Theano's do.
                self._storage = {v: [None] for v in variables}
                self._computed = {v: [False] for v in variables}
                self._thunk = node.op.make_thunk(node, self._storage, self._computed,
                                                 list(node.outputs))
            storage, computed = self._storage, self._computed
            for variable, value in zip(node.inputs, values):
                storage[variable][0] = value
                computed[variable][0] = True
            for variable in node.outputs:
                storage[variable][0] = None
                computed[variable][0] = False
            try:
                self._thunk()
                return [storage[v][0] for v in node.outputs]
            finally:
                for variable in list(node.inputs) + list(node.outputs):
                    storage[variable][0] = None  # keep no arrays alive between calls


def _host_step(operation: CustomOp, args: list, device) -> list:
    """``tensor.custom`` in the host program of a GPU function: the node's code on the argument
    values (C-contiguous device arrays for an op on the device, as ``gpu_contiguous``
    promises kernels); a host array given back by an op on the device is copied there."""
    args = [_contiguous(device, a) if is_device_array(a) else a for a in args]
    with device.current():  # the op's own PyCUDA calls need the context current
        results = run_custom(operation, args, is_array=is_device_array)
    if operation.device is None:
        return [to_host_array(r) if is_device_array(r) else r for r in results]
    return [device.adopt(r) for r in results]


def _contiguous(device, array):
    """``array`` itself when C-contiguous, else a C-contiguous copy on ``device``."""
    if is_c_contiguous(array):
        return array
    if isinstance(array, SimulatedGpuArray):
        return array.copy()
    return device.to_device(np.ascontiguousarray(to_host_array(array)))


GPU_HOST.register(CustomOp)(host_rule(_host_step))


def custom_op_of(operation: CustomOp) -> Op:
    """The user's ``Op`` behind a ``tensor.custom`` IR op (what graph views show)."""
    return custom_implementation(operation.key).op
