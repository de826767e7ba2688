// RUN: lowering-opt %s -p place-on-device | filecheck %s --check-prefix=PLACE
// RUN: lowering-opt %s -p place-on-device,bufferize,map-to-gpu | filecheck %s --check-prefix=MAP

// The host picks the branch; each branch's ops run on the device, reading the op's inputs
// where they are; a result both branches compute on the device stays there.
// PLACE-LABEL: func.func @pick
// PLACE:       %r = tensor.if %c, %d : tensor<i1>, (tensor<?xf32>) -> tensor<?xf32> attributes {result_places = ["cuda"]} {
// PLACE:         tensor.exp %{{.*}} {device = "cuda"}
// PLACE:       } else {
// PLACE:         tensor.neg %{{.*}} {device = "cuda"}
// PLACE:       }
// PLACE:       gpu.to_host %r

// Each block of the loops.if launches its own kernel; nothing of a branch runs on the host
// but its sizes and allocations.
// MAP-LABEL: func.func @pick
// MAP:       loops.if %{{.*}} -> !loops.buffer<?xf32, space="device"> {
// MAP:         gpu.launch
// MAP:           scalar.exp
// MAP:       } else {
// MAP:         gpu.launch
// MAP:           scalar.neg
// MAP:       }
func.func @pick(%c: tensor<i1>, %x: tensor<?xf32>) -> tensor<?xf32>
    attributes {lowering.arg_devices = ["cpu", "cpu"], lowering.result_devices = ["cpu"]} {
  %d = tensor.sqr %x : tensor<?xf32>
  %r = tensor.if %c, %d : tensor<i1>, (tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: tensor<?xf32>):
    %e = tensor.exp %a : tensor<?xf32>
    tensor.yield %e : tensor<?xf32>
  } else {
  ^bb0(%a: tensor<?xf32>):
    %n = tensor.neg %a : tensor<?xf32>
    tensor.yield %n : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}
