// RUN: lowering-opt %s -p sink-into-branches | filecheck %s
// RUN: lowering-opt %s -p bufferize | filecheck %s --check-prefix=LOOPS
// RUN: lowering-opt %s -p canonicalize | filecheck %s --check-prefix=CONST

// What only one branch needs moves into it, with what only it needs in turn; what the other
// branch or the function also reads stays before the op.
// CHECK-LABEL: func.func @lazy
// CHECK:       %s = tensor.sin %x
// CHECK-NEXT:  %r = tensor.if %c, %s, %x : tensor<i1>, (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
// CHECK-NEXT:  ^bb0(%s: tensor<?xf64>, %x: tensor<?xf64>):
// CHECK-NEXT:    %e = tensor.exp %x
// CHECK-NEXT:    %m = tensor.mul %e, %s
// CHECK-NEXT:    tensor.yield %m
// CHECK-NEXT:  } else {
// CHECK-NEXT:  ^bb0(%s_1: tensor<?xf64>, %x_1: tensor<?xf64>):
// CHECK-NEXT:    %l = tensor.log %s_1
// CHECK-NEXT:    tensor.yield %l
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r, %s
func.func @lazy(%c: tensor<i1>, %x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %s = tensor.sin %x : tensor<?xf64>
  %e = tensor.exp %x : tensor<?xf64>
  %m = tensor.mul %e, %s : tensor<?xf64>
  %l = tensor.log %s : tensor<?xf64>
  %r = tensor.if %c, %m, %l : tensor<i1>, (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
    tensor.yield %a : tensor<?xf64>
  } else {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
    tensor.yield %b : tensor<?xf64>
  }
  func.return %r, %s : tensor<?xf64>, tensor<?xf64>
}

// bufferize moves the branches' work in first: the loops of exp and mul run only in the then
// branch, log's only in the else branch; each branch yields its own allocation.
// LOOPS-LABEL: func.func @lazy
// LOOPS:       %r = loops.if %{{.*}} -> !loops.buffer<?xf64> {
// LOOPS:         scalar.exp
// LOOPS:         scalar.mul
// LOOPS-NOT:     scalar.log
// LOOPS:         loops.yield %m : !loops.buffer<?xf64>
// LOOPS-NEXT:  } else {
// LOOPS-NOT:     scalar.exp
// LOOPS:         scalar.log
// LOOPS:         loops.yield %l : !loops.buffer<?xf64>
// LOOPS-NEXT:  }

// A constant condition leaves the branch it takes in place of the op.
// CONST-LABEL: func.func @constant
// CONST-NOT:   tensor.if
// CONST:       %e = tensor.exp %x
// CONST-NEXT:  func.return %e
func.func @constant(%x: tensor<?xf64>) -> tensor<?xf64> {
  %c = "tensor.constant"() {value = dense<1> : tensor<i8>} : () -> tensor<i8>
  %r = tensor.if %c, %x : tensor<i8>, (tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>):
    %e = tensor.exp %a : tensor<?xf64>
    tensor.yield %e : tensor<?xf64>
  } else {
  ^bb0(%a: tensor<?xf64>):
    tensor.yield %a : tensor<?xf64>
  }
  func.return %r : tensor<?xf64>
}
