// RUN: lowering-opt %s -p specialize | filecheck %s

// Small constant powers.
// CHECK-LABEL: func.func @powers
func.func @powers(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  // CHECK-NEXT: %a = tensor.sqr %x
  // CHECK-NEXT: %b = tensor.sqrt %x
  // CHECK-NEXT: %c = tensor.reciprocal %x
  // CHECK-NEXT: func.return %a, %b, %c
  %two = "tensor.constant"() {value = dense<2.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %half = "tensor.constant"() {value = dense<0.5> : tensor<1xf32>} : () -> tensor<1xf32>
  %minus = "tensor.constant"() {value = dense<-1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %a = "tensor.pow"(%x, %two) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %b = "tensor.pow"(%x, %half) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %c = "tensor.pow"(%x, %minus) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  func.return %a, %b, %c : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// The logistic regression's weight update: w - 0.01 * (0.02 * w + dot(x.T, g)) is one gemv
// with alpha = -0.01 and beta = 1 - 0.01 * 0.02.
// CHECK-LABEL: func.func @update
func.func @update(%x: tensor<?x?xf32>, %g: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: %[[T:.*]] = tensor.dimshuffle %x [1, 0]
  // CHECK-DAG: %[[BETA:.*]] = tensor.constant dense<0.9998{{[0-9]*}}> : tensor<f32>
  // CHECK-DAG: %[[ALPHA:.*]] = tensor.constant dense<-0.0099{{[0-9]*}}> : tensor<f32>
  // CHECK: %r = tensor.gemv %w, %[[ALPHA]], %[[T]], %g, %[[BETA]]
  // CHECK-NEXT: func.return %r
  %lr = "tensor.constant"() {value = dense<0.01> : tensor<1xf32>} : () -> tensor<1xf32>
  %k = "tensor.constant"() {value = dense<0.02> : tensor<1xf32>} : () -> tensor<1xf32>
  %xt = "tensor.dimshuffle"(%x) {pattern = [1, 0]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %d = "tensor.dot"(%xt, %g) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %kw = "tensor.mul"(%w, %k) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %s = "tensor.add"(%kw, %d) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %u = "tensor.mul"(%lr, %s) : (tensor<1xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r = "tensor.sub"(%w, %u) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// C + dot(A, B) is gemm(C, 1, A, B, 1).
// CHECK-LABEL: func.func @gemm
func.func @gemm(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
  // CHECK: %r = tensor.gemm %c, %{{.*}}, %a, %b, %{{.*}}
  // CHECK-NEXT: func.return %r
  %p = "tensor.dot"(%a, %b) : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  %r = "tensor.add"(%c, %p) : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  func.return %r : tensor<?x?xf64>
}
