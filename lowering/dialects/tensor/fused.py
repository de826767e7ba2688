"""``tensor.fused``: elementwise work (and reductions of it) as one op with a scalar body.

Like MLIR's ``linalg.generic``, the op's region computes one element: its block has one scalar
argument per operand (the operand's element at the current position) and ends with
``scalar.yield``, giving one scalar per result. All operands have the same rank; they broadcast
as elementwise ops do (a dim broadcasts only where its type says ``1``), and their broadcast shape
is the op's *iteration space*. The body holds only ``scalar`` dialect ops and reads nothing from
outside (constants are ``scalar.constant`` ops inside it).

Each result is either the yielded values over the whole space, or a reduction of them: the
optional ``reductions`` attribute holds one entry per result, ``{kind = "none"}`` or
``{kind = "sum", axes = [1], keepdims = false}`` (kinds ``sum prod max min mean``, with the
semantics and result element types of ``tensor.sum`` ... ``tensor.mean``). That is how
elementwise producers fused into the reduction consuming them, and sibling reductions of one
input, become one pass over memory::

    %r:2 = "tensor.fused"(%x) ({
    ^bb0(%a: f32):
      %e = "scalar.exp"(%a) : (f32) -> f32
      "scalar.yield"(%e, %e) : (f32, f32) -> ()
    }) {reductions = [{kind = "none"}, {kind = "sum", axes = [0 : i64], keepdims = false}]}
       : (tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>)

The ``fuse`` pass makes these ops; they carry the locations of every op they replace.

>>> from lowering.dialects import scalar
>>> from lowering.ir.types import F32, TensorType
>>> x = Block([TensorType((None, 3), F32)]).args[0]
>>> body = body_from([F32], lambda a: [scalar.ExpOp.build(a).result])
>>> op = FusedOp.build([x], body, reductions=[Reduction("sum", (1,))])
>>> str(op.results[0].type), [o.name for o in op.body.block.ops]
('tensor<?xf32>', ['scalar.exp', 'scalar.yield'])
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from lowering.dialects.scalar import YieldOp
from lowering.dialects.scalar.position import LinearIndexOp
from lowering.ir.attributes import ArrayAttr, BoolAttr, DictAttr, IntAttr, StringAttr
from lowering.ir.core import (ISOLATED, PURE, Block, OpResult, Operation, Region, Value,
                              VerifyError, attr, region, register_op, var_operand, var_result)
from lowering.ir.interpreter import INTERPRETER
from lowering.ir.traits import HAS_CANONICALIZATION_PATTERNS
from lowering.ir.types import ScalarType, TensorType

from .base import TensorOp
from .reduction import REDUCTION_OPS
from .typing import ShapeError, broadcast_shapes, normalize_axes

# The reductions a fused op can end with (argmax/argmin are not folds of a scalar function).
REDUCTION_KINDS = ("sum", "prod", "max", "min", "mean")


@dataclass(frozen=True)
class Reduction:
    """How one result of a fused op reduces its yielded values: ``kind`` over ``axes``.

    >>> r = Reduction("max", (0, 2), keepdims=True)
    >>> str(r.to_attribute())
    '{kind = "max", axes = [0 : i64, 2 : i64], keepdims = true}'
    >>> Reduction.from_attribute(r.to_attribute()) == r
    True
    """

    kind: str
    axes: tuple[int, ...]
    keepdims: bool = False

    def to_attribute(self) -> DictAttr:
        return DictAttr((("kind", StringAttr(self.kind)),
                         ("axes", ArrayAttr(tuple(IntAttr(a) for a in self.axes))),
                         ("keepdims", BoolAttr(self.keepdims))))

    @staticmethod
    def from_attribute(attribute) -> "Reduction | None":
        """The reduction an entry of ``reductions`` describes (None for ``kind = "none"``)."""
        if not isinstance(attribute, DictAttr):
            raise VerifyError(f"a reductions entry must be a dictionary, got {attribute}")
        entry = dict(attribute.data)
        kind = entry.get("kind")
        if not isinstance(kind, StringAttr):
            raise VerifyError(f"a reductions entry needs a string 'kind', got {attribute}")
        if kind.data == "none":
            if set(entry) != {"kind"}:
                raise VerifyError(f"an entry of kind \"none\" takes no other keys: {attribute}")
            return None
        if kind.data not in REDUCTION_KINDS:
            raise VerifyError(f"unknown reduction kind \"{kind.data}\" (kinds: none, "
                              f"{', '.join(REDUCTION_KINDS)})")
        axes, keepdims = entry.get("axes"), entry.get("keepdims", BoolAttr(False))
        if not isinstance(axes, ArrayAttr) or not all(isinstance(a, IntAttr) for a in axes):
            raise VerifyError(f"reduction entry {attribute} needs 'axes', a list of integers")
        if not isinstance(keepdims, IntAttr) or set(entry) - {"kind", "axes", "keepdims"}:
            raise VerifyError(f"reduction entry {attribute} has unknown keys or a bad 'keepdims'")
        return Reduction(kind.data, tuple(a.data for a in axes), bool(keepdims.data))

    def result_type(self, space: TensorType) -> TensorType:
        """The type of reducing values of type ``space`` this way."""
        return REDUCTION_OPS[self.kind].infer_type(space, self.axes, self.keepdims)


NO_REDUCTION = DictAttr((("kind", StringAttr("none")),))


def body_from(element_types: Sequence[ScalarType],
              compute: Callable[..., Sequence[Value]]) -> Block:
    """A fused body: a block with one argument per element type; ``compute(*args)`` builds scalar
    ops (detached, with their ``build``) and returns the values to yield.

    >>> from lowering.dialects import scalar
    >>> from lowering.ir.types import F64
    >>> block = body_from([F64, F64], lambda a, b: [scalar.AddOp.build(a, b).result])
    >>> [op.name for op in block.ops]
    ['scalar.add', 'scalar.yield']
    """
    block = Block(element_types)
    outputs = list(compute(*block.args))
    for op in _detached_ops(outputs):
        block.append(op)
    block.append(YieldOp.create(outputs))
    return block


def _detached_ops(outputs) -> list[Operation]:
    """The not-yet-placed ops computing ``outputs``, producers first."""
    order: list[Operation] = []
    seen: set[int] = set()

    def visit(value):
        if not isinstance(value, OpResult) or value.op.parent is not None or id(value.op) in seen:
            return
        seen.add(id(value.op))
        for v in value.op.operands:
            visit(v)
        order.append(value.op)

    for out in outputs:
        visit(out)
    return order


def iteration_space(operand_types: Sequence[TensorType]) -> TensorType:
    """The broadcast shape of the operands (elementwise rules), as a type of their first element
    type; an error names the operands that do not go together."""
    if not operand_types:
        raise VerifyError("needs at least one operand")
    for index, t in enumerate(operand_types):
        if not isinstance(t, TensorType):
            raise VerifyError(f"operand #{index} must be a tensor, got {t}")
    try:
        shape = broadcast_shapes([t.shape for t in operand_types])
    except ShapeError as exc:
        raise ShapeError(f"{exc.message}; operand types are "
                         f"{', '.join(map(str, operand_types))}") from None
    return TensorType(shape, operand_types[0].element)


def fits(result: TensorType, inferred: TensorType) -> bool:
    """Whether a result of type ``result`` may stand for values of type ``inferred``: the same
    element type and rank, and each size the same or left open (``?``) by the result.

    >>> from lowering.ir.types import F32
    >>> fits(TensorType((None, 3), F32), TensorType((5, 3), F32))
    True
    >>> fits(TensorType((1, 3), F32), TensorType((None, 3), F32))
    False
    """
    return (isinstance(result, TensorType) and result.element == inferred.element
            and result.rank == inferred.rank
            and all(r is None or r == i for r, i in zip(result.shape, inferred.shape)))


@register_op
class FusedOp(TensorOp):
    """``tensor.fused(inputs...)``: a scalar body applied over the inputs' broadcast shape, each
    result optionally reduced (see the module docstring)."""

    name = "tensor.fused"
    # The body reads only its arguments.
    traits = frozenset({PURE, ISOLATED, HAS_CANONICALIZATION_PATTERNS})
    assembly_format = "$inputs attr-dict-with-keyword : functional-type($inputs, $outputs) $body"
    inputs = var_operand()
    outputs = var_result()
    body = region()
    reductions = attr(ArrayAttr, default=None)

    @classmethod
    def build(cls, inputs: Sequence[Value], body: Block,
              reductions: Sequence[Reduction | None] | None = None,
              result_types: Sequence[TensorType] | None = None, location=None) -> "FusedOp":
        """The op over ``inputs`` computing ``body`` (see ``body_from``). Result types are
        inferred, or given (each must ``fit`` the inferred one: the fuse pass keeps the types of
        the values it replaces)."""
        inputs = list(inputs)
        terminator = body.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyError(f"{cls.name}: the body must end with scalar.yield")
        count = len(terminator.operands)
        reductions = list(reductions) if reductions is not None else [None] * count
        if len(reductions) != count:
            raise VerifyError(f"{cls.name}: {len(reductions)} reductions for {count} results")
        input_types = [v.type for v in inputs]
        rank = iteration_space(input_types).rank
        try:
            reductions = [None if r is None else Reduction(r.kind, normalize_axes(r.axes, rank),
                                                           r.keepdims) for r in reductions]
        except VerifyError as exc:
            raise VerifyError(f"{cls.name}: {exc.message}") from None
        inferred = _result_types(cls.name, input_types, [v.type for v in terminator.operands],
                                 reductions)
        types = list(result_types) if result_types is not None else inferred
        attrs = {}
        if any(r is not None for r in reductions):
            attrs["reductions"] = ArrayAttr(tuple(NO_REDUCTION if r is None else r.to_attribute()
                                                  for r in reductions))
        return cls.create(inputs, types, attrs, [Region([body])], location=location)

    def reduction(self, index: int) -> Reduction | None:
        """How result ``index`` is reduced (None: it is the values over the whole space)."""
        entries = self.attributes.get("reductions")
        return None if entries is None else Reduction.from_attribute(entries.data[index])

    def reduction_list(self) -> list[Reduction | None]:
        return [self.reduction(i) for i in range(len(self.results))]

    @property
    def space(self) -> TensorType:
        """The iteration space (the inputs' broadcast shape)."""
        return iteration_space([v.type for v in self.operands])

    @property
    def yielded(self) -> list[Value]:
        """The scalar values the body yields, one per result."""
        return list(self.body.block.last_op.operands)

    def verify_(self):
        if len(self.regions[0].blocks) != 1:
            raise VerifyError(f"{self.name}: the body must have exactly one block", self)
        block = self.body.block
        if len(block.args) != len(self.operands):
            raise VerifyError(f"{self.name}: the body takes {len(block.args)} arguments for "
                              f"{len(self.operands)} inputs", self)
        for index, (arg, value) in enumerate(zip(block.args, self.operands)):
            if not isinstance(value.type, TensorType) or arg.type != value.type.element:
                raise VerifyError(f"{self.name}: body argument #{index} has type {arg.type}; "
                                  f"input #{index} is {value.type}", self)
        inside = set(block.args)
        for op in block.ops:
            if not op.name.startswith("scalar."):
                raise VerifyError(f"{self.name}: the body may hold only scalar ops, not "
                                  f"{op.name}", self)
            for v in op.operands:
                if v not in inside:
                    raise VerifyError(f"{self.name}: {op.name} in the body reads a value "
                                      f"defined outside it", self)
            inside.update(op.results)
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyError(f"{self.name}: the body must end with scalar.yield", self)
        if len(terminator.operands) != len(self.results):
            raise VerifyError(f"{self.name}: the body yields {len(terminator.operands)} values "
                              f"for {len(self.results)} results", self)
        entries = self.attributes.get("reductions")
        if entries is not None and len(entries) != len(self.results):
            raise VerifyError(f"{self.name}: {len(entries)} reductions for "
                              f"{len(self.results)} results", self)
        try:
            reductions = self.reduction_list()
            inferred = _result_types(self.name, [v.type for v in self.operands],
                                     [v.type for v in terminator.operands], reductions)
        except VerifyError as exc:
            raise VerifyError(exc.message, self) from None
        for index, (res, want) in enumerate(zip(self.results, inferred)):
            if not fits(res.type, want):
                raise VerifyError(f"{self.name}: result #{index} has type {res.type}, which does "
                                  f"not fit the computed {want}", self)


def _result_types(name: str, input_types, yield_types, reductions) -> list[TensorType]:
    try:
        space = iteration_space(list(input_types))
    except VerifyError as exc:
        raise type(exc)(f"{name}: {exc.message}") from None
    types = []
    for index, (element, reduction) in enumerate(zip(yield_types, reductions)):
        if not isinstance(element, ScalarType):
            raise VerifyError(f"{name}: yielded value #{index} must be a scalar, got {element}")
        values = space.with_element(element)
        if reduction is None:
            types.append(values)
            continue
        if reduction.kind not in REDUCTION_KINDS:
            raise VerifyError(f"{name}: unknown reduction kind \"{reduction.kind}\"")
        try:
            types.append(reduction.result_type(values))
        except VerifyError as exc:
            raise VerifyError(f"{name}: result #{index}: {exc.message}") from None
    return types


# ---------------------------------------------------------------------------------------------
# Interpreter: the scalar body runs once, on whole NumPy arrays (each scalar op's ``evaluate``
# works elementwise on arrays), then reduced results are reduced.


def check_space(op: FusedOp, arrays) -> tuple[int, ...]:
    """The run-time iteration space; sizes must agree wherever the type does not say ``1``."""
    shape = []
    for dim in range(op.space.rank):
        sizes = {np.shape(a)[dim] for a, v in zip(arrays, op.operands) if v.type.shape[dim] != 1}
        if len(sizes) > 1:
            shapes = ", ".join(str(np.shape(a)) for a in arrays)
            raise ValueError(f"{op.name}: input shapes {shapes} differ in dimension {dim} (only "
                             f"dimensions typed 1 broadcast)")
        shape.append(sizes.pop() if sizes else 1)
    return tuple(shape)


def bind_positions(interp, block: Block, space: tuple[int, ...]) -> None:
    """Give the body's ``scalar.linear_index`` ops the row-major positions of ``space``."""
    positions = None
    for inner in block.ops:
        if isinstance(inner, LinearIndexOp):
            if positions is None:
                positions = np.arange(math.prod(space), dtype=np.uint64).reshape(space)
            interp.env[inner.result] = positions


@INTERPRETER.register(FusedOp)
def _fused(interp, op, args):
    arrays = [np.asarray(a) for a in args]
    space = check_space(op, arrays)
    bind_positions(interp, op.body.block, space)
    values = interp.run_region(op.body, arrays)
    outs = []
    for value, res, reduction in zip(values, op.results, op.reduction_list()):
        full = np.broadcast_to(np.asarray(value), space)
        if reduction is None:
            outs.append(np.array(full, dtype=res.type.dtype))
            continue
        reducer = REDUCTION_OPS[reduction.kind].reducer
        try:
            with np.errstate(all="ignore"):
                reduced = reducer(full, reduction.axes, res.type.dtype, reduction.keepdims)
        except ValueError as exc:
            raise ValueError(f"{op.name}: result #{res.index}: {exc}") from None
        outs.append(np.asarray(reduced, dtype=res.type.dtype))
    return outs
