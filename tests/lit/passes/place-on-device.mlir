// RUN: lowering-opt %s -p place-on-device | filecheck %s
// RUN: lowering-opt %s -p 'place-on-device{context=dev1}' | filecheck %s --check-prefix=CTX

// Theano's a ** 2: the square runs on the device, between a copy in and a copy back.
// CHECK-LABEL: func.func @square
// CHECK-NEXT:    %[[D:.*]] = gpu.to_device %a context "cuda"
// CHECK-NEXT:    %b = tensor.sqr %[[D]] {device = "cuda"}
// CHECK-NEXT:    %[[H:.*]] = gpu.to_host %b context "cuda"
// CHECK-NEXT:    func.return %[[H]]
// CTX-LABEL:   func.func @square
// CTX:           gpu.to_device %a context "dev1"
// CTX:           tensor.sqr {{.*}} {device = "dev1"}
func.func @square(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %b = "tensor.sqr"(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}

// Kept on the device (x.transfer(None)): no copy back.
// CHECK-LABEL: func.func @square_kept
// CHECK-NEXT:    %[[D:.*]] = gpu.to_device %a
// CHECK-NEXT:    %b = tensor.sqr %[[D]] {device = "cuda"}
// CHECK-NEXT:    func.return %b
func.func @square_kept(%a: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {lowering.result_devices = ["cuda"]} {
  %b = "tensor.sqr"(%a) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}

// A shared variable w resident on the device and its update: no transfer of w, the update
// stays on the device; the shape arithmetic stays on the host (its sizes are the host's).
// Each read gets its own transfer here (elide-transfers merges them).
// CHECK-LABEL: func.func @update
// CHECK-NEXT:    %n = tensor.shape_i %w, 0 :
// CHECK-NEXT:    %m = tensor.mul %n, %n :
// CHECK-NEXT:    %[[G1:.*]] = gpu.to_device %g context "cuda"
// CHECK-NEXT:    %d = tensor.sub %w, %[[G1]] {device = "cuda"}
// CHECK-NEXT:    %[[G2:.*]] = gpu.to_device %g context "cuda"
// CHECK-NEXT:    %e = tensor.mul %d, %[[G2]] {device = "cuda"}
// CHECK-NEXT:    func.return %e, %m :
func.func @update(%w: tensor<?xf32>, %g: tensor<?xf32>) -> (tensor<?xf32>, tensor<i64>)
    attributes {lowering.arg_devices = ["cuda", "cpu"], lowering.result_devices = ["cuda", "cpu"]} {
  %n = "tensor.shape_i"(%w) {axis = 0} : (tensor<?xf32>) -> tensor<i64>
  %m = "tensor.mul"(%n, %n) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %d = "tensor.sub"(%w, %g) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %e = "tensor.mul"(%d, %g) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %e, %m : tensor<?xf32>, tensor<i64>
}
