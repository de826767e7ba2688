// RUN: lowering-opt %s | filecheck %s
// RUN: lowering-opt %s | lowering-opt | filecheck %s
// RUN: lowering-opt %s --generic | lowering-opt | filecheck %s

// tensor.if prints its operands, the condition's type, the inputs' types and the result types,
// then each branch with its arguments (the inputs), and reads back unchanged.

// CHECK-LABEL: func.func @pick
// CHECK:       %r = tensor.if %c, %x, %y : tensor<i8>, (tensor<?xf64>, tensor<3xf64>) -> tensor<?xf64> {
// CHECK-NEXT:  ^bb0(%a: tensor<?xf64>, %b: tensor<3xf64>):
// CHECK-NEXT:    %e = tensor.exp %a : tensor<?xf64>
// CHECK-NEXT:    tensor.yield %e : tensor<?xf64>
// CHECK-NEXT:  } else {
// CHECK-NEXT:  ^bb0(%a_1: tensor<?xf64>, %b_1: tensor<3xf64>):
// CHECK-NEXT:    tensor.yield %b_1 : tensor<3xf64>
// CHECK-NEXT:  }
func.func @pick(%c: tensor<i8>, %x: tensor<?xf64>, %y: tensor<3xf64>) -> tensor<?xf64> {
  %r = tensor.if %c, %x, %y : tensor<i8>, (tensor<?xf64>, tensor<3xf64>) -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<3xf64>):
    %e = tensor.exp %a : tensor<?xf64>
    tensor.yield %e : tensor<?xf64>
  } else {
  ^bb0(%a: tensor<?xf64>, %b: tensor<3xf64>):
    tensor.yield %b : tensor<3xf64>
  }
  func.return %r : tensor<?xf64>
}
