"""Profiling compiled functions, Theano's way: ``function(..., profile=True)``.

A profiled ``Function`` (or every function, with the flag ``profile=True``) is built as usual and
also gets a per-node execution plan (``profile_plan``): each top-level op of its optimized module
compiled alone by the same executor. Each call of a profiled function runs that plan, timing
every node with ``time.perf_counter()``; results and updates are exactly those of an ordinary
call (the same arguments checks, the same commits). Functions that are not profiled keep their
one native call: nothing here runs for them.

What is reported (``f.profile.summary()``, ``print_summary()`` for every profile, and at exit
for every profile that was used, followed by their sum when there are several):

- **Function profiling**: calls and time in ``Function.__call__``, in the plan
  (``Function.fn.__call__``) and in the nodes (thunks); compile time, the number of Apply nodes,
  the optimizer's time per pass (the pass manager's ``PassTiming``) and the backend's time;
- **Class**, **Ops** and **Apply** tables in Theano's layout (``<% time> <sum %> <apply time>
  <time per call> <type> <#call> <#apply> <name>``), and the time spent in CPU ops, GPU ops and
  transfers (GPU ops and transfers are the ``Gpu*`` classes and ``GpuFromHost``/``HostFromGpu``);
- **Memory profile**: peaks of the intermediate buffers (``profile_memory`` documents the model),
  and with the flag ``profile_memory`` the nodes by size of their results.

With the flag ``profiling.trace=<path>`` every node run is also recorded and written at exit as a
Chrome trace (Trace Event Format, one process per function) that Perfetto and
``chrome://tracing`` open; ``ProfileStats.write_trace(path)`` writes one on demand.

Flags: ``profiling.n_ops`` and ``profiling.n_apply`` (rows per table), ``profiling.destination``
(``stderr``, ``stdout`` or a file name), ``profiling.min_memory_size``.

>>> import numpy as np
>>> import lowering.tensor as T
>>> from lowering import function
>>> x = T.dvector("x")
>>> f = function([x], T.exp(x) * 2, mode="FAST_COMPILE", profile=ProfileStats(atexit_print=False))
>>> f(np.zeros(3))
array([2., 2., 2.])
>>> [(node.op, node.calls) for node in f.profile.nodes]
[('Elemwise{exp,no_inplace}', 1), ('Elemwise{mul,no_inplace}', 1)]
"""
from __future__ import annotations

import atexit
import io
import sys
import time
from dataclasses import dataclass, field

from lowering.ir.pass_manager import PassTiming

from .compiled_function import Function
from .interpreter_executor import InterpreterExecutor
from .profile.memory import NodeBuffers, memory_peaks, result_storage, storage_code
from .profile.plan import NodePlan, PlannedNode

__all__ = ["ProfileStats", "ProfiledFunction", "NodeStats", "print_summary", "profiles",
           "write_trace"]

# Every ProfileStats made with atexit_print=True, in creation order.
_PROFILES: list["ProfileStats"] = []


@dataclass
class NodeStats:
    """One Apply node of a profiled function and what its runs cost.

    ``function`` is the function's name, ``index`` the node's position in
    ``f.maker.fgraph.toposort()``; ``op`` and ``apply`` are Theano's texts of the op and the node;
    ``class_name`` the op's class with its module; ``kind`` is ``"cpu"``, ``"gpu"`` or
    ``"transfer"``; ``impl`` is ``"C"`` (compiled) or ``"Py"`` (interpreted).
    """

    function: str
    index: int
    op: str
    apply: str
    class_name: str
    kind: str
    impl: str
    storage: tuple[str, ...]
    time: float = 0.0
    calls: int = 0
    outputs: list = field(default_factory=list)   # (shape, dtype, strides, bytes) per result
    inputs: list = field(default_factory=list)    # the same per operand, from the last call


@dataclass
class FunctionMemory:
    """What the memory model needs of one profiled function (refreshed after each call)."""

    function: str
    buffers: list[NodeBuffers]
    returned: tuple[int, ...]
    sizes: dict[int, int] = field(default_factory=dict)


class ProfileStats:
    """Times, counts and sizes of one or more profiled functions (Theano's ``ProfileStats``).

    Pass one to ``function(profile=stats)`` to gather several functions in it. With
    ``atexit_print`` (the default) it is printed at exit if it was used. ``message`` names it in
    the summary (by default, the first function's name).
    """

    def __init__(self, atexit_print: bool = True, message: str | None = None, trace=None):
        self.message = message
        self.compile_time = 0.0
        self.optimizer_time = 0.0
        self.linker_time = 0.0
        self.plan_compile_time = 0.0
        self.pass_times: dict[str, float] = {}
        self.fct_callcount = 0
        self.fct_call_time = 0.0
        self.vm_call_time = 0.0
        self.nodes: list[NodeStats] = []
        self.memory: list[FunctionMemory] = []
        self.allow_gc = True
        self.trace = _trace_wanted() if trace is None else bool(trace)
        # Trace records: ("call", pid, start, seconds, name) and ("node", pid, start, seconds,
        # NodeStats), perf_counter readings in seconds.
        self.events: list[tuple] = []
        self.processes: dict[int, str] = {}
        if atexit_print:
            _PROFILES.append(self)

    # -- filling ------------------------------------------------------------------------------

    def add_function(self, function: "ProfiledFunction", plan: NodePlan, compile_time: float,
                     pass_times: list[tuple[str, float]], linker_time: float) -> int:
        """Register a compiled function: its nodes (from ``function.maker.fgraph``), compile
        times and memory model. Returns the trace process id given to it."""
        from lowering.config import config
        name = function.name
        if self.message is None:
            self.message = name
        self.compile_time += compile_time
        self.optimizer_time += sum(seconds for _, seconds in pass_times)
        for pass_name, seconds in pass_times:
            self.pass_times[pass_name] = self.pass_times.get(pass_name, 0.0) + seconds
        self.linker_time += linker_time
        self.plan_compile_time += plan.compile_time
        self.allow_gc = config.allow_gc
        # A plan of its own (the GPU executor's host steps) has its own Apply views.
        applies = plan.applies() if hasattr(plan, "applies") else \
            function.maker.fgraph.toposort()
        if [a.ir_op for a in applies] != [n.ir_op for n in plan.nodes]:
            raise AssertionError("the profiling plan's nodes differ from the function's graph")
        first = len(self.nodes)
        patterns = function.maker.inplace_patterns
        for apply, planned in zip(applies, plan.nodes):
            self.nodes.append(_node_stats(name, apply, planned, patterns.get(apply.ir_op)))
        buffers = [NodeBuffers(_reads(p), tuple(p.result_slots),
                               result_storage(p.ir_op, patterns.get(p.ir_op)),
                               _device(self.nodes[first + k].kind))
                   for k, p in enumerate(plan.nodes)]
        self.memory.append(FunctionMemory(name, buffers, tuple(plan.return_slots)))
        pid = len(self.processes) + 1
        self.processes[pid] = name
        return pid

    # -- derived tables -----------------------------------------------------------------------

    @property
    def thunk_time(self) -> float:
        """Seconds spent in the nodes, over every call."""
        return sum(node.time for node in self.nodes)

    def by_class(self) -> list[tuple[str, float, int, int, str]]:
        """(class name, seconds, calls, applies, impl) per op class, slowest first."""
        return _grouped(self.nodes, lambda n: n.class_name)

    def by_op(self) -> list[tuple[str, float, int, int, str]]:
        """(op text, seconds, calls, applies, impl) per op, slowest first (Theano's Ops)."""
        return _grouped(self.nodes, lambda n: (n.class_name, n.op), label=lambda n: n.op)

    def time_by_kind(self) -> dict[str, float]:
        """Seconds in CPU ops, GPU ops and transfers."""
        totals = {"cpu": 0.0, "gpu": 0.0, "transfer": 0.0}
        for node in self.nodes:
            totals[node.kind] += node.time
        return totals

    def memory_peaks(self):
        """The largest peaks among this profile's functions (``profile.memory.MemoryPeaks``
        fields: ``current``, ``without_inplace``, ``without_gc``, each per device)."""
        from .profile.memory import MemoryPeaks
        best = MemoryPeaks({}, {}, {})
        for record in self.memory:
            peaks = memory_peaks(record.buffers, record.sizes, record.returned, self.allow_gc)
            for name in ("current", "without_inplace", "without_gc"):
                mine, theirs = getattr(best, name), getattr(peaks, name)
                for device, size in theirs.items():
                    mine[device] = max(mine.get(device, 0), size)
        return best

    # -- output -------------------------------------------------------------------------------

    def summary(self, file=None, n_ops_to_print: int | None = None,
                n_apply_to_print: int | None = None) -> None:
        """Print the profile in Theano's format to ``file`` (default: standard error)."""
        from lowering.config import config

        from .profile.report import write_summary
        write_summary(self, sys.stderr if file is None else file,
                      n_ops_to_print or config["profiling.n_ops"],
                      n_apply_to_print or config["profiling.n_apply"],
                      memory_nodes=config.profile_memory,
                      min_memory_size=config["profiling.min_memory_size"])

    def summary_text(self, **kwargs) -> str:
        """``summary()`` as a string."""
        out = io.StringIO()
        self.summary(file=out, **kwargs)
        return out.getvalue()

    def write_trace(self, path: str) -> None:
        """Write this profile's recorded runs as a Chrome trace (needs ``trace=True`` or the flag
        ``profiling.trace`` when the functions were profiled)."""
        write_trace(path, [self])

    @classmethod
    def merged(cls, profiles: list["ProfileStats"], message: str) -> "ProfileStats":
        """One profile holding every node, time and count of ``profiles`` (the summary at exit)."""
        total = cls(atexit_print=False, message=message, trace=False)
        for p in profiles:
            for attr in ("compile_time", "optimizer_time", "linker_time", "plan_compile_time",
                         "fct_callcount", "fct_call_time", "vm_call_time"):
                setattr(total, attr, getattr(total, attr) + getattr(p, attr))
            for pass_name, seconds in p.pass_times.items():
                total.pass_times[pass_name] = total.pass_times.get(pass_name, 0.0) + seconds
            total.nodes.extend(p.nodes)
            total.memory.extend(p.memory)
            total.allow_gc = p.allow_gc
        return total

    def __repr__(self):
        return (f"<ProfileStats {self.message!r}: {self.fct_callcount} calls, "
                f"{len(self.nodes)} nodes>")


def _trace_wanted() -> bool:
    from lowering.config import config
    return bool(config["profiling.trace"])


def _grouped(nodes, key, label=None):
    label = label or key
    groups: dict = {}
    for node in nodes:
        k = key(node)
        entry = groups.setdefault(k, [label(node), 0.0, 0, 0, set()])
        entry[1] += node.time
        entry[2] += node.calls
        entry[3] += 1
        entry[4].add(node.impl)
    rows = [(name, seconds, calls, applies, "".join(sorted(impls, key=("C", "Py").index)))
            for name, seconds, calls, applies, impls in groups.values()]
    rows.sort(key=lambda row: row[1], reverse=True)
    return rows


def _class_name(apply) -> str:
    """The op class with its module (``lowering.frontend.theano_ops.Elemwise``); for an op shown
    by its IR name (no Theano counterpart), the IR op's class."""
    cls = type(apply.op)
    if str(apply.op) == apply.ir_op.name:
        cls = type(apply.ir_op)
    return f"{cls.__module__}.{cls.__qualname__}"


def node_kind(op_class: str, ir_name: str) -> str:
    """``"transfer"`` for host/GPU copies, ``"gpu"`` for GPU ops, else ``"cpu"``.

    >>> node_kind("x.HostFromGpu", "gpu.to_host"), node_kind("x.GpuElemwise", "tensor.exp")
    ('transfer', 'gpu')
    >>> node_kind("x.Elemwise", "tensor.exp")
    'cpu'
    """
    short = op_class.rsplit(".", 1)[-1]
    if short in ("GpuFromHost", "HostFromGpu") or ir_name in ("gpu.to_device", "gpu.to_host"):
        return "transfer"
    if short.startswith("Gpu") or ir_name.startswith("gpu."):
        return "gpu"
    return "cpu"


def _device(kind: str) -> str:
    return "cpu" if kind == "cpu" else "gpu"


def _node_stats(function: str, apply, planned: PlannedNode, pattern) -> NodeStats:
    class_name = _class_name(apply)
    storage = tuple(storage_code(s) for s in result_storage(apply.ir_op, pattern))
    return NodeStats(function, planned.index, str(apply.op), str(apply), class_name,
                     node_kind(class_name, apply.ir_op.name), planned.impl, storage)


def _reads(node: PlannedNode) -> tuple[int, ...]:
    """The slots a node reads: its operands in order (so that the memory model's operand
    numbers index them), then any other value its regions read."""
    extra = [s for s in node.argument_slots if s not in node.operand_slots]
    return tuple(node.operand_slots) + tuple(extra)


# ---------------------------------------------------------------------------------------------
# The profiled Function


class ProfiledExecutor:
    """Stands for a profiled function's executor: runs its plan and records every node."""

    def __init__(self, plan: NodePlan, stats: ProfileStats, first_node: int, pid: int,
                 memory: FunctionMemory):
        self.plan = plan
        self.stats = stats
        self.node_stats = stats.nodes[first_node:first_node + len(plan.nodes)]
        self.pid = pid
        self.memory = memory
        if hasattr(plan, "raw_run"):  # a plan taking the arguments as a direct call does
            self.raw_call = self._raw_call

    def _on_node(self):
        stats, node_stats = self.stats, self.node_stats
        events = stats.events if stats.trace else None
        pid = self.pid

        def on_node(node: PlannedNode, start: float, seconds: float) -> None:
            record = node_stats[node.index]
            record.time += seconds
            record.calls += 1
            if events is not None:
                events.append(("node", pid, start, seconds, record))
        return on_node

    def __call__(self, values: list) -> list:
        start = time.perf_counter()
        results, _ = self.plan.run(values, self._on_node())
        self.stats.vm_call_time += time.perf_counter() - start
        self._record_sizes()
        return results

    def _raw_call(self, *args):
        start = time.perf_counter()
        results = self.plan.raw_run(args, self._on_node())
        self.stats.vm_call_time += time.perf_counter() - start
        if type(results) is list:
            self._record_sizes()
        return results

    def recover(self, values, code: int, names=None) -> list:
        """Finish a direct call that needed the arguments checked (see ``Function._recover``)."""
        start = time.perf_counter()
        results = self.plan.recover(values, code, names, self._on_node())
        self.stats.vm_call_time += time.perf_counter() - start
        self._record_sizes()
        return results

    def _record_sizes(self) -> None:
        plan, sizes = self.plan, self.memory.sizes
        for node, record in zip(plan.nodes, self.node_stats):
            described = plan.last_outputs[node.index]
            record.outputs = described
            for slot, (_, _, _, nbytes) in zip(node.result_slots, described):
                sizes[slot] = nbytes
            record.inputs = [plan.describe_slot(s) for s in node.operand_slots]


class ProfiledFunction(Function):
    """A ``Function`` whose calls run its per-node plan and fill ``self.profile``
    (a ``ProfileStats``). ``function(..., profile=True)`` makes one."""

    def __init__(self, built, inputs, outputs, single, mode, executor, name, states=None, *,
                 profile=True, compile_started: float | None = None, **kwargs):
        started = time.perf_counter() if compile_started is None else compile_started
        self._pass_timing = PassTiming()
        init_started = time.perf_counter()
        super().__init__(built, inputs, outputs, single, mode, executor, name, states, **kwargs)
        init_time = time.perf_counter() - init_started
        compile_time = time.perf_counter() - started
        stats = profile if isinstance(profile, ProfileStats) else ProfileStats()
        factory = InterpreterExecutor if self.executor_name == "checking" else executor[1]
        own_plan = getattr(self._execute, "profile_plan", None)  # the GPU executor's steps
        plan = own_plan() if own_plan is not None else NodePlan(self._module, factory)
        pass_times = list(self._pass_timing.records)
        first = len(stats.nodes)
        pid = stats.add_function(self, plan, compile_time, pass_times,
                                 init_time - sum(s for _, s in pass_times))
        self.profile = stats
        self.plan = plan
        self._normal_execute = self._execute
        self._execute = ProfiledExecutor(plan, stats, first, pid, stats.memory[-1])
        # Every call goes through the plan (directly, when the plan takes the raw arguments).
        self._direct = getattr(self._execute, "raw_call", None)
        self._prepare_locks()  # (the plan's executor is not reentrant: it fills the stats)
        self._pid = pid

    def _pass_instrumentations(self) -> list:
        return [self._pass_timing]

    def __call__(self, *args, **kwargs):
        stats = self.profile
        start = time.perf_counter()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            stats.fct_callcount += 1
            stats.fct_call_time += seconds
            if stats.trace:
                stats.events.append(("call", self._pid, start, seconds, self.name))

    def __repr__(self):
        return f"<Function {self.name} ({self.mode.name} on {self.executor_name}, profiled)>"


# ---------------------------------------------------------------------------------------------
# Every profile: on demand and at exit


Function.profiled_class = ProfiledFunction  # what Function.copy(profile=True) makes


def profiles() -> list[ProfileStats]:
    """The profiles printed at exit (every ``ProfileStats`` made with ``atexit_print=True``)."""
    return list(_PROFILES)


def print_summary(file=None, profiles_to_print: list[ProfileStats] | None = None) -> int:
    """Print every used profile, then their sum when there are several ("Sum of all(N) printed
    profiles at exit"). Returns how many were printed."""
    chosen = [p for p in (_PROFILES if profiles_to_print is None else profiles_to_print)
              if p.fct_callcount or p.compile_time > 0]
    for p in chosen:
        p.summary(file=file)
    if len(chosen) > 1:
        total = ProfileStats.merged(chosen, f"Sum of all({len(chosen)}) printed profiles at exit")
        total.summary(file=file)
    return len(chosen)


def write_trace(path: str, profiles_to_write: list[ProfileStats] | None = None) -> None:
    """Write the recorded runs of ``profiles_to_write`` (default: every profile) as one Chrome
    trace file."""
    from .profile.trace import write_chrome_trace
    write_chrome_trace(path, _PROFILES if profiles_to_write is None else profiles_to_write)


def _at_exit() -> None:
    from lowering.config import config
    if not _PROFILES:
        return
    destination = config["profiling.destination"]
    if destination in ("stderr", "stdout"):
        print_summary(file=getattr(sys, destination))
    else:
        with open(destination, "w", encoding="utf-8") as out:
            print_summary(file=out)
    trace_path = config["profiling.trace"]
    if trace_path:
        write_trace(trace_path)


atexit.register(_at_exit)
