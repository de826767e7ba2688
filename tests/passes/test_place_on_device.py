"""``place-on-device``: which ops run on the GPU, which stay on the host, where transfers go (with
the locations of the ops that need them), and that placement changes no result in the
interpreter (where transfers are identities)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.ir.core import VerifyError
from lowering.ir.interpreter import InterpreterError
from lowering.ir.location import Location
from lowering.ir.pass_manager import PassError, PassManager
from lowering.passes.gpu.place_on_device import (DATA, HOST_SCALAR, SIZES, location_of,
                                                 operand_roles)

from .bufferize_graphs import graph_cases, run
from .opt_helpers import module_from, optimized
from .placement_cases import (LOGISTIC_REGRESSION, SQUARE, body_ops, producer, random_devices,
                              set_devices, transferred_args, transfers)

SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]


def placed(text: str, pipeline: str = "place-on-device"):
    return optimized(module_from(text), pipeline)


def by_name(module, name: str):
    return next(op for op in body_ops(module) if op.name == name or op.results and
                op.results[0].name_hint == name)


# ---------------------------------------------------------------------------------------------
# The seed's a ** 2


def test_square_of_a_host_matrix_runs_on_the_device_between_two_transfers():
    module = placed(SQUARE)
    to_device, square, to_host, ret = body_ops(module)
    assert isinstance(to_device, ToDeviceOp) and to_device.context == "cuda"
    assert square.name == "tensor.sqr" and square.get_attr("device") == "cuda"
    assert square.operands[0] is to_device.result
    assert isinstance(to_host, ToHostOp) and to_host.input is square.result
    assert ret.operands[0] is to_host.result


def test_transfers_carry_the_locations_of_the_ops_that_need_them():
    module = placed(SQUARE)
    to_device, square, to_host, _ = body_ops(module)
    assert to_device.location == square.location == Location("seed.py", 7, 4)
    # A result copied back for the caller: the line computing it.
    assert to_host.location == Location("seed.py", 7, 4)


def test_a_result_kept_on_the_device_is_not_copied_back():
    module = module_from(SQUARE)
    set_devices(module, ["cpu"], ["cuda"])
    after = optimized(module, "place-on-device")
    assert [op.name for op in body_ops(after)] == ["gpu.to_device", "tensor.sqr", "func.return"]


def test_the_context_is_the_pass_option_or_that_of_the_device_arguments():
    assert by_name(placed(SQUARE, "place-on-device{context=dev1}"), "b").get_attr("device") \
        == "dev1"
    module = module_from(SQUARE)
    set_devices(module, ["dev0"], ["cpu"])
    after = optimized(module, "place-on-device")
    assert [op.name for op in body_ops(after)] == ["tensor.sqr", "gpu.to_host", "func.return"]
    assert by_name(after, "b").get_attr("device") == "dev0"
    assert transfers(after)[0].context == "dev0"


def test_a_value_on_another_context_goes_through_the_host():
    module = module_from('''
    func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32>
        attributes {lowering.arg_devices = ["dev0", "dev1"], lowering.result_devices = ["dev0"]} {
      %s = "tensor.add"(%a, %b) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      func.return %s : tensor<?xf32>
    }''')
    after = optimized(module, "place-on-device")
    to_host, to_device, add, _ = body_ops(after)
    assert add.get_attr("device") == "dev0"
    assert isinstance(to_host, ToHostOp) and to_host.input.name_hint == "b"
    assert isinstance(to_device, ToDeviceOp) and to_device.context == "dev0"
    assert add.operands[1] is to_device.result


# ---------------------------------------------------------------------------------------------
# Logistic regression with w and b resident on the device


def test_shared_variables_on_the_device_are_never_transferred():
    module = placed(LOGISTIC_REGRESSION, "place-on-device,elide-transfers")
    assert transferred_args(module) == {"x", "y"}
    func = module.functions[0]
    ret = func.body.block.last_op
    cost, w_new, b_new = ret.operands
    # The updates are computed on the device and stay there; only the cost comes back.
    assert isinstance(producer(cost), ToHostOp)
    for update, name in ((w_new, "tensor.gemv"), (b_new, "tensor.fused")):
        assert producer(update).name == name and producer(update).get_attr("device") == "cuda"
    # x and y cross once each, although x is read twice (x . w and x.T).
    assert sorted(op.input.name_hint for op in transfers(module)
                  if isinstance(op, ToDeviceOp) and op.input.name_hint in "xy") == ["x", "y"]


def test_shape_arithmetic_stays_on_the_host():
    module = placed(LOGISTIC_REGRESSION)
    for name in ("n", "inv", "invrow"):
        assert by_name(module, name).get_attr("device") is None, name
    # The scalar factors of gemv are read by the host: its constants are not transferred.
    for name in ("one", "rate"):
        constant = by_name(module, name)
        assert constant.get_attr("device") is None
        assert not any(isinstance(u.op, ToDeviceOp) for u in constant.result.uses)
    for name in ("xw", "brow", "xt", "f", "wnew", "bnew"):
        assert by_name(module, name).get_attr("device") == "cuda", name


INTEGER_SHAPES = '''
func.func @f(%x: tensor<?x?xf32>, %k: tensor<i64>) -> tensor<?xf32> {
  %rows = "tensor.shape_i"(%x) {axis = 0} : (tensor<?x?xf32>) -> tensor<i64>
  %cols = "tensor.shape_i"(%x) {axis = 1} : (tensor<?x?xf32>) -> tensor<i64>
  %size = "tensor.mul"(%rows, %cols) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %two = "tensor.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %half = "tensor.floordiv"(%size, %two) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %shape = "tensor.make_vector"(%size) : (tensor<i64>) -> tensor<1xi64>
  %flat = "tensor.reshape"(%x, %shape) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %e = "tensor.exp"(%flat) : (tensor<?xf32>) -> tensor<?xf32>
  %part = "tensor.subtensor"(%e, %k, %half) {spec = [["slice", "?", "?", "none"]]}
      : (tensor<?xf32>, tensor<i64>, tensor<i64>) -> tensor<?xf32>
  func.return %part : tensor<?xf32>
}
'''


def test_integer_scalar_shape_arithmetic_stays_on_the_host():
    module = module_from(INTEGER_SHAPES)
    after = optimized(module, "place-on-device,elide-transfers")
    for name in ("rows", "cols", "size", "two", "half", "shape"):
        assert by_name(after, name).get_attr("device") is None, name
    for name in ("flat", "e", "part"):
        assert by_name(after, name).get_attr("device") == "cuda", name
    # Only x crosses: the sizes, the shape and the slice bounds are read by the host.
    assert [op.input.name_hint for op in transfers(after)] == ["x", "part"]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    for k in (-3, 0, 2):
        np.testing.assert_array_equal(run(after, [x, np.int64(k)])[0],
                                      run(module, [x, np.int64(k)])[0])


def test_an_index_computed_on_the_device_is_brought_to_the_host():
    module = module_from('''
    func.func @f(%x: tensor<?xf32>) -> tensor<f32> attributes {lowering.arg_devices = ["cuda"]} {
      %i = "tensor.argmax"(%x) {axes = [0]} : (tensor<?xf32>) -> tensor<i64>
      %v = "tensor.subtensor"(%x, %i) {spec = [["index", "?"]]} : (tensor<?xf32>, tensor<i64>) -> tensor<f32>
      func.return %v : tensor<f32>
    }''')
    after = optimized(module, "place-on-device")
    argmax, to_host, element, _, _ = body_ops(after)
    assert argmax.get_attr("device") == element.get_attr("device") == "cuda"
    assert isinstance(to_host, ToHostOp) and to_host.input is argmax.result
    assert element.operands[1] is to_host.result


def test_operand_roles():
    module = module_from(INTEGER_SHAPES)
    assert operand_roles(by_name(module, "rows")) == [SIZES]
    assert operand_roles(by_name(module, "flat")) == [DATA, HOST_SCALAR]
    assert operand_roles(by_name(module, "part")) == [DATA, HOST_SCALAR, HOST_SCALAR]
    assert operand_roles(by_name(placed(LOGISTIC_REGRESSION), "wnew")) == \
        [DATA, HOST_SCALAR, DATA, DATA, HOST_SCALAR]


def test_sizes_of_device_values_are_read_without_a_transfer():
    module = module_from('''
    func.func @f(%x: tensor<?xf32>) -> (tensor<i64>, tensor<?xf32>)
        attributes {lowering.arg_devices = ["cuda"], lowering.result_devices = ["cpu", "cuda"]} {
      %n = "tensor.shape_i"(%x) {axis = 0} : (tensor<?xf32>) -> tensor<i64>
      %zero = "tensor.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
      %z = "tensor.fill"(%x, %zero) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
      func.return %n, %z : tensor<i64>, tensor<?xf32>
    }''')
    after = optimized(module, "place-on-device")
    assert transfers(after) == []
    assert by_name(after, "n").get_attr("device") is None
    # A constant read only on the device is placed there.
    assert by_name(after, "zero").get_attr("device") == "cuda"
    assert by_name(after, "z").get_attr("device") == "cuda"


def test_a_constant_read_on_both_sides_stays_on_the_host():
    module = module_from('''
    func.func @f(%x: tensor<3xf32>, %s: tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<f32>) {
      %c = "tensor.constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
      %dx = "tensor.add"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %two = "tensor.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
      %hs = "tensor.mul"(%s, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      func.return %c, %dx, %hs : tensor<3xf32>, tensor<3xf32>, tensor<f32>
    }''')
    after = optimized(module, "place-on-device")
    # c is returned to the host and read by the device: it stays, and is copied for dx.
    assert by_name(after, "c").get_attr("device") is None
    dx = by_name(after, "dx")
    assert dx.get_attr("device") == "cuda"
    assert isinstance(producer(dx.operands[1]), ToDeviceOp)
    # Scalar arithmetic on host scalars stays on the host, with its constant.
    for name in ("two", "hs"):
        assert by_name(after, name).get_attr("device") is None, name


def test_ops_that_already_have_a_device_keep_it_and_the_pass_is_idempotent():
    once = placed(LOGISTIC_REGRESSION)
    twice = optimized(once, "place-on-device")
    assert [(op.name, op.get_attr("device")) for op in body_ops(once)] == \
        [(op.name, op.get_attr("device")) for op in body_ops(twice)]


def test_location_of_values():
    module = placed(LOGISTIC_REGRESSION)
    func = module.functions[0]
    assert [location_of(a) for a in func.args] == ["cpu", "cpu", "cuda", "cuda"]
    assert location_of(by_name(module, "n").result) == "cpu"
    assert location_of(by_name(module, "xw").result) == "cuda"


def test_malformed_placement_attributes_are_errors_naming_them():
    module = module_from(SQUARE)
    set_devices(module, ["cpu", "cpu"], ["cpu"])
    with pytest.raises(VerifyError, match=r"func.func @sq: lowering.arg_devices: 2 entries for "
                                          r"the function's 1 arguments"):
        PassManager("place-on-device").run(module)
    with pytest.raises(PassError, match=r"@sq: lowering.arg_devices: 2 entries"):
        PassManager("place-on-device", verify_each=False).run(module)


def test_functions_on_buffers_are_left_alone():
    module = module_from('''
    func.func @f(%x: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
      func.return %x : !loops.buffer<?xf32>
    }''')
    after = optimized(module, "place-on-device")
    assert [op.name for op in body_ops(after)] == ["func.return"]


# ---------------------------------------------------------------------------------------------
# Results are unchanged


def results_or_error(module, arrays):
    try:
        return [np.asarray(v) for v in run(module, arrays)]
    except InterpreterError as exc:
        return type(exc)


@settings(max_examples=50, deadline=None, suppress_health_check=SLOW_DATA)
@given(case=graph_cases(exact=True), data=st.data())
def test_placement_and_elision_preserve_the_interpreters_results(case, data):
    module, arrays = case
    set_devices(module, *data.draw(random_devices(module)))
    expected = results_or_error(module, arrays)
    for pipeline in ("place-on-device", "place-on-device,elide-transfers"):
        got = results_or_error(optimized(module, pipeline), arrays)
        if isinstance(expected, type):
            assert got is expected
            continue
        for e, g in zip(expected, got, strict=True):
            assert e.dtype == g.dtype and e.shape == g.shape
            np.testing.assert_array_equal(g, e)
