"""``tensor.scan``: a loop over steps whose body is a region of tensor ops (Theano's ``scan``).

Operands, in order: ``n_steps`` (a rank-0 integer tensor), the *sequences* (one row read per
step, at each of its taps), the *initial states* of the outputs that are fed back (each of shape
``(depth, *state)``: the ``depth`` rows before the first step, oldest first) and the
*non-sequences* (read whole at every step). Attributes say how operands split:

- ``sequence_taps``: per sequence, the offsets read at step ``t`` (row ``t + tap - min(taps)``);
- ``output_taps``: per output, the (negative) offsets of earlier steps its body reads; an empty
  list is an output that is not fed back. ``depth = -min(taps)``;
- ``go_backwards``: sequences are read from their end;
- ``until``: the body yields one more value, a rank-0 boolean; the loop stops after the step
  where it is true (``n_steps`` is then a maximum);
- ``last_only`` (optional): per output, whether only its last step is kept (a result of at most
  one row, for outputs whose history nobody reads);
- ``truncate_gradient``: how many steps back the gradient flows (-1: all).

The body is isolated: its block arguments are the sequence rows (per sequence, per tap), the
earlier steps of the outputs (per fed-back output, per tap) and the non-sequences; it ends with
``tensor.scan_yield`` of each output's new step (then the stop condition). Result ``k`` is the
history of output ``k``: ``(steps, *state)`` (without the initial rows).

>>> import numpy as np
>>> from lowering.dialects.tensor.elementwise import AddOp
>>> from lowering.ir.types import F64, I64, TensorType
>>> outer = Block([TensorType((), I64), TensorType((None,), F64), TensorType((1,), F64)])
>>> n, xs, h0 = outer.args
>>> op = ScanOp.build([n, xs, h0], [[0]], [[-1]],
...                   lambda x, h: [AddOp.build(x, h).result])
>>> str(op.results[0].type)
'tensor<?xf64>'
>>> run_scan(op, [np.int64(3), np.array([1., 2., 3.]), np.array([10.])])[0]
array([11., 13., 16.])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from lowering.ir.attributes import ArrayAttr, BoolAttr, IntAttr
from lowering.ir.core import (ISOLATED, PURE, TERMINATOR, Block, Operation, OpResult, Region,
                              Value, VerifyError, attr, region, register_op, var_operand,
                              var_result)
from lowering.ir.interpreter import INTERPRETER, Interpreter
from lowering.ir.traits import HAS_CANONICALIZATION_PATTERNS, HasParent
from lowering.ir.types import TensorType

from .base import TensorOp


@dataclass(frozen=True)
class ScanLayout:
    """How a scan's operands, block arguments and results split (read from its attributes)."""

    sequence_taps: tuple[tuple[int, ...], ...]
    output_taps: tuple[tuple[int, ...], ...]
    num_non_sequences: int

    @property
    def num_sequences(self) -> int:
        return len(self.sequence_taps)

    @property
    def fed_back(self) -> list[int]:
        """The outputs whose earlier steps the body reads (they have initial states)."""
        return [k for k, taps in enumerate(self.output_taps) if taps]

    def depth(self, output: int) -> int:
        taps = self.output_taps[output]
        return -min(taps) if taps else 0

    def span(self, sequence: int) -> int:
        """How many more rows than steps a sequence needs."""
        taps = self.sequence_taps[sequence]
        return max(taps) - min(taps)

    def operand_slices(self):
        """(sequences, initial states, non-sequences) as slices of the operands (after n)."""
        s = 1 + self.num_sequences
        i = s + len(self.fed_back)
        return slice(1, s), slice(s, i), slice(i, i + self.num_non_sequences)

    def arg_count(self) -> int:
        return (sum(map(len, self.sequence_taps)) + sum(map(len, self.output_taps))
                + self.num_non_sequences)


def _int_lists(lists) -> ArrayAttr:
    return ArrayAttr(tuple(ArrayAttr(tuple(IntAttr(int(v)) for v in taps)) for taps in lists))


def _read_int_lists(attribute) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(v.data) for v in entry.data) for entry in attribute.data)


def row_type(t: TensorType) -> TensorType:
    """The type of one row of ``t`` (its first dimension dropped)."""
    return TensorType(t.shape[1:], t.element)


def state_type(init: TensorType) -> TensorType:
    """The type of one step of an output fed back from an initial state of type ``init``: its
    row type, each size left open but those typed 1 (a step may have other sizes than the
    initial rows' static ones, as in Theano, whose types know only broadcastable dimensions).

    >>> from lowering.ir.types import F32
    >>> str(state_type(TensorType((1, 128, 1), F32)))
    'tensor<?x1xf32>'
    """
    return TensorType(tuple(1 if d == 1 else None for d in init.shape[1:]), init.element)


def history_type(state: TensorType) -> TensorType:
    """The type of a history of ``state`` values: ``(?, *state)``."""
    return TensorType((None, *state.shape), state.element)


def fits(declared: TensorType, actual: TensorType) -> bool:
    """Whether values of type ``actual`` may stand where ``declared`` is expected: the same
    element type and rank, and each static size of ``declared`` known equal in ``actual``."""
    return (declared.element == actual.element and declared.rank == actual.rank
            and all(d is None or d == a for d, a in zip(declared.shape, actual.shape)))


@register_op
class ScanYieldOp(Operation):
    """Ends a ``tensor.scan`` body: each output's value at this step (then the stop condition,
    with ``until``)."""

    name = "tensor.scan_yield"
    traits = frozenset({TERMINATOR})  # HasParent(ScanOp) is added below, once ScanOp exists
    assembly_format = "$values attr-dict : type($values)"
    values = var_operand()


@register_op
class ScanOp(TensorOp):
    """A loop over ``n_steps`` steps whose body (a region of tensor ops) computes each output's
    next step from the sequences' rows, the outputs' earlier steps (taps) and the
    non-sequences; each result is an output's history. Operands: ``n_steps``, sequences,
    initial states (rows), non-sequences."""

    name = "tensor.scan"
    traits = frozenset({PURE, ISOLATED, HAS_CANONICALIZATION_PATTERNS})
    assembly_format = "$inputs attr-dict-with-keyword : functional-type($inputs, $outputs) $body"
    inputs = var_operand()
    outputs = var_result()
    body = region()
    sequence_taps = attr(ArrayAttr)
    output_taps = attr(ArrayAttr)
    go_backwards = attr(IntAttr, default=None)
    until = attr(IntAttr, default=None)
    last_only = attr(ArrayAttr, default=None)
    truncate_gradient = attr(IntAttr, default=None)

    @classmethod
    def build(cls, inputs: Sequence[Value], sequence_taps, output_taps,
              body: "Block | Callable", go_backwards: bool = False, until: bool = False,
              truncate_gradient: int = -1, last_only=None, location=None) -> "ScanOp":
        """The scan over ``inputs`` (n_steps, sequences, initial states, non-sequences).
        ``body`` is a Block (its arguments as the module docstring says, ended by
        ``tensor.scan_yield``) or a function from the block arguments to the values to yield
        (detached ops, built with their ``build``)."""
        inputs = list(inputs)
        layout = ScanLayout(tuple(map(tuple, sequence_taps)), tuple(map(tuple, output_taps)), 0)
        fixed = 1 + layout.num_sequences + len(layout.fed_back)
        layout = ScanLayout(layout.sequence_taps, layout.output_taps, len(inputs) - fixed)
        if layout.num_non_sequences < 0:
            raise VerifyError(f"{cls.name}: {len(inputs)} operands, fewer than n_steps, the "
                              f"sequences and the initial states ({fixed})")
        if not isinstance(body, Block):
            body = body_from(arg_types(layout, [v.type for v in inputs]), body)
        attributes = {"sequence_taps": _int_lists(layout.sequence_taps),
                      "output_taps": _int_lists(layout.output_taps)}
        if go_backwards:
            attributes["go_backwards"] = BoolAttr(True)
        if until:
            attributes["until"] = BoolAttr(True)
        if truncate_gradient != -1:
            attributes["truncate_gradient"] = IntAttr(int(truncate_gradient))
        if last_only is not None and any(last_only):
            attributes["last_only"] = ArrayAttr(tuple(BoolAttr(bool(b)) for b in last_only))
        yielded = [v.type for v in body.last_op.operands] if body.last_op is not None else []
        results = [history_type(t) for t in state_types(layout, [v.type for v in inputs],
                                                        yielded, until=until)]
        return cls.create(inputs, results, attributes, [Region([body])], location=location)

    # -- reading the attributes ----------------------------------------------------------------

    @property
    def layout(self) -> ScanLayout:
        seq = _read_int_lists(self.attributes["sequence_taps"])
        out = _read_int_lists(self.attributes["output_taps"])
        fixed = 1 + len(seq) + sum(1 for taps in out if taps)
        return ScanLayout(seq, out, len(self.operands) - fixed)

    def flag(self, name: str) -> bool:
        value = self.attributes.get(name)
        return bool(value.data) if value is not None else False

    @property
    def n_steps(self) -> Value:
        return self.operands[0]

    def split_operands(self):
        """(sequences, initial states, non-sequences)."""
        seqs, inits, non_seqs = self.layout.operand_slices()
        ops = list(self.operands)
        return ops[seqs], ops[inits], ops[non_seqs]

    def kept_last(self) -> list[bool]:
        """Per output, whether only its last step is kept."""
        entries = self.attributes.get("last_only")
        count = len(self.layout.output_taps)
        return [bool(e.data) for e in entries.data] if entries is not None else [False] * count

    @property
    def truncation(self) -> int:
        value = self.attributes.get("truncate_gradient")
        return int(value.data) if value is not None else -1

    @property
    def yielded(self) -> list[Value]:
        return list(self.body.block.last_op.operands)

    def verify_(self):
        layout = self.layout
        if layout.num_non_sequences < 0:
            raise VerifyError(f"{self.name}: too few operands for the taps", self)
        n = self.n_steps.type
        if not isinstance(n, TensorType) or n.rank != 0 or not n.element.is_int:
            raise VerifyError(f"{self.name}: n_steps must be a rank-0 integer tensor, got {n}",
                              self)
        for k, taps in enumerate(layout.sequence_taps):
            if not taps:
                raise VerifyError(f"{self.name}: sequence #{k} has no taps", self)
        for k, taps in enumerate(layout.output_taps):
            if any(t >= 0 for t in taps):
                raise VerifyError(f"{self.name}: output #{k} has taps {list(taps)}; the taps of "
                                  f"an output must be negative (earlier steps)", self)
        types = [v.type for v in self.operands]
        seqs, inits, _ = layout.operand_slices()
        for index, t in enumerate(types[seqs]):
            if not isinstance(t, TensorType) or t.rank < 1:
                raise VerifyError(f"{self.name}: sequence #{index} must have rank >= 1, got {t}",
                                  self)
        for index, (k, t) in enumerate(zip(layout.fed_back, types[inits])):
            if not isinstance(t, TensorType) or t.rank < 1:
                raise VerifyError(f"{self.name}: the initial state of output #{k} must have "
                                  f"rank >= 1 (its rows), got {t}", self)
            if t.shape[0] is not None and t.shape[0] < layout.depth(k):
                raise VerifyError(f"{self.name}: output #{k} reads {layout.depth(k)} steps back "
                                  f"but its initial state has {t.shape[0]} rows", self)
        if len(self.regions[0].blocks) != 1:
            raise VerifyError(f"{self.name}: the body must have exactly one block", self)
        block = self.body.block
        want = arg_types(layout, types)
        got = [a.type for a in block.args]
        if got != want:
            raise VerifyError(f"{self.name}: body arguments ({', '.join(map(str, got))}) should "
                              f"be ({', '.join(map(str, want))})", self)
        if not isinstance(block.last_op, ScanYieldOp):
            raise VerifyError(f"{self.name}: the body must end with tensor.scan_yield", self)
        yielded = [v.type for v in block.last_op.operands]
        try:
            states = state_types(layout, types, yielded, until=self.flag("until"))
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        if len(self.results) != len(states):
            raise VerifyError(f"{self.name}: {len(self.results)} results for "
                              f"{len(states)} outputs", self)
        for k, (res, state) in enumerate(zip(self.results, states)):
            if res.type != history_type(state):
                raise VerifyError(f"{self.name}: result #{k} has type {res.type}, expected "
                                  f"{history_type(state)}", self)
        entries = self.attributes.get("last_only")
        if entries is not None and len(entries.data) != len(self.results):
            raise VerifyError(f"{self.name}: last_only has {len(entries.data)} entries for "
                              f"{len(self.results)} outputs", self)
        _check_isolated(self)


ScanYieldOp.traits = frozenset({TERMINATOR, HasParent(ScanOp)})


def _check_isolated(op: ScanOp) -> None:
    defined = set(op.body.block.args)
    for inner in op.body.block.ops:
        for v in inner.operands:
            if v not in defined and not _defined_inside(v, op):
                raise VerifyError(f"{op.name}: {inner.name} in the body reads a value defined "
                                  f"outside it (pass it as a non-sequence)", op)
        defined.update(inner.results)


def _defined_inside(value: Value, op: Operation) -> bool:
    owner = value.op if isinstance(value, OpResult) else value.block.parent_op
    while owner is not None:
        if owner is op:
            return True
        owner = owner.parent.parent_op if owner.parent is not None else None
    return False


def arg_types(layout: ScanLayout, operand_types) -> list[TensorType]:
    """The body's argument types for operands of ``operand_types``."""
    seqs, inits, non_seqs = layout.operand_slices()
    types = list(operand_types)
    out = []
    for taps, t in zip(layout.sequence_taps, types[seqs]):
        out += [row_type(t)] * len(taps)
    for k, t in zip(layout.fed_back, types[inits]):
        out += [state_type(t)] * len(layout.output_taps[k])
    return out + list(types[non_seqs])


def state_types(layout: ScanLayout, operand_types, yielded, until: bool = False) -> list:
    """The type of one step of each output: a fed-back output's is its initial state's row
    type (the body must yield values that fit it); another's is what the body yields."""
    count = len(layout.output_taps)
    if len(yielded) != count + (1 if until else 0):
        extra = " and the stop condition" if until else ""
        raise VerifyError(f"tensor.scan: the body yields {len(yielded)} values for {count} "
                          f"outputs{extra}")
    if until:
        cond = yielded[-1]
        if not isinstance(cond, TensorType) or cond.rank != 0:
            raise VerifyError(f"tensor.scan: the stop condition must be a scalar, got {cond}")
    _, inits, _ = layout.operand_slices()
    init_types = dict(zip(layout.fed_back, list(operand_types)[inits]))
    states = []
    for k in range(count):
        got = yielded[k]
        if k not in init_types:
            states.append(got)
            continue
        state = state_type(init_types[k])
        if not isinstance(got, TensorType) or not fits(state, got):
            raise VerifyError(f"tensor.scan: output #{k} is fed back as {state} (its initial "
                              f"state's row) but the body yields {got}")
        states.append(state)
    return states


def body_from(types: Sequence[TensorType], compute: Callable[..., Sequence[Value]]) -> Block:
    """A scan body: a block with arguments of ``types``; ``compute(*args)`` builds detached
    tensor ops and returns the values to yield."""
    from .fused import _detached_ops
    block = Block(list(types))
    outputs = list(compute(*block.args))
    for op in _detached_ops(outputs):
        block.append(op)
    block.append(ScanYieldOp.create(outputs))
    return block


# ---------------------------------------------------------------------------------------------
# Interpreter


def steps_of(op: ScanOp, args) -> int:
    """The number of steps the operands ask for, checked against the sequences' lengths."""
    layout = op.layout
    n = int(np.asarray(args[0]))
    if n < 0:
        raise ValueError(f"n_steps is {n}; it must be at least 0")
    seqs, inits, _ = layout.operand_slices()
    for k, init in zip(layout.fed_back, list(args)[inits]):
        if np.shape(init)[0] < layout.depth(k):
            raise ValueError(f"output #{k} reads {layout.depth(k)} steps back but its initial "
                             f"state (outputs_info[{k}]) has {np.shape(init)[0]} rows")
    for k, seq in enumerate(list(args)[seqs]):
        need = n + layout.span(k)
        if np.shape(seq)[0] < need:
            raise ValueError(f"sequences[{k}] has {np.shape(seq)[0]} rows; {n} steps with taps "
                             f"{list(layout.sequence_taps[k])} need {need}")
    return n


def sequence_row(layout: ScanLayout, k: int, tap: int, t: int, length: int,
                 backwards: bool) -> int:
    """The row of sequence ``k`` that tap ``tap`` reads at step ``t``."""
    row = t + tap - min(layout.sequence_taps[k])
    return length - 1 - row if backwards else row


def run_scan(op: ScanOp, args, interp: Interpreter | None = None) -> list[np.ndarray]:
    """Run ``op`` on NumPy ``args`` (the interpreter's rule)."""
    layout = op.layout
    n = steps_of(op, args)
    seq_slice, init_slice, non_slice = layout.operand_slices()
    seqs = [np.asarray(a) for a in list(args)[seq_slice]]
    non_seqs = list(args)[non_slice]
    # Each fed-back output's recent steps, oldest first (the initial rows, then new steps).
    recent = {k: [np.asarray(row) for row in np.asarray(init)[:layout.depth(k)]]
              for k, init in zip(layout.fed_back, list(args)[init_slice])}
    backwards, until = op.flag("go_backwards"), op.flag("until")
    results = [[] for _ in layout.output_taps]
    states = [r.type for r in op.results]
    for t in range(n):
        step_args = []
        for k, (taps, seq) in enumerate(zip(layout.sequence_taps, seqs)):
            step_args += [seq[sequence_row(layout, k, tap, t, len(seq), backwards)]
                          for tap in taps]
        for k in layout.fed_back:
            step_args += [recent[k][tap] for tap in layout.output_taps[k]]
        values = Interpreter().run_region(op.body, step_args + list(non_seqs))
        for k, value in enumerate(values[:len(results)]):
            value = np.asarray(value, dtype=states[k].dtype)
            if k in recent:
                expected = recent[k][-1].shape
                if value.shape != expected:
                    raise ValueError(f"output #{k} has shape {expected} but step {t} gives "
                                     f"shape {value.shape}")
                recent[k] = recent[k][1:] + [value]
            elif results[k] and results[k][-1].shape != value.shape:
                raise ValueError(f"output #{k} changes shape from {results[k][-1].shape} to "
                                 f"{value.shape} at step {t}")
            results[k].append(value)
        if until and bool(np.asarray(values[-1])):
            break
    outs = []
    for k, (rows, res, last) in enumerate(zip(results, op.results, op.kept_last())):
        if last:
            rows = rows[-1:]
        if rows:
            outs.append(np.stack(rows).astype(res.type.dtype, copy=False))
        else:
            shape = [0] + [s if s is not None else 0 for s in res.type.shape[1:]]
            if k in recent:
                shape = [0, *recent[k][-1].shape]
            outs.append(np.zeros(shape, dtype=res.type.dtype))
    return outs


@INTERPRETER.register(ScanOp)
def _scan(interp, op, args):
    return run_scan(op, args, interp)
