"""``elide-transfers``: round trips cancel (on the same context only), repeated transfers of one
value merge into the first (keeping every location), dead transfers go, buffer-level transfers
are left alone, and results are unchanged."""
from __future__ import annotations

import numpy as np

from lowering.dialects.gpu import ToDeviceOp, ToHostOp
from lowering.ir.location import FusedLoc, Location
from lowering.passes.gpu.elide_transfers import elide_transfers

from .opt_helpers import module_from, optimized, run
from .placement_cases import SQUARE, body_ops, set_devices, transfers


def names(module) -> list[str]:
    return [op.name for op in body_ops(module)]


def test_the_seed_square_keeps_its_two_transfers():
    after = optimized(module_from(SQUARE), "place-on-device,elide-transfers")
    assert names(after) == ["gpu.to_device", "tensor.sqr", "gpu.to_host", "func.return"]


def test_the_seed_square_kept_on_the_device_has_no_transfer_back():
    module = module_from(SQUARE)
    set_devices(module, ["cpu"], ["cuda"])
    after = optimized(module, "place-on-device,elide-transfers")
    assert names(after) == ["gpu.to_device", "tensor.sqr", "func.return"]
    sqr = body_ops(after)[1]
    assert after.functions[0].body.block.last_op.operands[0] is sqr.result


ROUND_TRIPS = '''
func.func @f(%h: tensor<?xf32>, %d: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
    attributes {lowering.arg_devices = ["cpu", "cuda"], lowering.result_devices = ["cpu", "cuda"]} {
  %0 = "gpu.to_device"(%h) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %1 = "gpu.to_host"(%0) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %2 = "gpu.to_host"(%d) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %3 = "gpu.to_device"(%2) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %1, %3 : tensor<?xf32>, tensor<?xf32>
}
'''


def test_round_trips_give_the_value_back():
    module = module_from(ROUND_TRIPS)
    after = optimized(module, "elide-transfers")
    func = after.functions[0]
    assert names(after) == ["func.return"]
    assert list(func.body.block.last_op.operands) == list(func.args)
    h, d = np.arange(3, dtype=np.float32), np.ones(3, dtype=np.float32)
    for got, want in zip(run(after, h, d), run(module, h, d)):
        np.testing.assert_array_equal(got, want)


def test_a_round_trip_to_another_context_is_kept():
    module = module_from(ROUND_TRIPS.replace('"gpu.to_device"(%2) {context = "cuda"}',
                                             '"gpu.to_device"(%2) {context = "dev1"}')
                         .replace('["cpu", "cuda"]}', '["cpu", "dev1"]}'))
    after = optimized(module, "elide-transfers")
    assert names(after) == ["gpu.to_host", "gpu.to_device", "func.return"]
    assert transfers(after)[1].context == "dev1"


def test_a_transfer_to_where_the_value_already_is_goes():
    module = module_from('''
    func.func @f(%d: tensor<?xf32>) -> tensor<?xf32>
        attributes {lowering.arg_devices = ["cuda"], lowering.result_devices = ["cuda"]} {
      %0 = "gpu.to_device"(%d) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
      %e = "tensor.exp"(%0) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
      func.return %e : tensor<?xf32>
    }''')
    after = optimized(module, "elide-transfers")
    assert names(after) == ["tensor.exp", "func.return"]


REPEATED = '''
func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = "gpu.to_device"(%x) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":1:1)
  %e = "tensor.exp"(%0) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":1:1)
  %1 = "gpu.to_device"(%x) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":2:1)
  %l = "tensor.log"(%1) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":2:1)
  %2 = "gpu.to_device"(%x) {context = "dev1"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":3:1)
  %3 = "gpu.to_host"(%e) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":4:1)
  %4 = "gpu.to_host"(%l) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32> loc("a.py":5:1)
  func.return %3, %4 : tensor<?xf32>, tensor<?xf32>
}
'''


def test_repeated_transfers_merge_into_the_first_with_both_locations():
    module = module_from(REPEATED)
    after = optimized(module, "elide-transfers")
    # Both reads use the first copy; the copy to dev1 is read by nobody and goes.
    assert names(after) == ["gpu.to_device", "tensor.exp", "tensor.log", "gpu.to_host",
                            "gpu.to_host", "func.return"]
    first, exp, log = body_ops(after)[:3]
    assert exp.operands[0] is first.result and log.operands[0] is first.result
    assert first.location == FusedLoc((Location("a.py", 1, 1), Location("a.py", 2, 1)))
    x = np.linspace(0.5, 2, 4, dtype=np.float32)
    for got, want in zip(run(after, x), run(module, x)):
        np.testing.assert_array_equal(got, want)


def test_buffer_transfers_are_left_alone():
    module = module_from('''
    func.func @f(%h: !loops.buffer<?xf32>) -> !loops.buffer<?xf32> {
      %d = "gpu.to_device"(%h) {context = "cuda"} : (!loops.buffer<?xf32>) -> !loops.buffer<?xf32, space="device">
      %b = "gpu.to_host"(%d) {context = "cuda"} : (!loops.buffer<?xf32, space="device">) -> !loops.buffer<?xf32>
      func.return %b : !loops.buffer<?xf32>
    }''')
    assert elide_transfers(module.functions[0]) == 0
    assert names(module) == ["gpu.to_device", "gpu.to_host", "func.return"]


def test_the_count_of_removed_transfers_is_returned():
    module = module_from(REPEATED)
    assert elide_transfers(module.functions[0]) == 2
    assert elide_transfers(module.functions[0]) == 0
    assert len([op for op in body_ops(module) if isinstance(op, (ToDeviceOp, ToHostOp))]) == 3
