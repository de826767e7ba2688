// RUN: lowering-opt %s -p stabilize | filecheck %s

// log(sigmoid(x)) is -softplus(-x); log(1 - sigmoid(x)) is -softplus(x).
// CHECK-LABEL: func.func @log_sigmoid
func.func @log_sigmoid(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  // CHECK-NEXT: %[[N:.*]] = tensor.neg %x
  // CHECK-NEXT: %[[S:.*]] = tensor.softplus %[[N]]
  // CHECK-NEXT: %l = tensor.neg %[[S]]
  // CHECK-NEXT: %[[T:.*]] = tensor.softplus %x
  // CHECK-NEXT: %k = tensor.neg %[[T]]
  // CHECK-NEXT: func.return %l, %k
  %one = "tensor.constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = "tensor.sigmoid"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %l = "tensor.log"(%s) : (tensor<?xf32>) -> tensor<?xf32>
  %m = "tensor.sub"(%one, %s) : (tensor<1xf32>, tensor<?xf32>) -> tensor<?xf32>
  %k = "tensor.log"(%m) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %l, %k : tensor<?xf32>, tensor<?xf32>
}

// log(1 + exp(x)) is softplus(x); log(softmax(x)) is log_softmax(x).
// CHECK-LABEL: func.func @softplus_and_log_softmax
func.func @softplus_and_log_softmax(%x: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) {
  // CHECK-NEXT: %l = tensor.softplus %x
  // CHECK-NEXT: %k = tensor.log_softmax %x axis 1 :
  // CHECK-NEXT: func.return %l, %k
  %one = "tensor.constant"() {value = dense<1.0> : tensor<1x1xf64>} : () -> tensor<1x1xf64>
  %e = "tensor.exp"(%x) : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %a = "tensor.add"(%one, %e) : (tensor<1x1xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  %l = "tensor.log"(%a) : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %s = "tensor.softmax"(%x) {axis = 1} : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %k = "tensor.log"(%s) : (tensor<?x?xf64>) -> tensor<?x?xf64>
  func.return %l, %k : tensor<?x?xf64>, tensor<?x?xf64>
}

// log(1 + x) is log1p(x); exp(x) - 1 is expm1(x).
// CHECK-LABEL: func.func @log1p_expm1
func.func @log1p_expm1(%x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  // CHECK-NEXT: %l = tensor.log1p %x
  // CHECK-NEXT: %m = tensor.expm1 %x
  // CHECK-NEXT: func.return %l, %m
  %one = "tensor.constant"() {value = dense<1.0> : tensor<1xf64>} : () -> tensor<1xf64>
  %a = "tensor.add"(%x, %one) : (tensor<?xf64>, tensor<1xf64>) -> tensor<?xf64>
  %l = "tensor.log"(%a) : (tensor<?xf64>) -> tensor<?xf64>
  %e = "tensor.exp"(%x) : (tensor<?xf64>) -> tensor<?xf64>
  %m = "tensor.sub"(%e, %one) : (tensor<?xf64>, tensor<1xf64>) -> tensor<?xf64>
  func.return %l, %m : tensor<?xf64>, tensor<?xf64>
}

// The gradient of a cross-entropy: (u / q + v / p) * p * q loses its divisions.
// CHECK-LABEL: func.func @gradient
func.func @gradient(%x: tensor<?xf64>, %u: tensor<?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK-NEXT: %p = tensor.sigmoid %x
  // CHECK-NEXT: %nx = tensor.neg %x
  // CHECK-NEXT: %q = tensor.sigmoid %nx
  // CHECK-NEXT: %[[A:.*]] = tensor.mul %u, %p
  // CHECK-NEXT: %[[B:.*]] = tensor.mul %v, %q
  // CHECK-NEXT: %r = tensor.add %[[A]], %[[B]]
  // CHECK-NEXT: func.return %r
  %p = "tensor.sigmoid"(%x) : (tensor<?xf64>) -> tensor<?xf64>
  %nx = "tensor.neg"(%x) : (tensor<?xf64>) -> tensor<?xf64>
  %q = "tensor.sigmoid"(%nx) : (tensor<?xf64>) -> tensor<?xf64>
  %a = "tensor.div"(%u, %q) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %b = "tensor.div"(%v, %p) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %g = "tensor.add"(%a, %b) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %t = "tensor.mul"(%g, %p) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %r = "tensor.mul"(%t, %q) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}
