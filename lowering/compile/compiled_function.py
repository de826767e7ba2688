"""The compiled ``Function``: a call checks its arguments, runs the executor and commits the
shared variables' new values; ``FunctionMaker`` is what it was made from.

``function()`` (``lowering.compile.function``) decides everything a ``Function`` needs and builds
one; this module is below it so that the profiled ``Function`` can build on it too.

>>> import numpy as np
>>> from lowering.ir.core import Block
>>> from lowering.ir.types import F64, TensorType
>>> from lowering.compile import function
>>> x = Block([TensorType((None,), F64)]).args[0]
>>> f = function([x], x, mode="INTERP")
>>> isinstance(f, Function), f.maker.mode.name
(True, 'INTERP')
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from lowering.dialects.function_attrs import MUTABLE_ARGS

from .cpu.executor import writable_contiguous
from .fgraph import FunctionGraph
from .function_copy import copy_parts
from .graph_cache import optimize_with_cache
from .graph_to_module import BuiltModule
from .io import In, Out
from .pass_check import CheckingExecutor, SnapshotPasses
from .pipeline import Mode, choose_executor, stage_producer
from .shared_storage import SharedContainer, lock_rank
from .values import filter_value

__all__ = ["Function", "FunctionMaker"]


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
        self._tensor_module = built.module
        snapshots = SnapshotPasses() if mode.check_passes else None
        # From the disk cache when this module went through these optimizations before; else
        # optimized in a copy, so that the module as built stays the "tensor" stage.
        built.module, self.pipeline, self.missing_optimizations = optimize_with_cache(
            built.module, mode, ([snapshots] if snapshots else []) + self._pass_instrumentations(),
            keep_input=True)
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
        self._checked_args = None  # weak references to the arrays last checked against them

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
        if len(locks) == 2:
            with locks[0], locks[1]:
                return self._call(args, kwargs)
        taken = 0
        try:
            for lock in locks:
                lock.acquire()
                taken += 1
            return self._call(args, kwargs)
        finally:
            for lock in reversed(locks[:taken]):
                lock.release()

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
        if self._same_as_last_check(args):
            return args
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
        if self._checked_shared is None:
            self._check_shared_values()
        self._checked_args = tuple(weakref.ref(a) if type(a) is np.ndarray else None
                                   for a in args)
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

    def _same_as_last_check(self, args) -> bool:
        """Whether the last check of ``_ready_for_writes`` still holds: the same shared arrays
        and the same argument arrays, which were found not to overlap then. An array keeps its
        memory (``resize`` gives it fresh memory, which overlaps nothing live), so identity is
        enough; the arguments are held by weak references, keeping none of them alive. (Plain
        loops: this runs on every call.)"""
        last = self._checked_args
        checked = self._checked_shared
        if last is None or checked is None or self._mutable_inputs or len(last) != len(args):
            return False
        for container, value in zip(self._shared, checked):
            if container.value is not value:
                return False
        for ref, arg in zip(last, args):
            if (type(arg) is np.ndarray) if ref is None else (ref() is not arg):
                return False
        return True

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
        from .gpu.arrays import is_device_array
        from .gpu.interop import exports_device_memory
        # A device array is the GPU executor's to check (dtype and rank, without a copy).
        values = list(args) if self.trust_input else \
            [a if is_device_array(a) or exports_device_memory(a) else check(a)
             for check, a in zip(self._checks, args)]
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
        >>> from lowering.compile import function
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
            self._recipe, module=print_op(self._tensor_module, generic=True, print_locations=True),
            name=self.name, mode=self.mode, trust_input=self.trust_input, inputs=inputs,
            borrow=[o.borrow for o in self.maker.outputs], shared=self._shared,
            targets=self._targets, states=states),)

    # -- copying -------------------------------------------------------------------------------

    #: The class of a profiled copy (``copy(profile=True)``); ``lowering.compile.profiling``,
    #: which builds on this module, sets it.
    profiled_class = None

    def copy(self, share_memory: bool = False, swap=None, delete_updates: bool = False,
             name: str | None = None, profile=None) -> "Function":
        """This function compiled again (Theano's ``Function.copy``): it reads and updates the
        same shared variables, except those ``swap`` (``{old_shared: new_shared}``, same types)
        replaces; ``delete_updates`` leaves out every update; ``name`` defaults to
        ``'<name> copy'``; ``profile`` as in ``function()``. ``share_memory`` is accepted:
        compiled functions keep no intermediate results between calls, so there is nothing to
        share. As in Theano 1.0, the copy returns a list even where this function returns a
        single output (programs index ``copy(...)(x)[0]``). See
        ``lowering.compile.function_copy``.

        >>> import lowering as theano, lowering.tensor as T
        >>> x = T.dscalar("x")
        >>> theano.function([x], x + 1).copy()(1.0)
        [array(2.)]
        """
        from lowering.config import config
        parts = copy_parts(self._tensor_module, self.maker, self._shared, self._targets,
                           self._states, swap=swap, delete_updates=delete_updates)
        from .pipeline import EXECUTORS
        executor_name = self._recipe["executor"]
        executor = (executor_name, EXECUTORS[executor_name]) if executor_name in EXECUTORS \
            else choose_executor(self.mode)
        args = (parts.built, parts.inputs, parts.outputs, False, self.mode,
                executor, name or f"{self.name} copy", parts.states)
        options = dict(allow_input_downcast=self._recipe["allow_input_downcast"],
                       trust_input=self.trust_input, floatx=self._recipe["floatx"])
        if profile is None:
            profile = config.profile
        if profile and self.profiled_class is not None:
            return self.profiled_class(*args, profile=profile, **options)
        return Function(*args, **options)

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
