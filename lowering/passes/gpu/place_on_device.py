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
- **host, with its branches placed inside**: ``tensor.if`` decides on the host which branch
  runs; the ops of each branch are placed by these rules (a branch's arguments are where the
  op's inputs are, no transfer), and each result lives where both branches yield it: on the
  device when both compute it there, on the host otherwise (a transfer before the yield of the
  branch that has it elsewhere). The op's ``result_places`` attribute says where each is;
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
from lowering.ir.attributes import ArrayAttr, StringAttr
from lowering.ir.core import TERMINATOR, BlockArgument, Operation, OpResult, Value
from lowering.ir.passes import ModulePass, PassFailure, option, register_pass
from lowering.ir.types import TensorType

INDEXING_OPS = (SubtensorOp, SetSubtensorOp, IncSubtensorOp, AdvancedSubtensorOp,
                AdvancedSetSubtensorOp, AdvancedIncSubtensorOp)

HOST = "cpu"
DEVICE = "device"  # the op attribute naming the GPU context an op runs on
RESULT_PLACES = "result_places"  # a tensor.if's attribute: where each result lives

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
    inserted = _place_block(block, default, results)
    ret = block.last_op
    if isinstance(ret, ReturnOp):
        for index, value in enumerate(list(ret.operands)):
            if isinstance(value.type, TensorType):
                inserted += _move_operand(ret, index, results[index], _defining_location(value))
    return inserted


def _place_block(block, default: str, results: list[str]) -> int:
    """Place the ops of ``block`` (its terminator aside) and insert the transfers their operands
    need; returns how many."""
    ops = [op for op in block.ops if not (op is block.last_op and TERMINATOR in op.traits)]
    inserted = 0
    for op in ops:
        if isinstance(op, ConstantOp) or DEVICE in op.attributes:
            continue
        if isinstance(op, IfOp):
            inserted += _place_branches(op, default, results)
            continue
        where = _placement(op, default)
        if where != HOST:
            op.attributes[DEVICE] = StringAttr(where)
    for op in ops:
        if isinstance(op, ConstantOp) and DEVICE not in op.attributes:
            where = _constant_placement(op, results)
            if where != HOST:
                op.attributes[DEVICE] = StringAttr(where)
    for op in ops:
        if isinstance(op, (ToDeviceOp, ToHostOp)):
            continue
        where = location_of_op(op)
        for index, role in enumerate(operand_roles(op)):
            if role == SIZES:
                continue
            want = where if role == DATA else HOST
            inserted += _move_operand(op, index, want, op.location)
    return inserted


def _place_branches(op: IfOp, default: str, results: list[str]) -> int:
    """Place the ops of both branches of ``op`` and decide where each of its results lives
    (see the module docstring); returns the transfers inserted."""
    inserted = sum(_place_block(region.block, default, results) for region in op.regions)
    yields = [region.block.last_op for region in op.regions]
    places = []
    for k in range(len(op.results)):
        wheres = {location_of(y.operands[k]) for y in yields}
        places.append(wheres.pop() if len(wheres) == 1 else HOST)
    for y in yields:
        for k, place in enumerate(places):
            inserted += _move_operand(y, k, place, op.location)
    op.attributes[RESULT_PLACES] = ArrayAttr([StringAttr(p) for p in places])
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
        places = value.op.get_attr(RESULT_PLACES) if isinstance(value.op, IfOp) else None
        return places[value.index] if places else location_of_op(value.op)
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op
        if isinstance(owner, FuncOp) and value.block is owner.body.block:
            return arg_devices(owner)[value.index]
        if isinstance(owner, IfOp):  # a branch's argument is the op's input
            return location_of(owner.operands[value.index + 1])
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
    if isinstance(op, IfOp):  # the condition is read on the host; inputs go to the branches
        return [HOST_SCALAR] + [SIZES] * (count - 1)
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
