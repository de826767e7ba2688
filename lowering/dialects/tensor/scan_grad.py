"""The gradient of ``tensor.scan``: backpropagation through time, as a second scan.

The backward scan runs the forward steps in reverse (``t = n-1 .. 0``, or only the last
``truncate_gradient`` of them). Each of its steps recomputes forward step ``t`` from the rows it
read (the sequences and the earlier steps of the fed-back outputs, passed reversed as the
backward scan's sequences) and applies the body's own gradient rules to it; the fed-back
outputs themselves are read from their histories (rows the forward steps wrote), so what is
recomputed is only what their gradients need besides (often nothing: the gradient of
``tanh(W h + x)`` needs ``tanh``'s result and ``h``). The gradient rules are applied given

- the gradient flowing into the step's outputs: the outer gradient of row ``t`` plus what later
  steps sent back through the taps that read it;
- and it yields the gradient of each sequence row it read (collected into the sequences'
  gradients afterwards), carries the gradients later steps sent to earlier outputs (a window of
  ``depth`` rows per fed-back output; one state for taps ``[-1]``) and sums the non-sequences'
  gradients.

After the last backward step the window holds the gradients of the initial rows. As in Theano,
which runs no scan of 0 steps, the gradient of a scan that ran 0 steps is a run-time error
naming the scan's line. Through a scan that stops with ``until`` the backward scan runs the
steps that ran, the length of the forward histories.

>>> from lowering.dialects.tensor.scan import ScanOp
>>> ScanOp.grad is scan_grad
True
"""
from __future__ import annotations

from lowering.ir.core import Block, Value, VerifyError
from lowering.ir.location import default_location
from lowering.ir.types import I64, TensorType

from .base import ConstantOp
from .checks import CheckOp
from .elementwise import AddOp, CastOp, EqOp, GtOp, MinimumOp, MulOp
from .fused import _detached_ops
from .gradutil import is_differentiable_type
from .indexing import IncSubtensorOp, SubtensorOp
from .scan import ScanOp, ScanYieldOp, state_type
from .shape_ops import (ConcatenateOp, DimShuffleOp, ShapeIOp, match_type, scalar_constant,
                        zeros_like)


def _total(values: list[Value]) -> Value | None:
    total = None
    for v in values:
        total = v if total is None else AddOp.build(total, v).result
    return total


def _index(number: int) -> Value:
    return scalar_constant(number, I64)


def _rows(x: Value, start=None, stop=None, step=None) -> Value:
    """``x[start:stop:step]`` (parts ints, None or rank-0 integer Values)."""
    return SubtensorOp.build(x, (slice(start, stop, step),)).result


def _row(x: Value, index) -> Value:
    return SubtensorOp.build(x, (index,)).result


def _pad_row(x: Value) -> Value:
    """``x`` as one row: ``x[None]``."""
    return DimShuffleOp.build(x, ["x", *range(x.type.rank)]).result


def backpropagate(block: Block, cotangents: dict[Value, Value]) -> dict[Value, Value]:
    """The gradients reaching ``block``'s arguments from ``cotangents`` of values computed in
    it, through its ops' grad rules (detached ops built with their ``build``)."""
    pending: dict[Value, list[Value]] = {v: [g] for v, g in cotangents.items() if g is not None}
    for op in reversed([o for o in block.ops if not isinstance(o, ScanYieldOp)]):
        if isinstance(op, ConstantOp):
            continue
        output_grads = [_total(pending.pop(r, [])) for r in op.results]
        if all(g is None for g in output_grads):
            continue
        rule = getattr(op, "grad", None)
        if rule is None:
            if any(is_differentiable_type(r.type) for r in op.results):
                raise VerifyError(f"{op.name} (at {op.location.short()}) in a scan body has no "
                                  f"gradient rule", op)
            continue
        with default_location(op.location):
            grads = rule(output_grads)
        for operand, g in zip(op.operands, grads):
            if g is not None and is_differentiable_type(operand.type):
                pending.setdefault(operand, []).append(g)
    return {arg: _total(pending[arg]) for arg in block.args if arg in pending}


def scan_grad(self: ScanOp, output_grads: list[Value | None]) -> list[Value | None]:
    """One gradient per operand of the scan (see the module docstring)."""
    with default_location(self.location):
        return _scan_grad(self, output_grads)


def _at_least_one_step(n: Value) -> Value:
    """``n`` once it is positive. Theano runs no scan of 0 steps (its ``perform`` raises); the
    gradient, which reads the backward loop's last step, stops with this error instead."""
    return CheckOp.build(n, GtOp.build(n, _index(0)).result,
                         "the gradient of scan needs at least one step, and the scan ran "
                         "0 steps (n_steps is 0)").result


def _scan_grad(op: ScanOp, output_grads) -> list[Value | None]:
    layout = op.layout
    seqs, inits, non_seqs = op.split_operands()
    # With until, the steps that ran: the length of the histories (every result keeps all of
    # its steps, since the gradient reads them).
    n = ShapeIOp.build(op.results[0], 0).result if op.flag("until") else op.n_steps
    if n.type.element != I64:
        n = CastOp.build(n, I64).result
    n = _at_least_one_step(n)
    truncation = op.truncation
    steps = n if truncation == -1 else MinimumOp.build(n, _index(truncation)).result
    fed = {k: init for k, init in zip(layout.fed_back, inits)}
    grads_out = {k: (match_type(g, op.results[k]) if g is not None else None)
                 for k, g in enumerate(output_grads[:len(layout.output_taps)])}

    # Backward sequences, read from forward step n-1 down: reversed rows, negated taps.
    back_seqs, back_taps = [], []
    effective = []
    for k, seq in enumerate(seqs):
        eff = _rows(seq, step=-1) if op.flag("go_backwards") else seq
        effective.append(eff)
        stop = AddOp.build(n, _index(layout.span(k))).result
        back_seqs.append(_rows(_rows(eff, stop=stop), step=-1))
        back_taps.append([-t for t in layout.sequence_taps[k]])
    histories = {}
    for k in layout.fed_back:
        depth = layout.depth(k)
        taps = layout.output_taps[k]
        history = ConcatenateOp.build([_rows(fed[k], stop=depth), op.results[k]], axis=0).result
        histories[k] = history
        span = max(taps) - min(taps)
        # Row t + depth + tap of the history is row t + tap - min(taps) of history[depth+min:].
        start = depth + min(taps)
        stop = AddOp.build(n, _index(start + span)).result
        back_seqs.append(_rows(_rows(history, start=start, stop=stop), step=-1))
        back_taps.append([-t for t in taps])
    with_grad = [k for k, g in grads_out.items() if g is not None]
    for k in with_grad:
        back_seqs.append(_rows(grads_out[k], step=-1))
        back_taps.append([0])
    # The outputs the forward steps computed, read back rather than recomputed: the rows of
    # the fed-back outputs' histories (kept whole already, since the backward steps read them).
    forward_yield = op.body.block.last_op.operands
    stored = [k for k in layout.fed_back
              if getattr(forward_yield[k], "op", None) is not None
              and forward_yield[k].op.parent is op.body.block
              and state_type(op.results[k].type) == forward_yield[k].type]
    for k in stored:
        back_seqs.append(_rows(_rows(op.results[k], stop=n), step=-1))
        back_taps.append([0])

    # Backward carried values: a window of gradients per fed-back float output, the sums of
    # the float non-sequences' gradients.
    windows = [k for k in layout.fed_back if is_differentiable_type(op.results[k].type)]
    summed = [i for i, v in enumerate(non_seqs) if is_differentiable_type(v.type)]
    single = {k: layout.depth(k) == 1 for k in windows}
    back_inits = []
    for k in windows:
        first = _rows(fed[k], stop=layout.depth(k))
        zeros = zeros_like(first)
        back_inits.append(zeros if single[k] else _pad_row(zeros))
    for i in summed:
        back_inits.append(_pad_row(zeros_like(non_seqs[i])))

    block = _backward_body(op, [v.type for v in back_seqs], back_taps, back_inits, non_seqs,
                           windows, single, summed, with_grad, stored)
    num_seq_rows = sum(len(t) for t in layout.sequence_taps)
    output_taps = [[] for _ in range(num_seq_rows)] + [[-1]] * (len(windows) + len(summed))
    backward = ScanOp.build([steps, *back_seqs, *back_inits, *non_seqs], back_taps, output_taps,
                            block)
    results = list(backward.results)

    grads: list[Value | None] = [None]
    # Sequences: each tap's rows go back where the forward step read them.
    index = 0
    for k, (seq, eff) in enumerate(zip(seqs, effective)):
        total = zeros_like(eff)
        for tap in layout.sequence_taps[k]:
            rows = _rows(results[index], step=-1)
            index += 1
            if not is_differentiable_type(seq.type):
                continue
            offset = tap - min(layout.sequence_taps[k])
            start = AddOp.build(AddOp.build(n, _index(offset)).result,
                                MulOp.build(steps, _index(-1)).result).result
            stop = AddOp.build(n, _index(offset)).result
            total = IncSubtensorOp.build(total, rows, (slice(start, stop),)).result
        if not is_differentiable_type(seq.type):
            grads.append(None)
            continue
        if op.flag("go_backwards"):
            total = _rows(total, step=-1)
        grads.append(match_type(total, seq))
    # Initial states: the window after the last backward step, oldest row first.
    position = num_seq_rows
    window_finals = {}
    for k in windows:
        window_finals[k] = _row(results[position], -1)
        position += 1
    for k in layout.fed_back:
        init = fed[k]
        if k not in window_finals:
            grads.append(None)
            continue
        final = window_finals[k]
        rows = _pad_row(final) if single[k] else _rows(final, step=-1)
        if truncation != -1:  # gradients stop before the first step unless all steps ran
            whole = CastOp.build(EqOp.build(steps, n).result, rows.type.element).result
            whole = DimShuffleOp.build(whole, ["x"] * rows.type.rank).result
            rows = MulOp.build(rows, whole).result
        total = IncSubtensorOp.build(zeros_like(init), rows,
                                     (slice(None, layout.depth(k)),)).result
        grads.append(match_type(total, init))
    sums = {}
    for i in summed:
        sums[i] = _row(results[position], -1)
        position += 1
    for i, value in enumerate(non_seqs):
        grads.append(match_type(sums[i], value) if i in sums else None)
    return grads


def _backward_body(op: ScanOp, seq_types, back_taps, back_inits, non_seqs, windows, single,
                   summed, with_grad, stored) -> Block:
    """The backward step: the forward step recomputed, then its gradient; the outputs
    ``stored`` (their rows are sequences of the backward scan) are then read from those rows
    instead, so that only what their gradients need of the forward step remains."""
    layout = op.layout
    forward = op.body.block
    types = []
    for t, taps in zip(seq_types, back_taps):
        types += [TensorType(t.shape[1:], t.element)] * len(taps)
    types += [state_type(v.type) for v in back_inits]
    types += [v.type for v in non_seqs]
    block = Block(types)
    args = iter(block.args)
    num_seq_rows = sum(len(t) for t in layout.sequence_taps)
    seq_rows = [next(args) for _ in range(num_seq_rows)]
    state_rows = {k: [next(args) for _ in layout.output_taps[k]] for k in layout.fed_back}
    outer_grads = {k: next(args) for k in with_grad}
    stored_rows = {k: next(args) for k in stored}
    window_args = {k: next(args) for k in windows}
    sum_args = [next(args) for _ in summed]
    non_seq_args = list(args)

    # The forward step, on the rows the backward step reads. A row may know more static sizes
    # than the forward step's argument (a history joins the initial state, ``?x3``, with the
    # results, ``?x?``): it is brought to the argument's type, which the cloned ops were typed for.
    value_map: dict[Value, Value] = {}
    rows = [*seq_rows, *(v for k in layout.fed_back for v in state_rows[k]), *non_seq_args]
    for arg, v in zip(forward.args, rows):
        value_map[arg] = v if v.type == arg.type else match_type(v, arg)
    for inner in _detached_ops(list(value_map.values())):
        block.append(inner)
    for inner in forward.ops:
        if isinstance(inner, ScanYieldOp):
            break
        block.append(inner.clone(value_map))
    yielded = [value_map.get(v, v) for v in forward.last_op.operands]

    cotangents: dict[Value, list[Value]] = {}
    for k, value in enumerate(yielded[:len(layout.output_taps)]):
        parts = []
        if k in outer_grads:
            parts.append(outer_grads[k])
        if k in window_args:
            parts.append(window_args[k] if single[k] else _row(window_args[k], 0))
        if parts:
            cotangents.setdefault(value, []).extend(parts)
    pending = {v: _total(gs) for v, gs in cotangents.items()}
    arg_grads = backpropagate(block, pending)

    outputs = []
    for v in seq_rows:
        g = arg_grads.get(v)
        outputs.append(match_type(g, v) if g is not None else zeros_like(v))
    for k in windows:
        window = window_args[k]
        taps = layout.output_taps[k]
        if single[k]:
            parts = [arg_grads[v] for v in state_rows[k] if v in arg_grads]
            total = _total(parts)
            outputs.append(match_type(total, window) if total is not None else zeros_like(window))
            continue
        shifted = ConcatenateOp.build([_rows(window, start=1),
                                       zeros_like(_rows(window, stop=1))], axis=0).result
        for tap, v in zip(taps, state_rows[k]):
            if v in arg_grads:
                shifted = IncSubtensorOp.build(shifted, arg_grads[v], (-tap - 1,)).result
        outputs.append(match_type(shifted, window))
    for acc, i in zip(sum_args, summed):
        g = arg_grads.get(non_seq_args[i])
        outputs.append(AddOp.build(acc, match_type(g, acc)).result if g is not None else acc)
    for inner in _detached_ops(outputs):
        block.append(inner)
    block.append(ScanYieldOp.create(outputs))
    # The gradient ops use the recomputed outputs (tanh's rule reads tanh's result): the
    # forward's own rows, equal to them, leave the recomputation dead.
    for k, row in stored_rows.items():
        yielded[k].replace_all_uses_with(row)
    return block


ScanOp.grad = scan_grad
