"""Shared pieces of the GPU placement tests (``place-on-device``, ``elide-transfers``,
``bufferize`` on a device): example functions, the placement attributes, random placements of a
random graph's arguments and results, and what tests look for in the IR.

>>> module = module_from(SQUARE)
>>> set_devices(module, ["cpu"], ["cuda"])
>>> RESULT_DEVICES.get(module.functions[0])
['cuda']
"""
from __future__ import annotations

from hypothesis import strategies as st

from lowering.dialects.function_attrs import ARG_DEVICES, RESULT_DEVICES
from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.dialects.loops import BufferType, CallOp, CopyOp, FillOp, LoadOp, StoreOp
from lowering.ir.core import BlockArgument, OpResult

from .opt_helpers import module_from

# Theano's seed: ``a ** 2`` of a float32 matrix.
SQUARE = '''
func.func @sq(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %b = "tensor.sqr"(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32> loc("seed.py":7:4)
  func.return %b : tensor<?x?xf32> loc("seed.py":9:0)
} loc("seed.py":9:5)
'''

# Logistic regression as the front end builds and optimizes it: cost = mean(binary
# crossentropy(sigmoid(x . w + b), y)), w <- w - 0.1 * gw and b <- b - 0.1 * gb, with the
# shared variables w and b resident on the device (their updates stay there) and the cost
# returned to the host.
LOGISTIC_REGRESSION = '''
func.func @train(%x: tensor<?x?xf32>, %y: tensor<?xf32>, %w: tensor<?xf32>, %b: tensor<f32>)
    -> (tensor<f32>, tensor<?xf32>, tensor<f32>)
    attributes {lowering.arg_devices = ["cpu", "cpu", "cuda", "cuda"],
                lowering.result_devices = ["cpu", "cuda", "cuda"],
                lowering.shared_updates = [[1, 2], [2, 3]], lowering.allow_inplace} {
  %xw = "tensor.dot"(%x, %w) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %brow = "tensor.dimshuffle"(%b) {pattern = [-1]} : (tensor<f32>) -> tensor<1xf32>
  %xt = "tensor.dimshuffle"(%x) {pattern = [1, 0]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %n = "tensor.shape_i"(%y) {axis = 0} : (tensor<?xf32>) -> tensor<i64>
  %inv = "tensor.fused"(%n) ({
  ^bb0(%a0: i64):
    %0 = "scalar.cast"(%a0) : (i64) -> f32
    %1 = "scalar.reciprocal"(%0) : (f32) -> f32
    "scalar.yield"(%1) : (f32) -> ()
  }) : (tensor<i64>) -> tensor<f32>
  %invrow = "tensor.dimshuffle"(%inv) {pattern = [-1]} : (tensor<f32>) -> tensor<1xf32>
  %one = "tensor.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %rate = "tensor.constant"() {value = dense<-0.1> : tensor<f32>} : () -> tensor<f32>
  %f:3 = "tensor.fused"(%xw, %brow, %y, %invrow) ({
  ^bb0(%z: f32, %bb: f32, %t: f32, %s: f32):
    %0 = "scalar.add"(%z, %bb) : (f32, f32) -> f32
    %1 = "scalar.sigmoid"(%0) : (f32) -> f32
    %2 = "scalar.neg"(%0) : (f32) -> f32
    %3 = "scalar.softplus"(%2) : (f32) -> f32
    %4 = "scalar.mul"(%t, %3) : (f32, f32) -> f32
    %5 = "scalar.constant"() {value = 1.0 : f32} : () -> f32
    %6 = "scalar.sub"(%5, %t) : (f32, f32) -> f32
    %7 = "scalar.softplus"(%0) : (f32) -> f32
    %8 = "scalar.mul"(%6, %7) : (f32, f32) -> f32
    %9 = "scalar.add"(%4, %8) : (f32, f32) -> f32
    %10 = "scalar.sub"(%1, %t) : (f32, f32) -> f32
    %11 = "scalar.mul"(%10, %s) : (f32, f32) -> f32
    "scalar.yield"(%9, %11, %11) : (f32, f32, f32) -> ()
  }) {reductions = [{kind = "mean", axes = [0], keepdims = false}, {kind = "none"},
                    {kind = "sum", axes = [0], keepdims = false}]}
     : (tensor<?xf32>, tensor<1xf32>, tensor<?xf32>, tensor<1xf32>)
    -> (tensor<f32>, tensor<?xf32>, tensor<f32>)
  %wnew = "tensor.gemv"(%w, %rate, %xt, %f#1, %one)
      : (tensor<?xf32>, tensor<f32>, tensor<?x?xf32>, tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %bnew = "tensor.fused"(%f#2, %b) ({
  ^bb0(%g: f32, %old: f32):
    %0 = "scalar.constant"() {value = 0.1 : f32} : () -> f32
    %1 = "scalar.mul"(%0, %g) : (f32, f32) -> f32
    %2 = "scalar.sub"(%old, %1) : (f32, f32) -> f32
    "scalar.yield"(%2) : (f32) -> ()
  }) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %f#0, %wnew, %bnew : tensor<f32>, tensor<?xf32>, tensor<f32>
}
'''

PLACES = ["cpu", "cuda"]


def set_devices(module, args, results) -> None:
    """Give the module's first function ``lowering.arg_devices = args`` and
    ``lowering.result_devices = results``."""
    func = module.functions[0]
    ARG_DEVICES.set(func, args)
    RESULT_DEVICES.set(func, results)


@st.composite
def random_devices(draw, module) -> tuple[list[str], list[str]]:
    """Random places for the arguments and results of the module's first function."""
    ftype = module.functions[0].function_type
    places = st.sampled_from(PLACES)
    return ([draw(places) for _ in ftype.inputs], [draw(places) for _ in ftype.results])


def casts_floats_to_integers(module) -> bool:
    """Whether a ``tensor.cast`` turns floats into integers: out of range (NaN, -1 to an
    unsigned type) NumPy's result depends on the array's length (its SIMD code and its scalar
    code disagree), so the tensor interpreter and the loops interpreter may differ there."""
    return any(op.name == "tensor.cast" and op.operands[0].type.element.is_float and
               not op.result.type.element.is_float for op in module.walk())


def body_ops(module) -> list:
    return list(module.functions[0].body.block.ops)


def transfers(module) -> list:
    """The transfer ops at the top level of the module's first function."""
    return [op for op in body_ops(module) if isinstance(op, (ToDeviceOp, ToHostOp))]


def transferred_args(module) -> set[str]:
    """The names of the arguments that some transfer reads directly."""
    return {op.input.name_hint for op in transfers(module)
            if isinstance(op.input, BlockArgument)}


def producer(value):
    return value.op if isinstance(value, OpResult) else None


_ACCESSES = (LoadOp, StoreOp, CopyOp, FillOp, CallOp)


def memory_spaces_touched(op) -> set[str]:
    """The memory spaces whose elements ``op`` (and what is nested in it) reads or writes."""
    return {v.type.memory_space for inner in op.walk() if isinstance(inner, _ACCESSES)
            for v in inner.operands if isinstance(v.type, BufferType)}


def mixed_memory_loops(module) -> list:
    """Top-level constructs (loop nests) touching both host and device memory: a kernel must
    not read host memory, nor host code device memory."""
    return [op for op in body_ops(module)
            if op.regions and {"host", "device"} <= memory_spaces_touched(op)]

