// RUN: lowering-opt %s -p elide-transfers | filecheck %s
// RUN: lowering-opt %s -p place-on-device,elide-transfers | filecheck %s --check-prefix=PLACED

// Round trips give the value back; a repeated transfer reads the first one.
// CHECK-LABEL: func.func @round_trips
// CHECK-NEXT:    %[[D:.*]] = gpu.to_device %h context "cuda"
// CHECK-NEXT:    %e = tensor.exp %[[D]] {device = "cuda"}
// CHECK-NEXT:    %l = tensor.log %[[D]] {device = "cuda"}
// CHECK-NEXT:    func.return %h, %d, %e, %l
func.func @round_trips(%h: tensor<?xf32>, %d: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
    attributes {lowering.arg_devices = ["cpu", "cuda"], lowering.result_devices = ["cpu", "cuda", "cuda", "cuda"]} {
  %0 = "gpu.to_device"(%h) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %1 = "gpu.to_host"(%0) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %2 = "gpu.to_host"(%d) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %3 = "gpu.to_device"(%2) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %e = "tensor.exp"(%0) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %4 = "gpu.to_device"(%h) {context = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  %l = "tensor.log"(%4) {device = "cuda"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %1, %3, %e, %l : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// Not the same context: the round trip through the host stays.
// CHECK-LABEL: func.func @two_contexts
// CHECK-NEXT:    %[[H:.*]] = gpu.to_host %d context "dev0"
// CHECK-NEXT:    %[[D:.*]] = gpu.to_device %[[H]] context "dev1"
// CHECK-NEXT:    func.return %[[D]]
func.func @two_contexts(%d: tensor<?xf32>) -> tensor<?xf32>
    attributes {lowering.arg_devices = ["dev0"], lowering.result_devices = ["dev1"]} {
  %0 = "gpu.to_host"(%d) {context = "dev0"} : (tensor<?xf32>) -> tensor<?xf32>
  %1 = "gpu.to_device"(%0) {context = "dev1"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %1 : tensor<?xf32>
}

// After placement: x is copied once although two device ops read it.
// PLACED-LABEL: func.func @placed
// PLACED-NEXT:    %[[X:.*]] = gpu.to_device %x context "cuda"
// PLACED-NEXT:    %s = tensor.sqr %[[X]] {device = "cuda"}
// PLACED-NEXT:    %t = tensor.add %s, %[[X]] {device = "cuda"}
// PLACED-NEXT:    %[[H:.*]] = gpu.to_host %t context "cuda"
// PLACED-NEXT:    func.return %[[H]]
func.func @placed(%x: tensor<?xf32>) -> tensor<?xf32> {
  %s = "tensor.sqr"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %t = "tensor.add"(%s, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %t : tensor<?xf32>
}
