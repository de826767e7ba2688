"""The host side of a GPU function: its ``func.func`` of the ``gpu`` stage, run as prepared steps.

After ``outline-kernels`` a GPU function is a host ``func.func`` beside a ``gpu.module`` of
kernels. The host function reads sizes and strides, does index arithmetic, checks shapes,
allocates and frees buffers, makes views, moves data between host and device and launches
kernels. ``HostProgram`` turns it, once, into a list of Python closures over a frame of value
slots (one slot per SSA value; constants are filled in once), and runs that list per call
against a ``gpu.device.Device``:

- ``loops.dim`` / ``loops.stride`` read the run-time layout of host or device arrays;
- scalar ops (index arithmetic, comparisons) compute with the scalar dialect's own semantics
  (each op's ``evaluate``), as the interpreter does;
- ``loops.assert`` raises what the CPU backend raises for the same check: ``RuntimeCheckError``
  (a ValueError) or ``RuntimeIndexError`` (an IndexError) whose message names the op and the
  user's line;
- ``loops.alloc``/``loops.dealloc`` of host buffers are NumPy arrays; of device buffers they go
  to the device (a pool on a GPU);
- views (``subview``, ``reshape_view``, ``transpose_view``, ``broadcast_view``) of host buffers
  are NumPy views; of device buffers, descriptor arithmetic: the loops dialect's own view rule
  runs on a stand-in NumPy array with the device array's shape and strides (no memory behind
  it), and the device makes a view with the resulting shape, strides and offset;
- ``gpu.to_device``, ``gpu.to_host``, ``gpu.memcpy`` copy through the device, ``gpu.launch_func``
  launches (a launch whose grid has a zero size does nothing: there is no work), ``gpu.sync``
  waits, ``func.return`` gives the results;
- ``loops.for`` runs its body's steps (it may hold launches), ``loops.if`` the steps of the
  block its condition takes (timed one by one in ``run_timed``, as top-level steps are); any
  other op on host values runs its interpreter rule.

Each step is made by the op's rule in the ``GPU_HOST`` rule table: ``build(program, op)`` returns
the step (or None when the op needs no work per call). Other ops get host steps with
``GPU_HOST.register(OpClass)(host_rule(rule))``: ``rule(op, args, device)`` returns the op's
results (a list), like an interpreter rule with the device instead of the interpreter. An op on
device buffers that has neither is refused when the program is made, naming it.

>>> import numpy as np
>>> from lowering.ir.parser import parse_module
>>> from lowering.compile.gpu.device import InterpretedDevice
>>> module = parse_module('''
... func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
...   %d = "gpu.to_device"(%x) {context = "cuda"} : (!loops.buffer<?xf32>) -> !loops.buffer<?xf32, space="device">
...   %n = loops.dim %d, 0 : !loops.buffer<?xf32, space="device">
...   %c2 = "scalar.constant"() {value = 2 : index} : () -> index
...   %h = "scalar.floordiv"(%n, %c2) : (index, index) -> index
...   %v = loops.subview %d[%h] [%h] [1] : !loops.buffer<?xf32, space="device"> -> !loops.buffer<?xf32, offset=?, space="device">
...   %c = loops.alloc(%h) : !loops.buffer<?xf32, space="device">
...   "gpu.memcpy"(%v, %c) : (!loops.buffer<?xf32, offset=?, space="device">, !loops.buffer<?xf32, space="device">) -> ()
...   %r = "gpu.to_host"(%c) {context = "cuda"} : (!loops.buffer<?xf32, space="device">) -> !loops.buffer<?xf32>
...   loops.dealloc %c : !loops.buffer<?xf32, space="device">
...   func.return %r : !loops.buffer<?xf32>
... }''')
>>> program = HostProgram(module.functions[0], InterpretedDevice("cuda"))
>>> program.run([np.arange(6, dtype=np.float32)])
[array([3., 4., 5.], dtype=float32)]
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lowering.dialects import gpu, loops, scalar
from lowering.ir.captures import used_from_outside
from lowering.ir.core import IRError, Operation, Value
from lowering.ir.interpreter import INTERPRETER, Interpreter, InterpreterError
from lowering.ir.rules import RuleTable

from .device import Device

Step = Callable[[list], None]
HostRule = Callable[[Operation, list, Device], "list | None"]

# How the host program runs each op: ``build(program, op) -> Step | None``. An op without an
# entry runs its interpreter rule, on host values only.
GPU_HOST = RuleTable("GPU host program")


def host_rule(rule: HostRule) -> Callable[["HostProgram", Operation], Step]:
    """The ``GPU_HOST`` entry that runs ``rule(op, args, device)`` as an op's step: ``rule`` gets
    the run-time values of the op's operands (NumPy arrays and scalars on the host, the device's
    arrays for device buffers) and returns one value per result.

    >>> build = host_rule(lambda op, args, device: [args[0] * 2])
    >>> build.__name__
    'build_host_rule_step'
    """
    def build_host_rule_step(program: HostProgram, op: Operation) -> Step:
        return program._custom(op, rule)
    return build_host_rule_step


class HostProgramError(IRError):
    """The host function holds an op the host program cannot run (the message names it)."""


# What a step's time counts as in a profile: kernels and device memory work, copies between
# host and device, or host work. Steps of kind None are bookkeeping (sizes, arithmetic, views,
# checks) and are not shown as nodes.
STEP_KINDS = ("gpu", "transfer", "cpu")


@dataclass
class TopStep:
    """One top-level step of the host function: its op, what it does, and its kind; the
    step of a ``loops.if`` also has the steps of its blocks (``branches``)."""

    op: Operation
    run: Step
    kind: str | None
    branches: "Branches | None" = None


@dataclass
class Branches:
    """The blocks of a ``loops.if`` as steps: the slot of its condition, the steps and the
    yielded slots of its then and else blocks, and the slots of its results."""

    condition: int
    blocks: list[tuple[list[TopStep], list[int]]]
    results: list[int]


def _is_device(t) -> bool:
    from lowering.dialects.loops import BufferType
    return isinstance(t, BufferType) and t.memory_space == "device"


def _on_device(op: Operation) -> bool:
    return any(_is_device(v.type) for v in (*op.operands, *op.results))


class HostProgram:
    """The host function ``func`` of a GPU program, prepared to run against ``device``.

    ``run(args)`` returns the function's results; ``run_timed(args, record)`` also times every
    top-level step that does work. ``steps`` are the top-level ``TopStep``s.
    """

    def __init__(self, func: Operation, device: Device):
        self.func = func
        self.device = device
        self._slots: dict[Value, int] = {}
        self._template: list = []
        block = func.regions[0].block
        self._args = [self._slot(a) for a in block.args]
        self._branches: dict[Operation, Branches] = {}  # filled by the rule of loops.if
        self.steps, self._returned = self._top_steps(block)
        self._runs = [s.run for s in self.steps]

    def _top_steps(self, block) -> tuple[list[TopStep], list[int]]:
        """The steps of ``block``'s ops and the slots its terminator passes out."""
        steps: list[TopStep] = []
        for op in block.ops:
            if op is block.last_op and op.name in ("func.return", "loops.yield"):
                return steps, [self._slot(v) for v in op.operands]
            step = self._compile(op)
            if step is not None:
                steps.append(TopStep(op, step, _kind(op), self._branches.get(op)))
        return steps, []

    # -- running ------------------------------------------------------------------------------

    def run(self, args) -> list:
        """The host function's results for ``args`` (host arrays and device arrays, as the
        function's argument types say)."""
        frame = list(self._template)
        for slot, value in zip(self._args, args):
            frame[slot] = value
        for run in self._runs:
            run(frame)
        return [frame[s] for s in self._returned]

    def run_timed(self, args, record: Callable) -> list:
        """``run``, timing each top-level step that does work (``kind`` not None):
        ``record(step, seconds, frame)`` is called after it, where ``seconds()`` gives its time
        once the device has finished it (``Device.stop_timer``) and ``frame`` holds the values
        so far."""
        frame = list(self._template)
        for slot, value in zip(self._args, args):
            frame[slot] = value
        self._run_timed(self.steps, frame, record)
        return [frame[s] for s in self._returned]

    def _run_timed(self, steps: list[TopStep], frame: list, record: Callable) -> None:
        """Run ``steps``, timing those that do work; of a ``loops.if`` the steps of the block
        it takes are timed one by one, and its own time is the choice."""
        device = self.device
        clock = time.perf_counter
        for step in steps:
            kind = step.kind
            if step.branches is not None:
                start = clock()
                branches = step.branches
                taken, yielded = branches.blocks[0 if frame[branches.condition] else 1]
                spent = clock() - start
                self._run_timed(taken, frame, record)
                for slot, value in zip(branches.results, [frame[y] for y in yielded]):
                    frame[slot] = value
                record(step, lambda spent=spent: spent, frame)
            elif kind is None:
                step.run(frame)
            elif kind == "cpu":
                start = clock()
                step.run(frame)
                spent = clock() - start
                record(step, lambda spent=spent: spent, frame)
            else:
                token = device.start_timer()
                step.run(frame)
                record(step, device.stop_timer(token), frame)

    # -- compiling ----------------------------------------------------------------------------

    def _slot(self, value: Value) -> int:
        slot = self._slots.get(value)
        if slot is None:
            slot = self._slots[value] = len(self._template)
            self._template.append(None)
        return slot

    def _compile_block(self, block) -> tuple[list[Step], list[int]]:
        """The steps of a nested block and the slots its terminator passes out."""
        steps: list[Step] = []
        passed: list[int] = []
        terminator = block.terminator
        for op in block.ops:
            if op is terminator:
                passed = [self._slot(v) for v in op.operands]
                break
            step = self._compile(op)
            if step is not None:
                steps.append(step)
        return steps, passed

    def _compile(self, op: Operation) -> Step | None:
        build = GPU_HOST.find(type(op))
        if build is not None:
            return build(self, op)
        if GPU_HOST.unsupported_reason(type(op)) is not None:
            raise HostProgramError(GPU_HOST.missing_message(op), op)
        return self._fallback(op)

    def _custom(self, op: Operation, rule: HostRule) -> Step:
        device = self.device
        operands = [self._slot(v) for v in op.operands]
        results = [self._slot(r) for r in op.results]

        def step(frame):
            outs = rule(op, [frame[s] for s in operands], device)
            outs = list(outs) if outs is not None else []
            if len(outs) != len(results):
                raise HostProgramError(f"host rule of {op.name} gave {len(outs)} values for "
                                       f"{len(results)} results", op)
            for slot, value in zip(results, outs):
                frame[slot] = value
        return step

    def _fallback(self, op: Operation) -> Step:
        """An op without a host step of its own: its interpreter rule, on host values only."""
        if _on_device(op):
            raise HostProgramError(
                f"{op.name} at {op.location.short()} works on device memory, which the host "
                f"program cannot do: it must run inside a kernel (map-to-gpu), or get a host "
                f"step in lowering.compile.gpu.host.GPU_HOST", op)
        rule = INTERPRETER.lookup(op, HostProgramError)
        operands = [self._slot(v) for v in op.operands]
        results = [self._slot(r) for r in op.results]
        if op.regions:
            outside = used_from_outside(op)
            return _region_fallback(op, [self._slot(v) for v in outside], outside, results)

        def step(frame):
            try:
                outs = rule(None, op, [frame[s] for s in operands])
            except InterpreterError:
                raise
            except (ValueError, IndexError, TypeError, ZeroDivisionError,
                    FloatingPointError) as exc:
                raise InterpreterError(f"{op.name} at {op.location.short()}: {exc}", op) from exc
            for slot, value in zip(results, outs or ()):
                frame[slot] = value
        return step


def _kind(op: Operation) -> str | None:
    """The profile kind of a top-level op (see ``STEP_KINDS``)."""
    name = op.name
    if name in ("gpu.to_device", "gpu.to_host"):
        return "transfer"
    if name == "gpu.memcpy":
        spaces = {_is_device(v.type) for v in op.operands}
        return "transfer" if len(spaces) == 2 else "gpu" if spaces == {True} else "cpu"
    if name in ("gpu.launch_func", "gpu.sync"):
        return "gpu"
    if name in ("loops.alloc", "loops.dealloc", "loops.fill", "loops.copy"):
        return "gpu" if _on_device(op) else "cpu"
    if name.startswith("scalar.") or name in _BOOKKEEPING:
        return None
    return "cpu"


_BOOKKEEPING = frozenset({"loops.dim", "loops.stride", "loops.assert", "loops.subview",
                          "loops.reshape_view", "loops.transpose_view", "loops.broadcast_view",
                          "loops.constant"})


def _region_fallback(op: Operation, slots: list[int], values: list[Value],
                     results: list[int]) -> Step:
    """A region op on host values (a loop nest left on the host): the interpreter runs it,
    with the values it reads from outside bound."""
    def step(frame):
        interp = Interpreter()
        for value, slot in zip(values, slots):
            interp.env[value] = frame[slot]
        outs = interp.run_op(op)
        for slot, value in zip(results, outs):
            frame[slot] = value
    return step


# ---------------------------------------------------------------------------------------------
# Built-in steps


def _scalar(program: HostProgram, op: Operation) -> Step:
    evaluate = op.evaluate
    attributes = op.evaluate_attributes()
    operands = [program._slot(v) for v in op.operands]
    (result,) = [program._slot(r) for r in op.results]
    if len(operands) == 1 and not attributes:
        (a,) = operands

        def unary(frame):
            frame[result] = evaluate(frame[a])
        return unary
    if len(operands) == 2 and not attributes:
        a, b = operands

        def binary(frame):
            frame[result] = evaluate(frame[a], frame[b])
        return binary

    def general(frame):
        frame[result] = evaluate(*[frame[s] for s in operands], **attributes)
    return general


def _constant(program: HostProgram, op: Operation) -> None:
    """Constants are computed once, into the frame every call starts from."""
    interp = Interpreter()
    for r, value in zip(op.results, INTERPRETER.lookup(op)(interp, op, [])):
        program._template[program._slot(r)] = value
    return None


def _dim(program: HostProgram, op: Operation) -> Step:
    source, result, axis = program._slot(op.operands[0]), program._slot(op.result), op.axis

    def step(frame):
        frame[result] = np.int64(frame[source].shape[axis])
    return step


def _stride(program: HostProgram, op: Operation) -> Step:
    source, result, axis = program._slot(op.operands[0]), program._slot(op.result), op.axis

    def step(frame):
        array = frame[source]
        frame[result] = np.int64(array.strides[axis] // array.dtype.itemsize)
    return step


def _assert(program: HostProgram, op: Operation) -> Step:
    from lowering.dialects.loops import RuntimeCheckError, RuntimeIndexError
    condition = program._slot(op.operands[0])
    error = RuntimeIndexError if op.kind == "index" else RuntimeCheckError
    message, code = op.message, op.error_code

    def step(frame):
        if not frame[condition]:
            raise error(message, op, code)
    return step


def _alloc(program: HostProgram, op: Operation) -> Step:
    t = op.result.type
    sizes = [program._slot(v) for v in op.operands]
    result = program._slot(op.result)
    static = list(t.shape)
    dynamic = [axis for axis, d in enumerate(static) if d is None]
    dtype = t.dtype
    make = program.device.empty if _is_device(t) else np.empty

    def step(frame):
        shape = list(static)
        for axis, slot in zip(dynamic, sizes):
            shape[axis] = int(frame[slot])
        if any(d < 0 for d in shape):
            raise InterpreterError(f"{op.name} at {op.location.short()}: negative size in "
                                   f"{tuple(shape)}", op)
        frame[result] = make(tuple(shape), dtype)
    return step


def _dealloc(program: HostProgram, op: Operation) -> Step | None:
    if not _is_device(op.operands[0].type):
        return None  # host memory goes when its last reference does
    source, free = program._slot(op.operands[0]), program.device.free

    def step(frame):
        free(frame[source])
        frame[source] = None
    return step


def _view(program: HostProgram, op: Operation) -> Step:
    rule = INTERPRETER.lookup(op)
    operands = [program._slot(v) for v in op.operands]
    result = program._slot(op.result)
    if not _is_device(op.operands[0].type):
        def host_view(frame):
            try:
                frame[result] = rule(None, op, [frame[s] for s in operands])[0]
            except InterpreterError:
                raise
            except (ValueError, IndexError) as exc:
                raise InterpreterError(f"{op.name} at {op.location.short()}: {exc}", op) from exc
        return host_view
    view = program.device.view

    def device_view(frame):
        array = frame[operands[0]]
        stand_in = _stand_in(array)
        try:
            made = rule(None, op, [stand_in, *[frame[s] for s in operands[1:]]])[0]
        except InterpreterError:
            raise
        except (ValueError, IndexError) as exc:
            raise InterpreterError(f"{op.name} at {op.location.short()}: {exc}", op) from exc
        itemsize = array.dtype.itemsize
        offset = (_address(made) - _address(stand_in)) // itemsize
        frame[result] = view(array, made.shape, [s // itemsize for s in made.strides], offset)
    return device_view


_SCRATCH: dict[np.dtype, np.ndarray] = {}


def _stand_in(array) -> np.ndarray:
    """A NumPy array with ``array``'s dtype, shape and strides over no real memory: view rules
    compute on it (they never read elements), and pointer differences give offsets."""
    dtype = np.dtype(array.dtype)
    scratch = _SCRATCH.get(dtype)
    if scratch is None:
        scratch = _SCRATCH[dtype] = np.zeros(1, dtype)
    return as_strided(scratch, shape=tuple(array.shape), strides=tuple(array.strides),
                      writeable=False)


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _copy(program: HostProgram, op: Operation) -> Step:
    if not _on_device(op):
        return program._fallback(op)
    source, target = (program._slot(v) for v in op.operands)
    copy = program.device.copy

    def step(frame):
        copy(_contiguous(frame[source], op), _contiguous(frame[target], op))
    return step


def _fill(program: HostProgram, op: Operation) -> Step:
    if not _on_device(op):
        return program._fallback(op)
    value, target = (program._slot(v) for v in op.operands)
    fill = program.device.fill

    def step(frame):
        fill(_contiguous(frame[target], op), frame[value])
    return step


def _contiguous(array, op: Operation):
    from .arrays import is_c_contiguous
    if isinstance(array, np.ndarray) or is_c_contiguous(array):
        return array
    raise InterpreterError(f"{op.name} at {op.location.short()}: device memory with strides "
                           f"{tuple(array.strides)} can only be copied or filled by a kernel "
                           f"(map-to-gpu)", op)


def _transfer(direction: str) -> Callable[[HostProgram, Operation], Step]:
    """The host step of a transfer op: the device's method ``direction`` (``"to_device"`` or
    ``"to_host"``) on the operand."""
    def make(program: HostProgram, op: Operation) -> Step:
        _check_context(program, op)
        source, result = program._slot(op.operands[0]), program._slot(op.result)
        move = getattr(program.device, direction)

        def step(frame):
            frame[result] = move(frame[source])
        return step
    return make


def _check_context(program: HostProgram, op: Operation) -> None:
    context = op.attributes.get("context")
    name = context.data if context is not None else "cuda"
    if name != program.device.context:
        raise HostProgramError(
            f"{op.name} at {op.location.short()} moves data to or from GPU context {name!r}, "
            f"but this function runs on context {program.device.context!r}: a function's GPU "
            f"values must all live in one context", op)


def _memcpy(program: HostProgram, op: Operation) -> Step:
    source, target = (program._slot(v) for v in op.operands)
    copy = program.device.copy

    def step(frame):
        copy(frame[source], frame[target])
    return step


def _launch(program: HostProgram, op: Operation) -> Step:
    kernel = f"{op.module}::{op.kernel}"
    sizes = [program._slot(v) for v in op.operands[:6]]
    arguments = [program._slot(v) for v in op.operands[6:]]
    launch = program.device.launch
    where = op.location.short()

    def step(frame):
        gx, gy, gz, bx, by, bz = (int(frame[s]) for s in sizes)
        if gx == 0 or gy == 0 or gz == 0:
            return  # nothing to compute (an empty array); CUDA would reject the launch
        launch(kernel, (gx, gy, gz), (bx, by, bz), [frame[s] for s in arguments], where)
    return step


def _unoutlined(program: HostProgram, op: Operation) -> Step:
    raise HostProgramError(f"{op.name} at {op.location.short()}: an inline kernel must be "
                           f"outlined (outline-kernels) before the host program runs", op)


def _sync(program: HostProgram, op: Operation) -> Step:
    synchronize = program.device.synchronize

    def step(frame):
        synchronize()
    return step


def _for(program: HostProgram, op: Operation) -> Step:
    lower, upper, step_size = (program._slot(v) for v in op.operands[:3])
    inits = [program._slot(v) for v in op.operands[3:]]
    results = [program._slot(r) for r in op.results]
    body = op.regions[0].block
    induction = program._slot(body.args[0])
    carried = [program._slot(a) for a in body.args[1:]]
    steps, yielded = program._compile_block(body)

    def step(frame):
        start, stop, stride = int(frame[lower]), int(frame[upper]), int(frame[step_size])
        if stride <= 0:
            raise InterpreterError(f"{op.name} at {op.location.short()}: step must be positive, "
                                   f"got {stride}", op)
        values = [frame[s] for s in inits]
        for i in range(start, stop, stride):
            frame[induction] = np.int64(i)
            for slot, value in zip(carried, values):
                frame[slot] = value
            for run in steps:
                run(frame)
            values = [frame[s] for s in yielded]
        for slot, value in zip(results, values):
            frame[slot] = value
    return step


def _while(program: HostProgram, op: Operation) -> Step:
    """``loops.while`` on the host (a scan with ``until``): its body, launches included, runs
    until the condition it yields is false."""
    inits = [program._slot(v) for v in op.operands]
    results = [program._slot(r) for r in op.results]
    body = op.regions[0].block
    carried = [program._slot(a) for a in body.args]
    steps, yielded = program._compile_block(body)

    def step(frame):
        values = [frame[s] for s in inits]
        going = True
        while going:
            for slot, value in zip(carried, values):
                frame[slot] = value
            for run in steps:
                run(frame)
            going, *values = [frame[s] for s in yielded]
        for slot, value in zip(results, values):
            frame[slot] = value
    return step


def _if(program: HostProgram, op: Operation) -> Step:
    condition = program._slot(op.operands[0])
    results = [program._slot(r) for r in op.results]
    blocks = [program._top_steps(region.block) for region in op.regions]
    program._branches[op] = Branches(condition, blocks, results)
    runs = [([s.run for s in steps], yielded) for steps, yielded in blocks]

    def step(frame):
        steps, yielded = runs[0 if frame[condition] else 1]
        for run in steps:
            run(frame)
        for slot, value in zip(results, [frame[s] for s in yielded]):
            frame[slot] = value
    return step


for _ops, _build in (
        ((scalar.ScalarOp,), _scalar),
        ((scalar.ConstantOp, loops.ConstantOp), _constant),
        ((loops.DimOp,), _dim),
        ((loops.StrideOp,), _stride),
        ((loops.AssertOp,), _assert),
        ((loops.AllocOp,), _alloc),
        ((loops.DeallocOp,), _dealloc),
        ((loops.SubviewOp, loops.ReshapeViewOp, loops.TransposeViewOp, loops.BroadcastViewOp),
         _view),
        ((loops.CopyOp,), _copy),
        ((loops.FillOp,), _fill),
        ((loops.ForOp,), _for),
        ((loops.WhileOp,), _while),
        ((loops.IfOp,), _if),
        ((gpu.ToDeviceOp,), _transfer("to_device")),
        ((gpu.ToHostOp,), _transfer("to_host")),
        ((gpu.MemcpyOp,), _memcpy),
        ((gpu.LaunchFuncOp,), _launch),
        ((gpu.LaunchOp,), _unoutlined),
        ((gpu.SyncOp,), _sync)):
    GPU_HOST.register(*_ops)(_build)
del _ops, _build
