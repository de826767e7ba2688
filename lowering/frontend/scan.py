"""Theano's ``scan``: loops whose steps are a graph, and ``map``, ``reduce``, ``foldl``, ``foldr``.

``scan`` calls ``fn`` once, on placeholder variables standing for one step's values (the
sequences' rows at each tap, the outputs' earlier steps at each tap, then the non-sequences, in
that order), and turns the graph it returns into the body of one ``tensor.scan`` op
(``lowering.dialects.tensor.scan``). Values the body uses from outside (variables, shared
variables, graphs of them) become the op's non-sequences; a shared variable that ``fn`` updates
(or that has a ``default_update``) becomes a carried state, and the returned ``updates`` give
its value after the last step.

>>> import numpy as np
>>> from lowering.frontend.constructors import vector
>>> x = vector("x")
>>> total, updates = scan(lambda v, acc: acc + v, sequences=x,
...                       outputs_info=np.float64(0))
>>> total.ndim, len(updates)
(1, 0)
"""
from __future__ import annotations

import inspect
from collections import OrderedDict

import numpy as np

from lowering.compile.shared_storage import shared_container
from lowering.config import config
from lowering.dialects.tensor import ConstantOp
from lowering.dialects.tensor.scan import ScanOp, ScanYieldOp, fits, row_type, state_type
from lowering.ir.core import Block, Value
from lowering.ir.location import caller_location, default_location
from lowering.ir.types import TensorType as IRTensorType

from .build import build_op
from .constructors import as_tensor_variable, constant
from .elemwise import cast, minimum
from .errors import GraphBuildError, GraphTypeError
from .graph import depends_on, graph_inputs, toposort
from .shapes import dimshuffle, shape_i
from .variable import _TEST_VALUES, TensorVariable, wrap

__all__ = ["scan", "until", "map", "reduce", "foldl", "foldr"]

# Constants at most this large are copied into the body (where fusion folds them) rather than
# passed in as non-sequences.
_INLINE_CONSTANT_ELEMENTS = 64


class until:  # noqa: N801  (Theano's name)
    """``return outputs, until(condition)`` in ``fn`` ends the loop after the step where the
    scalar ``condition`` is true (``n_steps`` is then the largest number of steps).

    >>> from lowering.frontend.constructors import scalar
    >>> until(scalar("x") > 1).condition.ndim
    0
    """

    def __init__(self, condition):
        self.condition = as_tensor_variable(condition)
        if self.condition.ndim != 0:
            raise GraphTypeError(f"scan: until needs a scalar condition, got "
                                 f"{self.condition} of type {self.condition.type}")


class _ScanError:
    """Builds the errors of one scan call: each names the argument and the user's line."""

    def __init__(self, name: str | None):
        self.location = caller_location()
        self.prefix = f"scan{f' {name!r}' if name else ''}"

    def __call__(self, message: str, type_error: bool = False) -> GraphBuildError:
        cls = GraphTypeError if type_error else GraphBuildError
        return cls(f"{self.prefix}: {message}", self.location)


def _as_list(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _variable(x, error, what: str) -> TensorVariable:
    try:
        return as_tensor_variable(x)
    except (TypeError, ValueError) as exc:
        raise error(f"{what} must be a tensor (or something that converts to one): {exc}",
                    type_error=True) from None


def _sequences(sequences, error) -> list[tuple[TensorVariable, list[int]]]:
    out = []
    for index, seq in enumerate(_as_list(sequences)):
        taps = [0]
        if isinstance(seq, dict):
            unknown = set(seq) - {"input", "taps"}
            if "input" not in seq or unknown:
                raise error(f"sequences[{index}] must be a tensor or a dict with 'input' and "
                            f"optional 'taps', got keys {sorted(seq)}")
            taps = seq.get("taps", [0])
            taps = [0] if taps is None else _as_list(taps)
            seq = seq["input"]
        var = _variable(seq, error, f"sequences[{index}]")
        if var.ndim < 1:
            raise error(f"sequences[{index}] ({var}) is a scalar; a sequence needs a first "
                        f"dimension to iterate over", type_error=True)
        if not taps or not all(isinstance(t, (int, np.integer)) for t in taps):
            raise error(f"sequences[{index}] has taps {taps!r}; taps are a non-empty list of "
                        f"integers")
        out.append((var, [int(t) for t in taps]))
    return out


def _outputs_info(outputs_info, error) -> list[tuple[TensorVariable | None, list[int]]]:
    """Per output: its initial value (None: not fed back) and the taps ``fn`` reads."""
    out = []
    for index, info in enumerate(_as_list(outputs_info)):
        taps = [-1]
        if isinstance(info, dict):
            unknown = set(info) - {"initial", "taps", "return_steps", "inplace"}
            if unknown:
                raise error(f"outputs_info[{index}] has unknown keys {sorted(unknown)} (known: "
                            f"'initial', 'taps')")
            initial = info.get("initial")
            if initial is None:
                if info.get("taps"):
                    raise error(f"outputs_info[{index}] has taps {info['taps']!r} but no "
                                f"'initial' value for them")
                out.append((None, []))
                continue
            taps = info.get("taps", [-1])
            taps = [-1] if taps is None else _as_list(taps)
            info = initial
        if info is None:
            out.append((None, []))
            continue
        if not taps or not all(isinstance(t, (int, np.integer)) and t < 0 for t in taps):
            raise error(f"outputs_info[{index}] has taps {taps!r}; the taps of an output are a "
                        f"non-empty list of negative integers (earlier steps)")
        var = _variable(info, error, f"outputs_info[{index}]")
        out.append((var, [int(t) for t in taps]))
    return out


def _initial_rows(init: TensorVariable, taps: list[int], index: int, error) -> TensorVariable:
    """The initial state as rows, oldest first: ``init`` itself for taps reading several
    steps back (it must then have one more dimension than a step), one row for ``[-1]``."""
    depth = -min(taps)
    if depth == 1 and taps == [-1] * len(taps):
        return dimshuffle(init, ["x", *range(init.ndim)])
    if init.ndim < 1:
        raise error(f"outputs_info[{index}] reads {depth} steps back (taps {taps}), so its "
                    f"initial value needs a first dimension of at least {depth} rows; got "
                    f"the scalar {init}", type_error=True)
    rows = init.value.type.shape[0]
    if rows is not None and rows < depth:
        raise error(f"outputs_info[{index}] reads {depth} steps back (taps {taps}) but its "
                    f"initial value has {rows} rows")
    return init


def _placeholder(type, like: TensorVariable | None, row: bool) -> TensorVariable:
    var = TensorVariable(Block().add_arg(type))
    if like is not None and config.compute_test_value != "off":
        value = _TEST_VALUES.get(like.value)
        if value is None and isinstance(like.operation, ConstantOp):
            value = like.value.op.attributes["value"].array
        if value is not None and (not row or len(value)):
            _TEST_VALUES[var.value] = np.asarray(value[0] if row else value,
                                                 dtype=type.dtype)
    return var


def _check_arity(fn, count: int, error) -> None:
    """Fail, naming fn's signature, when fn cannot take the ``count`` arguments scan passes."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: let the call say
        return
    try:
        signature.bind(*range(count))
    except TypeError:
        takes = [p for p in signature.parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                 and p.default is p.empty]
        raise error(f"fn takes {len(takes)} positional argument{'s' * (len(takes) != 1)} but "
                    f"scan passes {count} (the sequences' taps, then the fed-back outputs' "
                    f"taps, then the non-sequences)", type_error=True) from None


def _split_return(ret, error):
    """fn's outputs, updates and stop condition, from any of the forms Theano accepts:
    outputs; updates; ``until``; and tuples of them in any order."""
    def is_updates(x):
        return isinstance(x, dict) or (isinstance(x, (list, tuple)) and x and all(
            isinstance(p, tuple) and len(p) == 2 and hasattr(p[0], "get_value") for p in x))

    parts = list(ret) if isinstance(ret, tuple) and any(
        is_updates(p) or isinstance(p, until) for p in ret) else [ret]
    outputs, updates, condition = [], [], None
    for part in parts:
        if isinstance(part, until):
            condition = part.condition
        elif is_updates(part):
            updates += list(part.items() if isinstance(part, dict) else part)
        elif part is None:
            continue
        else:
            outputs += _as_list(part)
    return outputs, updates, condition


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, profile=False,
         allow_gc=None, strict=False, return_list=False):
    """Theano's ``scan``: ``(outputs, updates)`` of a loop whose step is ``fn``.

    - ``sequences``: tensors (or ``{'input': x, 'taps': [-2, 0]}``) iterated over their first
      dimension;
    - ``outputs_info``: per output of ``fn``, its initial value (taps ``[-1]``), a dict
      ``{'initial': h0, 'taps': [-2, -1]}`` (``h0`` then holds the earlier steps as rows,
      oldest first), or None for an output that is not fed back;
    - ``non_sequences``: values passed whole to every step;
    - ``n_steps``: the number of steps (default: the sequences' length); with ``until``, the
      largest number;
    - ``go_backwards``: read the sequences from their end;
    - ``truncate_gradient``: the gradient flows back this many steps (-1: all);
    - ``strict``: every shared variable ``fn`` uses must be in ``non_sequences`` (other outside
      values may still be used, as in Theano);
    - ``return_list``: always return a list of outputs.

    ``mode``, ``profile`` and ``allow_gc`` are accepted for compatibility: the loop is compiled
    with the function that contains it, in that function's mode.

    >>> import numpy as np
    >>> from lowering.frontend.constructors import vector
    >>> x = vector("x")
    >>> squares, _ = scan(lambda v: v * v, sequences=[x])
    >>> str(squares.type)
    'TensorType(float64, vector)'
    """
    error = _ScanError(name)
    if not callable(fn):
        raise error(f"fn must be callable, got {type(fn).__name__}", type_error=True)
    seqs = _sequences(sequences, error)
    infos = _outputs_info(outputs_info, error)
    non_seqs = [_variable(v, error, f"non_sequences[{i}]")
                for i, v in enumerate(_as_list(non_sequences))]
    if not isinstance(truncate_gradient, (int, np.integer)) or truncate_gradient == 0 or \
            truncate_gradient < -1:
        raise error(f"truncate_gradient must be -1 (no truncation) or a positive number of "
                    f"steps, got {truncate_gradient!r}")

    # Placeholders for one step's values, in fn's argument order.
    seq_args = [[_placeholder(row, var, True) for _ in taps]
                for (var, taps), row in zip(seqs, (_row_type(v) for v, _ in seqs))]
    inits = {k: _initial_rows(init, taps, k, error)
             for k, (init, taps) in enumerate(infos) if init is not None}
    out_args = {}
    for k, (init, taps) in enumerate(infos):
        if init is not None:
            state = arg_types_for_state(inits[k])
            out_args[k] = [_placeholder(state, init if init.ndim == state.rank else None,
                                        False) for _ in taps]
    args = [a for group in seq_args for a in group]
    args += [a for k in sorted(out_args) for a in out_args[k]]
    args += non_seqs

    _check_arity(fn, len(args), error)
    ret = fn(*args)
    outputs, updates, condition = _split_return(ret, error)
    outputs = [_variable(o, error, f"output #{i} of fn") for i, o in enumerate(outputs)]
    if infos and len(outputs) != len(infos):
        raise error(f"fn returned {len(outputs)} output{'s' * (len(outputs) != 1)} but "
                    f"outputs_info has {len(infos)} entr{'ies' if len(infos) != 1 else 'y'}; "
                    f"give one entry per output (None for outputs not fed back)")
    if not infos:
        infos = [(None, [])] * len(outputs)
    for k, out in enumerate(outputs):
        if k in inits:
            outputs[k] = _check_fed_back(out, inits[k], k, error)

    # Shared variables updated inside fn (and those with a default update) become states.
    shared_updates = _shared_updates(updates, outputs, condition, error)
    steps = _n_steps(n_steps, seqs, error)

    shared_args = []
    for var, new in shared_updates:
        shared_args.append(TensorVariable(Block().add_arg(_state_of(var))))
    layout_out_taps = [taps for _, taps in infos] + [[-1]] * len(shared_updates)
    roots = [o.value for o in outputs] + [cast(new, var.dtype).value
                                          for var, new in shared_updates]
    if condition is not None:
        roots.append(condition.value)
    body, captured = _extract_body(
        roots, [a.value for group in seq_args for a in group]
        + [a.value for k in sorted(out_args) for a in out_args[k]]
        + [a.value for a in shared_args],
        {var.value: arg.value for (var, _), arg in zip(shared_updates, shared_args)},
        [v.value for v in non_seqs])
    if strict:  # as Theano: shared variables must be passed; other outside values may be used
        extra = [v for v in captured if v not in {n.value for n in non_seqs}
                 and shared_container(v) is not None]
        if extra:
            raise error(f"strict=True, but fn uses the shared variable(s) "
                        f"{', '.join(str(wrap(v)) for v in extra)} without them being in "
                        f"non_sequences")

    operands = [steps.value] + [v.value for v, _ in seqs]
    operands += [inits[k].value for k in sorted(inits)]
    operands += [dimshuffle(var, ["x", *range(var.ndim)]).value for var, _ in shared_updates]
    operands += captured
    with default_location(error.location):
        op = build_op(ScanOp, operands, [taps for _, taps in seqs], layout_out_taps, body,
                      go_backwards=bool(go_backwards), until=condition is not None,
                      truncate_gradient=int(truncate_gradient), named=outputs)
    results = [wrap(r) for r in op.results]
    if name:
        for k, r in enumerate(results[:len(outputs)]):
            r.name = f"{name}[{k}]" if len(outputs) > 1 else name
    new_updates = OrderedDict()
    for (var, _), history in zip(shared_updates, results[len(outputs):]):
        new_updates[var] = history[-1]
    outs = results[:len(outputs)]
    if return_list:
        return outs, new_updates
    if not outs:
        return None, new_updates
    return (outs[0] if len(outs) == 1 else outs), new_updates


def _row_type(var: TensorVariable):
    return row_type(var.value.type)


def arg_types_for_state(rows: TensorVariable):
    return state_type(rows.value.type)


def _state_of(var: TensorVariable):
    """The step type of a shared variable carried as a state."""
    t = var.value.type
    return state_type(IRTensorType((1, *t.shape), t.element))


def _check_fed_back(out: TensorVariable, rows: TensorVariable, k: int, error) -> TensorVariable:
    state = state_type(rows.value.type)
    got = out.value.type
    if got.element != state.element:
        raise error(f"output #{k} of fn has dtype {got.element.dtype}, but its initial value "
                    f"outputs_info[{k}] has dtype {state.element.dtype}; the step must keep "
                    f"the dtype (cast one of them, e.g. with T.cast)", type_error=True)
    if got.rank != state.rank:
        raise error(f"output #{k} of fn has {got.rank} dimensions, but its initial value "
                    f"outputs_info[{k}] gives steps of {state.rank}", type_error=True)
    if not fits(state, got):
        raise error(f"output #{k} of fn has type {got}, whose dimensions are not broadcastable "
                    f"where those of outputs_info[{k}] ({state}) are; use T.unbroadcast or "
                    f"T.patternbroadcast so that they agree", type_error=True)
    return out


def _shared_updates(updates, outputs, condition, error):
    """The (shared variable, new value) pairs of fn's updates, then of the default updates of
    shared variables the step reads."""
    pairs, seen = [], set()
    for var, new in updates:
        if not hasattr(var, "get_value"):
            raise error(f"fn's updates must update shared variables; {var!r} is not one",
                        type_error=True)
        new = _variable(new, error, f"the update of {var}")
        if new.ndim != var.ndim:
            raise error(f"fn updates {var} (rank {var.ndim}) with a value of rank {new.ndim}",
                        type_error=True)
        if var.value in seen:
            raise error(f"fn updates {var} twice")
        seen.add(var.value)
        pairs.append((var, new))
    roots = [o.value for o in outputs] + [n.value for _, n in pairs]
    if condition is not None:
        roots.append(condition.value)
    frontier = list(graph_inputs(roots))
    while frontier:
        value = frontier.pop(0)
        var = wrap(value)
        default = getattr(var, "default_update", None)
        if default is None or value in seen:
            continue
        seen.add(value)
        pairs.append((var, default))
        frontier += [v for v in graph_inputs([default.value]) if v not in seen]
    return pairs


def _n_steps(n_steps, seqs, error) -> TensorVariable:
    spans = [(var, max(taps) - min(taps)) for var, taps in seqs]
    if n_steps is None:
        if not seqs:
            raise error("n_steps is needed when there are no sequences (no information says "
                        "how many steps to take)")
        lengths = [shape_i(var, 0) - span if span else shape_i(var, 0) for var, span in spans]
        total = lengths[0]
        for length in lengths[1:]:
            total = minimum(total, length)
        return cast(total, "int64")
    if isinstance(n_steps, (int, np.integer)):
        if n_steps < 0:
            raise error(f"n_steps is {n_steps}; it must be at least 0")
        for index, (var, span) in enumerate(spans):
            rows = var.value.type.shape[0]
            if rows is not None and rows < n_steps + span:
                raise error(f"n_steps is {n_steps} but sequences[{index}] has {rows} rows "
                            f"(it needs {n_steps + span} for its taps)")
        return constant(np.int64(n_steps))
    steps = _variable(n_steps, error, "n_steps")
    if steps.ndim != 0 or not steps.dtype.startswith(("int", "uint")):
        raise error(f"n_steps must be an integer scalar, got {steps} of type {steps.type}",
                    type_error=True)
    return cast(steps, "int64") if steps.dtype != "int64" else steps


def _extract_body(roots, step_args, replaced, non_seqs):
    """The body block computing ``roots`` from ``step_args`` (then the outside values it
    reads, as more arguments) and those outside values.

    ``replaced`` maps outside values to step arguments standing for them (shared variables
    carried as states)."""
    stop = set(step_args) | set(replaced)
    inside = depends_on(roots, stop)
    block = Block()
    vmap: dict[Value, Value] = {}
    for value in step_args:
        vmap[value] = block.add_arg(value.type, value.name_hint)
    for value, arg in replaced.items():
        vmap[value] = vmap[arg]
    captured: list[Value] = []

    def outside(value: Value) -> Value:
        if value in vmap:
            return vmap[value]
        owner = getattr(value, "op", None)
        if isinstance(owner, ConstantOp) and None not in value.type.shape and \
                int(np.prod(value.type.shape)) <= _INLINE_CONSTANT_ELEMENTS:
            clone = owner.clone()
            block.append(clone)
            vmap[value] = clone.result
            return clone.result
        captured.append(value)
        vmap[value] = None  # filled once every captured value is known
        return value

    for value in non_seqs:
        if value not in vmap:
            captured.append(value)
            vmap[value] = None
    for op in toposort(roots, stop):
        if not any(r in inside for r in op.results):
            continue
        for v in op.operands:
            if v not in inside and v not in vmap:
                outside(v)
        clone = op.clone({v: vmap[v] for v in op.operands if vmap.get(v) is not None})
        block.append(clone)
        for old, new in zip(op.results, clone.results):
            vmap[old] = new
    for v in roots:
        if v not in vmap:
            outside(v)
    # Captured values become arguments after the step arguments.
    for value in captured:
        arg = block.add_arg(value.type, value.name_hint)
        vmap[value] = arg
    for inner in block.ops:
        for index, v in enumerate(inner.operands):
            if v in captured:
                inner.set_operand(index, vmap[v])
    block.append(ScanYieldOp.create([vmap[v] for v in roots]))
    return block, captured


# ---------------------------------------------------------------------------------------------
# The views of scan (Theano's scan_views)


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False,  # noqa: A001
        mode=None, name=None):
    """``fn`` applied to each step of the sequences: ``(outputs, updates)``.

    >>> from lowering.frontend.constructors import vector
    >>> doubled, _ = map(lambda v: v * 2, [vector("x")])
    >>> doubled.ndim
    1
    """
    return scan(fn, sequences=sequences, outputs_info=[], non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None,  # noqa: A001
           go_backwards=False, mode=None, name=None):
    """The last step of a scan: ``(results, updates)`` (one result per output).

    >>> from lowering.frontend.constructors import vector
    >>> import numpy as np
    >>> total, _ = reduce(lambda v, acc: acc + v, [vector("x")], np.float64(0))
    >>> total.ndim
    0
    """
    outs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                         non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                         name=name)
    if isinstance(outs, (list, tuple)):
        return [o[-1] for o in outs], updates
    return outs[-1], updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``reduce`` from the first step on."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode,
                  name=name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``reduce`` from the last step back."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode,
                  name=name)
