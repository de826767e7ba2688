"""Profiling a GPU function: the time of each step of its host program, split into GPU work,
transfers and host work.

A profiled CPU function runs a plan of one compiled module per node (``profile_plan``). A GPU
function is timed as it runs: ``GpuProfilePlan`` runs the function's own host program
(``gpu.host.HostProgram.run_timed``) and gives each top-level step that does work a node of the
profile (the steps of a ``loops.if``'s blocks too, counted only when their block runs):

==================  ====================================  =========
host step           node (Theano's class)                 kind
==================  ====================================  =========
gpu.launch_func     ``GpuKernel{kernels::name}``          gpu
gpu.to_device       ``GpuFromHost``                       transfer
gpu.to_host         ``HostFromGpu``                       transfer
gpu.memcpy          ``GpuFromHost``/``HostFromGpu``/      transfer/
                    ``GpuCopy``                           gpu
device alloc/free   ``GpuAlloc``/``GpuDealloc``           gpu
device fill/copy    ``GpuFill``/``GpuCopy``               gpu
gpu.sync            ``GpuSync``                           gpu
anything else       ``HostOp{op name}``                   cpu
==================  ====================================  =========

Sizes, index arithmetic, views and checks are bookkeeping: they run, and are not nodes. On a
real GPU the kernels and transfers are timed with CUDA events recorded on the stream around
them (read once the call has finished), so a kernel's time is its own even though launches are
asynchronous; host steps and the interpreted device use the wall clock.

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering import function
>>> from lowering.config import config
>>> from lowering.compile.profiling import ProfileStats
>>> x = T.fvector("x")
>>> with config.change_flags({"gpuarray.simulate": True}, device="cuda"):
...     f = function([x], T.exp(x), profile=ProfileStats(atexit_print=False))
...     _ = f(np.zeros(4, np.float32))
>>> sorted({node.kind for node in f.profile.nodes})
['gpu', 'transfer']
"""
from __future__ import annotations

import time

import numpy as np

from lowering.ir.core import Operation
from lowering.ir.types import INDEX

from .call_protocol import NORMALIZE_CODE
from ..profile.plan import PlannedNode


class HostStepOp:
    """A profile node's op: prints as Theano prints ops (``GpuKernel{kernels::k}``)."""

    def __init__(self, operation: Operation, props: str = ""):
        self.operation = operation
        self.props = props

    def __str__(self):
        return type(self).__name__ + (f"{{{self.props}}}" if self.props else "")

    __repr__ = __str__


class GpuKernel(HostStepOp):
    """A kernel launch."""


class GpuFromHost(HostStepOp):
    """A copy from the host to the device."""


class HostFromGpu(HostStepOp):
    """A copy from the device to the host."""


class GpuCopy(HostStepOp):
    """A copy inside device memory."""


class GpuAlloc(HostStepOp):
    """A device allocation (from the pool on a GPU)."""


class GpuDealloc(HostStepOp):
    """A device buffer given back."""


class GpuFill(HostStepOp):
    """Device memory set to one value."""


class GpuSync(HostStepOp):
    """The host waiting for the device."""


class HostOp(HostStepOp):
    """Work the host does itself."""


def step_op(operation: Operation) -> HostStepOp:
    """The profile node op of a top-level host step.

    >>> from lowering.dialects.gpu import SyncOp
    >>> str(step_op(SyncOp.build()))
    'GpuSync'
    """
    from .host import _is_device, _on_device
    name = operation.name
    if name == "gpu.launch_func":
        return GpuKernel(operation, f"{operation.module}::{operation.kernel}")
    if name == "gpu.to_device":
        return GpuFromHost(operation)
    if name == "gpu.to_host":
        return HostFromGpu(operation)
    if name in ("gpu.memcpy", "loops.copy") and _on_device(operation):
        source, target = (_is_device(v.type) for v in operation.operands)
        return GpuCopy(operation) if source and target else \
            GpuFromHost(operation) if target else HostFromGpu(operation)
    if name == "gpu.sync":
        return GpuSync(operation)
    if _on_device(operation):
        classes = {"loops.alloc": GpuAlloc, "loops.dealloc": GpuDealloc, "loops.fill": GpuFill}
        if name in classes:
            return classes[name](operation)
    return HostOp(operation, name)


class StepApply:
    """The Apply view of a host step (what the profile's tables print): its op and the arrays
    and data scalars it reads, as Theano names variables (``GpuKernel{kernels::k}(w,
    GpuFromHost.0)``); sizes and launch dimensions (``index`` values) are left out."""

    def __init__(self, operation: Operation):
        self.ir_op = operation
        self.op = step_op(operation)
        self.inputs = [_value_text(v) for v in operation.operands if v.type != INDEX]

    def __str__(self):
        return f"{self.op}({', '.join(self.inputs)})"


def _value_text(value) -> str:
    """A value's name, else ``Producer.index`` (``GpuAlloc.0``), else its type."""
    from lowering.ir.core import OpResult
    if value.name_hint:
        return value.name_hint
    if isinstance(value, OpResult):
        return f"{step_op(value.op)}.{value.index}"
    return str(value.type)


class GpuProfilePlan:
    """A GPU executor's host program run step by step for a profile, with ``NodePlan``'s
    interface (``nodes``, ``run``, ``last_outputs``, ``describe_slot``, ...) plus ``applies()``
    (the nodes' Apply views) and ``raw_run``/``recover`` (``Function``'s direct call path)."""

    def __init__(self, executor):
        started = time.perf_counter()
        self.executor = executor
        program = executor.host
        self.program = program
        self.nodes: list[PlannedNode] = []
        self._node_of_step: dict[int, PlannedNode] = {}
        slot = program._slots
        for step in _nodes_in_order(program.steps):
            if step.kind is None:
                continue
            operation = step.op
            operands = [slot[v] for v in operation.operands]
            node = PlannedNode(len(self.nodes), operation, step.run, "C", operands,
                               [slot[r] for r in operation.results], operands)
            self.nodes.append(node)
            self._node_of_step[id(step)] = node
        self._applies = [StepApply(node.ir_op) for node in self.nodes]
        self.num_arguments = len(program._args)
        self.return_slots = list(program._returned)
        self.last_outputs: list[list[tuple]] = [[] for _ in self.nodes]
        self._described: dict[int, tuple] = {}
        self.compile_time = time.perf_counter() - started

    def applies(self) -> list[StepApply]:
        return list(self._applies)

    # -- running ------------------------------------------------------------------------------

    def raw_run(self, args, on_node=None):
        """``GpuExecutor.raw_call`` with every step timed: the results, or the executor's code
        when the arguments need ``Function``'s checks first."""
        ready = self.executor._ready(args)
        if ready is None:
            return NORMALIZE_CODE
        return self._timed(ready, on_node)

    def recover(self, values, code: int, names=None, on_node=None) -> list:
        """``GpuExecutor.recover`` with every step timed."""
        if names is not None:
            for argument, name in zip(self.executor._arguments, names):
                argument.name = name
        ready = self.executor._ready(values)
        if ready is None:
            return self.executor.recover(values, code, names)
        return self._timed(ready, on_node)

    def run(self, values: list, on_node=None) -> tuple[list, list[float]]:
        """The function's results for ``values`` (``NodePlan.run``'s interface) and each
        node's seconds."""
        results = self.raw_run(values, on_node)
        if type(results) is not list:
            results = self.recover(values, results, None, on_node)
        return results, list(self._seconds)

    def _timed(self, args: list, on_node) -> list:
        timings: list[tuple[PlannedNode, float, object]] = []
        node_of_step = self._node_of_step
        self._described = {k: _describe(v) for k, v in enumerate(args)}

        def record(step, seconds, frame):
            node = node_of_step.get(id(step))
            if node is None:
                return
            timings.append((node, time.perf_counter(), seconds))
            self.last_outputs[node.index] = [_describe(frame[s]) for s in node.result_slots]
            for s in node.operand_slots:
                if s not in self._described and frame[s] is not None:
                    self._described[s] = _describe(frame[s])

        results = self.executor._run(args, lambda a: self.program.run_timed(a, record))
        self.executor.device.synchronize()
        self._seconds = [0.0] * len(self.nodes)
        for node, start, seconds in timings:
            spent = seconds()
            self._seconds[node.index] += spent
            if on_node is not None:
                on_node(node, start - spent, spent)
        return results

    def describe_slot(self, slot: int) -> tuple | None:
        """(shape, dtype name, strides, bytes) of the value in ``slot`` at the last run."""
        return self._described.get(slot)


def _nodes_in_order(steps: list) -> list:
    """``steps`` with the steps of each ``loops.if``'s blocks before it (as ``NodePlan`` and
    ``FunctionGraph`` list an ifelse after its branches)."""
    found = []
    for step in steps:
        if step.branches is not None:
            for block_steps, _ in step.branches.blocks:
                found.extend(_nodes_in_order(block_steps))
        found.append(step)
    return found


def _describe(value) -> tuple:
    if isinstance(value, np.ndarray) or hasattr(value, "strides"):
        shape = tuple(value.shape)
        dtype = np.dtype(value.dtype)
        return shape, dtype.name, tuple(value.strides), int(np.prod(shape, dtype=np.int64)) * \
            dtype.itemsize
    array = np.asarray(value)
    return array.shape, array.dtype.name, array.strides, array.nbytes
