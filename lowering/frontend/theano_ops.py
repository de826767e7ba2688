"""Theano's op classes, as views of IR ops: what ``toposort()``, ``debugprint`` and profiles show.

Programs written for Theano inspect graphs by op class (``isinstance(node.op, T.Elemwise)``,
``node.op.__class__.__name__ in ['Gemv', 'CGemv']``) and read Theano's notation
(``Elemwise{exp,no_inplace}``, ``InplaceDimShuffle{1,0}``, ``Sum{acc_dtype=float64}``).
``theano_op(op)`` gives, for an IR op, an object of the Theano class that plays its part, which
prints that way. GPU ops have their own classes (``GpuElemwise`` is not an ``Elemwise``, as in
Theano's CUDA backend), chosen with ``on_gpu=True``, or for ops of the ``gpu`` dialect
(``GpuFromHost<None>``, ``HostFromGpu(gpuarray)``) and ops the placement passes put on a GPU (a
``device`` attribute). A ``tensor.custom`` op shows as the program's own ``Op`` object.

>>> import lowering.tensor as T
>>> from lowering.frontend.constructors import fmatrix, fvector
>>> x, w = fmatrix("x"), fvector("w")
>>> str(theano_op((x.dot(w)).value.op)), type(theano_op((x.dot(w)).value.op)).__name__
('CGemv{no_inplace}', 'CGemv')
>>> str(theano_op(x.T.value.op)), str(theano_op((-x).value.op)), str(theano_op(x.sum().value.op))
('InplaceDimShuffle{1,0}', 'Elemwise{neg,no_inplace}', 'Sum{acc_dtype=float32}')
>>> str(theano_op((-x).value.op, on_gpu=True)), str(theano_op(T.sqr(x).value.op, on_gpu=True,
...                                                          inplace_pattern={0: 0}))
('GpuElemwise{neg,no_inplace}', 'GpuElemwise{Sqr}[(0, 0)]<gpuarray>')
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from lowering.dialects.function_attrs import ARG_DEVICES
from lowering.dialects.tensor.indexing import DYN, ArrayIndex, Index, Slice
from lowering.ir.core import BlockArgument, Operation, OpResult, Value

from .types import TensorType

# Theano's names of scalar functions, where they differ from the IR's short names.
_ELEMWISE_NAMES = {"div": "true_div", "floordiv": "int_div", "abs": "abs_", "reciprocal": "inv",
                   "sigmoid": "ScalarSigmoid", "softplus": "ScalarSoftplus", "select": "switch",
                   "not": "invert", "and": "and_", "or": "or_", "sign": "sgn", "ne": "neq",
                   "round": "round_half_to_even", "fill": "second"}
# Inside a Composite, Theano prints comparisons in capitals and scalar_ prefixes.
_COMPOSITE_NAMES = {**_ELEMWISE_NAMES, "sigmoid": "scalar_sigmoid", "softplus": "scalar_softplus",
                    "eq": "EQ", "ne": "NEQ", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_REDUCE_SCALARS = {"sum": "add", "prod": "mul", "max": "maximum", "min": "minimum", "mean": "mean",
                   "argmax": "argmax", "argmin": "argmin"}


# ---------------------------------------------------------------------------------------------
# Base classes


class Op:
    """A Theano-style op standing for one IR operation (``operation``)."""

    def __init__(self, operation: Operation | None = None, inplace_pattern: dict | None = None):
        self.operation = operation
        self.inplace_pattern = dict(inplace_pattern or {})

    def props(self) -> str:
        """The ``{...}`` part of the op's text (empty when it has none)."""
        return ""

    def __str__(self):
        return type(self).__name__ + self.props()

    __repr__ = __str__

    def __eq__(self, other):
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self):
        return hash((type(self), str(self)))


class GpuOp(Op):
    """Marker base of ops that run on a GPU."""


def _shape_of(operation, index=0):
    return operation.operands[index].type.shape


# ---------------------------------------------------------------------------------------------
# Elementwise ops, including fused ones (Composite)


def scalar_text(operation: Operation, names: dict = _ELEMWISE_NAMES) -> str:
    """The scalar function of an elementwise IR op as Theano names it (``exp``, ``Cast{float32}``,
    ``Composite{[sub(neg(i0), i1)]}``)."""
    if operation.regions:
        return f"Composite{{{composite_text(operation)}}}"
    short = operation.name.split(".", 1)[1]
    if short == "cast":
        return f"Cast{{{operation.results[0].type.dtype.name}}}"
    return names.get(short, short)


def composite_text(operation: Operation) -> str:
    """``[expr, ...]`` for the scalar body of a fused op, its arguments named i0, i1, ..."""
    block = operation.regions[0].blocks[0]
    text: dict[Value, str] = {arg: f"i{n}" for n, arg in enumerate(block.args)}
    outputs: list[str] = []
    for op in block.ops:
        if op is block.last_op and not op.results:
            outputs = [text.get(v, "?") for v in op.operands]
            break
        if op.name.endswith(".constant"):
            value = op.attributes["value"].value
            text[op.results[0]] = str(np.asarray(value).reshape(-1)[0] if np.ndim(value) else value)
            continue
        body = f"{scalar_text(op, _COMPOSITE_NAMES)}({', '.join(text.get(v, '?') for v in op.operands)})"
        for r in op.results:
            text[r] = body
    return "[" + ", ".join(outputs) + "]"


class _ElemwiseText:
    def props(self) -> str:
        body = scalar_text(self.operation)
        if self.inplace_pattern:
            return f"{{{body}}}{sorted(self.inplace_pattern.items())}"
        if body.startswith(("Composite", "Cast")):
            return f"{{{body}}}"
        return f"{{{body},no_inplace}}"


class Elemwise(_ElemwiseText, Op):
    """An elementwise op (Theano's ``theano.tensor.elemwise.Elemwise``)."""


class GpuElemwise(_ElemwiseText, GpuOp):
    """An elementwise op on a GPU. An in-place one prints as Theano's gpuarray backend prints
    it: the scalar op's class name, the pattern and the backend (``GpuElemwise{Sqr}[(0, 0)]
    <gpuarray>``)."""

    def props(self) -> str:
        if not self.inplace_pattern:
            return super().props()
        body = scalar_text(self.operation)
        if not body.startswith(("Composite", "Cast")):
            body = scalar_class_name(body)
        return f"{{{body}}}{sorted(self.inplace_pattern.items())}<gpuarray>"


# Theano's scalar op classes whose names are not the capitalized function name.
_SCALAR_CLASS_NAMES = {"eq": "EQ", "neq": "NEQ", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE",
                       "and_": "AND", "or_": "OR", "xor": "XOR", "abs_": "Abs"}


def scalar_class_name(name: str) -> str:
    """The class name of Theano's scalar op called ``name`` (``sqr`` -> ``Sqr``, ``true_div`` ->
    ``TrueDiv``), which Theano prints for the in-place copies of ops it makes.

    >>> [scalar_class_name(n) for n in ("sqr", "true_div", "gt", "ScalarSigmoid")]
    ['Sqr', 'TrueDiv', 'GT', 'ScalarSigmoid']
    """
    if name in _SCALAR_CLASS_NAMES:
        return _SCALAR_CLASS_NAMES[name]
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


# ---------------------------------------------------------------------------------------------
# Shape ops


class _DimShuffleText:
    def props(self) -> str:
        pattern = self.operation.get_attr("pattern") or ()
        return "{" + ",".join("x" if p == -1 else str(p) for p in pattern) + "}"


class DimShuffle(_DimShuffleText, Op):
    """Permutes dims and adds or drops broadcastable ones. Its result is a view of its operand,
    which Theano 1.0 prints as ``InplaceDimShuffle`` (the class stays ``DimShuffle``)."""

    def __str__(self):
        return "InplaceDimShuffle" + self.props()


class GpuDimShuffle(_DimShuffleText, GpuOp):
    pass


class _ReshapeText:
    def props(self) -> str:
        return f"{{{self.operation.results[0].type.rank}}}"


class Reshape(_ReshapeText, Op):
    pass


class GpuReshape(_ReshapeText, GpuOp):
    pass


class Shape(Op):
    pass


class Shape_i(Op):  # noqa: N801 - Theano's name
    def props(self) -> str:
        return f"{{{self.operation.get_attr('axis')}}}"


class MakeVector(Op):
    def props(self) -> str:
        return f"{{dtype='{self.operation.results[0].type.dtype.name}'}}"


class Alloc(Op):
    pass


class GpuAlloc(GpuOp):
    pass


class ARange(Op):
    def props(self) -> str:
        return f"{{dtype='{self.operation.results[0].type.dtype.name}'}}"


class Join(Op):
    pass


class GpuJoin(GpuOp):
    pass


class Constant(Op):
    """A constant (not an Apply node in Theano's graphs, but printable)."""

    def __str__(self):
        return constant_text(self.operation.results[0])


# ---------------------------------------------------------------------------------------------
# Reductions


class _ReduceText:
    def props(self) -> str:
        operation = self.operation
        axes = list(operation.get_attr("axes") or ())
        rank = operation.operands[0].type.rank
        parts = [] if len(axes) == rank else [f"axis={axes}"]
        if operation.name in ("tensor.sum", "tensor.prod", "tensor.mean"):
            parts.append(f"acc_dtype={operation.results[0].type.dtype.name}")
        return "{" + ", ".join(parts) + "}" if parts else ""


class CAReduce(_ReduceText, Op):
    """Base of reductions by a scalar function (``isinstance(op, CAReduce)`` finds them all)."""


class Sum(CAReduce):
    pass


class Prod(CAReduce):
    pass


class Max(CAReduce):
    pass


class Min(CAReduce):
    pass


class Mean(CAReduce):
    pass


class Argmax(_ReduceText, Op):
    pass


class Argmin(_ReduceText, Op):
    pass


class GpuCAReduce(GpuOp):
    """A reduction on a GPU: ``GpuCAReduce{add}{1}`` (the scalar function, then one flag per dim
    saying whether it is reduced)."""

    def props(self) -> str:
        operation = self.operation
        short = operation.name.split(".", 1)[1]
        axes = set(operation.get_attr("axes") or ())
        mask = "".join("1" if d in axes else "0" for d in range(operation.operands[0].type.rank))
        return f"{{{_REDUCE_SCALARS.get(short, short)}}}{{{mask}}}"


# ---------------------------------------------------------------------------------------------
# Products: Theano's CPU graphs show Dot (vector.vector), CGemv (matrix.vector) and Dot22
# (matrix.matrix); GPU graphs GpuDot, GpuGemv and GpuDot22.


class Dot(Op):
    pass


class CGemv(Op):
    def props(self) -> str:
        return "{inplace}" if self.inplace_pattern else "{no_inplace}"


class Dot22(Op):
    pass


class GpuDot(GpuOp):
    pass


class GpuGemv(GpuOp):
    def props(self) -> str:
        return "{inplace}" if self.inplace_pattern else "{no_inplace}"


class GpuDot22(GpuOp):
    pass


def _dot_class(operation: Operation, on_gpu: bool) -> type[Op]:
    ranks = tuple(v.type.rank for v in operation.operands)
    if ranks == (1, 1):
        return GpuDot if on_gpu else Dot
    if ranks == (2, 2):
        return GpuDot22 if on_gpu else Dot22
    return GpuGemv if on_gpu else CGemv


# ---------------------------------------------------------------------------------------------
# Indexing


def _index_text(operation: Operation) -> str:
    """Theano's text of an index spec: ``int64:int64:``, ``::, 0``."""
    entries = operation.entries
    index_types = iter(v.type.dtype.name for v in operation.indices)

    def part(p):
        if p is DYN:
            return next(index_types)
        return "" if p is None else str(p)

    texts = []
    for entry in entries:
        if isinstance(entry, Index):
            texts.append(part(entry.value))
        elif isinstance(entry, Slice):
            texts.append(":".join(part(p) for p in entry.parts))
        elif isinstance(entry, ArrayIndex):
            texts.append(next(index_types))
    return ", ".join(texts)


class _SubtensorText:
    def props(self) -> str:
        return "{" + _index_text(self.operation) + "}"


class _IncSubtensorText:
    def props(self) -> str:
        mode = "Set" if "set" in self.operation.name else "Inc"
        return "{" + mode + ";" + _index_text(self.operation) + "}"


class Subtensor(_SubtensorText, Op):
    pass


class IncSubtensor(_IncSubtensorText, Op):
    pass


class AdvancedSubtensor(Op):
    pass


class AdvancedIncSubtensor(Op):
    def props(self) -> str:
        return "{set}" if "set" in self.operation.name else "{inc}"


class GpuSubtensor(_SubtensorText, GpuOp):
    pass


class GpuIncSubtensor(_IncSubtensorText, GpuOp):
    pass


class GpuAdvancedSubtensor(GpuOp):
    pass


class GpuAdvancedIncSubtensor(GpuOp):
    def props(self) -> str:
        return "{set}" if "set" in self.operation.name else "{inc}"


# ---------------------------------------------------------------------------------------------
# nnet and transfers


class Softmax(Op):
    pass


class LogSoftmax(Op):
    pass


class GpuSoftmax(GpuOp):
    pass


class GpuLogSoftmax(GpuOp):
    pass


class GpuFromHost(GpuOp):
    """A copy from the host to a GPU context: ``GpuFromHost<None>`` for the default context (as
    Theano names it), ``GpuFromHost<dev0>`` for a named one."""

    def __str__(self):
        context = self.operation.get_attr("context") if self.operation is not None else None
        return f"GpuFromHost<{None if context in (None, 'cuda') else context}>"


class HostFromGpu(GpuOp):
    """A copy from a GPU back to the host: ``HostFromGpu(gpuarray)``."""

    def __str__(self):
        return "HostFromGpu(gpuarray)"


class IROp(Op):
    """An IR op with no Theano counterpart: it prints as its IR name."""

    def __str__(self):
        return self.operation.name


# ---------------------------------------------------------------------------------------------
# From IR ops to Theano ops

# IR op name → (CPU class, GPU class), or a function choosing the class.
_CLASSES: dict[str, tuple | Callable] = {
    "tensor.dimshuffle": (DimShuffle, GpuDimShuffle),
    "tensor.reshape": (Reshape, GpuReshape),
    "tensor.shape": (Shape, Shape),
    "tensor.shape_i": (Shape_i, Shape_i),
    "tensor.make_vector": (MakeVector, MakeVector),
    "tensor.alloc": (Alloc, GpuAlloc),
    "tensor.fill": (Elemwise, GpuElemwise),
    "tensor.arange": (ARange, ARange),
    "tensor.concatenate": (Join, GpuJoin),
    "tensor.constant": (Constant, Constant),
    "tensor.sum": (Sum, GpuCAReduce),
    "tensor.prod": (Prod, GpuCAReduce),
    "tensor.max": (Max, GpuCAReduce),
    "tensor.min": (Min, GpuCAReduce),
    "tensor.mean": (Mean, GpuCAReduce),
    "tensor.argmax": (Argmax, Argmax),
    "tensor.argmin": (Argmin, Argmin),
    "tensor.dot": _dot_class,
    "tensor.subtensor": (Subtensor, GpuSubtensor),
    "tensor.set_subtensor": (IncSubtensor, GpuIncSubtensor),
    "tensor.inc_subtensor": (IncSubtensor, GpuIncSubtensor),
    "tensor.advanced_subtensor": (AdvancedSubtensor, GpuAdvancedSubtensor),
    "tensor.advanced_set_subtensor": (AdvancedIncSubtensor, GpuAdvancedIncSubtensor),
    "tensor.advanced_inc_subtensor": (AdvancedIncSubtensor, GpuAdvancedIncSubtensor),
    "tensor.softmax": (Softmax, GpuSoftmax),
    "tensor.log_softmax": (LogSoftmax, GpuLogSoftmax),
    "tensor.fused": (Elemwise, GpuElemwise),
}


def register_theano_op(ir_name: str, classes: tuple | Callable) -> None:
    """Say which Theano class an IR op shows as: ``(cpu_class, gpu_class)``, or a function
    ``(operation, on_gpu) -> class``. Dialects added later (GPU transfers) register theirs."""
    _CLASSES[ir_name] = classes


def theano_op(operation: Operation, on_gpu: bool | None = None,
              inplace_pattern: dict | None = None) -> Op:
    """The Theano-style op of ``operation``. ``on_gpu`` (default: whether the op belongs to the
    ``gpu`` dialect) picks the GPU classes; ``inplace_pattern`` maps outputs to the inputs they
    overwrite (``{0: 0}``), as the compiler decided."""
    if operation.name == "tensor.custom":
        from .custom_op import custom_op_of
        return custom_op_of(operation)
    if on_gpu is None:
        on_gpu = is_on_gpu(operation)
    choice = _CLASSES.get(operation.name)
    if choice is None and _is_elementwise(operation):
        choice = (Elemwise, GpuElemwise)
    if choice is None:
        return IROp(operation, inplace_pattern)
    cls = choice(operation, on_gpu) if callable(choice) and not isinstance(choice, tuple) \
        else choice[1 if on_gpu else 0]
    return cls(operation, inplace_pattern)


def is_on_gpu(operation: Operation) -> bool:
    """Whether ``operation`` runs on a GPU: an op of the ``gpu`` dialect, or one the placement
    passes gave a GPU ``device``."""
    device = operation.get_attr("device")
    return operation.name.startswith("gpu.") or (isinstance(device, str) and device != "cpu")


def _is_elementwise(operation: Operation) -> bool:
    from lowering.dialects.tensor.elementwise import ElementwiseOp
    return isinstance(operation, ElementwiseOp)


# ---------------------------------------------------------------------------------------------
# How values print (Theano's variable texts)


def constant_text(value: Value) -> str:
    """``TensorConstant{0.5}``, ``TensorConstant{(1,) of 1.0}``, ``TensorConstant{[1. 2.]}``."""
    data = value.op.attributes["value"].array
    if data.ndim and data.size and (data == data.flat[0]).all():
        return f"TensorConstant{{{data.shape} of {data.flat[0]}}}"
    text = " ".join(str(data).split())
    return f"TensorConstant{{{text if len(text) < 40 else text[:37] + '...'}}}"


def leaf_text(value: Value) -> str:
    """How an input or constant prints: its name, ``<TensorType(float32, matrix)>``, for a
    value on a GPU ``<GpuArrayType<dev1>(float32, (False, False))>`` (``<None>``: the default
    context), or the constant's text."""
    if value.name_hint:
        return value.name_hint
    if isinstance(value, OpResult) and value.op.name == "tensor.constant":
        return constant_text(value)
    context = leaf_context(value)
    if context != "cpu":
        shown = None if context == "cuda" else context
        theano_type = TensorType.from_ir(value.type)
        return f"<GpuArrayType<{shown}>({theano_type.dtype}, {theano_type.broadcastable})>"
    return f"<{TensorType.from_ir(value.type)}>"


def leaf_context(value: Value) -> str:
    """Where a leaf lives: ``'cpu'`` or a GPU context name, from its shared variable's
    container, or, for an argument of a compiled function, from the
    ``lowering.arg_devices`` attribute."""
    from lowering.compile.shared_storage import shared_container
    container = shared_container(value)
    if container is not None:
        return getattr(container, "target", "cpu")
    if isinstance(value, BlockArgument):
        func = value.block.parent_op
        devices = ARG_DEVICES.get(func) if func is not None else None
        if devices and value.index < len(devices):
            return str(devices[value.index])
    return "cpu"


def value_text(value: Value) -> str:
    """How any value prints: a leaf's text, a result's name, or Theano's ``Op.index``."""
    if not isinstance(value, OpResult) or value.op.name == "tensor.constant":
        return leaf_text(value)
    if value.name_hint:
        return value.name_hint
    return f"{theano_op(value.op)}.{value.index}"


class Apply:
    """Theano's node: ``op`` computing ``outputs`` from ``inputs``; ``operation`` is the IR op."""

    __slots__ = ("op", "inputs", "outputs", "operation")

    def __new__(cls, op, inputs, outputs, operation: Operation | None = None):
        if cls is Apply and operation is None:
            # Theano's ``gof.Apply(op, inputs, outputs)`` in a ``make_node``: an op written in
            # Python, whose node class builds its IR op.
            from .custom_op import Apply as PythonApply
            return object.__new__(PythonApply)
        return object.__new__(cls)

    def __init__(self, op: Op, inputs: list, outputs: list, operation: Operation):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.operation = operation

    # ``x.owner`` makes a new node each time; nodes of one IR op are the same node.
    def __eq__(self, other):
        return isinstance(other, Apply) and other.operation is self.operation

    def __hash__(self):
        return hash(id(self.operation))

    def __str__(self):
        return f"{self.op}({', '.join(map(str, self.inputs))})"

    __repr__ = __str__


def install() -> None:
    """Make compiled graphs (``f.maker.fgraph.toposort()``) show these classes and texts."""
    from lowering.compile import install_presentation
    install_presentation(op_view=theano_op, leaf_text=leaf_text)


# ---------------------------------------------------------------------------------------------
# Scaled products that ``specialize`` makes: tensor.gemv shows as CGemv, tensor.gemm as Gemm.


class Gemm(Op):
    def props(self) -> str:
        return "{inplace}" if self.inplace_pattern else "{no_inplace}"


class GpuGemm(GpuOp):
    def props(self) -> str:
        return "{inplace}" if self.inplace_pattern else "{no_inplace}"


register_theano_op("tensor.gemv", (CGemv, GpuGemv))
register_theano_op("gpu.to_device", (GpuFromHost, GpuFromHost))
register_theano_op("gpu.to_host", (HostFromGpu, HostFromGpu))
register_theano_op("tensor.gemm", (Gemm, GpuGemm))


# ---------------------------------------------------------------------------------------------
# Fused ops that end with reductions show which results are reduced:
# ``FusedReduce{Composite{[sum{1}(exp(i0)), exp(i0)]}}`` (a CAReduce, as PyTensor's fused
# reductions are).


def fused_outputs_text(operation: Operation) -> str:
    """``[expr, ...]`` of a fused op's results, a reduced one as ``kind{axes}(expr)``."""
    block = operation.regions[0].blocks[0]
    names = {v: n for n, v in enumerate(block.args)}
    texts = []
    for index, value in enumerate(block.last_op.operands):
        text = _single_output_text(operation, value, names)
        reduction = operation.reduction(index)
        if reduction is not None:
            axes = ",".join(map(str, reduction.axes))
            text = f"{reduction.kind}{{{axes}}}({text})"
        texts.append(text)
    return "[" + ", ".join(texts) + "]"


def _single_output_text(operation: Operation, value: Value, names: dict) -> str:
    if value in names:
        return f"i{names[value]}"
    op = value.owner
    if op.name.endswith(".constant"):
        return str(op.attributes["value"].value)
    args = ", ".join(_single_output_text(operation, v, names) for v in op.operands)
    return f"{scalar_text(op, _COMPOSITE_NAMES)}({args})"


class _FusedReduceText:
    def props(self) -> str:
        marks = str(sorted(self.inplace_pattern.items())) if self.inplace_pattern else ""
        return f"{{Composite{{{fused_outputs_text(self.operation)}}}}}{marks}"


class FusedReduce(_FusedReduceText, CAReduce):
    """Elementwise work and reductions of it in one op (``tensor.fused`` with reductions)."""


class GpuFusedReduce(_FusedReduceText, GpuCAReduce):
    pass


def _fused_class(operation: Operation, on_gpu: bool) -> type[Op]:
    if operation.get_attr("reductions"):
        return GpuFusedReduce if on_gpu else FusedReduce
    return GpuElemwise if on_gpu else Elemwise


register_theano_op("tensor.fused", _fused_class)
