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

import time
import warnings

from lowering.dialects.function_attrs import ARG_DEVICES, MUTABLE_ARGS, RESULT_DEVICES
from lowering.ir.core import Value
from lowering.llvm.gpu.cuda_runtime import CudaUnavailableError

from .cpu import executor as cpu_executor  # noqa: F401  (executors)
from .gpu import executor as gpu_executor  # noqa: F401  (executors)
from . import interpreter_executor  # noqa: F401  (executors)
# ``Function`` and ``FunctionMaker`` are defined below this module; ``_restore_function`` stays
# importable here for functions pickled when it lived in this module.
from .compiled_function import Function, FunctionMaker, _restore_function  # noqa: F401
from .derivatives import inputs_differentiated
from .graph_to_module import (BuiltModule, MissingInputError, UnusedInputError, build_module,
                              check_update_type, value_label)
from .gpu.placement import gpu_device_flag, mark_placement
from .io import In, Out, graph_value, variable_name
from .pipeline import choose_executor, get_mode
from .profiling import ProfiledFunction
from .shared_storage import SharedContainer, shared_container
from .sparse_function import SparseBoundary, SparseFunction, expand_sparse_updates, has_sparse
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
    if updates is not None:  # sparse shared variables are updated through their storage
        updates = expand_sparse_updates(_as_pairs(updates, "updates"))
    if has_sparse(inputs, outputs):  # scipy.sparse arguments and results, as dense arrays
        boundary = SparseBoundary.of(inputs, outputs)
        dense = function(boundary.inputs, boundary.outputs, mode, updates,
                         _as_pairs(givens, "givens") + list(boundary.givens.items()),
                         no_default_updates, accept_inplace, name, rebuild_strict,
                         allow_input_downcast, profile, on_unused_input, trust_input)
        return SparseFunction(dense, boundary)
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
    output_values = [graph_value(o.variable) for o in out_specs]
    built = build_module(input_values, output_values, pairs, replacements, name,
                         default_updates=not no_default_updates)
    _check_unused(built, specs, on_unused_input,
                  inputs_differentiated(output_values + [v for _, v in pairs], input_values))
    _mark_mutable_inputs(built, specs)
    if gpu_device_flag() or _names_gpu_contexts(built, specs, out_specs):
        mark_placement(built, specs, out_specs)  # where arguments and results live
    mode = get_mode(mode)
    executor = _executor_for_contexts(built, choose_executor(mode))
    _check_output_targets(out_specs, executor[0])
    options = dict(allow_input_downcast=allow_input_downcast, trust_input=trust_input,
                   floatx=config.floatX)
    if profile is None:
        profile = config.profile or mode.name == "ProfileMode"
    if profile:
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


def _check_unused(built: BuiltModule, specs: list[In], policy: str,
                  differentiated: set[Value]) -> None:
    """``on_unused_input`` for inputs nothing reads; an input of an expression an output is a
    derivative of counts as read (``lowering.compile.derivatives``)."""
    for pos in built.unused_inputs():
        value = graph_value(specs[pos].variable)
        if policy == "ignore" or value in differentiated:
            continue
        label = value_label(value)
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
    from .gpu.device import gpu_missing
    from .pipeline import EXECUTORS
    if "gpu" not in EXECUTORS:
        return "the GPU backend is not available in this installation"
    return gpu_missing()
