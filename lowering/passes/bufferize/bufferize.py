"""``bufferize``: tensor dialect → loops dialect, in destination-passing style.

Every ``func.func`` that has tensors in its signature or body is rebuilt over buffers:

- a tensor argument becomes a ``!loops.buffer`` with the tensor's shape and run-time strides and
  offset (``!loops.buffer<?x3xf32, strides=[?, ?], offset=?>``): any NumPy layout is accepted;
- every op writes its result into a destination: a fresh ``loops.alloc`` (sizes from
  ``loops.dim``), or no buffer at all where a view says it (dimshuffle, basic subtensor,
  reshape of contiguous data);
- every result the function returns is a fresh contiguous allocation the caller owns: a returned
  argument, view, constant or value returned twice is copied first;
- run-time conditions (equal sizes of elementwise operands and of a dot's contraction, indices
  in range, valid reshapes, reductions of empty axes, ...) become ``loops.assert`` ops at the
  function's top level, never inside a loop, each with a message naming the op, the user's line
  and the shapes, and an ``error_code`` unique in the module (1, 2, ... in program order);
- loop nests over results have a ``loops.parallel`` outermost and the last (contiguous)
  dimension innermost, so that ``parallelize`` can thread them and LLVM vectorize them.

Constants: rank-0 and splat constants become ``scalar.constant`` values used directly in loop
bodies (a buffer is made with ``loops.alloc`` + ``loops.fill`` only where one is needed); any
other constant becomes ``loops.constant``, a read-only global buffer.

``tensor.dot``, ``tensor.gemv`` and ``tensor.gemm`` lower to loop nests; with ``use-blas`` an
f32/f64 product calls CBLAS through ``loops.call`` (``cblas_?gemm``, ``cblas_?gemv``,
``cblas_?dot``, with the calling convention of ``lowering.dialects.loops.externals``), see
``bufferize.dot``. A ``tensor.fused`` op becomes one loop nest running its scalar body.

On a GPU: an op with a ``device`` attribute (``place-on-device``) puts what it allocates in
device memory (``space="device"``), arguments and results that the function's
``lowering.arg_devices`` / ``lowering.result_devices`` place on a context are device buffers,
tensor transfers become buffer transfers, and the host never loads or stores device memory
(``bufferize.device``).

``Bufferize.lower`` also returns, for each function, a ``BufferMap``: which tensor value each
buffer was made for, so later steps (``inplace``'s report in tensor terms) know where a buffer's
data comes from without reading it off names.

The per-op lowerings live next to this module, one file per op family (``bufferize_*.py``), on
the machinery of ``bufferize.core``.

>>> from lowering.ir.parser import parse_module
>>> from lowering.ir.printer import print_op
>>> module = parse_module('''
... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
...   %y = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
...   func.return %y : tensor<?xf32>
... }''')
>>> Bufferize().apply(module)
>>> print(print_op(module))
module {
  func.func @f(%x: !loops.buffer<?xf32, strides=[?], offset=?>) -> !loops.buffer<?xf32> {
    %0 = scalar.constant 1 : index
    %1 = scalar.constant 0 : index
    %2 = loops.dim %x, 0 : !loops.buffer<?xf32, strides=[?], offset=?>
    %y = loops.alloc(%2) : !loops.buffer<?xf32>
    loops.parallel (%arg0) = (%1) to (%2) step (%0) {
      %3 = loops.load %x[%arg0] : !loops.buffer<?xf32, strides=[?], offset=?>
      %4 = scalar.exp %3 : f32
      loops.store %4, %y[%arg0] : !loops.buffer<?xf32>
      loops.yield
    }
    func.return %y : !loops.buffer<?xf32>
  }
}
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from lowering.dialects.builtin import FuncOp, ReturnOp
from lowering.dialects.gpu.transfers import DEFAULT_CONTEXT
from lowering.dialects.tensor.branch_sinking import sink_into_branches
from lowering.ir.core import BlockArgument, OpResult, Operation, Value
from lowering.ir.location import default_location
from lowering.ir.passes import ModulePass, PassFailure, option, register_pass
from lowering.ir.rewriter import Rewriter
from lowering.ir.types import FunctionType, TensorType

from . import (branches as bufferize_branches, dot as bufferize_dot,
               elementwise as bufferize_elementwise,
               fused as bufferize_fused, custom as bufferize_custom,
               indexing as bufferize_indexing, nnet as bufferize_nnet,
               reductions as bufferize_reductions, shapes as bufferize_shapes)
from . import random as bufferize_random  # noqa: F401
from . import scan as bufferize_scan  # noqa: F401
from . import specify_shape as bufferize_specify_shape  # noqa: F401
from . import conv as bufferize_conv, pool as bufferize_pool  # noqa: F401
from . import grad_filter as bufferize_grad_filter  # noqa: F401
from . import along_axis as bufferize_along_axis  # noqa: F401
from .device_complex import refuse_complex_on_device
from . import device_special  # noqa: F401  (special functions refused on a GPU)
from . import sparse as bufferize_sparse  # noqa: F401
from . import sparse_combine as bufferize_sparse_combine  # noqa: F401
from ..dce import eliminate_dead_code
from .core import (BUFFERIZE, DEVICE_BUFFERIZE, AlwaysFails, FunctionLowering, Lowered,
                   input_buffer_type, result_buffer_type)
from .device import confine_to_device, host_accesses_to_device, memory_space_of, move
from ..gpu.place_on_device import HOST, arg_devices, location_of, op_device, result_devices


@register_pass
class Bufferize(ModulePass):
    """Lower tensor ops to buffers and loop nests (destination passing, run-time checks)."""

    name = "bufferize"
    use_blas: bool = option(False, "lower f32/f64 tensor.dot to CBLAS calls (loops.call) "
                                   "instead of loop nests")
    blas_min_work: int = option(1024, "with use-blas, products whose sizes are all static and "
                                      "whose m*n*k is below this stay loop nests",
                                 minimum=0)

    def apply(self, module: Operation) -> None:
        self.lower(module)

    def lower(self, module: Operation, rewriter: Rewriter | None = None) -> list["BufferMap"]:
        """Bufferize ``module`` in place (as ``apply``; each function is replaced by its buffer
        form through ``rewriter``); returns the ``BufferMap`` of each function it rebuilt, in
        module order."""
        rewriter = rewriter if rewriter is not None else Rewriter()
        error_codes = itertools.count(1)
        maps = []
        sink_into_branches(module)  # a branch's own work is lowered inside it
        for func in list(_functions(module)):
            if _has_tensors(func):
                buffers = BufferMap(func)
                buffers.func = lower_function(func, self, error_codes, buffers)
                rewriter.replace_op(func, buffers.func)
                maps.append(buffers)
        return maps


@dataclass(eq=False)
class BufferMap:
    """What ``bufferize`` made of the tensor-level function ``tensor_func``: its buffer form
    ``func``, the buffer each tensor value was lowered to (``buffer``: an argument, a fresh
    allocation, a view; none for a value only ever used as a scalar) and, for each such buffer, the tensor
    value it was made to hold (``tensor_value``: the first one, when ops share a buffer) and
    the function argument it is (``argument``: an input's or a shared variable's memory).

    >>> from lowering.ir.parser import parse_module
    >>> m = parse_module('''
    ... func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
    ...   %y = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
    ...   func.return %y : tensor<?xf32>
    ... }''')
    >>> tensor_func = m.functions[0]
    >>> [buffers] = Bufferize().lower(m)
    >>> y = buffers.func.body.block.last_op.operands[0]
    >>> buffers.tensor_value(y) is tensor_func.body.block.first_op.result
    True
    >>> buffers.buffer(tensor_func.body.block.first_op.result) is y
    True
    >>> buffers.argument(buffers.func.args[0]), buffers.argument(y)
    (0, None)
    """

    tensor_func: FuncOp
    func: FuncOp | None = None
    buffers: dict[Value, Value] = field(default_factory=dict)  # tensor value -> buffer
    made_for: dict[Value, Value] = field(default_factory=dict)  # buffer -> tensor value

    def record(self, buffer: Value | None, tensor_value: Value) -> None:
        """``tensor_value`` was lowered to ``buffer`` (None: to a scalar only)."""
        if buffer is not None:
            self.buffers[tensor_value] = buffer
            self.made_for.setdefault(buffer, tensor_value)

    def buffer(self, tensor_value: Value) -> Value | None:
        """The buffer ``tensor_value`` was lowered to, or None."""
        return self.buffers.get(tensor_value)

    def tensor_value(self, buffer: Value) -> Value | None:
        """The tensor value ``buffer`` was made to hold, or None (a buffer of its own: a copy,
        a temporary of a lowering)."""
        return self.made_for.get(buffer)

    def argument(self, buffer: Value) -> int | None:
        """The index of the function argument ``buffer`` is the memory of (a shared variable's
        or an input's), or None."""
        value = self.tensor_value(buffer)
        if isinstance(value, BlockArgument) and value.block is self.tensor_func.body.block:
            return value.index
        return None


def lower_function(func: FuncOp, options: Bufferize, error_codes,
                   buffers: BufferMap | None = None) -> FuncOp:
    """The buffer form of ``func`` (a new, detached ``func.func`` of the same name);
    ``error_codes`` numbers its checks; ``buffers`` (when given) records the tensor value each
    buffer holds.

    >>> from lowering.ir.parser import parse_module
    >>> m = parse_module("func.func @g(%x: tensor<3xi8>) -> tensor<3xi8> { "
    ...                  "func.return %x : tensor<3xi8> }")
    >>> new = lower_function(m.functions[0], Bufferize(), itertools.count(1))
    >>> [op.name for op in new.body.block.ops]  # a returned argument is copied
    ['loops.alloc', 'loops.copy', 'func.return']
    """
    buffers = buffers if buffers is not None else BufferMap(func)
    ftype = func.function_type
    # Where the arguments are and the results go (place-on-device's attributes): device
    # arguments and results are device buffers.
    in_spaces = [memory_space_of(d) for d in arg_devices(func)]
    out_devices = result_devices(func)
    inputs = [input_buffer_type(t, space) if isinstance(t, TensorType) else t
              for t, space in zip(ftype.inputs, in_spaces)]
    results = [result_buffer_type(t, memory_space_of(d)) if isinstance(t, TensorType) else t
               for t, d in zip(ftype.results, out_devices)]
    new = FuncOp.build(func.sym_name, inputs, results, location=func.location)
    for key, value in func.attributes.items():
        if key not in ("sym_name", "function_type"):
            new.attributes[key] = value
    ctx = FunctionLowering(new.body.block, options, error_codes)
    ctx.lower_op = lambda op: _lower_op(ctx, op, buffers)
    for old, arg in zip(func.args, new.args):
        arg.name_hint = old.name_hint
        buffers.record(arg, old)
        if isinstance(old.type, TensorType):
            ctx.bind(old, Lowered(old.type, buffer=arg, space=arg.type.memory_space))
        else:
            ctx.value_map[old] = arg
    for op in list(func.body.block.ops):
        ctx.op = op
        with default_location(op.location):
            if isinstance(op, ReturnOp):
                _lower_return(ctx, op, out_devices)
            else:
                _lower_op(ctx, op, buffers)
    for value, lowered in ctx.values.items():  # buffers made later for values kept as scalars
        if lowered.buffer is not None:
            buffers.buffers.setdefault(value, lowered.buffer)
    # Sizes and index arithmetic computed for an op but not needed in the end.
    eliminate_dead_code(new)
    on_host = host_accesses_to_device(new.body.block)
    if on_host:
        raise PassFailure(f"bufferize: @{func.sym_name}: host code would access device memory "
                          f"at {on_host[0].name} (from {on_host[0].location.short()}); the op "
                          f"computing it should be placed on the device", on_host[0])
    return new


def _lower_op(ctx: FunctionLowering, op: Operation, buffers: BufferMap) -> None:
    device = op_device(op)
    rules = BUFFERIZE if device is None else DEVICE_BUFFERIZE
    if device is not None:
        refuse_complex_on_device(op)
    lower = rules.find(type(op))
    if lower is None:
        if _has_tensors(op) or rules.unsupported_reason(type(op)) is not None:
            raise PassFailure(rules.missing_message(op), op)
        ctx.b.insert(op.clone(ctx.value_map))
        return
    ctx.space = "host" if device is None else "device"
    before = ctx.block.last_op
    try:
        results = lower(ctx, op)
    except AlwaysFails:  # the op stops the function: its results are never read
        results = [ctx.unreachable(res.type) for res in op.results]
    if device is not None:
        results = confine_to_device(ctx, before, results, device)
    ctx.space = "host"
    for res, lowered in zip(op.results, results):
        for v in (lowered.buffer, lowered.scalar):  # new top-level values keep the IR's names
            if isinstance(v, OpResult) and v.name_hint is None and v.op.parent is ctx.block:
                v.name_hint = res.name_hint
        buffers.record(lowered.buffer, res)
        ctx.bind(res, lowered)


def _lower_return(ctx: FunctionLowering, op: ReturnOp, devices: list[str]) -> None:
    """Return fresh allocations only: copy what is not one, or is returned a second time; a
    result goes to the memory its ``result_devices`` entry names (moved there if it is not)."""
    returned: set[Value] = set()
    values = []
    for v, device in zip(op.operands, devices):
        if not isinstance(v.type, TensorType):
            values.append(ctx.value_map.get(v, v))
            continue
        space = memory_space_of(device)
        if ctx.lowered(v).space != space:
            context = device if device != HOST else _context_of(v)
            ctx.bind(v, move(ctx, v, space, context))
        buf = ctx.buffer(v)
        if not ctx.lowered(v).owned or buf in returned:
            fresh = ctx.alloc(v.type, ctx.sizes(v), space=space)
            ctx.copy(v, fresh)
            buf = fresh
        returned.add(buf)
        values.append(buf)
    ctx.b.insert(ReturnOp.create(values, location=op.location))


def _context_of(value: Value) -> str:
    """The GPU context a device value is on (for a transfer back to the host)."""
    where = location_of(value)
    return DEFAULT_CONTEXT if where == HOST else where


def _functions(module: Operation):
    return [op for reg in module.regions for block in reg.blocks for op in block.ops
            if isinstance(op, FuncOp)]


def _has_tensors(op: Operation) -> bool:
    """Whether ``op`` or anything in it has a tensor operand, result, argument or type."""
    for inner in op.walk():
        if any(isinstance(v.type, TensorType) for v in (*inner.operands, *inner.results)):
            return True
        for reg in inner.regions:
            if any(isinstance(a.type, TensorType) for b in reg.blocks for a in b.args):
                return True
        if isinstance(inner, FuncOp) and isinstance(inner.function_type, FunctionType) and any(
                isinstance(t, TensorType)
                for t in (*inner.function_type.inputs, *inner.function_type.results)):
            return True
    return False

