"""``function()``: compile a graph into a callable ``Function``.

Everything is decided when the function is built (the module, the optimizations, the executor,
the argument checks, which results need copying), so that a call only checks its arguments,
runs the executor, and commits the shared variables' new values.

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> x = Block([TensorType((None,), F64)]).args[0]; x.name_hint = "x"
>>> f = function([x], x, mode="INTERP")
>>> f([1, 2])
array([1., 2.])
"""
from __future__ import annotations

import contextlib
import threading
import time
import warnings

import numpy as np

from lowering.dialects.function_attrs import ARG_DEVICES, MUTABLE_ARGS, RESULT_DEVICES
from lowering.ir.core import Value
from lowering.llvm.cuda_runtime import CudaUnavailableError

from . import cpu_executor, gpu_executor, interpreter_executor  # noqa: F401  (executors)
from .cpu_executor import writable_contiguous
from .fgraph import FunctionGraph
from .graph_to_module import (BuiltModule, MissingInputError, UnusedInputError, build_module,
                              check_update_type, value_label)
from .io import In, Out, graph_value, variable_name
from .pass_check import CheckingExecutor, SnapshotPasses
from .graph_cache import optimize_with_cache
from .gpu_placement import gpu_device_flag, mark_placement
from .pipeline import Mode, choose_executor, get_mode, stage_producer
from .shared_storage import SharedContainer, lock_rank, shared_container
from .values import filter_value

__all__ = ["function", "Function", "FunctionMaker", "MissingInputError", "UnusedInputError"]


def function(inputs=(), outputs=None, mode=None, updates=None, givens=None,
             no_default_updates=False, accept_inplace=False, name=None, rebuild_strict=True,
             allow_input_downcast=None, profile=None, on_unused_input=None,
             trust_input=False) -> "Function":
    """Compile ``outputs`` as a function of ``inputs`` (Theano's ``theano.function``).

    - ``inputs``: variables or ``In`` objects, in call order. ``outputs``: a variable or ``Out``
      (the call returns one array), a list of them (it returns a list), or None (it returns []).
    - ``updates``: pairs or a dict ``shared_variable: new_value_expression``; new values are
      computed from the old ones and stored together after the call succeeded.
    - ``givens``: pairs or a dict ``variable: replacement`` substituted while building (the
      user's graph and shared values are not changed).
    - ``no_default_updates``: ignore shared variables' ``default_update``.
    - ``mode``: ``"FAST_RUN"``, ``"FAST_COMPILE"``, ``"INTERP"`` or a ``Mode``; None reads
      ``config.mode``.
    - ``allow_input_downcast``: cast inputs to their dtype even if precision is lost.
    - ``on_unused_input``: ``"raise"``, ``"warn"`` or ``"ignore"`` for inputs nothing needs
      (None reads ``config.on_unused_input``).
    - ``trust_input``: skip the checks of call arguments (they must already be arrays of the
      right dtype and rank).
    - ``accept_inplace`` and ``rebuild_strict`` are accepted for Theano compatibility: graphs
      hold no in-place ops before compilation, and givens must keep the replaced types.
    - ``profile``: True (or a ``profiling.ProfileStats`` to gather several functions in) times
      every node of each call and prints Theano's profile at exit (``f.profile``); None reads
      ``config.profile``; mode ``ProfileMode`` profiles too. See ``lowering.compile.profiling``.
    """
    started = time.perf_counter()
    from lowering.config import config
    on_unused_input = on_unused_input or config.on_unused_input
    if on_unused_input not in ("raise", "warn", "ignore"):
        raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', "
                         f"got {on_unused_input!r}")
    name = name or "function"
    specs = _input_specs(inputs)
    single, out_specs = _output_specs(outputs)
    states = {pos: SharedContainer(spec.value, graph_value(spec.variable).type, spec.name)
              for pos, spec in enumerate(specs) if spec.update is not None}
    pairs = _update_pairs(updates) + _input_state_updates(specs, states)
    replacements = _givens(givens)
    input_values = [graph_value(s.variable) for s in specs]
    built = build_module(input_values, [graph_value(o.variable) for o in out_specs], pairs,
                         replacements, name, default_updates=not no_default_updates)
    _check_unused(built, specs, on_unused_input)
    _mark_mutable_inputs(built, specs)
    if gpu_device_flag() or _names_gpu_contexts(built, specs, out_specs):
        mark_placement(built, specs, out_specs)  # where arguments and results live
    mode = get_mode(mode)
    executor = _executor_for_python_ops(built, _executor_for_contexts(built,
                                                                      choose_executor(mode)))
    _check_output_targets(out_specs, executor[0])
    options = dict(allow_input_downcast=allow_input_downcast, trust_input=trust_input,
                   floatx=config.floatX)
    if profile is None:
        profile = config.profile or mode.name == "ProfileMode"
    if profile:
        from .profiling import ProfiledFunction
        return ProfiledFunction(built, specs, out_specs, single, mode, executor, name, states,
                                profile=profile, compile_started=started, **options)
    return Function(built, specs, out_specs, single, mode, executor, name, states, **options)


# ---------------------------------------------------------------------------------------------
# Normalizing the arguments of function()


def _input_specs(inputs) -> list[In]:
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"function() inputs must be a list of variables or In objects, got "
                        f"{type(inputs).__name__}")
    specs = [i if isinstance(i, In) else In(_symbolic(i, f"input #{pos}"))
             for pos, i in enumerate(inputs)]
    seen: dict[Value, int] = {}
    for pos, spec in enumerate(specs):
        value = graph_value(spec.variable, f"input #{pos}")
        container = shared_container(value)
        if container is not None:
            raise TypeError(f"input #{pos} {value_label(value)} is a shared variable; shared "
                            f"variables are read implicitly and cannot be explicit inputs (to "
                            f"replace it in this function, use givens)")
        if value in seen:
            raise ValueError(f"input {value_label(value)} is given twice (positions "
                             f"{seen[value]} and {pos})")
        seen[value] = pos
    names = [s.name for s in specs if s.name]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        warnings.warn(f"several inputs are named {', '.join(dup)}; pass them by position",
                      stacklevel=3)
    return specs


def _output_specs(outputs) -> tuple[bool, list[Out]]:
    if outputs is None:
        return False, []
    single = not isinstance(outputs, (list, tuple))
    items = [outputs] if single else list(outputs)
    return single, [o if isinstance(o, Out) else Out(_symbolic(o, f"output #{pos}"))
                    for pos, o in enumerate(items)]


def _symbolic(variable, what: str):
    """``variable`` itself, after checking that it is symbolic (the error names ``what``)."""
    graph_value(variable, what)
    return variable


def _as_pairs(mapping, what: str) -> list[tuple]:
    if mapping is None:
        return []
    if isinstance(mapping, dict):
        return list(mapping.items())
    try:
        pairs = [tuple(p) for p in mapping]
    except TypeError:
        raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs") from None
    if any(len(p) != 2 for p in pairs):
        raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs")
    return pairs


def _constant_like(data, target: Value, what: str) -> Value:
    """A ``tensor.constant`` of ``target``'s type holding ``data`` (numbers in updates/givens)."""
    from lowering.dialects.tensor import ConstantOp
    array = filter_value(data, target.type, what)
    return ConstantOp.build(array, type=target.type).result


def _update_pairs(updates) -> list[tuple[SharedContainer, Value]]:
    pairs: list[tuple[SharedContainer, Value]] = []
    targets: set[int] = set()
    for key, new in _as_pairs(updates, "updates"):
        target = graph_value(key, "an update target")
        container = shared_container(target)
        label = variable_name(key) or str(target.type)
        if container is None:
            raise TypeError(f"updates: {value_label(target)} is not a shared variable; only "
                            f"shared variables can be updated")
        if id(container) in targets:
            raise ValueError(f"updates: shared variable '{label}' is updated twice")
        targets.add(id(container))
        new_value = (graph_value(new) if _is_symbolic(new)
                     else _constant_like(new, target, f"the update of '{label}'"))
        check_update_type(target, new_value, label)
        pairs.append((container, new_value))
    return pairs


def _input_state_updates(specs: list[In], states: dict[int, SharedContainer]) -> list[tuple]:
    """``In(x, value=v, update=expr)``: the default of ``x`` is state of the function, and each
    call stores ``expr`` there (like an update of a shared variable private to the function)."""
    pairs = []
    for pos, state in states.items():
        spec = specs[pos]
        value = graph_value(spec.variable)
        new_value = (graph_value(spec.update) if _is_symbolic(spec.update)
                     else _constant_like(spec.update, value, f"the update of '{spec.name}'"))
        check_update_type(value, new_value, spec.name or f"input #{pos}")
        pairs.append((state, new_value))
    return pairs


def _givens(givens) -> dict[Value, Value]:
    out: dict[Value, Value] = {}
    for key, replacement in _as_pairs(givens, "givens"):
        old = graph_value(key, "a givens key")
        new = (graph_value(replacement) if _is_symbolic(replacement)
               else _constant_like(replacement, old, f"the givens value for {value_label(old)}"))
        want, got = old.type, new.type
        if want.element != got.element or len(want.shape) != len(got.shape) or not all(
                w is None or w == g for w, g in zip(want.shape, got.shape)):
            raise TypeError(f"givens: {value_label(old)} cannot be replaced by a value of type "
                            f"{got}; the replacement must have the type {want}")
        if old in out:
            raise ValueError(f"givens: {value_label(old)} is replaced twice")
        out[old] = new
    return out


def _is_symbolic(obj) -> bool:
    return isinstance(obj, Value) or isinstance(getattr(obj, "value", None), Value)


def _check_unused(built: BuiltModule, specs: list[In], policy: str) -> None:
    for pos in built.unused_inputs():
        if policy == "ignore":
            continue
        label = value_label(graph_value(specs[pos].variable))
        message = (f"input #{pos} {label} is not needed to compute the outputs or updates; "
                   f"remove it, or pass on_unused_input='warn' or 'ignore' to function()")
        if policy == "raise":
            raise UnusedInputError(message)
        warnings.warn(message, stacklevel=3)


def _mark_mutable_inputs(built: BuiltModule, specs: list[In]) -> None:
    """``In(x, mutable=True)`` (without a default, which later calls still need): the function may
    overwrite the caller's array, which the ``lowering.mutable_args`` attribute tells the
    compiler."""
    mutable = [pos for pos, spec in enumerate(specs) if spec.mutable and not spec.has_default]
    if mutable:
        MUTABLE_ARGS.set(built.func, mutable)


def _executor_for_python_ops(built: BuiltModule, executor: tuple) -> tuple:
    """A function holding ops written in Python (``tensor.custom``, from ``lowering.Op``
    subclasses) runs in the interpreter instead of on the CPU backend, which compiles no Python
    code; the GPU executor runs them as host steps."""
    from .pipeline import EXECUTORS
    if executor[0] == "cpu" and any(op.name == "tensor.custom"
                                    for op in built.func.body.block.ops):
        return "interpreter", EXECUTORS["interpreter"]
    return executor


class GpuOutputError(CudaUnavailableError, ValueError):
    """An output asked to stay on a GPU where no GPU can run the function (the message says
    what is missing and how to get it)."""


def _check_output_targets(out_specs: list[Out], executor: str) -> None:
    """Outputs asked to stay on a GPU (``x.transfer(None)``) need the GPU executor: returning
    host arrays instead would hide that the request was not met."""
    for pos, spec in enumerate(out_specs):
        target = getattr(spec.variable, "target", "cpu")
        if target != "cpu" and executor != "gpu":
            raise GpuOutputError(f"output #{pos} ({spec.variable}) is asked to stay on the GPU "
                                 f"(target {target!r}), but this function runs on the "
                                 f"{executor} executor: {_gpu_unusable_reason()}")


def _names_gpu_contexts(built: BuiltModule, inputs: list[In], outputs: list[Out]) -> bool:
    """Whether an input, output or shared variable asks for a GPU context by itself (``x.
    transfer('dev0')``, ``shared(..., target='dev1')``), whatever the device flag says."""
    variables = [s.variable for s in inputs] + [o.variable for o in outputs]
    return any(getattr(c, "target", "cpu") != "cpu" for c in built.shared) or \
        any(getattr(v, "target", "cpu") != "cpu" for v in variables)


def _executor_for_contexts(built: BuiltModule, executor: tuple) -> tuple:
    """The GPU executor for a function whose arguments or results live on a GPU context
    (``lowering.arg_devices``/``lowering.result_devices``), when it can run; else ``executor``."""
    from .pipeline import EXECUTORS
    places = ARG_DEVICES.get(built.func, []) + RESULT_DEVICES.get(built.func, [])
    if executor[0] == "gpu" or all(p == "cpu" for p in places) or \
            _gpu_unusable_reason() is not None:
        return executor
    return "gpu", EXECUTORS["gpu"]


def _gpu_unusable_reason() -> str | None:
    """None when the GPU executor can run here, else what is missing and how to get it."""
    from .gpu_device import gpu_missing
    from .pipeline import EXECUTORS
    if "gpu" not in EXECUTORS:
        return "the GPU backend is not available in this installation"
    return gpu_missing()


# ---------------------------------------------------------------------------------------------
# The compiled function


class FunctionMaker:
    """What a Function was made from (Theano's ``f.maker``): ``fgraph`` (the final IR as
    Theano-style nodes), ``inputs`` (In), ``outputs`` (Out) and ``mode``."""

    def __init__(self, func, inputs: list[In], outputs: list[Out], mode: Mode,
                 inplace_patterns: dict | None = None):
        self._func = func
        self._fgraph = None
        self.inputs = inputs
        self.outputs = outputs
        self.mode = mode
        # {op: {result: operand}}: results the compiled code computes in an operand's memory
        self.inplace_patterns = inplace_patterns or {}

    @property
    def fgraph(self) -> FunctionGraph:
        if self._fgraph is None:
            self._fgraph = FunctionGraph(self._func, self.inplace_patterns)
        return self._fgraph


class Function:
    """A compiled function. Call it with the inputs' values (by position or by input name).

    ``ir(stage)`` gives the IR text at a stage, ``ir_module(stage)`` a copy of the module;
    ``maker.fgraph.toposort()`` lists the final ops; ``trust_input`` may be set at any time.
    ``profile`` is the function's ``ProfileStats`` when it is profiled, else None.
    """

    profile = None

    def __init__(self, built: BuiltModule, inputs: list[In], outputs: list[Out], single: bool,
                 mode: Mode, executor: tuple, name: str,
                 states: dict[int, SharedContainer] | None = None,
                 allow_input_downcast=None, trust_input=False, floatx="float64"):
        self.name = name
        self.mode = mode
        self.trust_input = trust_input
        # What ``pickle`` keeps to build the function again (see ``__reduce__``).
        self._recipe = dict(executor=executor[0], single=single,
                            allow_input_downcast=allow_input_downcast, floatx=floatx)
        self._tensor_module = built.module.clone()
        snapshots = SnapshotPasses() if mode.check_passes else None
        # From the disk cache when this module went through these optimizations before.
        built.module, self.pipeline, self.missing_optimizations = optimize_with_cache(
            built.module, mode, ([snapshots] if snapshots else []) + self._pass_instrumentations())
        self._module = built.module
        func = built.module.regions[0].block.first_op
        if snapshots is not None:
            self.executor_name = "checking"
            self._execute = CheckingExecutor([("tensor", self._tensor_module)]
                                             + snapshots.snapshots)
        else:
            self.executor_name, factory = executor
            self._execute = factory(built.module)
        # An executor with ``raw_call`` checks its own arguments and returns fresh arrays (or an
        # int code that its ``recover`` turns into results or an exception): calls go to it
        # directly.
        self._direct = getattr(self._execute, "raw_call", None)
        self.maker = FunctionMaker(func, inputs, outputs, mode, _patterns_by_op(
            func, getattr(self._execute, "inplace_patterns", ())))
        self._stages: dict[str, object] = {}
        self._prepare_calls(built, func, inputs, outputs, single, states or {},
                            allow_input_downcast, floatx)
        self._prepare_writes_in_place(func, getattr(self._execute, "updated_in_place", ()))
        self._prepare_locks()

    def _prepare_writes_in_place(self, func, updated):
        """What a call does for arguments the compiled code writes into: shared variables
        updated in place (their arrays must be C-contiguous and writable, and must not share
        memory with another argument) and mutable inputs."""
        n = self._num_inputs
        in_place = {r for r, _ in updated}
        self._returned_targets = [c for k, c in enumerate(self._targets)
                                  if self._num_outputs + k not in in_place]
        dtypes = [a.type.dtype for a in func.regions[0].block.args]
        self._written_shared = [(self._shared[a - n], np.dtype(dtypes[a])) for _, a in updated]
        self._mutable_inputs = [(i, np.dtype(dtypes[i])) for i in MUTABLE_ARGS.get(func, [])]
        self._checked_shared = None  # the shared arrays last found not to overlap

    def _prepare_locks(self) -> None:
        """The locks a call holds, in their global order (see ``shared_storage.lock_rank``):
        those of the shared variables it reads or updates, so that calls touching one variable
        (of this function or another) run one after the other, and the executor's when its
        calls may not overlap (code keeping a workspace between calls; an executor that does
        not say it is reentrant gets a lock of its own). Usually one lock, or none for a
        function without state on a reentrant executor (its calls then run in parallel)."""
        ranked = {id(c): (c.lock_rank, c.lock) for c in (*self._shared, *self._targets,
                                                          *self._states)}
        executor_lock = getattr(self._execute, "call_lock", _OWN_LOCK)
        if executor_lock is _OWN_LOCK:
            executor_lock = (lock_rank(), threading.RLock())
        if executor_lock is not None:
            ranked[id(executor_lock)] = executor_lock
        self._locks = tuple(lock for _, lock in sorted(ranked.values(), key=lambda p: p[0]))

    def _pass_instrumentations(self) -> list:
        """Instrumentations of the optimization passes (a profiled function times them)."""
        return []

    # -- preparing the call path ---------------------------------------------------------------

    def _prepare_calls(self, built, func, inputs, outputs, single, states, allow_input_downcast,
                       floatx):
        self._num_inputs = len(inputs)
        self._single = single
        self._num_outputs = len(outputs)
        self._states = list(states.values())
        self._shared = list(built.shared)
        self._targets = list(built.update_targets)
        self._input_names = {s.name: i for i, s in enumerate(inputs) if s.name}
        arg_types = [a.type for a in func.regions[0].block.args]
        self._labels = [_input_label(pos, spec, self.name) for pos, spec in enumerate(inputs)]
        self._argument_names = [spec.name or f"#{pos}" for pos, spec in enumerate(inputs)] + [
            container.name or f"shared #{k}" for k, container in enumerate(self._shared)]
        downcasts = [allow_input_downcast if s.allow_downcast is None else s.allow_downcast
                     for s in inputs]
        self._checks = [_input_check(t, label, spec.strict, downcast, floatx)
                        for t, label, spec, downcast in zip(arg_types, self._labels, inputs,
                                                            downcasts)]
        # Defaults: a state container (In with update), a checked array, or None (required).
        self._defaults = [states[pos] if pos in states
                          else self._checks[pos](spec.value) if spec.has_default else None
                          for pos, spec in enumerate(inputs)]
        returned = list(func.regions[0].block.last_op.operands)
        args = set(func.regions[0].block.args)
        result_types = [v.type for v in returned]
        self._result_dtypes = [t.dtype for t in result_types]
        # Results that must be copied before they leave: ones that are an argument or another
        # result (statically known), unless the output is borrowed. Views are found at run time.
        borrow = [o.borrow for o in outputs] + [False] * len(self._targets)
        self._always_copy = {i for i, v in enumerate(returned)
                             if not borrow[i] and (v in args or returned.index(v) != i)}
        self._borrow = borrow

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        locks = self._locks
        if not locks:  # no state, reentrant code: calls run in parallel
            return self._call(args, kwargs)
        if len(locks) == 1:  # the usual case: one shared variable, or code with a workspace
            with locks[0]:
                return self._call(args, kwargs)
        with contextlib.ExitStack() as held:
            for lock in locks:
                held.enter_context(lock)
            return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict):
        if kwargs or len(args) != self._num_inputs:
            args = self._bind(args, kwargs)
        direct = self._direct
        if direct is not None:
            if self._written_shared or self._mutable_inputs:
                args = self._ready_for_writes(args)
            shared = self._shared
            results = direct(*args, *[c.value for c in shared]) if shared else direct(*args)
            if type(results) is not list:
                results = self._recover(args, results)
            if self._returned_targets:
                for container, value in zip(self._returned_targets,
                                            results[self._num_outputs:]):
                    container.value = value
            return results[0] if self._single else results[:self._num_outputs]
        if self.trust_input:
            values = list(args)
        else:
            values = [check(a) for check, a in zip(self._checks, args)]
        for container in self._shared:
            values.append(container.value)
        results = self._execute(values)
        results = self._own_results(results, values)
        outputs = results[:self._num_outputs]
        for container, value in zip(self._targets, results[self._num_outputs:]):
            container.value = value
        return outputs[0] if self._single else outputs

    def _ready_for_writes(self, args) -> list:
        """Make the arrays the code writes into fit for it: a shared variable updated in place
        holds a C-contiguous writable array that overlaps no other argument (else it gets a
        copy); a mutable input that does not fit, or overlaps another argument, is replaced by
        a copy for this call (the caller's array is then left alone). The shared arrays are
        checked again only when one of them is another object than at the last call."""
        checked = self._checked_shared
        if checked is None or any(c.value is not v for c, v in zip(self._shared, checked)):
            self._check_shared_values()
        if not args:
            return args
        args = list(args)
        if self.trust_input:  # (arguments are arrays of their dtypes: only the layout is fixed)
            for pos, dtype in self._mutable_inputs:
                args[pos] = writable_contiguous(args[pos], dtype)
            return args
        for container, _ in self._written_shared:
            if any(type(a) is np.ndarray and np.may_share_memory(a, container.value)
                   for a in args):
                container.value = container.value.copy()
                self._checked_shared = None
        for pos, dtype in self._mutable_inputs:
            if type(args[pos]) is not np.ndarray or args[pos].dtype is not dtype:
                continue  # converted on its way in: the code writes into the conversion
            value = writable_contiguous(args[pos], dtype)
            others = [a for k, a in enumerate(args) if k != pos] + \
                [c.value for c in self._shared]
            if any(type(o) is np.ndarray and np.may_share_memory(value, o) for o in others):
                value = value.copy()
            args[pos] = value
        return args

    def _check_shared_values(self) -> None:
        """Give each shared variable updated in place a C-contiguous writable array of its
        own (copying one that overlaps another shared variable's)."""
        for container, dtype in self._written_shared:
            container.value = writable_contiguous(container.value, dtype)
            if not self.trust_input and any(
                    c is not container and np.may_share_memory(container.value, c.value)
                    for c in self._shared):
                container.value = container.value.copy()
        self._checked_shared = [c.value for c in self._shared]

    def _recover(self, args, code) -> list:
        """A direct call that returned ``code``: check the arguments as a call of the other
        executors does (a wrong dtype, rank or static size gets its error naming the input),
        then let the executor finish (convert what it could not read, or raise the error)."""
        from .gpu_arrays import is_device_array
        # A device array is the GPU executor's to check (dtype and rank, without a copy).
        values = list(args) if self.trust_input else \
            [a if is_device_array(a) else check(a) for check, a in zip(self._checks, args)]
        values.extend(container.value for container in self._shared)
        return self._execute.recover(values, code, self._argument_names)

    def _own_results(self, results: list, args: list) -> list:
        """Results as ndarrays of their types, copied where they would alias an argument, a
        shared value or another result (unless borrowed)."""
        borrow, always, dtypes = self._borrow, self._always_copy, self._result_dtypes
        out = []
        for i, r in enumerate(results):
            if type(r) is not np.ndarray:
                r = np.asarray(r, dtype=dtypes[i])  # NumPy scalars from rank-0 results
            elif not borrow[i] and (i in always or r.base is not None or _among(r, args)
                                    or _among(r, out)):
                r = r.copy()
            out.append(r)
        return out

    def _bind(self, args: tuple, kwargs: dict) -> list:
        """Positional and keyword arguments in input order, defaults filled in."""
        n = self._num_inputs
        if len(args) > n:
            raise TypeError(f"function '{self.name}' takes {n} input(s), got {len(args)}")
        values = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            pos = self._input_names.get(key)
            if pos is None:
                known = ", ".join(self._input_names) or "none"
                raise TypeError(f"function '{self.name}' has no input named {key!r} (named "
                                f"inputs: {known})")
            if values[pos] is not _MISSING:
                raise TypeError(f"function '{self.name}': input {key!r} is given twice")
            values[pos] = value
        for pos, value in enumerate(values):
            if value is _MISSING:
                default = self._defaults[pos]
                if default is None:
                    raise TypeError(f"missing {self._labels[pos]}")
                values[pos] = default.value if isinstance(default, SharedContainer) else default
        return values

    # -- pickling -----------------------------------------------------------------------------

    def __reduce__(self):
        """A function pickles as its tensor-level module (text, with the user's locations), its
        inputs' and outputs' options and its shared variables' containers; unpickling builds it
        again (through the disk cache). Functions pickled together keep sharing the containers
        they shared. A profiled function comes back unprofiled.

        >>> import pickle
        >>> from lowering.ir.core import Block
        >>> from lowering.ir.types import F64, TensorType
        >>> x = Block([TensorType((None,), F64)]).args[0]; x.name_hint = "x"
        >>> pickle.loads(pickle.dumps(function([x], x, mode="INTERP")))([3])
        array([3.])
        """
        from lowering.ir.printer import print_op
        inputs = [dict(name=spec.name, value=spec.value, mutable=spec.mutable,
                       strict=spec.strict, allow_downcast=spec.allow_downcast)
                  for spec in self.maker.inputs]
        states = {pos: default for pos, default in enumerate(self._defaults)
                  if isinstance(default, SharedContainer)}
        return _restore_function, (dict(
            self._recipe, module=print_op(self._tensor_module, print_locations=True),
            name=self.name, mode=self.mode, trust_input=self.trust_input, inputs=inputs,
            borrow=[o.borrow for o in self.maker.outputs], shared=self._shared,
            targets=self._targets, states=states),)

    # -- looking inside ----------------------------------------------------------------------

    def ir(self, stage: str = "tensor", locations: bool = False) -> str:
        """The IR at ``stage`` as text: ``"tensor"`` (as built), ``"optimized"`` (after the
        mode's graph optimizations), or a later stage once its backend is available;
        ``locations`` adds each op's ``loc(...)`` (the user's lines)."""
        result = self._stage(stage)
        if isinstance(result, str):
            return result
        from lowering.ir.printer import print_op
        return print_op(result, print_locations=locations)

    def ir_module(self, stage: str = "tensor"):
        """A copy of the module at an IR stage (what ``lowering-opt file.py:name`` starts from)."""
        result = self._stage(stage)
        if isinstance(result, str):
            raise ValueError(f"stage {stage!r} is text, not IR; use Function.ir({stage!r})")
        return result.clone()

    def _stage(self, stage: str):
        if stage == "tensor":
            return self._tensor_module
        if stage == "optimized":
            return self._module
        if stage not in self._stages:
            source, produce = stage_producer(stage)
            self._stages[stage] = produce(self.ir_module(source))
        return self._stages[stage]

    def __repr__(self):
        return f"<Function {self.name} ({self.mode.name} on {self.executor_name})>"


def _restore_function(recipe: dict) -> Function:
    """The function ``Function.__reduce__`` described, built again."""
    import lowering.dialects  # noqa: F401  (registers the ops the parser reads)
    from lowering.ir.parser import parse_module
    from .pipeline import EXECUTORS
    module = parse_module(recipe["module"])
    func = module.regions[0].block.first_op
    args = func.regions[0].block.args
    inputs = [In(args[pos], **options) for pos, options in enumerate(recipe["inputs"])]
    outputs = [Out(v, borrow=b) for v, b in zip(func.regions[0].block.last_op.operands,
                                                recipe["borrow"])]
    built = BuiltModule(module, func, len(inputs), list(recipe["shared"]),
                        list(recipe["targets"]), len(outputs))
    name = recipe["executor"]
    executor = (name, EXECUTORS[name]) if name in EXECUTORS else choose_executor(recipe["mode"])
    return Function(built, inputs, outputs, recipe["single"], recipe["mode"], executor,
                    recipe["name"], recipe["states"], trust_input=recipe["trust_input"],
                    allow_input_downcast=recipe["allow_input_downcast"],
                    floatx=recipe["floatx"])


_MISSING = object()
_OWN_LOCK = object()  # an executor without ``call_lock``: calls of the function get a lock


def _patterns_by_op(func, patterns) -> dict:
    """``{op: {result: operand}}`` from ``(op position, result, operand)`` triples."""
    ops = list(func.regions[0].block.ops)
    found: dict = {}
    for position, result, operand in patterns:
        found.setdefault(ops[position], {})[result] = operand
    return found


def _among(array, arrays) -> bool:
    """Whether ``array`` is one of ``arrays`` (by identity)."""
    for other in arrays:
        if array is other:
            return True
    return False


def _input_label(pos: int, spec: In, fname: str) -> str:
    label = f"'{spec.name}' (#{pos})" if spec.name else f"#{pos}"
    return f"input {label} of function '{fname}'"


def _input_check(ttype, label: str, strict: bool, allow_downcast, floatx):
    """A checker for one argument: the fast path accepts an ndarray of the exact dtype and rank
    (and static sizes); anything else goes through ``filter_value``."""
    dtype, rank = ttype.dtype, ttype.rank
    static = [(axis, d) for axis, d in enumerate(ttype.shape) if d is not None]

    def slow(value):
        return filter_value(value, ttype, label, strict=strict, allow_downcast=allow_downcast,
                            floatx=floatx)

    if not static:
        def check(value):
            if type(value) is np.ndarray and value.dtype == dtype and value.ndim == rank:
                return value
            return slow(value)
        return check

    def check_static(value):
        if type(value) is np.ndarray and value.dtype == dtype and value.ndim == rank and \
                all(value.shape[axis] == d for axis, d in static):
            return value
        return slow(value)
    return check_static
