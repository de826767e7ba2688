// RUN: lowering-opt %s | filecheck %s
// RUN: lowering-opt %s | lowering-opt | filecheck %s
// RUN: lowering-opt %s --generic | lowering-opt | filecheck %s

// Ops written in the generic form print in their pretty forms, which read back to the same ops.

// CHECK-LABEL: func.func @tensors
func.func @tensors(%x: tensor<?x3xf32>, %y: tensor<1x3xf32>, %i: tensor<i64>) {
  // CHECK-NEXT: %e = tensor.exp %x : tensor<?x3xf32>
  // CHECK-NEXT: %s = tensor.add %x, %x : tensor<?x3xf32>
  // CHECK-NEXT: %b = tensor.add %x, %y : tensor<?x3xf32>, tensor<1x3xf32>
  // CHECK-NEXT: %g = tensor.gt %x, %y : tensor<?x3xf32>, tensor<1x3xf32>
  // CHECK-NEXT: %w = tensor.select %g, %x, %y : tensor<?x3xi1>, tensor<?x3xf32>, tensor<1x3xf32>
  // CHECK-NEXT: %c = tensor.cast %x to f64 : tensor<?x3xf32> -> tensor<?x3xf64>
  // CHECK-NEXT: %r = tensor.sum %x axes [1] keepdims true : tensor<?x3xf32> -> tensor<?x1xf32>
  // CHECK-NEXT: %t = tensor.sum %x axes [0, 1] : tensor<?x3xf32> -> tensor<f32>
  // CHECK-NEXT: %m = tensor.softmax %x axis 1 : tensor<?x3xf32>
  // CHECK-NEXT: %k = tensor.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: %v = tensor.subtensor %x[%i] [["index", "?"]] : (tensor<?x3xf32>, tensor<i64>) -> tensor<3xf32>
  // CHECK-NEXT: %u = tensor.set_subtensor %v into %x[%i] [["index", "?"]] : (tensor<?x3xf32>, tensor<3xf32>, tensor<i64>) -> tensor<?x3xf32>
  // CHECK-NEXT: %d = tensor.dimshuffle %x [1, 0] : tensor<?x3xf32> -> tensor<3x?xf32>
  // CHECK-NEXT: %n = tensor.shape_i %x, 0 : tensor<?x3xf32> -> tensor<i64>
  // CHECK-NEXT: %j = tensor.concatenate %x, %y axis 0 : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  // CHECK-NEXT: %f = tensor.fused %x attributes {reductions = [{kind = "none"}]} : (tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK-NEXT: ^bb0(%a: f32):
  // CHECK-NEXT:   %q = scalar.sqr %a : f32
  // CHECK-NEXT:   scalar.yield %q : f32
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return
  %e = "tensor.exp"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = "tensor.add"(%x, %x) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %b = "tensor.add"(%x, %y) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %g = "tensor.gt"(%x, %y) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xi1>
  %w = "tensor.select"(%g, %x, %y) : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %c = "tensor.cast"(%x) {to = f64} : (tensor<?x3xf32>) -> tensor<?x3xf64>
  %r = "tensor.sum"(%x) {axes = [1], keepdims = true} : (tensor<?x3xf32>) -> tensor<?x1xf32>
  %t = "tensor.sum"(%x) {axes = [0, 1]} : (tensor<?x3xf32>) -> tensor<f32>
  %m = "tensor.softmax"(%x) {axis = 1} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %k = "tensor.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "tensor.subtensor"(%x, %i) {spec = [["index", "?"]]} : (tensor<?x3xf32>, tensor<i64>) -> tensor<3xf32>
  %u = "tensor.set_subtensor"(%x, %v, %i) {spec = [["index", "?"]]} : (tensor<?x3xf32>, tensor<3xf32>, tensor<i64>) -> tensor<?x3xf32>
  %d = "tensor.dimshuffle"(%x) {pattern = [1, 0]} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %n = "tensor.shape_i"(%x) {axis = 0} : (tensor<?x3xf32>) -> tensor<i64>
  %j = "tensor.concatenate"(%x, %y) {axis = 0} : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %f = "tensor.fused"(%x) ({
  ^bb0(%a: f32):
    %q = "scalar.sqr"(%a) : (f32) -> f32
    "scalar.yield"(%q) : (f32) -> ()
  }) {reductions = [{kind = "none"}]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return
}

// CHECK-LABEL: func.func @scalars
func.func @scalars(%a: f32, %p: i1, %n: i64) -> f32 {
  // CHECK-NEXT: %c = scalar.constant 2.000000e+00 : f32
  // CHECK-NEXT: %s = scalar.add %a, %c : f32
  // CHECK-NEXT: %k = scalar.select %p, %a, %s : i1, f32
  // CHECK-NEXT: %f = scalar.cast %n : i64 -> f32
  // CHECK-NEXT: %r = func.call @scalars(%k, %p, %n) : (f32, i1, i64) -> f32
  %c = "scalar.constant"() {value = 2.0 : f32} : () -> f32
  %s = "scalar.add"(%a, %c) : (f32, f32) -> f32
  %k = "scalar.select"(%p, %a, %s) : (i1, f32, f32) -> f32
  %f = "scalar.cast"(%n) : (i64) -> f32
  %r = "func.call"(%k, %p, %n) {callee = "scalars"} : (f32, i1, i64) -> f32
  func.return %r : f32
}

// CHECK-LABEL: func.func @host
func.func @host(%h: !loops.buffer<?xf32>, %n: index) {
  // CHECK-NEXT: %d = gpu.to_device %h context "cuda" : !loops.buffer<?xf32> -> !loops.buffer<?xf32, space="device">
  // CHECK-NEXT: gpu.launch_func @kernels @k blocks(%n, %n, %n) threads(%n, %n, %n) args(%d : !loops.buffer<?xf32, space="device">) : index
  // CHECK-NEXT: gpu.launch blocks(%n, %n, %n) threads(%n, %n, %n) : index {
  // CHECK-NEXT:   %t = gpu.thread_id "x" : index
  // CHECK-NEXT:   gpu.terminator
  // CHECK-NEXT: }
  // CHECK-NEXT: gpu.sync
  %d = "gpu.to_device"(%h) {context = "cuda"} : (!loops.buffer<?xf32>) -> !loops.buffer<?xf32, space="device">
  "gpu.launch_func"(%n, %n, %n, %n, %n, %n, %d) {module = @kernels, kernel = @k} : (index, index, index, index, index, index, !loops.buffer<?xf32, space="device">) -> ()
  "gpu.launch"(%n, %n, %n, %n, %n, %n) ({
    %t = "gpu.thread_id"() {dimension = "x"} : () -> index
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  "gpu.sync"() : () -> ()
  func.return
}

// CHECK-LABEL: gpu.module @kernels {
// CHECK-NEXT:   gpu.func @k(%x: !loops.buffer<?xf32, space="device">) attributes {kernel = unit} {
// CHECK-NEXT:     %s = gpu.shared_alloc : !loops.buffer<4xf32, space="shared">
// CHECK-NEXT:     gpu.barrier
// CHECK-NEXT:     gpu.return
"gpu.module"() ({
  "gpu.func"() ({
  ^bb0(%x: !loops.buffer<?xf32, space="device">):
    %s = "gpu.shared_alloc"() : () -> !loops.buffer<4xf32, space="shared">
    "gpu.barrier"() : () -> ()
    "gpu.return"() : () -> ()
  }) {sym_name = "k", function_type = (!loops.buffer<?xf32, space="device">) -> (), kernel} : () -> ()
}) {sym_name = "kernels"} : () -> ()
