// RUN: lowering-opt %s -p canonicalize | filecheck %s

// Identities go: x * 1, neg(neg(x)), x - neg(y); the float x * 0 stays (inf * 0 is NaN).
// CHECK-LABEL: func.func @identities
func.func @identities(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  // CHECK-NEXT: %[[Z:.*]] = tensor.constant dense<0.000000e+00> : tensor<1xf32>
  // CHECK-NEXT: %s = tensor.add %x, %y
  // CHECK-NEXT: %z = tensor.mul %s, %[[Z]]
  // CHECK-NEXT: func.return %s, %z
  %one = "tensor.constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %zero = "tensor.constant"() {value = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %m = "tensor.mul"(%x, %one) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %n = "tensor.neg"(%m) : (tensor<?xf32>) -> tensor<?xf32>
  %nn = "tensor.neg"(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %ny = "tensor.neg"(%y) : (tensor<?xf32>) -> tensor<?xf32>
  %s = "tensor.sub"(%nn, %ny) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %z = "tensor.mul"(%s, %zero) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  func.return %s, %z : tensor<?xf32>, tensor<?xf32>
}

// An exact inner cast merges into the outer one; two dimshuffles are one.
// CHECK-LABEL: func.func @casts_and_dimshuffles
func.func @casts_and_dimshuffles(%x: tensor<?x3xi8>) -> tensor<1x3x?xf64> {
  // CHECK-NEXT: %[[C:.*]] = tensor.cast %x to f64 : tensor<?x3xi8> -> tensor<?x3xf64>
  // CHECK-NEXT: %t = tensor.dimshuffle %[[C]] [-1, 1, 0]
  // CHECK-NEXT: func.return %t
  %a = "tensor.cast"(%x) {to = i32} : (tensor<?x3xi8>) -> tensor<?x3xi32>
  %b = "tensor.cast"(%a) {to = f64} : (tensor<?x3xi32>) -> tensor<?x3xf64>
  %s = "tensor.dimshuffle"(%b) {pattern = [1, 0]} : (tensor<?x3xf64>) -> tensor<3x?xf64>
  %t = "tensor.dimshuffle"(%s) {pattern = [-1, 0, 1]} : (tensor<3x?xf64>) -> tensor<1x3x?xf64>
  func.return %t : tensor<1x3x?xf64>
}

// The size of an elementwise result is its input's: the exp is not needed for it.
// CHECK-LABEL: func.func @shape_of_elementwise
func.func @shape_of_elementwise(%x: tensor<?xf32>) -> tensor<i64> {
  // CHECK-NEXT: %n = tensor.shape_i %x, 0 :
  // CHECK-NEXT: func.return %n
  %e = "tensor.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %n = "tensor.shape_i"(%e) {axis = 0} : (tensor<?xf32>) -> tensor<i64>
  func.return %n : tensor<i64>
}

// zeros_like-style fills sink out of elementwise ops and go where another operand gives the shape.
// CHECK-LABEL: func.func @fills
func.func @fills(%m: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK-NEXT: %[[C:.*]] = tensor.constant dense<-2.500000e-01> : tensor<1xf32>
  // CHECK-NEXT: %r = tensor.mul %[[C]], %y
  // CHECK-NEXT: func.return %r
  %c = "tensor.constant"() {value = dense<0.25> : tensor<1xf32>} : () -> tensor<1xf32>
  %f = "tensor.fill"(%m, %c) : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %n = "tensor.neg"(%f) : (tensor<?xf32>) -> tensor<?xf32>
  %r = "tensor.mul"(%n, %y) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
