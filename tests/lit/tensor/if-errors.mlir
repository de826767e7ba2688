// RUN: lowering-opt %s --split-input-file --verify-diagnostics

// The condition is a scalar.
func.func @condition(%c: tensor<?xi1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = "tensor.if"(%c, %x) ({ // expected-error {{tensor.if: the condition must be a rank-0 tensor, got tensor<?xi1>}}
  ^bb0(%a: tensor<?xf64>):
    "tensor.yield"(%a) : (tensor<?xf64>) -> ()
  }, {
  ^bb0(%a: tensor<?xf64>):
    "tensor.yield"(%a) : (tensor<?xf64>) -> ()
  }) : (tensor<?xi1>, tensor<?xf64>) -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// -----

// What a branch yields fits the result: the same element type and rank.
func.func @yield_types(%c: tensor<i1>, %x: tensor<?xf64>, %y: tensor<?xf32>) -> tensor<?xf64> {
  %r = tensor.if %c, %x, %y : tensor<i1>, (tensor<?xf64>, tensor<?xf32>) -> tensor<?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf32>):
    tensor.yield %a : tensor<?xf64>
  } else {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf32>):
    // expected-error @+1 {{tensor.yield: the else branch yields (tensor<?xf32>), which do not fit the results (tensor<?xf64>)}}
    tensor.yield %b : tensor<?xf32>
  }
  func.return %r : tensor<?xf64>
}

// -----

// A branch's arguments are the inputs.
func.func @arguments(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  // expected-error @+1 {{tensor.if: the then branch's arguments () should be the inputs' types (tensor<?xf64>)}}
  %r = "tensor.if"(%c, %x) ({
    %z = "tensor.constant"() {value = dense<0.0> : tensor<1xf64>} : () -> tensor<1xf64>
    "tensor.yield"(%z) : (tensor<1xf64>) -> ()
  }, {
  ^bb0(%a: tensor<?xf64>):
    "tensor.yield"(%a) : (tensor<?xf64>) -> ()
  }) : (tensor<i1>, tensor<?xf64>) -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// -----

// The regions are isolated: a branch reads what it needs through the inputs.
func.func @captures(%c: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %r = "tensor.if"(%c) ({
    %e = "tensor.exp"(%x) : (tensor<?xf64>) -> tensor<?xf64> // expected-error {{use of undefined value '%x'}}
    "tensor.yield"(%e) : (tensor<?xf64>) -> ()
  }, {
    "tensor.yield"(%x) : (tensor<?xf64>) -> ()
  }) : (tensor<i1>) -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}
