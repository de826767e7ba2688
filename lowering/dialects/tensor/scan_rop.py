"""Forward mode through ``tensor.scan``: the recurrence of tangents, as a second scan.

The tangent of a scan's outputs is itself a recurrence: step ``t``'s tangent depends on the
tangents of the rows it read, of the earlier steps it was fed and of the non-sequences. So the
R-op rule builds one new scan whose step computes the step's outputs and their tangents
together (Theano's ``Scan.R_op`` does the same):

- the tangents of the sequences are extra sequences, read at the same taps;
- the tangents of the fed-back outputs are extra fed-back outputs, with the same taps, starting
  from the tangents of the initial states (zeros where the initial state has none);
- the tangents of the non-sequences are extra non-sequences;
- the step is the forward step cloned, followed by the ``R_OP`` rule of each of its ops (nested
  scans included); it yields the outputs, then the tangents, then the stop condition.

The new scan has the same ``n_steps``, direction and stop condition, so with ``until`` the
tangents cover the steps that ran. Which fed-back outputs carry a tangent is found by growing
the set until the step adds none: an output whose step reads a tangent has one, and from then on
its earlier steps are tangents the step reads.

>>> import numpy as np
>>> from lowering.dialects.tensor.elementwise import MulOp
>>> from lowering.dialects.tensor.rop import R_OP
>>> from lowering.ir.types import F64, I64, TensorType
>>> from .scan import run_scan
>>> n, xs, h0, vxs = Block([TensorType((), I64), TensorType((None,), F64),
...                         TensorType((1,), F64), TensorType((None,), F64)]).args
>>> op = ScanOp.build([n, xs, h0], [[0]], [[-1]], lambda x, h: [MulOp.build(x, h).result])
>>> (t,) = R_OP.lookup(op)(op, [None, vxs, None])
>>> joint = t.op  # operands: n, xs, vxs, h0 and h0's tangent (zeros)
>>> # h_t = x_t h_(t-1), so dh_t = dx_t h_(t-1) + x_t dh_(t-1)
>>> run_scan(joint, [np.int64(2), np.array([2., 3.]), np.array([1., 1.]), np.array([1.]),
...                  np.array([0.])])[1]
array([1., 5.])
"""
from __future__ import annotations

from lowering.ir.core import Block, Value
from lowering.ir.location import default_location

from .base import ConstantOp
from .fused import _detached_ops
from .gradutil import as_type, is_differentiable_type
from .scan import ScanLayout, ScanOp, ScanYieldOp, arg_types
from .shape_ops import zeros_like


def scan_rop(op: ScanOp, tangents: list, push_forward) -> list:
    """One tangent per result of ``op`` (see the module docstring); ``push_forward(op,
    tangents)`` gives the tangents of each op of the step (``rop.push_forward``)."""
    with default_location(op.location):
        return _scan_rop(op, tangents, push_forward)


def _scan_rop(op: ScanOp, tangents: list, push_forward) -> list:
    layout = op.layout
    seq_slice, init_slice, non_slice = layout.operand_slices()
    seq_tangents = tangents[seq_slice]
    init_tangents = dict(zip(layout.fed_back, tangents[init_slice]))
    non_tangents = tangents[non_slice]
    seq_with = [k for k, t in enumerate(seq_tangents) if t is not None]
    non_with = [i for i, t in enumerate(non_tangents) if t is not None]
    differentiable = {k for k, r in enumerate(op.results) if is_differentiable_type(r.type)}
    carried = sorted(k for k, t in init_tangents.items() if t is not None and k in differentiable)
    while True:
        block, values, step_tangents = _tangent_step(op, push_forward, seq_with, carried, non_with)
        grown = sorted({*carried, *(k for k in layout.fed_back
                                    if step_tangents[k] is not None and k in differentiable)})
        if grown == carried:
            break
        carried = grown
    produced = sorted({*carried, *(k for k, t in enumerate(step_tangents)
                                   if t is not None and k in differentiable)})
    if not produced:
        return [None] * len(op.results)

    count = len(layout.output_taps)
    outputs = values[:count]
    for k in produced:  # a carried output whose step reads no tangent has a zero one
        t = step_tangents[k]
        outputs.append(t if t is not None else zeros_like(values[k]))
    outputs += values[count:]  # the stop condition
    for inner in _detached_ops(outputs):
        block.append(inner)
    block.append(ScanYieldOp.create(outputs))

    seqs, inits, non_seqs = op.split_operands()
    operands = [op.n_steps, *seqs, *(seq_tangents[k] for k in seq_with), *inits]
    fed = dict(zip(layout.fed_back, inits))
    operands += [init_tangents[k] if init_tangents[k] is not None else zeros_like(fed[k])
                 for k in carried]
    operands += [*non_seqs, *(non_tangents[i] for i in non_with)]
    sequence_taps = [*layout.sequence_taps, *(layout.sequence_taps[k] for k in seq_with)]
    output_taps = [*layout.output_taps,
                   *(layout.output_taps[k] if k in carried else () for k in produced)]
    kept = op.kept_last()
    joint = ScanOp.build(operands, sequence_taps, output_taps, block,
                         go_backwards=op.flag("go_backwards"), until=op.flag("until"),
                         truncate_gradient=op.truncation,
                         last_only=[*kept, *(kept[k] for k in produced)])
    results: list = [None] * len(op.results)
    for position, k in enumerate(produced):
        results[k] = as_type(joint.results[count + position], op.results[k].type)
    return results


def _tangent_step(op: ScanOp, push_forward, seq_with: list[int], carried: list[int],
                  non_with: list[int]) -> tuple[Block, list, list]:
    """The joint step's block, without its terminator (the forward step cloned; its ops'
    tangents are built detached), the values the step yields and, per output, the tangent of
    the value it yields (or None)."""
    layout = op.layout
    forward = op.body.block
    joint = ScanLayout(
        (*layout.sequence_taps, *(layout.sequence_taps[k] for k in seq_with)),
        (*layout.output_taps, *(layout.output_taps[k] for k in carried)),
        layout.num_non_sequences + len(non_with))
    seqs, inits, non_seqs = op.split_operands()
    operand_types = [op.n_steps.type, *(v.type for v in seqs),
                     *(seqs[k].type for k in seq_with), *(v.type for v in inits),
                     *(dict(zip(layout.fed_back, inits))[k].type for k in carried),
                     *(v.type for v in non_seqs), *(non_seqs[i].type for i in non_with)]
    block = Block(arg_types(joint, operand_types))
    args = iter(block.args)
    seq_rows = [[next(args) for _ in taps] for taps in layout.sequence_taps]
    seq_tangent_rows = {k: [next(args) for _ in layout.sequence_taps[k]] for k in seq_with}
    state_rows = {k: [next(args) for _ in layout.output_taps[k]] for k in layout.fed_back}
    state_tangent_rows = {k: [next(args) for _ in layout.output_taps[k]] for k in carried}
    non_args = [next(args) for _ in non_seqs]
    non_tangent_args = {i: next(args) for i in non_with}

    value_map: dict[Value, Value] = {}
    tangent: dict[Value, Value] = {}
    forward_args = iter(forward.args)
    for k, rows in enumerate(seq_rows):
        for j, row in enumerate(rows):
            arg = next(forward_args)
            value_map[arg] = row
            if k in seq_tangent_rows:
                tangent[row] = seq_tangent_rows[k][j]
    for k in layout.fed_back:
        for j, row in enumerate(state_rows[k]):
            arg = next(forward_args)
            value_map[arg] = row
            if k in state_tangent_rows:
                tangent[row] = state_tangent_rows[k][j]
    for i, value in enumerate(non_args):
        value_map[next(forward_args)] = value
        if i in non_tangent_args:
            tangent[value] = non_tangent_args[i]

    for inner in forward.ops:
        if isinstance(inner, ScanYieldOp):
            break
        clone = inner.clone(value_map)
        block.append(clone)
        if isinstance(clone, ConstantOp):
            continue
        operand_tangents = [tangent.get(v) for v in clone.operands]
        if all(t is None for t in operand_tangents):
            continue
        for result, t in zip(clone.results, push_forward(clone, operand_tangents)):
            if t is not None:
                tangent[result] = t
    values = [value_map.get(v, v) for v in forward.last_op.operands]
    return block, values, [tangent.get(v) for v in values[:len(layout.output_taps)]]
