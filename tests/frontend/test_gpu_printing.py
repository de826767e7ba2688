"""How GPU graphs print (seed 000's debugprint, seed 002's toposort lists and profile names):
gpu.to_device as GpuFromHost<None>, gpu.to_host as HostFromGpu(gpuarray), ops placed on a
device as Gpu* classes, and the seeds' "Used the cpu/gpu" checks on such graphs."""
import numpy as np

import lowering.tensor as T
from lowering.compile.fgraph import FunctionGraph
from lowering.frontend import theano_ops
from lowering.frontend.theano_ops import GpuElemwise, leaf_text, scalar_class_name, theano_op
from lowering.ir.parser import parse_module
from lowering.printing import debugprint

SQUARE = '''
func.func @sq(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = "gpu.to_device"(%a) {context = "cuda"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = "tensor.sqr"(%0) {device = "cuda"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = "gpu.to_host"(%2) {context = "cuda"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %1 : tensor<?x?xf32>
}'''


def graph(text: str, inplace=None) -> FunctionGraph:
    func = parse_module(text).functions[0]
    patterns = {}
    if inplace:
        ops = list(func.body.block.ops)
        patterns = {ops[position]: pattern for position, pattern in inplace.items()}
    return FunctionGraph(func, patterns)


def test_seed_000_square_prints_with_transfers_both_ways():
    fg = graph(SQUARE, inplace={1: {0: 0}})
    assert debugprint(fg, file="str") == (
        "HostFromGpu(gpuarray) [id A] ''   2\n"
        " |GpuElemwise{Sqr}[(0, 0)]<gpuarray> [id B] ''   1\n"
        "   |GpuFromHost<None> [id C] ''   0\n"
        "     |a [id D]\n")


def test_seed_000_square_kept_on_the_gpu():
    text = SQUARE.replace('%1 = "gpu.to_host"(%2) {context = "cuda"} : (tensor<?x?xf32>) -> '
                          'tensor<?x?xf32>\n', '').replace("func.return %1", "func.return %2")
    assert debugprint(graph(text, inplace={1: {0: 0}}), file="str") == (
        "GpuElemwise{Sqr}[(0, 0)]<gpuarray> [id A] ''   1\n"
        " |GpuFromHost<None> [id B] ''   0\n"
        "   |a [id C]\n")


def test_seed_002_exp_check_toposort_and_used_the_gpu():
    fg = graph('''
func.func @f(%0: tensor<?xf32>) -> tensor<?xf32> attributes {lowering.arg_devices = ["cuda"]} {
  %1 = "tensor.exp"(%0) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %2 = "gpu.to_host"(%1) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %2 : tensor<?xf32>
}''')
    nodes = fg.toposort()
    assert str(nodes) == ("[GpuElemwise{exp,no_inplace}(<GpuArrayType<None>(float32, (False,))>), "
                          "HostFromGpu(gpuarray)(GpuElemwise{exp,no_inplace}.0)]")
    # the seed's checks: the first backend's, and the gpuarray backend's
    assert not np.any([isinstance(n.op, T.Elemwise) for n in nodes])
    assert not np.any([isinstance(n.op, T.Elemwise) and "Gpu" not in type(n.op).__name__
                       for n in nodes])


def test_named_contexts_and_device_ops_of_every_kind():
    fg = graph('''
func.func @f(%x: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "gpu.to_device"(%x) {context = "dev1"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = "gpu.to_device"(%w) {context = "dev1"} : (tensor<?xf32>) -> tensor<?xf32>
  %d = "tensor.dot"(%0, %1) {device = "dev1"} : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %s = "tensor.sum"(%0) {axes = [1], device = "dev1"} : (tensor<?x?xf32>) -> tensor<?xf32>
  %t = "tensor.add"(%d, %s) {device = "dev1"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %h = "gpu.to_host"(%t) {context = "dev1"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %h : tensor<?xf32>
}''')
    assert [str(n.op) for n in fg.toposort()] == [
        "GpuFromHost<dev1>", "GpuFromHost<dev1>", "GpuGemv{no_inplace}", "GpuCAReduce{add}{01}",
        "GpuElemwise{add,no_inplace}", "HostFromGpu(gpuarray)"]
    assert any(type(n.op).__name__ in ("GpuGemm", "GpuGemv") for n in fg.toposort())


def test_ops_on_the_cpu_keep_their_classes():
    fg = graph('''
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %e = "tensor.exp"(%x) {device = "cpu"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %e : tensor<?xf32>
}''')
    assert [str(n.op) for n in fg.toposort()] == ["Elemwise{exp,no_inplace}"]
    assert isinstance(fg.toposort()[0].op, T.Elemwise)


def test_in_place_gpu_elemwise_names_the_scalar_class():
    x = T.fvector("x")
    assert str(theano_op((x * 2).value.op, on_gpu=True, inplace_pattern={0: 0})) == \
        "GpuElemwise{Mul}[(0, 0)]<gpuarray>"
    assert str(theano_op(T.nnet.sigmoid(x).value.op, on_gpu=True, inplace_pattern={0: 0})) == \
        "GpuElemwise{ScalarSigmoid}[(0, 0)]<gpuarray>"
    assert str(theano_op((x / 2).value.op, on_gpu=True)) == "GpuElemwise{true_div,no_inplace}"
    assert isinstance(theano_op((x / 2).value.op, on_gpu=True), GpuElemwise)
    assert [scalar_class_name(n) for n in ("exp", "int_div", "abs_", "neq", "log1p")] == \
        ["Exp", "IntDiv", "Abs", "NEQ", "Log1p"]


def test_leaves_on_a_gpu_print_their_context():
    func = parse_module('''
func.func @f(%0: tensor<?x?xf32>, %1: tensor<f64>) -> tensor<?x?xf32>
    attributes {lowering.arg_devices = ["dev1", "cpu"]} {
  func.return %0 : tensor<?x?xf32>
}''').functions[0]
    a, b = func.body.block.args
    assert leaf_text(a) == "<GpuArrayType<dev1>(float32, (False, False))>"
    assert leaf_text(b) == "<TensorType(float64, scalar)>"
    assert theano_ops.leaf_context(b) == "cpu"
