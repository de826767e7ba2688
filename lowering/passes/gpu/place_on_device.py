"""``place-on-device``: run the tensor ops that compute array data on a GPU, with transfers at
the edges (Theano's GpuFromHost / HostFromGpu).

Where values live when the function is called and returns is given by two attributes of the
``func.func`` (set by ``function()``; missing means all ``"cpu"``):

- ``lowering.arg_devices = ["cpu", "cuda", ...]``: one entry per argument, ``"cpu"`` (a host
  array) or a GPU context name (an array already on that device: a shared variable resident
  there, a GPUArray input);
- ``lowering.result_devices = [...]``: one entry per result, where the caller wants it
  (``"cpu"``: copied back to the host; a context: kept on the device, as for
  ``x.transfer(None)`` and updates of shared variables resident on the device).

Placement, op by op in program order:

- **host**: ``tensor.shape`` and ``tensor.shape_i`` (they read sizes only, which the host knows
  for device arrays too), integer and boolean rank-0 elementwise ops (shape and index
  arithmetic), ``tensor.make_vector`` of host scalars (a shape), and ops of at most one element
  whose inputs are all host values of at most one element (``lr * 2``); a ``tensor.custom`` op
  without a ``device`` runs Python code on NumPy arrays, on the host;
- **host, with what it holds**: ``tensor.if``: its inputs are brought to the host and its
  branches run there (no op inside a branch is placed on a device);
- **device**: every other tensor op, marked ``device = "<context>"``: the context of its first
  operand on a device, else the pass option ``context``, else the first context named by
  ``arg_devices``/``result_devices``, else ``"cuda"``. An op that already has a ``device``
  keeps it;
- **constants** go where their users are: on the device when every user reads them there as
  data, on the host otherwise (a ``gpu.to_device`` then brings them to device users).

Operands: a device op reads its *data* operands on its device; the operands that only give
sizes, indices or scalar factors are read by the host code that launches it (the ``shape`` of a
``reshape``, the ``dims`` of an ``alloc``, ``start``/``stop``/``step`` of ``arange``, the scalar
indices of basic indexing, ``alpha``/``beta`` of ``gemv``/``gemm``), and the ``model`` of a
``fill`` and the input of ``shape``/``shape_i`` only lend their sizes (no transfer at all).

Where a value is not where its reader wants it, a transfer is inserted before the reader, with
the reader's location: ``gpu.to_device {context}`` for a host value read on a device,
``gpu.to_host`` for a device value read on the host (both for a value on another context), and
before ``func.return`` for each result not where ``result_devices`` asks (with the location of
the op computing it). Each use gets its own transfer; ``elide-transfers`` merges and cancels them.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> m = parse_module('''
... func.func @sq(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
...   %b = "tensor.sqr"(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32>
...   func.return %b : tensor<?x?xf32>
... }''')
>>> PlaceOnDevice(context="cuda").apply(m)
>>> print(print_op(m))
module {
  func.func @sq(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %0 = gpu.to_device %a context "cuda" : tensor<?x?xf32> -> tensor<?x?xf32>
    %b = tensor.sqr %0 {device = "cuda"} : tensor<?x?xf32>
    %1 = gpu.to_host %b context "cuda" : tensor<?x?xf32> -> tensor<?x?xf32>
    func.return %1 : tensor<?x?xf32>
  }
}
"""
from __future__ import annotations

from lowering.dialects.builtin import FuncOp, ReturnOp
from lowering.dialects.function_attrs import ARG_DEVICES, RESULT_DEVICES
from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.dialects.gpu.transfers import DEFAULT_CONTEXT
from lowering.dialects.tensor import (AdvancedIncSubtensorOp, AdvancedSetSubtensorOp,
                                      AdvancedSubtensorOp, AllocOp, ArangeOp, ConstantOp, CustomOp,
                                      ElementwiseOp, FillOp, GemmOp, GemvOp, IncSubtensorOp,
                                      MakeVectorOp, ReshapeOp, SetSubtensorOp, ShapeIOp, ShapeOp,
                                      SubtensorOp, TensorOp)
from lowering.dialects.tensor.branches import IfOp
from lowering.ir.attributes import StringAttr
from lowering.ir.core import BlockArgument, Operation, OpResult, Value
from lowering.ir.passes import ModulePass, PassFailure, option, register_pass
from lowering.ir.types import TensorType

INDEXING_OPS = (SubtensorOp, SetSubtensorOp, IncSubtensorOp, AdvancedSubtensorOp,
                AdvancedSetSubtensorOp, AdvancedIncSubtensorOp)

HOST = "cpu"
DEVICE = "device"  # the op attribute naming the GPU context an op runs on

# What a reader does with an operand.
DATA = "data"  # reads its elements where the reader runs
HOST_SCALAR = "host"  # reads it on the host (sizes, indices, scalar factors)
SIZES = "sizes"  # reads only its sizes: anywhere, no transfer


@register_pass
class PlaceOnDevice(ModulePass):
    """Mark the ops computing array data to run on a GPU and insert host/device transfers."""

    name = "place-on-device"
    context: str | None = option(None, "the GPU context ops run on when none of their operands "
                                       "is on a device (default: the first context the function's "
                                       "arg_devices/result_devices name, else cuda)")

    def apply(self, module: Operation) -> None:
        for func in _functions(module):
            if _has_tensor_ops(func):
                place_function(func, self.context)


def place_function(func: FuncOp, context: str | None = None) -> int:
    """Place ``func``'s ops (see the module docstring); returns the number of transfers
    inserted.

    >>> from lowering.ir.parser import parse_module
    >>> m = parse_module('''
    ... func.func @f(%w: tensor<?xf32>) -> tensor<?xf32>
    ...     attributes {lowering.arg_devices = ["dev1"], lowering.result_devices = ["dev1"]} {
    ...   %v = "tensor.exp"(%w) : (tensor<?xf32>) -> tensor<?xf32>
    ...   func.return %v : tensor<?xf32>
    ... }''')
    >>> place_function(m.functions[0]), m.functions[0].body.block.first_op.get_attr(DEVICE)
    (0, 'dev1')
    """
    args = arg_devices(func)
    results = result_devices(func)
    default = context or next((d for d in (*args, *results) if d != HOST), DEFAULT_CONTEXT)
    block = func.body.block
    ops = [op for op in block.ops if not isinstance(op, ReturnOp)]
    for op in ops:
        if isinstance(op, ConstantOp) or DEVICE in op.attributes:
            continue
        where = _placement(op, default)
        if where != HOST:
            op.attributes[DEVICE] = StringAttr(where)
    for op in ops:
        if isinstance(op, ConstantOp) and DEVICE not in op.attributes:
            where = _constant_placement(op, results)
            if where != HOST:
                op.attributes[DEVICE] = StringAttr(where)
    inserted = 0
    for op in ops:
        if isinstance(op, (ToDeviceOp, ToHostOp)):
            continue
        where = location_of_op(op)
        for index, role in enumerate(operand_roles(op)):
            if role == SIZES:
                continue
            want = where if role == DATA else HOST
            inserted += _move_operand(op, index, want, op.location)
    ret = block.last_op
    if isinstance(ret, ReturnOp):
        for index, value in enumerate(list(ret.operands)):
            if isinstance(value.type, TensorType):
                inserted += _move_operand(ret, index, results[index], _defining_location(value))
    return inserted


# ---------------------------------------------------------------------------------------------
# Where things are


def arg_devices(func: FuncOp) -> list[str]:
    """Where each argument of ``func`` lives (``lowering.arg_devices``, all ``"cpu"`` when absent).

    >>> from lowering.ir.types import F32
    >>> arg_devices(FuncOp.build("f", [TensorType((2,), F32)], []))
    ['cpu']
    """
    return _devices(func, ARG_DEVICES, len(func.function_type.inputs))


def result_devices(func: FuncOp) -> list[str]:
    """Where the caller wants each result of ``func`` (``lowering.result_devices``, all ``"cpu"``
    when absent)."""
    return _devices(func, RESULT_DEVICES, len(func.function_type.results))


def _devices(func: FuncOp, definition, count: int) -> list[str]:
    if not definition.present(func):
        return [HOST] * count
    wrong = definition.problem(func)  # the verifier's rule, for IR no one has verified
    if wrong is not None:
        raise PassFailure(f"@{func.sym_name}: {wrong}", func)
    return definition.get(func)


def op_device(op: Operation) -> str | None:
    """The GPU context ``op`` runs on (its ``device`` attribute), or None for the host."""
    return op.get_attr(DEVICE)


def location_of_op(op: Operation) -> str:
    """Where ``op`` runs: a context, or ``"cpu"``; a transfer runs where its result goes."""
    if isinstance(op, ToDeviceOp):
        return op.context
    if isinstance(op, ToHostOp):
        return HOST
    return op_device(op) or HOST


def location_of(value: Value) -> str:
    """Where ``value`` lives: the context of a device value, or ``"cpu"``.

    >>> from lowering.ir.types import F32
    >>> func = FuncOp.build("f", [TensorType((2,), F32)], [])
    >>> ARG_DEVICES.set(func, ["dev0"])
    >>> location_of(func.args[0]), location_of(ToHostOp.build(func.args[0]).result)
    ('dev0', 'cpu')
    """
    if isinstance(value, OpResult):
        return location_of_op(value.op)
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op
        if isinstance(owner, FuncOp) and value.block is owner.body.block:
            return arg_devices(owner)[value.index]
    return HOST


def operand_roles(op: Operation) -> list[str]:
    """What ``op`` does with each operand: ``"data"`` (reads elements where it runs),
    ``"host"`` (a size, index or scalar factor the host reads) or ``"sizes"`` (only its sizes).

    >>> from lowering.ir.core import Block
    >>> from lowering.ir.types import F32, I64
    >>> x, n = Block([TensorType((None,), F32), TensorType((), I64)]).args
    >>> operand_roles(AllocOp.build(x, n))
    ['data', 'host']
    """
    count = len(op.operands)
    if isinstance(op, (ShapeOp, ShapeIOp)):
        return [SIZES] * count
    if isinstance(op, FillOp):
        return [SIZES, DATA]
    if isinstance(op, ReshapeOp):
        return [DATA, HOST_SCALAR]
    if isinstance(op, AllocOp):
        return [DATA] + [HOST_SCALAR] * (count - 1)
    if isinstance(op, ArangeOp):
        return [HOST_SCALAR] * count
    if isinstance(op, (GemvOp, GemmOp)):  # acc, alpha, lhs, rhs, beta
        return [DATA, HOST_SCALAR, DATA, DATA, HOST_SCALAR]
    if isinstance(op, INDEXING_OPS):
        # The index operands come last; a rank-0 one is a scalar index or slice bound (the host
        # computes the view), an array is read element for element.
        first_index = count - len(op.indices)
        return [DATA if i < first_index or v.type.rank > 0 else HOST_SCALAR
                for i, v in enumerate(op.operands)]
    return [DATA] * count


# ---------------------------------------------------------------------------------------------
# Placement decisions


def _at_most_one_element(t) -> bool:
    return isinstance(t, TensorType) and all(d == 1 for d in t.shape)


def _placement(op: Operation, default: str) -> str:
    """The context ``op`` runs on, or ``"cpu"`` (constants are decided afterwards)."""
    if not isinstance(op, TensorOp) or isinstance(op, (ShapeOp, ShapeIOp, CustomOp, IfOp)):
        return HOST
    roles = operand_roles(op)
    read = [v for v, role in zip(op.operands, roles) if role != SIZES]
    on_host = all(_host_value(v) for v in read)
    if isinstance(op, MakeVectorOp) and on_host:
        return HOST
    small = all(_at_most_one_element(r.type) for r in op.results)
    if small and on_host and all(_at_most_one_element(v.type) for v in read):
        return HOST
    if isinstance(op, ElementwiseOp) and op.result.type.rank == 0 and \
            not op.result.type.element.is_float:
        return HOST
    data_devices = [location_of(v) for v, role in zip(op.operands, roles)
                    if role == DATA and not _is_constant(v)]
    return next((d for d in data_devices if d != HOST), default)


def _host_value(value: Value) -> bool:
    """Whether ``value`` is on the host (constants count as host values until placed)."""
    return _is_constant(value) or location_of(value) == HOST


def _is_constant(value: Value) -> bool:
    return isinstance(value, OpResult) and isinstance(value.op, ConstantOp)


def _constant_placement(op: ConstantOp, results: list[str]) -> str:
    """A constant's place: the device of its users when all of them read it there as data."""
    wanted = set()
    for use in op.result.uses:
        user = use.op
        if isinstance(user, ReturnOp):
            wanted.add(results[use.index])
        elif isinstance(user, ToDeviceOp):
            wanted.add(user.context)
        elif isinstance(user, ToHostOp):
            wanted.add(HOST)
        else:
            role = operand_roles(user)[use.index]
            if role == SIZES:
                continue
            wanted.add(location_of_op(user) if role == DATA else HOST)
    return wanted.pop() if len(wanted) == 1 else HOST


# ---------------------------------------------------------------------------------------------
# Transfers


def _move_operand(user: Operation, index: int, want: str, location) -> int:
    """Make operand ``index`` of ``user`` a value living at ``want``, inserting transfers before
    ``user``; returns how many."""
    value = user.operands[index]
    have = location_of(value)
    if have == want or not isinstance(value.type, TensorType):
        return 0
    block = user.parent
    count = 0
    if have != HOST:
        value = block.insert_before(ToHostOp.build(value, have, location=location), user).result
        count += 1
    if want != HOST:
        value = block.insert_before(ToDeviceOp.build(value, want, location=location),
                                    user).result
        count += 1
    user.set_operand(index, value)
    return count


def _defining_location(value: Value):
    if isinstance(value, OpResult):
        return value.op.location
    owner = value.block.parent_op if isinstance(value, BlockArgument) else None
    return owner.location if owner is not None else None


# ---------------------------------------------------------------------------------------------


def _functions(module: Operation) -> list[FuncOp]:
    if isinstance(module, FuncOp):
        return [module]
    return [op for op in module.walk() if isinstance(op, FuncOp)]


def _has_tensor_ops(func: FuncOp) -> bool:
    """Whether ``func`` works on tensors (loops-level functions are left alone)."""
    ftype = func.function_type
    return any(isinstance(t, TensorType) for t in (*ftype.inputs, *ftype.results)) or any(
        isinstance(op, TensorOp) for op in func.body.block.ops)
